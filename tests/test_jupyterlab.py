"""The learner's loop in a real front-end: JupyterLab, headless, driven by Chromium.

A copy of puzzle 1's notebook (its kernel cell holds the stub) is opened in JupyterLab, a WRONG
kernel (x + 1 where x + 10 is asked) is typed into its kernel cell and not saved, and all cells
are run. The check cell must show the checker's report for the kernel as run in the notebook
(not the stub on disk: "not implemented yet" would mean the checker read the file), as HTML: the
failing verdict first, a table of the cases, the first failure in full with the figure of where the
output differs, the other failures folded, and no word broken across lines. Then the kernel cell is
broken (a parenthesis left open) and run, and the check cell run again: the old kernel is still
defined, but the report gives it no verdict (no ✅) and says first which cell does not run. And
progress() shows its table left-aligned, inside the output. Screenshots are kept in
_build/artifacts/: jupyterlab_p01.png (the verdict, the table, the first failure),
jupyterlab_p02.png and jupyterlab_p02_details.png (a folded failure opened),
jupyterlab_p01_stale.png (the report on a kernel cell that does not run).

A second test checks six kernels with a bug of addresses or ownership in one notebook and finds each
report's memory map open and legible (jupyterlab_map_pNN.png). The module's tests share one
JupyterLab server, each test with its own notebook, workspace and kernel.

Needs chromium (apt) and jupyterlab (requirements.txt); skipped without them except in CI.
"""
from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser import CHROMIUM, _free_port, chromium, stop
from checker import registry

pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "_build" / "artifacts"
WAIT_S = 150  # each wait: the kernel's start, torch's import, the check and its figure

if (CHROMIUM is None or shutil.which("jupyter-lab") is None) and not os.environ.get("CI"):
    pytest.skip("needs chromium (apt) and jupyterlab (pip); in CI this is an error", allow_module_level=True)


def _wrong_kernel() -> str:
    """Puzzle 1's solution with + 1 instead of + 10."""
    solution = registry.get("p01").solution.read_text(encoding="utf-8")
    wrong = solution.replace("x + 10.0", "x + 1.0")
    assert wrong != solution
    return wrong


