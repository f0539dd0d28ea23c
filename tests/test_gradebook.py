"""A teacher's gradebook (`python -m checker --grade DIR`): the README's two-student example as it is
written there, a class with a hanging kernel (its cell shows the hang and the line it was stuck on,
the others are graded), a kernel cell that does not parse ("does not run"), a long reason (cut at a
word in the CSV, whole in the JSON), a missing notebook said once per student, grading again
incrementally, and the students' notebooks never written to. Kept to p01 and p02 and a one-second
time limit: seconds, not minutes."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest

import bugs
from checker import registry
from checker.grade import book as books
from checker.grade import cell as cells
from checker.grade.roster import notebook_for, students
from checker.grade.run import grade
from checker.report.model import Report
from checker.puzzle.model import REPO_ROOT
from learner_notebooks import solved_notebook

P01, P02 = registry.get("p01"), registry.get("p02")
README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
HANG = '''import triton
import triton.language as tl


@triton.jit
def add_constant_kernel(x_ptr, z_ptr, N, BLOCK: tl.constexpr):
    i = 0
    while i >= 0:  # never ends
        i += 1
'''


def _buggy_p02() -> str:
    """p02 with its last partial block dropped: a catalog bug (tests/bugs/p02.py), cause "mask"."""
    bug = next(b for b in bugs.entries("p02").pinned if b.name == "tail_block_dropped")
    return bugs.patched(P02, bug.name, bug.patches)


def _two_students(folder):
    for puzzle in (P01, P02):
        solved_notebook(puzzle, folder / "ada" / puzzle.notebook.name)
    solved_notebook(P01, folder / "grace" / P01.notebook.name)
    solved_notebook(P02, folder / "grace" / P02.notebook.name, _buggy_p02())


def _files(folder) -> dict:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def _readme_example() -> tuple[list[str], list[list[str]]]:
    """The README's --grade command and the CSV it shows."""
    section = README[README.index("### A gradebook"):]
    command = re.search(r"^(python -m checker --grade .*)$", section, re.M).group(1)
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    return command.split()[1:], list(csv.reader(io.StringIO(shown)))


def test_the_readmes_two_student_example_grades_as_it_says(tmp_path):
    args, shown = _readme_example()
    _two_students(tmp_path / "class")
    before = _files(tmp_path / "class")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    rows = list(csv.reader(io.StringIO((tmp_path / "class" / "gradebook.csv").read_text(encoding="utf-8"))))
    assert rows[0] == shown[0] and len(rows) == len(shown)
    cpu_only = not _cuda()  # a GPU host checks more cases: there only the verdicts are as shown
    for got, want in zip(rows[1:], shown[1:]):
        for cell, words in zip(got, want, strict=True):
            assert (cell.split() or [""])[0] == (words.split() or [""])[0], (cell, words)
            if cpu_only:
                assert cell.startswith(words.rstrip("…").rstrip()), (cell, words)  # "…": cut in the README
    assert "mask" in rows[2][2]
    assert (tmp_path / "class" / "gradebook.json").is_file()
    assert {p: v for p, v in _files(tmp_path / "class").items() if p.name not in ("gradebook.csv", "gradebook.json")} \
        == before  # the students' notebooks untouched


def _cuda() -> bool:
    import torch
    return torch.cuda.is_available()


