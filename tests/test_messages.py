"""Messages that fit the mistake: each test here failed before the fix it guards.

- the check cell checks the kernels as last run in the notebook (nbclient runs the real notebook
  with a kernel cell edited in memory only; the file on disk keeps its stub);
- a syntax error in one cell fails only the parts whose kernels it holds; in a live notebook it is
  reported as a syntax error, not as "not defined"; an untagged cell is named as such;
- (races on plain vs accumulated outputs: tests/test_sanitizer.py and the catalogs' misleading words);
- a crash names the next step; the figure shows the report's first failure, with whole-number ticks.
"""
from __future__ import annotations

import json

import pytest

from checker import registry, stubs
from checker.report.model import Report
from checker.report.text import ReportWriter
from checker.run.session import run_check
from checker.source import from_namespace, from_notebook, static_problems

P01, P22 = registry.get("p01"), registry.get("p22")


def test_check_cell_checks_the_kernels_as_last_run_in_the_notebook(tmp_path):
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.read(str(P01.notebook), as_version=4)
    stubs.kernel_cells(notebook)[0]["source"] = P01.solution.read_text(encoding="utf-8")  # in memory only
    before = P01.notebook.read_bytes()
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    check_cell = next(c for c in notebook.cells if c.cell_type == "code" and c.source.startswith("check("))
    # printed lines, and the text form of what was displayed (the notebook's report is HTML)
    text = "".join(o.get("text", "") or o.get("data", {}).get("text/plain", "") for o in check_cell.outputs)
    assert "this notebook (the kernels as last run)" in text, text
    assert "Overall Result: ✅ ALL CORRECT" in text, text
    assert P01.notebook.read_bytes() == before


def _p22_notebook(tmp_path, fused_cell: str, untag_first: bool = False):
    notebook = json.loads(P22.notebook.read_text(encoding="utf-8"))
    solution = P22.solution.read_text(encoding="utf-8")
    cells = stubs.kernel_cells(notebook)
    cells[0]["source"] = solution.split("@triton.jit\ndef ln_linear_fwd_kernel")[0]  # helper + unfused kernel
    cells[1]["source"] = fused_cell
    if untag_first:
        cells[0]["metadata"]["tags"] = []
    path = tmp_path / "learner.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return from_notebook(path, "learner.ipynb")


def test_a_syntax_error_in_one_cell_fails_only_the_parts_that_need_it(tmp_path):
    source = _p22_notebook(tmp_path, "@triton.jit\ndef ln_linear_fwd_kernel(x_ptr,\n    oops")
    assert static_problems(source, P22.part("unfused").kernels) == []
    fused = static_problems(source, P22.part("fused").kernels)
    assert [p.kind for p in fused] == ["syntax"]
    assert fused[0].where.startswith("the cell that defines `ln_linear_fwd_kernel`, line "), fused[0].where
    lines: list[str] = []
    report = run_check(P22, ["unfused", "fused"], source, backend="interpreter", only_documented=True,
                       in_process=True, write=lines.append)
    by_part = {p["part"]: p["passed"] for p in report.parts}
    assert by_part == {"unfused": True, "fused": False}, "\n".join(lines)


def test_a_kernel_in_an_untagged_cell_is_named_as_such(tmp_path):
    source = _p22_notebook(tmp_path, "", untag_first=True)
    problems = static_problems(source, P22.part("unfused").kernels)
    assert "is in the cell that defines `row_statistics`, which is not tagged `kernel`" in problems[0].message


def test_a_notebook_without_kernel_cells_says_so(tmp_path):
    notebook = json.loads(P01.notebook.read_text(encoding="utf-8"))
    notebook["cells"] = [c for c in notebook["cells"] if "kernel" not in c.get("metadata", {}).get("tags", [])]
    path = tmp_path / "empty.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    problems = static_problems(from_notebook(path, "empty.ipynb"), P01.kernel_names)
    assert "no cell of empty.ipynb is tagged `kernel`" in problems[0].message


