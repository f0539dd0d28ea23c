"""The progress view: every check of a learner's own notebook (the command line, --all, check() in a
notebook, --bench) records its outcome in the store, never in the notebook; a check of any other
notebook (a copy elsewhere, a class's, a page of the book's) records nothing; `--progress` and
progress() lay the store out in puzzle order, a hang, a crash and code that does not run as what
they were; a missing or corrupt store is said kindly."""
from __future__ import annotations

import json

import pytest

from checker import cli, registry
from checker.bench.measured import BenchRow
from checker.history import store, view
from checker.notebook import check, progress
from checker.report.model import Report
from learner_notebooks import namespace_of, solved_notebook

P01, P02, P22, P25 = (registry.get(k) for k in ("p01", "p02", "p22", "p25"))


@pytest.fixture
def state(tmp_path, monkeypatch):
    """A store of this test's own."""
    monkeypatch.setenv(store.STATE_ENV, str(tmp_path / "state"))
    return tmp_path / "state" / store.FILE


@pytest.fixture
def mine(tmp_path, monkeypatch):
    """The learner's own notebooks' folder (puzzles/ of a checkout), here in tmp_path."""
    folder = tmp_path / "puzzles"
    folder.mkdir()
    monkeypatch.setattr(store, "learner_folder", lambda: folder)
    return folder


def _report(puzzle, outcomes: list[tuple[str, str, int, int]]) -> Report:
    """A report as a check leaves it: (part, backend label, correct, cases) per part and backend."""
    parts = [{"part": part, "title": puzzle.part(part).title, "backend": backend, "passed": correct == cases,
              "correct": correct, "cases": cases, "unrun": 0, "problem": ""}
             for part, backend, correct, cases in outcomes]
    return Report(all(p["passed"] for p in parts), "", [], parts)


def test_a_command_line_check_writes_the_store_and_not_the_notebook(state, mine, capsys):
    notebook = solved_notebook(P01, mine / P01.notebook.name)
    before = notebook.read_bytes()
    assert cli.main(["p01", "--notebook", str(notebook), "--backend", "interpreter"]) == 0
    outcome = store.load().outcome("p01", "forward", "interpreter")
    assert outcome["passed"] and outcome["verdict"] == "pass" and outcome["correct"] == outcome["cases"] > 0
    assert outcome["checked"] and notebook.read_bytes() == before
    assert not list(mine.glob("*.json"))  # the store is in its own folder, nothing beside the notebook


def _live(code: str, tmp_path, notebook) -> dict:
    """A kernel defined as a notebook's cell defines it, in a notebook its front end names."""
    namespace = namespace_of(code, tmp_path)
    namespace["__session__"] = str(notebook)
    return namespace


def test_a_notebook_check_writes_the_store_and_a_solution_check_does_not(state, mine, tmp_path):
    code = P02.solution.read_text(encoding="utf-8").replace("mask = offsets < N", "mask = offsets < N // BLOCK * BLOCK")
    report = check("p02", namespace=_live(code, tmp_path, mine / P02.notebook.name), backend="interpreter",
                   in_process=True, plot=False, html=False, only_documented=True)
    assert not report.passed
    outcome = store.load().outcome("p02", "forward", "interpreter")
    assert not outcome["passed"] and outcome["correct"] < outcome["cases"]
    check("p01", solution=True, backend="interpreter", in_process=True, plot=False, html=False, only_documented=True)
    assert store.load().outcome("p01", "forward", "interpreter") is None  # the reference is not your progress


def test_checks_of_other_notebooks_leave_the_learners_progress_untouched(state, mine, tmp_path, capsys):
    """A copy checked with --notebook, a class's folder with --all, a notebook elsewhere running
    check(): none of them is the learner's progress (the book's build: tests/test_book_progress.py)."""
    solved_notebook(P01, mine / P01.notebook.name)
    assert cli.main(["p01", "--backend", "interpreter", "--notebook", str(mine / P01.notebook.name)]) == 0
    before = state.read_bytes()
    other = solved_notebook(P01, tmp_path / "elsewhere" / P01.notebook.name, P01.solution.read_text(
        encoding="utf-8").replace("x + 10.0", "x + 1.0"))
    assert cli.main(["p01", "--backend", "interpreter", "--notebook", str(other)]) == 1
    assert "Not recorded in your progress" in capsys.readouterr().err
    cli.main(["--all", "--backend", "interpreter", "--folder", str(other.parent)])
    code = P02.solution.read_text(encoding="utf-8")
    check("p02", namespace=_live(code, tmp_path, other.parent / P02.notebook.name), backend="interpreter",
          in_process=True, plot=False, html=False, only_documented=True)
    assert state.read_bytes() == before