def test_a_hang_is_contained_to_its_cell_and_grading_again_checks_only_what_changed(tmp_path):
    folder = tmp_path / "class"
    _two_students(folder)
    solved_notebook(P01, folder / "carol" / P01.notebook.name, HANG)
    solved_notebook(P02, folder / "carol" / P02.notebook.name)
    unclosed = P01.solution.read_text(encoding="utf-8").replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK", 1)
    solved_notebook(P01, folder / "dan" / P01.notebook.name, unclosed)  # and no p02 at all
    before = _files(folder)
    said: list[str] = []
    book, csv_path, json_path = grade(folder, [P01, P02], jobs=2, backend="interpreter", timeout=1.0,
                                      say=said.append)
    assert list(book.students) == ["ada", "carol", "dan", "grace"]
    hung = book.cell("carol", "p01", "forward")
    assert hung["verdict"] == cells.HANG and hung["passed"] == 0 and hung["cases"] > 0
    assert hung["cause"] == cells.HANG_CAUSE
    # the line it was stuck on (one of the loop's two), in the JSON and, right after the case, in the CSV
    stuck = r"still running after 1 s, stopped at `add_constant_kernel`, line (8 of its cell: while i >= 0|9 of its cell: i \+= 1)"
    assert re.search(stuck, hung["reason"]), hung["reason"]
    assert book.cell("carol", "p02", "forward")["verdict"] == cells.PASS  # the same student's other part
    assert [book.cell("ada", k, "forward")["verdict"] for k in ("p01", "p02")] == [cells.PASS, cells.PASS]
    wrong = book.cell("grace", "p02", "forward")
    assert wrong["verdict"] == cells.FAIL and "mask" in wrong["cause"] and 0 < wrong["passed"] < wrong["cases"]
    broken = book.cell("dan", "p01", "forward")
    assert broken["verdict"] == cells.DOES_NOT_RUN and broken["cases"] == 0
    assert broken["reason"].startswith("SyntaxError: '(' was never closed (the cell that defines "
                                       "`add_constant_kernel`, line ")
    assert book.cell("dan", "p02", "forward") == cells.cell(cells.MISSING)  # no reason repeated in every cell
    rows = {row[0]: row for row in csv.reader(io.StringIO(csv_path.read_text(encoding="utf-8")))}
    assert rows["student"][-2:] == ["parts passed", "notebooks missing"]
    assert rows["carol"][1].startswith("hang 0/6 [loop or lock?] documented configuration: ")
    assert re.search(stuck, rows["carol"][1]), rows["carol"][1]
    assert rows["carol"][-2] == "1/2" and rows["ada"][-2] == "2/2" and rows["ada"][-1] == ""
    assert rows["dan"][1].startswith("does not run: SyntaxError: '(' was never closed")
    assert rows["dan"][2] == "missing" and rows["dan"][-1] == "p02"
    assert [line for line in said if "no notebook" in line] == ["  dan    no notebook of p02 (missing)"]
    # a long reason: cut at a word in the CSV, whole in the JSON
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["students"]["grace"]["parts_passed"] == 1 and data["students"]["dan"]["missing"] == ["p02"]
    whole = data["students"]["grace"]["puzzles"]["p02"]["parts"]["forward"]["reason"]
    shown = rows["grace"][2].split("] ", 1)[1]
    assert len(whole) > cells.REASON_CHARACTERS and shown.endswith("…") and len(shown) <= cells.REASON_CHARACTERS
    assert whole.startswith(shown[:-1]) and whole[len(shown) - 1] in " ,;:"  # ends where a word does
    assert {p: v for p, v in _files(folder).items() if p.parent != folder} == before

    # again: nothing changed, nothing checked; then carol fixes p01 and only that is checked
    said.clear()
    again, _, _ = grade(folder, [P01, P02], jobs=2, backend="interpreter", timeout=1.0, say=said.append)
    assert "0 checks to run" in said[0] and "7 notebooks unchanged" in said[0]
    assert again.to_json()["students"] == book.to_json()["students"]
    solved_notebook(P01, folder / "carol" / P01.notebook.name)
    said.clear()
    fixed, _, _ = grade(folder, [P01, P02], jobs=2, backend="interpreter", timeout=1.0, say=said.append)
    assert "1 check to run" in said[0]
    assert fixed.cell("carol", "p01", "forward")["verdict"] == cells.PASS


def _part_report(parts: list[dict], results: list = (), faults: list = (), hints: list = ()) -> Report:
    return Report(all(p["passed"] for p in parts), "", list(results), parts, hints=list(hints), faults=list(faults))


def _entry(backend: str, correct: int, cases: int, unrun: int = 0, problem: str = "") -> dict:
    return {"part": "forward", "title": "z", "backend": backend, "passed": correct == cases and not unrun and not problem,
            "correct": correct, "cases": cases, "unrun": unrun, "problem": problem}


def test_a_cell_sums_the_interpreter_and_the_gpu_and_names_the_first_failures_cause():
    """On a GPU host a part runs on both backends (mocked here): one cell, the cases of both."""
    failing = {"part": "forward", "case": "N=100", "dims": "N=100", "status": "fail", "backend": "GPU (NVIDIA H100)",
               "comparisons": [{"label": "z", "ok": False, "max_diff": 1.0, "n_bad": 4, "n_total": 100,
                                "hint": "4 elements past the last full block are wrong", "cause": "mask"}]}
    report = _part_report([_entry("Interpreter (CPU)", 9, 9), _entry("GPU (NVIDIA H100)", 10, 11)], [failing])
    c = cells.from_report("forward", report)
    assert (c["verdict"], c["passed"], c["cases"], c["cause"]) == (cells.FAIL, 19, 20, "mask")
    assert c["backends"] == {"interpreter": "9/9", "gpu": "10/11 ✗"}
    assert c["reason"].startswith("N=100: 4 elements")
    assert cells.csv_text(c).startswith("fail 19/20 [mask] N=100:")
    both = cells.from_report("forward", _part_report([_entry("Interpreter (CPU)", 9, 9), _entry("GPU (H100)", 11, 11)]))
    assert cells.csv_text(both) == "pass 20/20"


