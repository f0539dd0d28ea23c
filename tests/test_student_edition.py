"""The student edition (`python -m checker.release student OUT`): built into a temporary folder, it
holds no solution, catalog or research, and no solution's kernel anywhere (no six of its lines in
a row: the book's solution dropdowns say the edition has none); in it `--solution` and check(solution=True) say so
in one line, a notebook is reset to its stubs, and a class of a solved and a broken notebook is
graded to the same cells as the teacher's copy grades it; no page's code runs what it leaves out. The hints' facts read from a solution
(checker/diagnosis/literals.py) are the same from the facts the edition keeps."""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from checker import registry
from checker.diagnosis import literals
from checker.grade.run import grade
from checker.puzzle import edition
from checker.puzzle.model import REPO_ROOT
from checker.release import CODE_CELL, LEFT_OUT, NOT_HERE, edition_facts, solution_readers
from checker.release import main as release
from checker.stubs import kernel_cells
from learner_notebooks import solved_notebook

P02 = registry.get("p02")
# a documented size (N = 10) written where N belongs: the hint that says so reads the solution's numbers
BROKEN = P02.solution.read_text(encoding="utf-8").replace("mask = offsets < N", "mask = offsets < 10")


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("edition") / "student"
    assert release(["student", str(out)]) == 0
    return out


def _in_edition(root: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "TRITON_PUZZLES_NO_SERVER": "1"}
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300, **kwargs)


RUN = 6  # lines of a solution's kernel in a row: the book's hints show a few, the answer's line left out


def _lines(text: str) -> list[str]:
    """The code's lines as a reader sees them: stripped, no blank line, no comment."""
    return [ln.strip() for ln in text.split("\n") if ln.strip() and not ln.strip().startswith("#")]


def _readable(path: Path) -> str:
    """A file's lines (a notebook's: its cells'), joined by newlines."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"])
    return "\n".join(_lines(text))


def _answers() -> dict[str, list[str]]:
    """Every run of RUN lines of each solution's kernel bodies (what the stubs leave out)."""
    runs = {}
    for puzzle in registry.all_puzzles():
        text = puzzle.solution.read_text(encoding="utf-8")
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef):
                body = node.body[1:] if isinstance(node.body[0], ast.Expr) else node.body  # no docstring
                lines = _lines("\n".join(text.split("\n")[body[0].lineno - 1:node.end_lineno]))
                runs[f"{puzzle.key} {node.name}"] = ["\n".join(lines[i:i + RUN]) for i in range(len(lines) - RUN + 1)]
    return runs


def test_the_edition_leaves_out_the_answers(student):
    files = [p for p in student.rglob("*") if p.is_file()]
    assert not [p for p in files if str(p.relative_to(student)).startswith(LEFT_OUT)]
    assert (student / "puzzles" / P02.notebook.name).is_file() and (student / "book" / "p02.md").is_file()
    assert NOT_HERE in (student / "book" / "p02.md").read_text(encoding="utf-8")
    assert "solutions/" not in "".join(p.read_text(encoding="utf-8") for p in (student / "book").glob("*.md")
                                       ).replace(NOT_HERE, "")
    texts = "\n\n".join(_readable(p) for p in files if p.suffix in (".py", ".md", ".ipynb", ".json", ".txt", ".yml"))
    leaked = [kernel for kernel, runs in _answers().items() if any(run in texts for run in runs)]
    assert not leaked, f"a solution's kernel is in the edition: {leaked}"


