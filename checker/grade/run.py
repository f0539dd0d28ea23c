"""`python -m checker --grade DIR`: every student's notebooks checked, side by side, into a gradebook.

Each part of each notebook is one check (`grade_part`: checker.run.session.run_check, its kernels
in a worker process with the case time limit, into the part's cell): a kernel that hangs or
crashes its worker costs its own cell,
and the student's other parts, and the other students, are graded as usual. Checks run `jobs` at a
time across the cores, and on a GPU host on the GPU too (the worker pool lets a few GPU checks run
at once). A notebook whose bytes are those of the last grading, graded the same way (the same
checker, backend, time limit and seed), keeps its cells without being checked again.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable

from checker.grade import book as books
from checker.grade import cell as cells
from checker.grade.roster import content_hash, notebook_for, students
from checker.history.store import now
from checker.puzzle.model import Puzzle
from checker.run.client import checker_hash
from checker.run.session import run_check
from checker.source import KernelSource, NotebookError, from_notebook, not_started


def grade(folder: Path, puzzles: list[Puzzle], *, out: Path | None = None, jobs: int = 1,
          backend: str = "auto", timeout: float = 60.0, seed: int = 0,
          say: Callable[[str], None] = print) -> tuple[books.Gradebook, Path, Path]:
    """Grade every student folder under `folder` on `puzzles`; write the gradebook's CSV and JSON
    (default folder/gradebook.csv and .json). Returns (gradebook, csv path, json path)."""
    csv_path, json_path = books.output_paths(out or folder / "gradebook")
    checked_with = {"checker": checker_hash(), "backend": backend, "timeout": timeout, "seed": seed}
    before = books.previous(json_path, checked_with)
    book = books.Gradebook([(p.key, part.name) for p in puzzles for part in p.parts], checked_with)
    todo = []  # (student, puzzle, part, source): the checks to run
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
    say(f"Grading {_count(len(roster), 'student')} on {len(book.columns)} puzzle parts: {checks} to run, "
        f"{jobs} at a time; {unchanged} unchanged since the last grading.")
    for student in roster:  # once per student, not once per puzzle part
        missing = book.missing(student.name)
        if missing:
            say(f"  {student.name:<{names}}  no notebook of {books.spans(missing)} (missing)")
    started = time.monotonic()

    def check(task) -> dict:
        student, puzzle, part, source = task
        return grade_part(puzzle, part, source, backend=backend, timeout=timeout, seed=seed, sharing=jobs)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(check, task): task for task in todo}
        try:
            for future in as_completed(futures):
                student, puzzle, part, _ = futures[future]
                result = future.result()
                book.students[student][puzzle.key]["parts"][part] = result
                say(f"  {student:<{names}}  {puzzle.key} {part:<10} {cells.csv_text(result)}")
        except KeyboardInterrupt:
            # the checks not started are dropped and the running ones' workers stopped; the last
            # gradebook stays as it was
            pool.shutdown(wait=False, cancel_futures=True)
            from checker.run.runner import kill_busy_workers
            kill_busy_workers()
            raise
    book.graded = now()
    books.write(book, csv_path, json_path)
    say(f"Graded in {time.monotonic() - started:.0f} s: {csv_path} and {json_path}")
    return book, csv_path, json_path


def grade_part(puzzle: Puzzle, part: str, source: KernelSource, *, backend: str = "auto",
               timeout: float | None = None, seed: int = 0, sharing: int = 1) -> dict:
    """One student's puzzle part: checked in a worker process (a hang or a crash costs this cell
    only), and its gradebook cell (checker/grade/cell.py). sharing: checks running beside it."""
    try:
        report = run_check(puzzle, [part], source, backend=backend, timeout=timeout, seed=seed,
                           write=lambda line: None, shards=1, sharing=sharing,
                           timeout_advice="--timeout SECONDS")
    except Exception as err:  # noqa: BLE001 - one check's failure is its own cell, not the class's
        return cells.cell(cells.ERROR, reason=cells.whole(f"the checker failed: {type(err).__name__}: {err}"))
    return cells.from_report(part, report)


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
            checks.append((student.name, puzzle, part.name, source))
    return entry, checks


def _filled(notebook: str | None, digest: str | None, parts: list[str], filler: dict | None) -> dict:
    return {"notebook": notebook, "sha256": digest, "checked": now(),
            "parts": {p: dict(filler) if filler else None for p in parts}}