def test_live_notebook_syntax_error_is_a_syntax_error_not_a_missing_name():
    history = ["import triton", "@triton.jit\ndef add_constant_kernel(x_ptr, z_ptr, N, BLOCK: tl.constexpr):\n"
                                "    offsets = tl.arange(0, BLOCK\n"]
    problems = static_problems(from_namespace({"_ih": history}), P01.kernel_names)
    assert problems[0].kind == "syntax" and "SyntaxError" in problems[0].message, problems
    assert "not defined" not in problems[0].message


def test_live_notebook_never_run_cell_says_run_it():
    problems = static_problems(from_namespace({"_ih": ["import triton"]}), P01.kernel_names)
    assert "run the cell that defines it" in problems[0].message


KERNEL = P01.solution.read_text(encoding="utf-8")
UNCLOSED = KERNEL.replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK", 1)


def _ran(cells: list[str], good: int, notebook=None) -> dict:
    """A live notebook's namespace after running `cells` in order, of which only cells[good] ran
    without an error (its functions defined, from text IPython keeps in linecache), as IPython
    keeps them: _ih[n] is the cell of execution count n, failed runs included."""
    import linecache
    filename = f"<ipython-input-{good + 1}>"
    linecache.cache[filename] = (len(cells[good]), None, cells[good].splitlines(True), filename)
    namespace: dict = {"_ih": ["", *cells]}
    exec(compile(cells[good], filename, "exec"), namespace)
    if notebook is not None:
        namespace["__session__"] = str(notebook)
    return namespace


def test_a_kernel_whose_cell_no_longer_runs_is_not_checked_and_the_report_says_so_first():
    """The kernel cell ran once, then again with a SyntaxError: the old kernel is still defined, and
    a check would report on code the learner no longer has. Not checked, unless asked."""
    namespace = _ran([KERNEL, UNCLOSED], good=0)
    source = from_namespace(namespace)
    assert "add_constant_kernel" in source.stale and "def add_constant_kernel" not in source.text
    problems = static_problems(source, P01.kernel_names)
    assert [p.kind for p in problems] == ["stale"] and "stale=True" in problems[0].message
    assert problems[0].lead.startswith("The cell that defines `add_constant_kernel` does not run "
                                       "(SyntaxError: '(' was never closed, line ")
    lines: list[str] = []
    report = run_check(P01, ["forward"], source, backend="interpreter", in_process=True, write=lines.append)
    assert lines[1] == f"❌ {problems[0].lead}" and "✅" not in "\n".join(lines) and not report.passed
    assert [f["kind"] for f in report.faults] == ["cell", "stale"]
    kept = from_namespace(namespace, stale_too=True)  # check(..., stale=True): as it last ran
    assert "def add_constant_kernel" in kept.text and static_problems(kept, P01.kernel_names) == []
    fixed = _ran([UNCLOSED, KERNEL], good=1)  # fixed and run again: nothing stale
    assert from_namespace(fixed).stale == {}


def test_a_kernel_cell_changed_after_it_ran_is_found_in_the_notebook_as_saved(tmp_path):
    notebook = json.loads(P01.notebook.read_text(encoding="utf-8"))
    cell = stubs.kernel_cells(notebook)[0]
    path = tmp_path / "p01.ipynb"

    def save(text: str, count: int) -> dict:
        cell.update(source=text, execution_count=count)
        path.write_text(json.dumps(notebook), encoding="utf-8")
        return _ran(["import triton", KERNEL], good=1, notebook=path)

    assert from_namespace(save(KERNEL, 2)).stale == {}  # saved as it ran
    assert from_namespace(save(KERNEL.replace("10.0", "1.0"), 1)).stale == {}  # an older save: no evidence
    edited = from_namespace(save(KERNEL.replace("10.0", "1.0"), 2)).stale  # edited after run 2, saved
    assert edited["add_constant_kernel"].lead.startswith("The cell that defines `add_constant_kernel` changed "
                                                         "after it last ran")