def test_a_crash_and_cells_that_do_not_run_have_verdicts_of_their_own():
    crash = {"kind": "crash", "part": "forward", "backend": "GPU (H100)", "case": "N=8",
             "lines": ["   ❌ the checker's worker process was killed by SIGSEGV during N=8."]}
    c = cells.from_report("forward", _part_report([_entry("GPU (H100)", 2, 2, unrun=7, problem="SIGSEGV")], faults=[crash]))
    assert (c["verdict"], c["passed"], c["cases"]) == (cells.CRASH, 2, 9) and "SIGSEGV" in c["reason"]
    load = {"kind": "load_error", "part": "forward", "backend": "Interpreter (CPU)", "case": "",
            "lines": ["   ❌ the kernel cells do not run:", "   NameError: name 'tl2' is not defined"]}
    c = cells.from_report("forward", _part_report([_entry("Interpreter (CPU)", 0, 0, 9, "kernel cells do not run")],
                                                  faults=[load]))
    assert c["verdict"] == cells.DOES_NOT_RUN and "NameError" in c["reason"]


def test_the_roster_reads_student_folders_and_skips_backups_hidden_folders_and_the_output(tmp_path):
    for name in ("bob", "amy", ".ipynb_checkpoints", "results"):
        (tmp_path / name).mkdir()
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    assert [p.name for p in students(tmp_path, skip=(tmp_path / "results",))] == ["amy", "bob"]
    (tmp_path / "amy" / "p01_add_constant.backup-20250101-000000.ipynb").write_text("{}", encoding="utf-8")
    assert notebook_for(tmp_path / "amy", P01) is None
    (tmp_path / "amy" / "p01_my_copy.ipynb").write_text("{}", encoding="utf-8")
    assert notebook_for(tmp_path / "amy", P01).name == "p01_my_copy.ipynb"


def test_missing_unreadable_and_untouched_notebooks_are_graded_without_a_check(tmp_path):
    folder = tmp_path / "class"
    (folder / "dan").mkdir(parents=True)
    (folder / "dan" / P01.notebook.name).write_text("not a notebook", encoding="utf-8")
    (folder / "dan" / P02.notebook.name).write_bytes(P02.notebook.read_bytes())  # the stubs as given
    said: list[str] = []
    book, _, _ = grade(folder, [P01, P02], out=tmp_path / "out" / "grades.csv", jobs=1, say=said.append)
    assert "0 checks to run" in said[0]
    assert book.cell("dan", "p01", "forward")["verdict"] == cells.UNREADABLE
    assert book.cell("dan", "p01", "forward")["reason"].startswith("dan/p01_add_constant.ipynb is not a notebook")
    assert book.cell("dan", "p02", "forward")["verdict"] == cells.NOT_STARTED
    assert (tmp_path / "out" / "grades.csv").is_file() and (tmp_path / "out" / "grades.json").is_file()
    (folder / "eve").mkdir()
    book, _, _ = grade(folder, [P01], out=tmp_path / "out", jobs=1, say=said.append)
    assert book.cell("eve", "p01", "forward")["verdict"] == cells.MISSING
    assert (tmp_path / "out" / "gradebook.csv").is_file()


def test_a_gradebook_of_another_checker_or_other_options_is_not_reused(tmp_path):
    path = tmp_path / "gradebook.json"
    made = books.Gradebook([("p01", "forward")], {"checker": "a", "timeout": 1.0},
                           {"ada": {"p01": {"sha256": "x", "parts": {"forward": cells.cell(cells.PASS, 6, 6)}}}})
    books.write(made, tmp_path / "gradebook.csv", path)
    assert books.previous(path, {"checker": "a", "timeout": 1.0})["ada"]["p01"]["sha256"] == "x"
    assert books.previous(path, {"checker": "b", "timeout": 1.0}) == {}
    assert books.previous(path, {"checker": "a", "timeout": 2.0}) == {}
    path.write_text("{ cut short", encoding="utf-8")
    assert books.previous(path, {"checker": "a", "timeout": 1.0}) == {}


@pytest.mark.gpu
def test_on_a_gpu_host_a_cell_holds_the_interpreter_and_the_gpu(tmp_path):
    folder = tmp_path / "class"
    solved_notebook(P01, folder / "ada" / P01.notebook.name)
    book, _, _ = grade(folder, [P01], jobs=2, backend="auto", say=lambda line: None)
    assert set(book.cell("ada", "p01", "forward")["backends"]) == {"interpreter", "gpu"}
    assert book.cell("ada", "p01", "forward")["verdict"] == cells.PASS


def test_grade_usage_errors_are_one_line_with_exit_status_2(tmp_path, capsys):
    from checker import cli
    assert cli.main(["--grade", str(tmp_path / "no such class")]) == 2
    assert cli.main(["--grade", str(tmp_path), "--puzzles", "p01,p99"]) == 2
    said = capsys.readouterr().err
    assert "no folder" in said and "no puzzle called 'p99'" in said and "Traceback" not in said
    assert not list(tmp_path.iterdir())  # nothing written
