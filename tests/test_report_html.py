"""The report as HTML in a notebook (checker/report/html.py, checker/notebook.py): built from the Report's
data; the verdict first, then the table of cases, then the first failure in full and the others
folded; an explanation repeated across cases shown once; what the interpreter could not run said;
a hang, a crash, cells that do not run and a stub each one message with its line; everything
that comes from the learner escaped. tests/test_jupyterlab.py shows it in a real JupyterLab."""
from __future__ import annotations

import html as html_lib
import re

import pytest

from bugs import entries, patched
from checker import registry
from checker.report import html as html_report
from checker.notebook import NotebookReport, check, in_jupyter
from checker.report.model import Report
from checker.report.text import ReportWriter
from checker.run.session import run_check
from checker.source import from_text
from checker.stubs import stub_text

P01, P02, P05, P11 = (registry.get(key) for key in ("p01", "p02", "p05", "p11"))
OOB_PARAGRAPH = "the checker stopped it before memory was touched"  # the end of the out-of-bounds paragraph
TAGS = {"style", "div", "p", "h4", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "pre", "code"}
HANGS = """import triton
import triton.language as tl


@triton.jit
def add_constant_kernel(x_ptr, z_ptr, N, BLOCK: tl.constexpr):
    i = 0
    while i >= 0:
        i += 1
"""


def _check(puzzle, code: str, **options) -> Report:
    return run_check(puzzle, [p.name for p in puzzle.parts], from_text(code, "learner"), backend="interpreter",
                     write=lambda line: None, **{"in_process": True, **options})


def _bug(puzzle, name: str) -> str:
    bug = next(b for b in entries(puzzle).pinned if b.name == name)
    return patched(puzzle, bug.name, bug.patches)


@pytest.fixture(scope="module")
def unmasked() -> Report:
    """Puzzle 2 without a mask: every case but one reads past the end of x."""
    return _check(P02, _bug(P02, "no_mask"))


@pytest.fixture(scope="module")
def solved() -> Report:
    return _check(P02, P02.solution.read_text(encoding="utf-8"))


def test_the_out_of_bounds_explanation_appears_once(unmasked):
    failures = [r for r in unmasked.results if r["status"] != "pass"]
    assert len(failures) == 8 and all(r["error"]["kind"] == "out_of_bounds" for r in failures)
    html = html_report.to_html(unmasked)
    assert html.count(OOB_PARAGRAPH) == 1, html
    assert html.count("mask = offsets &lt; N") == 1, html       # the fix's code, once, in the kernel's names
    # each later case refers to it, and keeps what is its own: which offsets it reached
    assert html.count("the same as above (for documented configuration, N=10)") >= 2 * (len(failures) - 1)
    assert "Element offsets 33, 34, 35, 36, 37, 38, ... (31 offending offsets in all)" in html


def _cells(head: str, column: int) -> list[str]:
    """The words of one column of the cases' tables, row by row."""
    rows = re.findall(r"<tr><td>(?:✅|❌)</td>(.*?)</tr>", head)
    return [_plain(re.findall(r"<td[^>]*>(.*?)</td>", row)[column]) for row in rows]


