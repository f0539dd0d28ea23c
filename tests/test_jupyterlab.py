"""The learner's loop in a real front-end: JupyterLab, headless, driven by Chromium.

A copy of puzzle 1's notebook (its kernel cell holds the stub) is opened in JupyterLab, a WRONG
kernel (x + 1 where x + 10 is asked) is typed into its kernel cell and not saved, and all cells
are run. The check cell must print the checker's report for the kernel as run in the notebook
(not the stub on disk: "not implemented yet" would mean the checker read the file), with its
failing verdict and the figure of where the output differs. A screenshot is kept
as _build/artifacts/jupyterlab_p01.png.

Needs chromium (apt) and jupyterlab (requirements.txt); skipped without them except in CI.
"""
from __future__ import annotations

import base64
import json
import os
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


@pytest.fixture()
def lab(tmp_path):
    """A JupyterLab server on 127.0.0.1 serving tmp_path; yields (url of the notebook, its file)."""
    notebook = _copy_of_the_notebook(tmp_path)
    settings = tmp_path / ".settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    # every cell in the page (JupyterLab 4 renders only the cells in view by default)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    apputils = tmp_path / ".settings" / "@jupyterlab" / "apputils-extension"
    apputils.mkdir(parents=True)  # no "news" pop-up over the screenshot (and no request for it)
    (apputils / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), secrets.token_hex(16)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               JUPYTERLAB_SETTINGS_DIR=str(tmp_path / ".settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / ".workspaces"), MPLBACKEND="")
    env.pop("MPLBACKEND")
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
                             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
                             "--LabApp.expose_app_in_browser=True", "--ServerApp.open_browser=False"],
                            cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                assert proc.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "JupyterLab did not start"
                time.sleep(0.5)
        yield f"{base}/lab/tree/{notebook.name}?token={token}", notebook
    finally:
        stop(proc, 15)
        log.close()


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
# the check cell's outputs, read from the notebook's model: {text, png}
CHECK_OUTPUTS = """(() => {
  const nb = NOTEBOOK;
  const cells = nb.content.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code' || !cell.sharedModel.getSource().startsWith('check(')) continue;
    const outs = cell.outputs.toJSON();
    const text = outs.map(o => [].concat(o.text || (o.data && o.data['text/plain']) || []).join('')).join('');
    return {text: text, png: outs.some(o => o.data && o.data['image/png'])};
  }
  return null;
})()""".replace("NOTEBOOK", NOTEBOOK)


def test_a_wrong_kernel_run_in_jupyterlab_gets_the_report_and_the_figure(lab):
    url, notebook = lab
    on_disk = notebook.read_bytes()
    with chromium(1280, 1600) as cdp:
        # a headless page never has the focus, and JupyterLab's current notebook follows the focus
        cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        cdp.send("Page.navigate", {"url": url})
        _wait_for(cdp, f"{NOTEBOOK} && {NOTEBOOK}.context && {NOTEBOOK}.context.isReady", "the notebook open")
        _wait_for(cdp, f"{NOTEBOOK}.sessionContext.session && {NOTEBOOK}.sessionContext.session.kernel "
                       f"&& {NOTEBOOK}.sessionContext.session.kernel.status === 'idle'", "its kernel started")
        # the learner types the (wrong) kernel into the cell tagged `kernel`, without saving
        cdp.evaluate(f"""(() => {{ const cells = {NOTEBOOK}.content.model.cells;
          for (let i = 0; i < cells.length; i++) {{
            const c = cells.get(i);
            if ((c.getMetadata('tags') || []).includes('kernel')) {{ c.sharedModel.setSource({json.dumps(_wrong_kernel())}); return; }}
          }} throw new Error('no kernel cell'); }})()""")
        # the notebook made current (commands act on the current one), then Run > Run All Cells
        cdp.evaluate(f"window.jupyterapp.shell.activateById({NOTEBOOK}.id); {NOTEBOOK}.content.node.focus()")
        _wait_for(cdp, f"window.jupyterapp.shell.currentWidget === {NOTEBOOK}", "the notebook current", 30)
        cdp.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        outputs = _wait_for(cdp, f"(() => {{ const o = {CHECK_OUTPUTS}; return o && o.text.includes('Overall Result') "
                                 f"&& o.png ? o : null; }})()", "the check cell printed its report and figure")
        # the figure is in the page, not only in the model
        _wait_for(cdp, "document.querySelectorAll('.jp-OutputArea-output img').length > 0", "the figure shown")
        # the screenshot shows the check cell's report and its figure
        cdp.evaluate("document.querySelector('.jp-OutputArea-output img').scrollIntoView({block: 'end'})")
        time.sleep(1.0)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = cdp.send("Page.captureScreenshot", {"format": "png"})
        (ARTIFACTS / "jupyterlab_p01.png").write_bytes(base64.b64decode(shot["data"]))
    text = outputs["text"]
    assert "this notebook (the kernels as last run)" in text, text
    assert "Overall Result: ❌ NOT ALL CORRECT" in text, text
    assert "expected" in text and "got" in text, text  # the first wrong values are shown
    assert "not implemented yet" not in text, "the checker read the stub on disk, not the kernel as run"
    assert notebook.read_bytes() == on_disk, "the check wrote to the notebook"


@pytest.fixture()
def lab_keeping_metadata(tmp_path, monkeypatch, request):
    """The `lab` server, started with the save hook the README names (checker.stubs.keep_metadata)."""
    config = tmp_path / ".jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"ContentsManager": {"pre_save_hook": "checker.stubs.keep_metadata"}}))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(config))
    return request.getfixturevalue("lab")


def test_a_puzzle_notebook_opened_and_saved_in_jupyterlab_is_unchanged(lab_keeping_metadata):
    """JupyterLab writes the kernel's spec and language_info into a notebook it opens; the puzzle
    notebooks carry exactly that (checker.stubs.NOTEBOOK_METADATA) but the Python version, which the
    save hook keeps out. So a notebook opened, its kernel started, and saved is byte for byte the
    committed one: `git status` lists only the notebooks a learner changed."""
    url, notebook = lab_keeping_metadata
    on_disk = notebook.read_bytes()
    with chromium(1280, 1000) as cdp:
        cdp.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
        cdp.send("Page.navigate", {"url": url})
        _wait_for(cdp, f"{NOTEBOOK} && {NOTEBOOK}.context && {NOTEBOOK}.context.isReady", "the notebook open")
        _wait_for(cdp, f"{NOTEBOOK}.sessionContext.session && {NOTEBOOK}.sessionContext.session.kernel "
                       f"&& {NOTEBOOK}.sessionContext.session.kernel.status === 'idle'", "its kernel started")
        # JupyterLab has written the kernel's language_info (with the Python version) into the model
        _wait_for(cdp, f"({NOTEBOOK}.content.model.getMetadata('language_info') || {{}}).version",
                  "the kernel's language_info in the notebook")
        _wait_for(cdp, f"({NOTEBOOK}.content.model.getMetadata('kernelspec') || {{}}).display_name",
                  "the kernel's spec in the notebook")
        in_lab = cdp.evaluate(f"{NOTEBOOK}.content.model.metadata")
        cdp.evaluate(f"{NOTEBOOK}.context.save()")  # what autosave does two minutes later
        _wait_for(cdp, f"!{NOTEBOOK}.content.model.dirty", "the notebook saved", 30)
    assert in_lab["language_info"].pop("version"), in_lab
    assert in_lab == json.loads(on_disk)["metadata"], "JupyterLab writes other metadata than the notebook has"
    assert notebook.read_bytes() == on_disk, "JupyterLab saved a notebook it only opened with changes"