def test_the_view_shows_a_hang_a_crash_and_code_that_does_not_run_as_what_they_were(state):
    hang = {"kind": "hang", "part": "unfused", "backend": "Interpreter (CPU)", "case": "N=8", "lines": ["hung"]}
    syntax = {"kind": "syntax", "part": "fused", "backend": "Interpreter (CPU)", "case": "", "lines": ["x"]}
    crash = {"kind": "crash", "part": "backward", "backend": "GPU (H100)", "case": "N=8", "lines": ["killed"]}
    report = _report(P22, [("unfused", "Interpreter (CPU)", 2, 3), ("fused", "Interpreter (CPU)", 0, 0),
                           ("backward", "GPU (H100)", 0, 1)])
    report.parts[1].update(passed=False, problem="SyntaxError: '(' was never closed")
    report.faults = [hang, syntax, crash]
    store.record_check(P22, report)
    rows = {r.part: r for r in view.rows(store.load()) if r.puzzle.key == "p22"}
    assert (rows["unfused"].interpreter, rows["fused"].interpreter, rows["backward"].gpu) == \
        ("❌ hang", "❌ does not run", "❌ crash")


@pytest.mark.every_puzzle
def test_the_view_lists_every_puzzle_in_puzzle_order_and_each_part_in_the_puzzles_order(state):
    store.record_check(P22, _report(P22, [("fused", "Interpreter (CPU)", 3, 5)]))
    store.record_check(P02, _report(P02, [("forward", "GPU (NVIDIA H100)", 11, 11)]))
    store.record_check(P22, _report(P22, [("unfused", "Interpreter (CPU)", 5, 5)]))
    store.record_check(P01, _report(P01, [("forward", "Interpreter (CPU)", 6, 6)]))
    rows = view.rows(store.load())
    assert [r.puzzle.number for r in rows] == sorted(r.puzzle.number for r in rows)
    assert {r.puzzle.key for r in rows} == {p.key for p in registry.all_puzzles()}
    p22 = [r.part for r in rows if r.puzzle.key == "p22"]
    assert p22 == [p.name for p in P22.parts]  # the puzzle's order, not the order they were checked in
    assert [r.interpreter for r in rows if r.puzzle.key == "p22"] == ["✅ 5/5", "❌ 3/5", view.NOT_CHECKED]
    by_key = {(r.puzzle.key, r.part): r for r in rows}
    assert by_key["p01", "forward"].interpreter == "✅ 6/6" and by_key["p01", "forward"].gpu == view.NOT_CHECKED
    assert by_key["p02", "forward"].gpu == "✅ 11/11"
    assert by_key["p22", "fused"].interpreter == "❌ 3/5"
    assert by_key["p03", None].title == "not checked yet"
    lines = view.text_lines()
    assert "2 of" in lines[0] and "1 on a GPU" in lines[0]
    assert [ln.split()[0] for ln in lines if ln.startswith("p0")][:4] == ["p01", "p02", "p03", "p04"]


def test_a_part_keeps_its_last_outcome_and_the_time_of_its_last_check(state, monkeypatch):
    monkeypatch.setattr(store, "now", lambda: "2030-01-02T03:04:05")
    store.record_check(P01, _report(P01, [("forward", "Interpreter (CPU)", 2, 6)]))
    monkeypatch.setattr(store, "now", lambda: "2030-01-02T09:30:00")
    store.record_check(P01, _report(P01, [("forward", "Interpreter (CPU)", 6, 6)]))
    row = next(r for r in view.rows(store.load()) if r.puzzle.key == "p01")
    assert (row.interpreter, row.last) == ("✅ 6/6", "2030-01-02 09:30")