def test_no_page_of_the_edition_runs_what_it_leaves_out(student):
    """Its pages' code reads no solution, and no research (p25's PTX census and chapter 8's patched
    solutions are notes there; p28's share of tiles kept is computed by a book module, book/p28_recompute.py),
    and the table of contents finds every page."""
    readers = solution_readers([f"book/{p.name}" for p in (REPO_ROOT / "book").glob("*.py")])
    assert "p25_memory_instructions" in readers
    for page in (student / "book").glob("*.md"):
        for cell in CODE_CELL.finditer(page.read_text(encoding="utf-8")):
            code = cell.group(3)
            assert '"solutions"' not in code, page.name  # a path read, or the research imported
            assert not re.search(r"[\"'](?:\.\./)+research\b|[\"']research[\"']|^\s*(?:from|import)\s+research\b",
                                 code, re.M), page.name
            assert not any(re.search(rf"^\s*(from|import) {name}\b", code, re.M) for name in readers), page.name
    toc = (student / "_toc.yml").read_text(encoding="utf-8")
    assert all((student / f"{name}.md").is_file() for name in re.findall(r"file: (\S+)", toc))


def test_the_edition_says_it_has_no_solutions_resets_a_notebook_and_grades_as_here(student, tmp_path):
    """One Python in the edition: --solution and check(solution=True) say there is none, --reset
    restores a notebook's stubs, and --grade gives a solved and a broken notebook the cells that the
    teacher's copy gives them."""
    folder = tmp_path / "class"
    solved_notebook(P02, folder / "ada" / P02.notebook.name)  # the teacher's solution, pasted in
    solved_notebook(P02, folder / "bob" / P02.notebook.name, BROKEN)
    mine = solved_notebook(P02, tmp_path / P02.notebook.name, BROKEN)
    teacher, _, _ = grade(folder, [P02], out=tmp_path / "teacher", jobs=1, backend="interpreter",
                          say=lambda line: None)
    script = f"""
from checker import check
from checker.cli import main
assert not check("p02", solution=True, html=False)
print("exit", main(["p02", "--solution"]))
print("reset", main(["p02", "--reset", "--notebook", {str(mine)!r}]))
print("grade", main(["--grade", {str(folder)!r}, "--puzzles", "p02", "--jobs", "1", "--backend", "interpreter",
                     "--out", {str(tmp_path / "student")!r}]))
"""
    run = _in_edition(student, "-c", script)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count(edition.NO_SOLUTIONS) == 1 and run.stderr.count(edition.NO_SOLUTIONS) == 1
    assert "exit 2" in run.stdout and "reset 0" in run.stdout and "grade 0" in run.stdout
    assert "Traceback" not in run.stderr
    given = kernel_cells(json.loads(P02.notebook.read_text(encoding="utf-8")))
    assert ["".join(c["source"]) for c in kernel_cells(json.loads(mine.read_text(encoding="utf-8")))] \
        == ["".join(c["source"]) for c in given]
    theirs = json.loads((tmp_path / "student.json").read_text(encoding="utf-8"))
    assert theirs["checked_with"] == teacher.checked_with  # the same checker, byte for byte
    for name in ("ada", "bob"):
        assert theirs["students"][name]["puzzles"]["p02"]["parts"] == teacher.students[name]["p02"]["parts"]
    assert [teacher.cell(name, "p02", "forward")["verdict"] for name in ("ada", "bob")] == ["pass", "fail"]


def test_the_facts_the_edition_keeps_give_the_hints_the_solution_gives(monkeypatch, tmp_path):
    facts = edition_facts()["puzzles"]
    absent = tmp_path / "solutions" / f"{P02.slug}.py"  # where the edition has no file
    documented = literals.documented_values({"N": 10}, {"BLOCK": 4})
    case = {"N": 33, "BLOCK": 32}
    from_solution = literals.written_in(BROKEN, ["add_vectors_kernel"], P02.solution, documented, case)
    monkeypatch.setattr(edition, "_facts", lambda: facts)
    assert from_solution and literals.written_in(BROKEN, ["add_vectors_kernel"], absent, documented, case) \
        == from_solution
    narrowing = BROKEN.replace("x + y, mask", "(x + y).to(tl.bfloat16), mask")
    assert literals.narrowed_in(narrowing, ["add_vectors_kernel"], absent) \
        == literals.narrowed_in(narrowing, ["add_vectors_kernel"], P02.solution) != []