def test_a_crash_names_the_sanitizer_as_the_next_step():
    lines: list[str] = []
    writer = ReportWriter(P01, lines.append)
    writer.pending_parts = ["forward"]
    writer.handle({"type": "crash", "case": "N=32", "reason": "the checker's worker process was killed by SIGSEGV",
                   "stderr": ""})
    text = "\n".join(lines)
    assert "SIGSEGV" in text and "sanitizer" in text and "names the line" in text


def test_the_figure_shows_the_first_failure_with_whole_number_ticks():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    from checker.report.plot import plot_failures
    first = {"part": "forward", "case": "N=5", "dims": "N=5", "status": "error", "error_maps": {}}
    later = {"part": "forward", "case": "N=1000", "dims": "N=1000", "status": "fail",
             "error_maps": {"z": {"grid": [[0.1, 5.0, 0.2]], "rows": 1, "cols": 3}}}
    assert plot_failures(Report(False, "", [first, later])) is None  # it raised: the text says why
    small = {"part": "forward", "case": "M=3, N=3", "dims": "M=3, N=3", "status": "fail",
             "error_maps": {"z": {"grid": [[0.1, 5.0, 0.2]] * 3, "rows": 3, "cols": 3}}}
    fig = plot_failures(Report(False, "", [small, later]))
    ax = fig.axes[0]
    ticks = [t for t in ax.get_yticks() if -0.5 <= t <= 2.5]
    assert all(float(t).is_integer() for t in ticks), ticks
    assert "pooled" not in ax.get_xlabel() and "worst of several" not in ax.get_xlabel()
    assert "M=3, N=3" in fig._suptitle.get_text()


def test_an_interrupted_check_says_so_in_one_line_and_keeps_the_kernel(monkeypatch, capsys):
    import checker.notebook as notebook

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(notebook, "run_check", interrupted)
    report = notebook.check("p01", solution=True)
    out = capsys.readouterr().out
    assert not report and out.strip().startswith("❌ Interrupted") and "Traceback" not in out


def test_a_slow_case_says_it_is_still_running_and_when_it_stops():
    lines: list[str] = []
    writer = ReportWriter(P01, lines.append)
    writer.handle({"type": "slow", "part": "forward", "case": "N=1024", "after": 10.0, "timeout": 60.0})
    assert "N=1024: still running after 10 s (stopped at 60 s)" in "\n".join(lines)


# -- diagnose: a hint names a cause only as far as the evidence goes ---------------------------------
def _diagnosis(got: dict, ref: dict, alternatives: dict, patterns: list):
    """output_hint for output "loss" of a made-up puzzle with two outputs, loss and dx."""
    import types

    import torch

    from checker.evidence.compare import compare
    from checker.diagnosis.values import output_hint
    from checker.puzzle.model import Output, Reference, Tolerance
    tol = Tolerance(atol=1e-5, rtol=1e-5)
    reference = Reference(outputs=ref, scales={k: 1.0 for k in ref}, alternatives=alternatives)
    comparison = compare("loss", got["loss"], ref["loss"], 1.0, tol, None)
    return output_hint(types.SimpleNamespace(patterns=patterns), Output("loss", "loss", True), got["loss"],
                       reference, tol, comparison, others={"dx": (got["dx"], tol)})