def _plain(markup: str) -> str:
    """What a reader sees of the HTML: its words, without tags."""
    return " ".join(html_lib.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


@pytest.fixture(scope="module")
def p11_name_error() -> Report:
    """Puzzle 11's one-block part with a name the kernel never assigns: every case stops on it."""
    code = P11.solution.read_text(encoding="utf-8").replace("e = tl.exp(x - m)\n", "e = tl.exp(x - mx)\n", 1)
    return run_check(P11, ["forward"], from_text(code, "learner"), backend="interpreter", in_process=True,
                     write=lambda line: None)


def test_an_error_is_said_once_with_its_names_as_code(p11_name_error):
    """The first failure says the error in full, its place with the kernel's name as code (no raw
    backticks anywhere); the folded failures after it say it is the same, not its words again."""
    head, tail = html_report.report_html(p11_name_error)
    page = _plain(head + tail)
    assert "`" not in page, page
    assert "at <code>softmax_fwd_kernel</code>, learner, line" in head
    assert page.count("A kernel sees only its arguments") == 1, page    # the message's end: in full once
    assert tail.count("the same error as above") == len(p11_name_error.cases) - 1


def test_a_problem_said_under_its_part_is_not_repeated_in_its_heading():
    """A kernel not defined: its heading says the part did not run, the line under it why, once."""
    code = P11.solution.read_text(encoding="utf-8").replace("def softmax_fwd_kernel(", "def softmax_fwd_kernl(")
    report = run_check(P11, ["forward"], from_text(code, "learner"), backend="interpreter", in_process=True,
                       write=lambda line: None)
    page = _plain(html_report.to_html(report))
    assert page.count("is not defined in learner") == 1 and "`" not in page, page
    assert "one block per row — Interpreter (CPU): not run" in page, page


def test_the_sizes_have_one_column_and_the_labels_are_true_of_the_part(p11_name_error):
    """Every row's sizes in their column, the case column without them; the one-block part takes a row in
    one block of its own width, so no label there says a row is wider than CHUNK (the online part's
    labels do, where it is true)."""
    head, tail = html_report.report_html(p11_name_error)
    sizes, labels = _cells(head, 0), _cells(head, 1)
    cases = [c for c in P11.cases() if not c.gpu_only]
    assert sizes == [c.dims if c.dtype == "float32" else f"{c.dims} {c.dtype}" for c in cases], sizes
    assert not any(label.startswith(c.dims) for label, c in zip(labels, cases)), labels
    assert "wider than" not in _plain(head + tail), head + tail
    assert "M=16, N=33: N not a power of two:" in _plain(tail)   # a folded failure's name: true of this part too
    online = {c.dims: c.label("online") for c in cases}
    assert online["M=16, N=33"] == "N not a power of two, N wider than CHUNK (8)"


def test_what_failed_quotes_the_finding_not_where_it_was_seen():
    """p05 with x read as if contiguous: the addresses' hint begins with where it was seen; the table's
    line quotes what is wrong there."""
    code = P05.solution.read_text(encoding="utf-8").replace(
        "x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn", "x_ptr + rows[:, None] * N + cols[None, :]", 1)
    report = run_check(P05, ["forward"], from_text(code, "learner"), backend="interpreter", in_process=True,
                       write=lambda line: None)
    head, _ = html_report.report_html(report)
    failed = [what for what in _cells(head, 2) if what]
    assert failed and not any("seen in the addresses" in what for what in failed), failed
    assert any("The addresses themselves are wrong" in what for what in failed), failed


def test_the_note_on_cases_not_run_comes_after_the_results(solved):
    head, _ = html_report.report_html(solved)
    assert head.index("</table>") < head.index("Not run here: 2 cases that only a GPU runs (N=100000; N=1048576)")


def test_the_verdict_comes_first_then_the_cases_then_the_first_failure_then_the_others_folded(unmasked):
    head, tail = html_report.report_html(unmasked)
    verdict = head.index("Overall Result: ❌ NOT ALL CORRECT")
    assert verdict < head.index("<table") < head.index("First failure: documented configuration, N=10")
    assert verdict == head.index('<p class="tgp-verdict')+ len('<p class="tgp-verdict tgp-fail">')  # nothing before it
    rows = re.findall(r"<tr><td>(✅|❌)</td>", head)
    assert rows == ["✅" if r["status"] == "pass" else "❌" for r in unmasked.results]
    assert "<details" not in head and tail.count("<details>") == 7        # the first in full, the others folded
    assert "Out-of-bounds load from <code>x_ptr</code>" in head              # the table says what failed


def test_a_passing_report_says_what_it_did_not_run(solved):
    head, tail = html_report.report_html(solved)
    assert solved.passed and solved.not_run
    assert "Overall Result: ✅ ALL CORRECT in the interpreter; 2 GPU-only cases not run" in head
    assert "Not run here: 2 cases that only a GPU runs" in head
    assert "First failure" not in head and "<details" not in head and tail == ""
    assert head.count("<tr><td>✅</td>") == len(solved.results)


@pytest.mark.parametrize("which", ["unmasked", "solved"])
def test_the_verdict_is_the_text_reports_last_line(which, request):
    report = request.getfixturevalue(which)
    assert html_report.verdict(report) == report.text.rstrip().split("\n")[-1]


def test_a_hint_repeated_across_cases_is_shown_once():
    """p22 with the unbiased variance: the same hint for every output of every case."""
    p22 = registry.get("p22")
    report = run_check(p22, ["unfused"], from_text(_bug(p22, "unbiased_variance"), "learner"),
                       backend="interpreter", in_process=True, write=lambda line: None)
    hint = "matches LayerNorm with the unbiased variance (divided by H - 1): LayerNorm divides by H."
    head, tail = html_report.report_html(report)
    assert f"<p>hint: {hint}</p>" in head and (head + tail).count(f"<p>hint: {hint}</p>") == 1
    assert "the same hint as above" in head                                 # the table's later rows
    assert tail.count("hint: the same as above (for documented configuration") >= 2 * 10


def test_a_hang_is_one_message_with_its_line():
    report = _check(P01, HANGS, in_process=False, timeout=3)
    html = html_report.to_html(report)
    assert not report.passed and "Overall Result: ❌ NOT ALL CORRECT" in html
    assert html.count("still running after 3 s, so it was stopped") == 1, html
    assert re.search(r"it was at <code>add_constant_kernel</code>, learner, line \d", html), html
    assert "stopped after" in html or "cases not run" in html                # the part says it did not finish


def test_a_crash_is_one_message_with_what_to_do():
    writer = ReportWriter(P01, write=lambda line: None)
    writer.pending_parts = ["forward"]
    for event in ({"type": "hello", "backend": "interpreter", "cuda": False, "device": "cpu", "triton": "3",
                   "torch": "2", "cases_per_part": 6},
                  {"type": "part_start", "part": "forward"},
                  {"type": "crash", "reason": "the worker died of SIGSEGV", "case": "N=32",
                   "stderr": "Fatal Python error: Segmentation fault"}):
        writer.handle(event)
    html = html_report.to_html(writer.finish(["forward"]))
    assert html.count("the worker died of SIGSEGV during N=32.") == 1, html
    assert "last words: Fatal Python error: Segmentation fault" in html and "the sanitizer" in html


def test_cells_that_do_not_run_show_the_error_and_its_line():
    code = P01.solution.read_text(encoding="utf-8") + "\nscale = undefined_scale * 2\n"
    html = html_report.to_html(_check(P01, code))
    assert "the kernel cells do not run" in html and "undefined_scale" in html, html
    assert re.search(r"learner, line \d+", html), html


def test_a_stub_says_it_is_not_written_yet():
    stub = stub_text(P01.solution.read_text(encoding="utf-8"), "add_constant_kernel")
    html = html_report.to_html(_check(P01, "import triton\nimport triton.language as tl\n\n" + stub))
    assert "not implemented yet" in html and "Overall Result: ❌ NOT ALL CORRECT" in html, html


def test_everything_from_the_learner_is_escaped():
    evil = "<script>alert(1)</script>"
    case = {"part": "forward", "backend": "Interpreter (CPU)", "dims": "N=3", "dtype": "float32", "documented": False}
    results = [
        {**case, "case": f"N=3 {evil}", "status": "error", "hints": [], "comparisons": [],
         "error": {"kind": "exception", "message": f"NameError: `{evil}`\n    x = {evil}", "where": f"cell 3 {evil}",
                   "code": f"y = '<b>{evil}</b>'", "traceback": f"Traceback {evil}"}},
        {**case, "case": f"N=4 <i>{evil}</i>", "status": "fail", "mutated": [evil],
         "hints": [{"hint": f"{evil}\n    <img src=x onerror=alert(1)>", "cause": "", "candidates": []}],
         "comparisons": [{"label": f"z{evil}", "title": evil, "ok": False, "max_diff": 1.0, "n_bad": 1,
                          "n_total": 2, "n_unwritten": 0, "first_bad": [[[0], 1.0, 2.0]], "allowed": 1e-5,
                          "rtol": 0.0, "hint": evil, "forward": True}]},
    ]
    report = Report(False, "", results, [{"part": "forward", "title": evil, "backend": evil, "passed": False,
                                          "correct": 0, "cases": 2, "unrun": 1, "problem": evil}],
                    usage_error=evil, hints=[{"part": "forward", "backend": evil, "hint": evil}],
                    not_run=[{"case": evil, "why": evil}],
                    faults=[{"kind": "hang", "part": "forward", "backend": evil, "case": evil,
                            "lines": [evil, f"  {evil}"]}])
    html = html_report.to_html(report)
    assert set(re.findall(r"<\s*/?\s*([A-Za-z][A-Za-z0-9]*)", html)) <= TAGS, html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_in_a_notebook_check_shows_its_title_and_report_as_html(tmp_path, monkeypatch, capsys):
    """check() as a Jupyter kernel runs it (IPython's display recorded): the title shown at once as
    HTML (a notebook's plain text output breaks words anywhere: "as las|t run"), the latest lines
    shown while it runs, then the HTML report in their place; the cell's value is the verdict line.
    Nothing is printed: no text report."""
    shown: list[tuple] = []

    class Handle:
        def update(self, bundle, raw=False):
            shown.append(("update", bundle))

    def display(bundle, raw=False, display_id=None):
        shown.append(("display", bundle))
        return Handle() if display_id else None

    monkeypatch.setattr("IPython.display.display", display)
    cell = tmp_path / "cell.py"  # a kernel defined as a notebook cell defines it: its source findable
    cell.write_text(_bug(P01, "added_one_instead_of_ten"), encoding="utf-8")
    namespace: dict = {}
    exec(compile(cell.read_text(encoding="utf-8"), str(cell), "exec"), namespace)
    report = check("p01", namespace=namespace, in_process=True, plot=False, html=True)
    assert capsys.readouterr().out == ""
    assert isinstance(report, NotebookReport) and not report.passed and report.results
    title = "Puzzle 1: Add a constant — checking forward from this notebook (the kernels as last run)"
    assert shown[0] == ("display", {"text/html": html_report.title_html(title), "text/plain": title})
    # in the report's own box, whose words wrap whole; not in a <pre>
    title_html = shown[0][1]["text/html"]
    assert '<div class="tgp-report"><p class="tgp-title">' in title_html and "<pre" not in title_html
    assert shown[1][0] == "display" and "text/html" not in shown[1][1]        # the latest lines, as text
    final = [bundle for how, bundle in shown[1:] if "text/html" in bundle]
    assert [how for how, bundle in shown[1:] if "text/html" in bundle] == ["update", "display"]  # in place; the rest
    assert final[0]["text/html"].index("Overall Result: ❌ NOT ALL CORRECT") < final[0]["text/html"].index("<table")
    assert final[0]["text/plain"] == report.text and "<details>" in final[1]["text/html"]
    report._ipython_display_()  # the cell's value: the verdict is on the screen already, once
    assert capsys.readouterr().out == ""


def test_outside_a_notebook_the_report_is_text():
    assert not in_jupyter()
    report = check("p01", solution=True, in_process=True, plot=False, only_documented=True)
    assert type(report) is Report and report.passed
