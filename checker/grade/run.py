"""`python -m checker --grade DIR`: every student's notebooks checked, side by side, into a gradebook.

Each part of each notebook is one check (checker/grade/check.py's `grade_part`:
checker.run.session.run_check, its kernels in a worker process with the case time limit, into the
part's cell): a kernel that hangs or crashes its worker costs its own cell, and the student's
other parts, and the other students, are graded as usual. Checks run `jobs` at a time across the
cores, and on a GPU host on the GPU too (the worker pool lets a few GPU checks run at once); with
`scheduler`, on a Dask cluster instead (checker/grade/cluster.py), into the same cells. A notebook
whose bytes are those of the last grading, graded the same way (the same checker, backend, time
limit and seed), keeps its cells without being checked again.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from checker.grade import book as books
from checker.grade import cell as cells
from checker.grade.check import Check, side_by_side
from checker.grade.cluster import LOCAL, on_cluster  # dask itself only once a cluster is asked for
from checker.grade.roster import content_hash, notebook_for, students
from checker.history.store import now
from checker.puzzle.model import Puzzle
from checker.run.client import checker_hash
from checker.source import NotebookError, from_notebook, not_started


def grade(folder: Path, puzzles: list[Puzzle], *, out: Path | None = None, jobs: int = 1,
          backend: str = "auto", timeout: float | None = None, seed: int = 0, scheduler: str | None = None,
          say: Callable[[str], None] = print) -> tuple[books.Gradebook, Path, Path]:
    """Grade every student folder under `folder` on `puzzles`; write the gradebook's CSV and JSON
    (default folder/gradebook.csv and .json). Returns (gradebook, csv path, json path).
    timeout: seconds for one case (None: the puzzle's own limit, as the command line's default).
    seed: the inputs' random values (0: those the students' own checks drew). scheduler: a Dask
    scheduler's address, or "local" (checker/grade/cluster.py); None: this machine, `jobs` at a time."""
    csv_path, json_path = books.output_paths(out or folder / "gradebook")
    checked_with = {"checker": checker_hash(), "backend": backend, "timeout": timeout, "seed": seed}
    before = books.previous(json_path, checked_with)
    book = books.Gradebook([(p.key, part.name) for p in puzzles for part in p.parts], checked_with)
    todo: list[Check] = []  # the checks to run
    kept = 0
    roster = students(folder, skip=(csv_path.parent,))
    for student in roster:
        entries = book.students.setdefault(student.name, {})
        for puzzle in puzzles:
            old = before.get(student.name, {}).get(puzzle.key)
            entry, checks = _entry(folder, student, puzzle, old)
            entries[puzzle.key] = entry
            kept += entry is old and old.get("notebook") is not None  # a notebook, not one still missing
            todo += checks
    names = max((len(s.name) for s in roster), default=7)
    checks, unchanged = _count(len(todo), "check"), _count(kept, "notebook")
    where = f"on the cluster at {scheduler}" if scheduler and scheduler != LOCAL else \
        f"{jobs} at a time" + (" on a local cluster" if scheduler else "")
    drawn = f", on inputs drawn with seed {seed} (not those the students ran)" if seed else ""
    say(f"Grading {_count(len(roster), 'student')} on {len(book.columns)} puzzle parts: {checks} to run, "
        f"{where}{drawn}; {unchanged} unchanged since the last grading.")
    for student in roster:  # once per student, not once per puzzle part
        missing = book.missing(student.name)
        if missing:
            say(f"  {student.name:<{names}}  no notebook of {books.spans(missing)} (missing)")
    started = time.monotonic()
    if not todo:
        ended = iter(())
    elif scheduler:
        ended = on_cluster(scheduler, todo, jobs=jobs, backend=backend, timeout=timeout, seed=seed, say=say)
    else:
        ended = side_by_side(todo, jobs=jobs, backend=backend, timeout=timeout, seed=seed)
    for check, result in ended:
        book.students[check.student][check.puzzle.key]["parts"][check.part] = result
        say(f"  {check.student:<{names}}  {check.puzzle.key} {check.part:<10} {cells.csv_text(result)}")
    book.graded = now()
    books.write(book, csv_path, json_path)
    say(f"Graded in {time.monotonic() - started:.0f} s: {csv_path} and {json_path}")
    return book, csv_path, json_path


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _entry(folder: Path, student: Path, puzzle: Puzzle, old: dict | None) -> tuple[dict, list]:
    """The student's entry for one puzzle, and the checks it still needs: the last grading's entry
    where the notebook is unchanged; cells at once where there is nothing to run."""
    parts = [p.name for p in puzzle.parts]
    path = notebook_for(student, puzzle)
    if path is None:  # said once per student (Gradebook.missing), not in each of its cells
        if old and old.get("notebook") is None and all(p in old.get("parts", {}) for p in parts):
            return old, []
        return _filled(None, None, parts, cells.cell(cells.MISSING)), []
    shown = str(path.relative_to(folder))
    digest = content_hash(path)
    if old and old.get("sha256") == digest and all(p in old.get("parts", {}) for p in parts):
        return old, []
    try:
        source = from_notebook(path, shown)
    except NotebookError as err:
        return _filled(shown, digest, parts, cells.cell(cells.UNREADABLE, reason=cells.whole(str(err)))), []
    entry = _filled(shown, digest, parts, None)
    checks = []
    for part in puzzle.parts:
        if not_started(source, part.kernels):
            entry["parts"][part.name] = cells.cell(cells.NOT_STARTED)
        else:
            checks.append(Check(student.name, puzzle, part.name, source))
    return entry, checks


def _filled(notebook: str | None, digest: str | None, parts: list[str], filler: dict | None) -> dict:
    return {"notebook": notebook, "sha256": digest, "checked": now(),
            "parts": {p: dict(filler) if filler else None for p in parts}}