def test_a_scalar_near_a_known_bug_names_it_only_where_the_other_outputs_agree():
    import torch

    from checker.puzzle.model import Pattern
    ref = {"loss": torch.tensor([2.0], dtype=torch.float64), "dx": torch.arange(6, dtype=torch.float64)}
    bug = {"loss": torch.tensor([2.5], dtype=torch.float64), "dx": 2 * torch.arange(6, dtype=torch.float64)}
    patterns = [Pattern("doubled", "dx is doubled", "formula")]
    # the loss and dx both as the known bug computes them: named
    agree = _diagnosis({"loss": bug["loss"].clone(), "dx": bug["dx"].clone()}, ref, {"doubled": bug}, patterns)
    assert agree.cause == "formula"
    # the loss alone lands on the bug's number, dx is neither right nor the bug's: one number is no evidence
    chance = _diagnosis({"loss": bug["loss"].clone(), "dx": torch.ones(6, dtype=torch.float64)}, ref,
                        {"doubled": bug}, patterns)
    assert chance.cause != "formula" and "dx is doubled" not in chance.text


def test_nan_from_large_inputs_also_asks_about_a_loop_that_skips_part_of_the_row():
    import torch

    from checker.evidence.compare import compare
    from checker.diagnosis.values import Evidence, output_hint
    from checker.puzzle.model import Output, Reference, Tolerance
    tol = Tolerance(atol=1e-5, rtol=1e-5)
    ref = torch.ones(4, 8, dtype=torch.float64)
    got = ref.clone()
    got[0, :3] = float("nan")
    import types
    hint = output_hint(types.SimpleNamespace(patterns=[]), Output("y", "y", True), got, Reference({"y": ref}, {"y": 1.0}), tol,
                       compare("y", got, ref, 1.0, tol, None), Evidence(sanitized=True, input_peak=40.0))
    assert hint.candidates[0] == "stability" and "loop" in hint.candidates