def _copy_of_the_notebook(folder: Path) -> Path:
    """Puzzle 1's notebook as a learner gets it: its kernel cell holds the stub."""
    path = folder / "p01_copy.ipynb"
    shutil.copyfile(registry.get("p01").notebook, path)
    return path


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """One JupyterLab server on 127.0.0.1 for this module's tests (its start and stop cost ~15 s
    each time); yields (its address, its token, the folder it serves)."""
    root = tmp_path_factory.mktemp("jupyterlab")
    settings = root / ".settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # every cell in the page (JupyterLab 4 renders only the cells in view by default)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    apputils = root / ".settings" / "@jupyterlab" / "apputils-extension"
    apputils.mkdir(parents=True)  # no "news" pop-up over the screenshot (and no request for it)
    (apputils / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               JUPYTERLAB_SETTINGS_DIR=str(root / ".settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(root / ".workspaces"), MPLBACKEND="")
    env.pop("MPLBACKEND")
    log = open(root / "lab.log", "w")
    # started as the README says (`python -m checker lab`, which adds --allow-root as root), into root
    proc = subprocess.Popen([sys.executable, "-m", "checker", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                             "--LabApp.expose_app_in_browser=True", "--ServerApp.open_browser=False"],
                            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                assert proc.poll() is None, (root / "lab.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "JupyterLab did not start"
                time.sleep(0.5)
        yield base, token, root
    finally:
        stop(proc, 15)
        log.close()


@pytest.fixture()
def lab(lab_server, request):
    """A copy of puzzle 1's notebook in a folder of this test's own, opened in a workspace of its
    own (no other test's notebook reopens beside it); yields (url of the notebook, its file). The
    kernels it started are shut down after the test."""
    base, token, root = lab_server
    name = re.sub(r"\W", "_", request.node.name)[:60]
    folder = root / name
    folder.mkdir()
    notebook = _copy_of_the_notebook(folder)
    try:
        yield f"{base}/lab/workspaces/{name}/tree/{name}/{notebook.name}?token={token}", notebook
    finally:
        _shut_down_kernels(base, token)


def _shut_down_kernels(base: str, token: str) -> None:
    """End every session of the server (its kernel with it): the next test starts afresh."""
    auth = {"Authorization": f"token {token}"}
    with urllib.request.urlopen(urllib.request.Request(f"{base}/api/sessions", headers=auth), timeout=10) as r:
        sessions = json.loads(r.read())
    for session in sessions:
        request = urllib.request.Request(f"{base}/api/sessions/{session['id']}", headers=auth, method="DELETE")
        with urllib.request.urlopen(request, timeout=30):
            pass


def _wait_for(cdp, expression: str, what: str, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = cdp.evaluate(expression)
        except RuntimeError:  # the page is still loading its scripts
            value = None
        if value:
            return value
        time.sleep(0.5)
    try:
        seen = cdp.evaluate("location.href + ' | ' + typeof window.jupyterapp + ' | ' + "
                            "document.body.innerText.slice(0, 400)")
    except RuntimeError as err:
        seen = str(err)
    raise AssertionError(f"JupyterLab: not {what} within {timeout:.0f} s; the page: {seen}")


# the notebook's panel in the main area (shell.currentWidget follows focus, which headless lacks)
NOTEBOOK = ("(window.jupyterapp && Array.from(window.jupyterapp.shell.widgets('main'))"
            ".find(w => w.context && w.content && w.content.model))")
# a check cell's outputs, read from the notebook's model: {text, png}
CHECK_OUTPUTS = """(() => {
  const cells = NOTEBOOK.content.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code' || !cell.sharedModel.getSource().startsWith(PREFIX)) continue;
    const outs = cell.outputs.toJSON();
    const text = outs.map(o => [].concat(o.text || (o.data && o.data['text/plain']) || []).join('')).join('');
    return {text: text, png: outs.some(o => o.data && o.data['image/png']),
            html: outs.some(o => o.data && o.data['text/html'])};
  }
  return null;
})()""".replace("NOTEBOOK", NOTEBOOK)
# a check cell's outputs as the page shows them: the rich report's parts, in page order
CHECK_DOM = """(() => {
  const cell = NOTEBOOK.content.widgets.find(w => w.model.type === 'code'
                                                  && w.model.sharedModel.getSource().startsWith(PREFIX));
  const area = cell.node.querySelector('.jp-OutputArea');
  const reports = [...area.querySelectorAll('.tgp-report')];
  const verdict = area.querySelector('.tgp-verdict'), table = area.querySelector('table.tgp-cases');
  const image = area.querySelector('.jp-OutputArea-output img'), details = [...area.querySelectorAll('details')];
  const first = [...area.querySelectorAll('h4')].find(h => h.textContent.startsWith('First failure'));
  const after = (a, b) => !!a && !!b && !!(a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING);
  // a word broken across lines ("abov" above "e"): one word, two boxes (breaks at spaces and hyphens are fine)
  const broken = [];
  for (const report of reports) {
    const walk = document.createTreeWalker(report, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      if (node.parentElement.closest('style') || !node.parentElement.getClientRects().length) continue;
      for (const m of node.textContent.matchAll(/[^\\s\\-\\u2013\\u2014\\/]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        if (range.getClientRects().length > 1) broken.push(m[0]);
      }
    }
  }
  const styles = reports.flatMap(r => [...r.querySelectorAll('*')]).filter(e => e.tagName !== 'STYLE')
      .map(e => getComputedStyle(e));
  return {
    verdict: verdict && verdict.innerText,
    rows: table ? table.querySelectorAll('tbody tr').length : 0,
    verdict_before_table: after(verdict, table),
    first_failure: first ? first.innerText : null,
    figure_after_first_failure: after(first, image),
    details: details.length,
    details_after_figure: after(image, details[0]),
    text: reports.map(r => r.textContent).join('\\n'),
    pre: area.querySelectorAll('.tgp-report pre').length,
    broken_words: broken,
    breaking_styles: styles.filter(s => s.wordBreak !== 'normal' || s.overflowWrap !== 'normal').length,
    pre_not_wrapping: [...area.querySelectorAll('.tgp-report pre')].filter(
        p => getComputedStyle(p).whiteSpace !== 'pre-wrap').length,
  };
})()""".replace("NOTEBOOK", NOTEBOOK)
P01_CHECK = 'check("p01"'  # the notebook's own check cell
# the cells added at the notebook's end: puzzle 2's kernel without its mask, and its check
P02_CHECK = 'check("p02")'
PROGRESS = "from checker import progress; progress()"
# the progress table against its output area, and its cells' alignment
PROGRESS_BOX = """(() => {
  const cell = NOTEBOOK.content.widgets.find(w => w.model.sharedModel.getSource() === PREFIX);
  const table = cell && cell.node.querySelector('table.tgp-progress');
  if (!table) return null;
  const area = table.closest('.jp-OutputArea-output').getBoundingClientRect(), box = table.getBoundingClientRect();
  return {left: box.left - area.left, right: box.right - area.right,
          align: [...table.querySelectorAll('td, th')].map(c => getComputedStyle(c).textAlign)
                 .filter((a, i, all) => all.indexOf(a) === i)};
})()""".replace("NOTEBOOK", NOTEBOOK)


def _open_with_its_kernel(cdp, url: str) -> None:
    """Open the notebook's page and wait until the notebook is loaded and its kernel idle."""
    # a headless page never has the focus, and JupyterLab's current notebook follows the focus
    cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
    cdp.send("Page.navigate", {"url": url})
    _wait_for(cdp, f"{NOTEBOOK} && {NOTEBOOK}.context && {NOTEBOOK}.context.isReady", "the notebook open")
    _wait_for(cdp, f"{NOTEBOOK}.sessionContext.session && {NOTEBOOK}.sessionContext.session.kernel "
                   f"&& {NOTEBOOK}.sessionContext.session.kernel.status === 'idle'", "its kernel started")


def _outputs(prefix: str) -> str:
    return CHECK_OUTPUTS.replace("PREFIX", json.dumps(prefix))


def _dom(cdp, prefix: str) -> dict:
    return cdp.evaluate(CHECK_DOM.replace("PREFIX", json.dumps(prefix)))


def _report(prefix: str) -> str:
    """The first element of the report under a check cell (a page expression)."""
    return (f"{NOTEBOOK}.content.widgets.find(w => w.model.sharedModel.getSource().startsWith({json.dumps(prefix)}))"
            ".node.querySelector('.tgp-report')")


def _screenshot(cdp, name: str, element: str, block: str = "start") -> None:
    """Scroll `element` (a page expression) into view, let it settle, keep a screenshot."""
    cdp.evaluate(f"{element}.scrollIntoView({{block: '{block}'}})")
    time.sleep(1.0)
    shot = cdp.send("Page.captureScreenshot", {"format": "png"})
    (ARTIFACTS / name).write_bytes(base64.b64decode(shot["data"]))


def _unclosed_kernel() -> str:
    """The wrong kernel with a parenthesis left open: its cell does not run."""
    broken = _wrong_kernel().replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK", 1)
    assert broken != _wrong_kernel()
    return broken


def _unmasked_p02() -> str:
    """Puzzle 2's solution with no mask on its loads and store: every case but one reads past x."""
    from bugs import entries, patched
    bug = next(b for b in entries(registry.get("p02")).pinned if b.name == "no_mask")
    return patched(registry.get("p02"), bug.name, bug.patches)


def test_a_wrong_kernel_run_in_jupyterlab_gets_the_rich_report_and_the_figure(lab):
    url, notebook = lab
    on_disk = notebook.read_bytes()
    with chromium(1400, 1200) as cdp:
        _open_with_its_kernel(cdp, url)
        # the learner types the (wrong) kernel into the cell tagged `kernel`, without saving, and, at the
        # end, puzzle 2's kernel without a mask and its check
        cdp.evaluate(f"""(() => {{ const nb = {NOTEBOOK}.content.model, cells = nb.cells;
          nb.sharedModel.insertCell(cells.length, {{cell_type: 'code', source: {json.dumps(_unmasked_p02())}}});
          nb.sharedModel.insertCell(cells.length, {{cell_type: 'code', source: {json.dumps(P02_CHECK)}}});
          nb.sharedModel.insertCell(cells.length, {{cell_type: 'code', source: {json.dumps(PROGRESS)}}});
          for (let i = 0; i < cells.length; i++) {{
            const c = cells.get(i);
            if ((c.getMetadata('tags') || []).includes('kernel')) {{ c.sharedModel.setSource({json.dumps(_wrong_kernel())}); return; }}
          }} throw new Error('no kernel cell'); }})()""")
        # the notebook made current (commands act on the current one), then Run > Run All Cells
        cdp.evaluate(f"window.jupyterapp.shell.activateById({NOTEBOOK}.id); {NOTEBOOK}.content.node.focus()")
        _wait_for(cdp, f"window.jupyterapp.shell.currentWidget === {NOTEBOOK}", "the notebook current", 30)
        cdp.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        outputs = _wait_for(cdp, f"(() => {{ const o = {_outputs(P01_CHECK)}; return o && "
                                 f"o.text.includes('Overall Result') && o.png ? o : null; }})()",
                            "the check cell showed its report and figure")
        p02 = _wait_for(cdp, f"(() => {{ const o = {_outputs(P02_CHECK)}; return o && "
                             f"o.text.includes('Overall Result') ? o : null; }})()", "puzzle 2's check cell its report")
        # the reports and the figure are in the page, not only in the model
        _wait_for(cdp, "document.querySelectorAll('.jp-OutputArea-output img').length > 0 && "
                       "document.querySelectorAll('.tgp-report details').length > 1", "the reports and figure shown")
        time.sleep(1.0)  # the figure's layout
        dom, dom2 = _dom(cdp, P01_CHECK), _dom(cdp, P02_CHECK)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        # puzzle 1: the title, the verdict, the table, the first failure and its figure
        _screenshot(cdp, "jupyterlab_p01.png", f"{_report(P01_CHECK)}.closest('.jp-OutputArea')")
        # puzzle 2: its report, then the first two folded failures opened ("the same as above")
        _screenshot(cdp, "jupyterlab_p02.png", f"{_report(P02_CHECK)}.closest('.jp-OutputArea')")
        cdp.evaluate(f"[...{_report(P02_CHECK)}.closest('.jp-OutputArea').querySelectorAll('details')]"
                     ".slice(0, 2).forEach(d => d.open = true)")
        dom2_opened = _dom(cdp, P02_CHECK)
        _screenshot(cdp, "jupyterlab_p02_details.png",
                    f"{_report(P02_CHECK)}.closest('.jp-OutputArea').querySelector('details')", "center")
        table = _wait_for(cdp, PROGRESS_BOX.replace("PREFIX", json.dumps(PROGRESS)), "the progress table", 30)
        # the learner leaves a parenthesis open in the kernel cell and runs it (a SyntaxError: the wrong
        # kernel of the first run stays defined), then runs the check cell again
        cdp.evaluate(f"""(() => {{ const nb = {NOTEBOOK}.content, cells = nb.model.cells, commands = window.jupyterapp.commands;
          const index = test => {{ for (let i = 0; i < cells.length; i++) if (test(cells.get(i))) return i; return -1; }};
          const kernel = index(c => (c.getMetadata('tags') || []).includes('kernel'));
          const check = index(c => c.type === 'code' && c.sharedModel.getSource().startsWith({json.dumps(P01_CHECK)}));
          cells.get(kernel).sharedModel.setSource({json.dumps(_unclosed_kernel())});
          const run = i => {{ nb.deselectAll(); nb.activeCellIndex = i; return commands.execute('notebook:run-cell'); }};
          run(kernel).then(() => run(check)); }})()""")
        stale = _wait_for(cdp, f"(() => {{ const o = {_outputs(P01_CHECK)}; return o && "
                               f"o.text.includes('does not run') && o.text.includes('Overall Result') ? o : null; }})()",
                          "the check cell's report on a kernel cell that does not run")
        time.sleep(0.5)
        stale_dom = _dom(cdp, P01_CHECK)
        _screenshot(cdp, "jupyterlab_p01_stale.png", f"{_report(P01_CHECK)}.closest('.jp-OutputArea')")
    # the rich report: the verdict first, a row per case, the first failure then its figure, then the rest folded
    p01 = registry.get("p01")
    assert dom["verdict"] == "Overall Result: ❌ NOT ALL CORRECT", dom
    assert dom["rows"] == sum(not c.gpu_only for c in p01.cases()), dom
    assert dom["verdict_before_table"] and dom["first_failure"], dom
    assert dom["figure_after_first_failure"] and dom["details_after_figure"] and dom["details"] >= 1, dom
    # puzzle 2 without a mask: the out-of-bounds explanation once, the other failures refer to it
    assert dom2["verdict_before_table"] and dom2["details"] >= 5 and dom2["pre"] >= 2, dom2
    assert dom2["text"].count("the checker stopped it before memory was touched") == 1, dom2["text"]
    assert dom2["text"].count("the same as above") >= 5, dom2["text"]
    assert "Not run here: 2 cases that only a GPU runs" in dom2["text"], dom2["text"]
    for seen in (dom, dom2, dom2_opened):  # nothing breaks a word, in a report or in an opened failure
        assert not seen["broken_words"] and not seen["breaking_styles"] and not seen["pre_not_wrapping"], seen
    text = outputs["text"]
    assert outputs["html"] and p02["html"], "no HTML report"
    assert "this notebook (the kernels as last run)" in text, text
    assert "Overall Result: ❌ NOT ALL CORRECT" in text, text
    assert "expected" in text and "got" in text, text  # the first wrong values are shown
    assert "not implemented yet" not in text, "the checker read the stub on disk, not the kernel as run"
    # a kernel cell that does not run: no verdict on the kernel it defined before, and the report's
    # first line (above its verdict) names the cell
    assert "✅" not in stale["text"] and "✅" not in stale_dom["text"], stale["text"]
    title, report = stale_dom["text"].split("\n", 1)  # the title's paragraph, then the report's
    assert title.endswith("from this notebook (the kernels as last run)"), stale_dom["text"]
    assert report.startswith("❌ The cell that defines add_constant_kernel does not run (SyntaxError: "
                             "'(' was never closed, line "), stale_dom["text"]
    assert stale_dom["verdict"] == "Overall Result: ❌ NOT ALL CORRECT" and stale_dom["rows"] == 0, stale_dom
    # progress(): left-aligned like the rest of the output, and inside it
    assert abs(table["left"]) <= 2 and table["right"] <= 0 and table["align"] == ["left"], table
    assert notebook.read_bytes() == on_disk, "the check wrote to the notebook"


def test_a_puzzle_notebook_opened_and_saved_in_jupyterlab_is_unchanged(lab):
    """JupyterLab writes the kernel's spec and language_info into a notebook it opens; the puzzle
    notebooks carry exactly that but the Python version, which the launcher's kernel does not report
    (checker/lab.py). So a notebook opened with its kernel started is not even marked modified, and
    saved it is byte for byte the committed one: `git status` lists only the notebooks a learner changed."""
    url, notebook = lab
    on_disk = notebook.read_bytes()
    with chromium(1280, 1000) as cdp:
        _open_with_its_kernel(cdp, url)
        _wait_for(cdp, f"{NOTEBOOK}.sessionContext.session.kernel.info", "the kernel's info")
        time.sleep(2.0)  # JupyterLab writes the kernel's language_info and spec into the model
        in_lab = cdp.evaluate(f"{NOTEBOOK}.content.model.metadata")
        dirty = cdp.evaluate(f"{NOTEBOOK}.content.model.dirty")
        cdp.evaluate(f"{NOTEBOOK}.context.save()")  # what autosave does two minutes later
        _wait_for(cdp, f"!{NOTEBOOK}.content.model.dirty", "the notebook saved", 30)
    assert "version" not in in_lab["language_info"], in_lab
    assert in_lab == json.loads(on_disk)["metadata"], "JupyterLab writes other metadata than the notebook has"
    assert dirty is False, "a notebook only opened is shown as modified"
    assert notebook.read_bytes() == on_disk, "JupyterLab saved a notebook it only opened with changes"


# six failing reports whose failure is one of addresses or ownership, each with its memory map open:
# (puzzle, part, the pinned bug of tests/bugs/pNN.py)
MAPPED = [("p02", "forward", "no_mask"), ("p04", "forward", "program_axes_swapped"),
          ("p05", "forward", "assumed_contiguous"), ("p07", "backward", "dx_plain_store"),
          ("p17", "forward", "plain_load_add_store"), ("p19", "dw", "plain_store")]
MIN_MAP_TEXT_PX = 10   # the map's smallest text on the screen (the book's figures: the same)
# each check cell's memory map as the page shows it
MAP_DOM = """(() => {
  const cell = NOTEBOOK.content.widgets.find(w => w.model.type === 'code'
                                                  && w.model.sharedModel.getSource().startsWith(PREFIX));
  const area = cell.node.querySelector('.jp-OutputArea');
  const img = area.querySelector('details.tgp-map img.tgp-map-image');
  const first = [...area.querySelectorAll('h4')].find(h => h.textContent.startsWith('First failure'));
  if (!img) return {found: false, text: area.innerText.slice(0, 600)};
  const box = img.getBoundingClientRect();
  return {found: true, open: img.closest('details').open, loaded: img.complete && img.naturalWidth > 0,
          natural: img.naturalWidth, shown: box.width, alt: img.alt,
          after_first_failure: !!first && !!(first.compareDocumentPosition(img) & Node.DOCUMENT_POSITION_FOLLOWING),
          summary: img.closest('details').querySelector('summary').innerText,
          notes: [...img.closest('details').querySelectorAll('p')].map(p => p.innerText)};
})()""".replace("NOTEBOOK", NOTEBOOK)


def _bug_kernels(key: str, name: str) -> str:
    from bugs import entries, patched
    puzzle = registry.get(key)
    bug = next(b for b in entries(puzzle).pinned if b.name == name)
    return patched(puzzle, bug.name, bug.patches)


def test_six_failing_reports_show_their_memory_map_legibly(lab):
    """Six kernels with a bug of addresses or ownership (a missing mask, program axes swapped,
    strides ignored, a race on dx, bins, shares overwritten), each checked in a notebook cell of
    JupyterLab: every report shows its memory map, open, after the first failure, loaded, and drawn
    large enough that its smallest text reads at 10 px or more in a 1280 px window. A screenshot of
    each is kept in _build/artifacts/ (jupyterlab_map_pNN.png)."""
    url, notebook = lab
    # the documented case alone, in the notebook's own process (no worker to start): the cheapest
    # check that still shows the report as a learner's check does
    checks = [f'check("{key}", "{part}", only_documented=True, plot=False, in_process=True)' for key, part, _ in MAPPED]
    added = [text for (key, _, bug), check in zip(MAPPED, checks) for text in (_bug_kernels(key, bug), check)]
    with chromium(1280, 1400) as cdp:
        _open_with_its_kernel(cdp, url)
        # the cells up to the setup cell (the first code cell) stay; puzzle 1's own cells after it give
        # way to the six kernels and their checks
        cdp.evaluate(f"""(() => {{ const nb = {NOTEBOOK}.content.model;
          const kept = nb.sharedModel.cells.findIndex(c => c.cell_type === 'code') + 1;
          nb.sharedModel.deleteCellRange(kept, nb.cells.length);
          {json.dumps(added)}.forEach((source, i) =>
            nb.sharedModel.insertCell(kept + i, {{cell_type: 'code', source: source}})); }})()""")
        cdp.evaluate(f"window.jupyterapp.shell.activateById({NOTEBOOK}.id); {NOTEBOOK}.content.node.focus()")
        _wait_for(cdp, f"window.jupyterapp.shell.currentWidget === {NOTEBOOK}", "the notebook current", 30)
        cdp.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        for check in checks:
            _wait_for(cdp, f"(() => {{ const o = {_outputs(check)}; return o && o.text.includes('Overall Result') "
                           f"? o : null; }})()", f"the report of {check}", WAIT_S * 2)
        _wait_for(cdp, "[...document.querySelectorAll('img.tgp-map-image')].filter(i => i.complete).length >= 6",
                  "the six maps loaded", 30)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        maps = {}
        for (key, _, _), check in zip(MAPPED, checks):
            maps[key] = cdp.evaluate(MAP_DOM.replace("PREFIX", json.dumps(check)))
            _screenshot(cdp, f"jupyterlab_map_{key}.png", f"{_report(check)}.closest('.jp-OutputArea')"
                        ".querySelector('details.tgp-map')", "center")
    for key, seen in maps.items():
        assert seen["found"] and seen["loaded"] and seen["open"] and seen["after_first_failure"], (key, seen)
        from checker.report.map_figure import MIN_PT, PAGE_IN
        smallest = MIN_PT / 72 * seen["shown"] / PAGE_IN  # points to inches, at the width it is shown
        assert smallest >= MIN_MAP_TEXT_PX, f"{key}: the map's smallest text at {smallest:.1f} px: {seen}"
        assert seen["alt"].startswith("Memory map.") and "Memory map" in seen["summary"], (key, seen)
    # the faults that stopped a launch are said under the map; the values' failures have none to say
    stopped = {key for key, seen in maps.items() if any("stopped your launch" in n for n in seen["notes"])}
    assert stopped == {"p02", "p07", "p17", "p19"}, maps