def test_a_missing_store_is_an_empty_view(state):
    assert not state.exists()
    lines = view.text_lines()
    assert lines[0].startswith("Your progress: 0 of") and "could not be read" not in "\n".join(lines)
    assert cli.main(["--progress"]) == 0


@pytest.mark.parametrize("text", ["{\"puzzles\": {\"p01\": ", "[1, 2]", "not json at all"])
def test_a_corrupt_store_is_said_kindly_and_moved_aside_at_the_next_check(state, text, capsys):
    state.parent.mkdir(parents=True)
    state.write_text(text, encoding="utf-8")
    assert cli.main(["--progress"]) == 0
    out = capsys.readouterr().out
    assert "could not be read" in out and "moves it aside" in out and "Traceback" not in out
    assert "could not be read" in progress()._repr_html_()
    assert store.record_check(P01, _report(P01, [("forward", "Interpreter (CPU)", 6, 6)]))
    assert (state.parent / store.CORRUPT).read_text(encoding="utf-8") == text  # kept, out of the way
    assert store.load().outcome("p01", "forward", "interpreter")["passed"]


def test_an_unwritable_store_does_not_stop_a_check(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(store.STATE_ENV, str(blocker / "state"))  # a folder inside a file: cannot be made
    assert store.record_check(P01, _report(P01, [("forward", "Interpreter (CPU)", 6, 6)])) is False


def _bench_rows(ms: float, flops: float | None = None) -> list[BenchRow]:
    """Two sizes: the fraction is read at the larger (0.5 GB in `ms`, against a 1000 GB/s copy)."""
    return [BenchRow("small", "M=4", "float32", 0.01, 0.02, 0.02, 0.001, None, 500.0, "NVIDIA H100"),
            BenchRow("large", "M=4096", "float32", ms, 2 * ms, 1.5 * ms, 0.5, flops, 1000.0, "NVIDIA H100")]


def test_bench_records_the_gpu_check_and_keeps_the_best_fraction_of_the_roofline(state, mine, monkeypatch):
    """The GPU path, mocked: run_bench hands the command line its GPU check's report, then the rows."""
    notebook = solved_notebook(P25, mine / P25.notebook.name)
    runs = iter([1.0, 0.625, 0.8])  # ms at the large size: fractions 0.5, 0.8, 0.625

    def fake_bench(puzzle, source, *, checked=None, **_):
        checked(_report(puzzle, [(puzzle.bench.part, "GPU (NVIDIA H100)", 8, 8)]))
        return 0, _bench_rows(next(runs))

    monkeypatch.setattr("checker.run.session.run_bench", fake_bench)
    for _ in range(3):
        assert cli.main(["p25", "--bench", "--notebook", str(notebook)]) == 0
    progress_now = store.load()
    assert progress_now.bench("p25")["fraction"] == pytest.approx(0.8)
    assert progress_now.outcome("p25", P25.bench.part, "gpu")["device"] == "NVIDIA H100"
    row = next(r for r in view.rows(progress_now) if r.puzzle.key == "p25")
    assert row.gpu == "✅ 8/8" and row.bench == "0.80 of the roofline (NVIDIA H100)"


def test_a_bench_of_the_solution_records_nothing(state, monkeypatch):
    monkeypatch.setattr("checker.run.session.run_bench",
                        lambda puzzle, source, *, checked=None, **_: (0, _bench_rows(0.5)) if checked is None
                        else pytest.fail("a solution's check was handed over to be recorded"))
    assert cli.main(["p25", "--bench", "--solution"]) == 0
    assert store.load().bench("p25") is None


def test_a_bench_counted_in_flops_keeps_the_best_other_columns_time_over_yours():
    summary = store.bench_summary(_bench_rows(1.0, flops=10.0))
    assert summary["fraction"] is None and summary["other"] == "compile" and summary["other_over_yours"] == 1.5
    assert view.bench_words(summary) == "1.50× compile's speed (NVIDIA H100)"


def test_progress_in_a_notebook_is_an_html_table_in_puzzle_order(state):
    store.record_check(P02, _report(P02, [("forward", "Interpreter (CPU)", 9, 9)]))
    shown = progress()
    page = shown._repr_html_()
    assert page.count("<table") == 1 and page.index(">p01 ") < page.index(">p02 ") < page.index(">p03 ")
    assert "✅ 9/9" in page and "1 of" in page
    assert repr(shown).startswith("Your progress")  # outside Jupyter: the text view


def test_check_all_ends_with_the_way_to_the_progress_view(state, mine, capsys):
    solved_notebook(P01, mine / P01.notebook.name)
    cli.main(["--all", "--folder", str(mine), "--backend", "interpreter"])
    said = capsys.readouterr().err.strip().splitlines()
    assert said[-1] == cli.PROGRESS_LINK
    assert store.load().outcome("p01", "forward", "interpreter")["passed"]
    assert json.loads(state.read_text(encoding="utf-8"))["schema"] == store.SCHEMA


def test_the_book_index_says_how_to_see_your_progress():
    from checker.puzzle.model import REPO_ROOT
    index = (REPO_ROOT / "book" / "index.md").read_text(encoding="utf-8")
    assert "python -m checker --progress" in index and "progress()" in index


@pytest.mark.gpu
def test_a_real_bench_records_the_gpu_check_and_its_fraction_of_the_roofline(state, mine):
    notebook = solved_notebook(P25, mine / P25.notebook.name)
    assert cli.main(["p25", "--bench", "--notebook", str(notebook)]) == 0
    recorded = store.load()
    assert recorded.outcome("p25", P25.bench.part, "gpu")["passed"]
    assert 0 < recorded.bench("p25")["fraction"] < 2 and recorded.bench("p25")["device"]
    assert "of the roofline" in "\n".join(view.text_lines(recorded))


def test_a_page_that_runs_checks_leaves_the_learners_progress_untouched(state, tmp_path):
    """A page of the book executed as the build executes it (nbclient, in the page's own folder),
    checking a notebook the way the case studies do: `python -m checker ... --notebook` (its kernel
    cell does not parse, which the checker says without starting a worker: seconds, and a report
    recorded before as any other). The learner's store stays as it was (a check() on such a page:
    the test above, and the next)."""
    import os

    import nbclient
    import nbformat

    from checker.puzzle.model import REPO_ROOT
    store.record_check(P01, _report(P01, [("forward", "Interpreter (CPU)", 6, 6)]))
    before = state.read_bytes()
    buggy = P01.solution.read_text(encoding="utf-8").replace("x + 10.0)", "x + 10.0")
    solved_notebook(P01, tmp_path / "page" / "bug.ipynb", buggy)
    cell = ("import os, subprocess, sys\n"
            "run = subprocess.run([sys.executable, '-m', 'checker', 'p01', '--notebook', 'bug.ipynb'],\n"
            "                     capture_output=True, text=True, env=dict(os.environ, TRITON_PUZZLES_NO_SERVER='1'))\n"
            "assert run.returncode == 1 and 'NOT ALL CORRECT' in run.stdout, run.stdout + run.stderr")
    page = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = path  # the kernel inherits it, as the build's kernels inherit the build's
    try:
        nbclient.NotebookClient(page, timeout=120, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path / "page")}}).execute()
    finally:
        os.environ.pop("PYTHONPATH") if saved is None else os.environ.__setitem__("PYTHONPATH", saved)
    assert state.read_bytes() == before


def test_a_check_in_a_notebook_no_front_end_names_counts_where_it_runs(state, mine, tmp_path, monkeypatch):
    """Without a front end's name for the notebook (the book's build, a script), a check is the
    learner's where it runs in puzzles/ (a Jupyter kernel runs in its notebook's folder)."""
    from checker.notebook import learners_notebook
    monkeypatch.chdir(tmp_path)
    assert not learners_notebook({})
    monkeypatch.chdir(mine)
    assert learners_notebook({})
    assert not learners_notebook({"__session__": str(tmp_path / "book" / "p01.ipynb")})
    assert learners_notebook({"__vsc_ipynb_file__": str(mine / "p01_add_constant.ipynb")})