def test_values_stored_one_place_late_are_an_address_though_some_were_never_written():
    """A store one element late: every written value is the one expected a place before it, and the
    first element keeps the checker's NaN fill. The shift is the evidence, not the unwritten element."""
    import types

    import torch

    from checker.evidence.compare import compare
    from checker.diagnosis.values import output_hint
    from checker.puzzle.model import Output, Reference, Tolerance
    tol = Tolerance(atol=1e-5, rtol=1e-5)
    ref = torch.randn(4, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    got = torch.full_like(ref, float("nan"))
    got.view(-1)[1:] = ref.view(-1)[:-1]  # the last value went past the end
    hint = output_hint(types.SimpleNamespace(patterns=[]), Output("y", "y", True), got, Reference({"y": ref}, {"y": 1.0}),
                       tol, compare("y", got, ref, 1.0, tol, torch.isnan(got)))  # NaN: the checker's fill
    assert hint.cause == "address" and "off by 1" in hint.text and "never written" in hint.text


def test_nan_read_from_another_output_left_unwritten_points_there_before_large_inputs():
    """A first kernel leaves the last column of z unwritten (its mask one short), a second reads z:
    y is NaN in a case whose inputs are large. The unwritten z is the evidence, not the inputs' size."""
    import types

    import torch

    from checker.evidence.compare import compare
    from checker.diagnosis.values import Evidence, output_hint
    from checker.puzzle.model import Output, Reference, Tolerance
    tol = Tolerance(atol=1e-5, rtol=1e-5)
    ref = torch.randn(4, 8, dtype=torch.float64) + 1000.0
    got = torch.full_like(ref, float("nan"))
    evidence = Evidence(sanitized=False, input_peak=1003.0, unwritten={"z": 4})
    hint = output_hint(types.SimpleNamespace(patterns=[]), Output("y", "y", True), got,
                       Reference({"y": ref}, {"y": 1.0}), tol, compare("y", got, ref, 1.0, tol, None), evidence)
    assert hint.candidates == ("mask", "address", "loop") and "`z`" in hint.text


def test_a_constant_factor_also_asks_about_a_mask_or_row_offsets_that_leave_terms_out():
    import torch

    from checker.diagnosis.factors import ratio_hint as _ratio_hint
    ref = torch.linspace(1.0, 2.0, 12, dtype=torch.float64)
    hint = _ratio_hint(3 * ref, ref, None)  # a whole factor: named without a case
    assert hint.candidates == ("formula", "loop", "accumulate", "mask", "address")
    assert "wrong block size" in hint.text


def test_nan_in_a_case_with_a_size_of_one_blames_that_size_only_where_it_is_rare():
    import types

    import torch

    from checker.evidence.compare import compare
    from checker.diagnosis.values import Evidence, output_hint
    from checker.puzzle.model import Output, Reference, Tolerance
    tol = Tolerance(atol=1e-5, rtol=1e-5)
    ref = torch.ones(4, 8, dtype=torch.float64)
    got = ref.clone()
    got[0, :3] = float("nan")

    def hint(batches: list[int]):
        puzzle = types.SimpleNamespace(patterns=[], cases=lambda: [types.SimpleNamespace(sizes={"B": b}) for b in batches])
        return output_hint(puzzle, Output("y", "y", True), got, Reference({"y": ref}, {"y": 1.0}), tol,
                           compare("y", got, ref, 1.0, tol, None), Evidence(sanitized=True),
                           types.SimpleNamespace(sizes={"B": 1, "N": 8}, params={}))
    assert "B = 1" in hint([1, 2, 4, 4]).text            # one batch is rare: a division by B - 1?
    assert hint([1, 2, 4, 4]).candidates == ("formula", "loop", "mask", "address", "accumulate")
    assert "B = 1" not in hint([1, 1, 1, 2]).text        # most cases have one: says nothing
    assert "address" in hint([1, 1, 1, 2]).candidates


def test_a_scalar_output_is_a_bar_with_its_values_not_a_heat_map():
    """p27's loss: a 1x1 heat map said nothing and crowded its ticks."""
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import torch

    from checker.case.error_map import error_map as _error_map
    from checker.report.plot import plot_failures
    loss = _error_map(torch.tensor(2.5), torch.tensor(0.625, dtype=torch.float64), 1e-3)
    assert (loss["rows"], loss["cols"], loss["got"], loss["expected"]) == (1, 1, 2.5, 0.625)
    failed = {"part": "forward", "case": "M=4, V=8", "dims": "M=4, V=8", "status": "fail",
              "error_maps": {"loss": loss}}
    fig = plot_failures(Report(False, "", [failed]))
    ax = fig.axes[0]
    assert not ax.images and len(fig.axes) == 1, "a heat map (and its colour bar) for a scalar"
    assert ax.get_xscale() == "log" and list(ax.get_yticks()) == []
    words = " ".join(t.get_text() for t in ax.texts)
    assert "got 2.5" in words and "expected 0.625" in words


def test_a_line_is_placed_in_the_cell_of_its_kernel_and_markdown_cells_are_not_counted(tmp_path):
    """JupyterLab numbers no cells, and its markdown cells hold no code: "cell 4, line 7" counted both."""
    notebook = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# p01"},
                          {"cell_type": "code", "metadata": {}, "source": "import torch"},
                          {"cell_type": "markdown", "metadata": {}, "source": "write it"},
                          {"cell_type": "code", "metadata": {"tags": ["kernel"]},
                           "source": "@triton.jit\ndef helper(x):\n    return x\n\n\n@triton.jit\ndef add_kernel(x_ptr):\n"
                                     "    pid = tl.program_id(0)\n    y = undefined\n"},
                          {"cell_type": "code", "metadata": {"tags": ["kernel"]}, "source": "x = 1\ny = 2\n"}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    source = from_notebook(path, "n.ipynb")
    lines = source.text.split("\n")
    assert source.describe_line(lines.index("    y = undefined") + 1) == "`add_kernel`, line 9 of the cell that defines `helper`"
    assert source.describe_line(lines.index("    return x") + 1) == "`helper`, line 3 of its cell"
    assert source.describe_line(lines.index("y = 2") + 1) == "line 2 of code cell 3"
