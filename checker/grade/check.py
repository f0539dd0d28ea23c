"""One check of the gradebook, and checks side by side on this machine.

A check is one student's puzzle part: `grade_part` runs it in a checker worker process (a hang or a
crash costs this cell only) and turns its report into the cell. `side_by_side` runs a list of them
`jobs` at a time on this machine and yields each cell as its check ends; checker/grade/cluster.py
does the same on a Dask cluster.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Iterator, NamedTuple

from checker.grade import cell as cells
from checker.puzzle.model import Puzzle
from checker.run.session import run_check
from checker.source import KernelSource


class Check(NamedTuple):
    """A check to run: the student's name, the puzzle, the part's name and the notebook's kernels."""
    student: str
    puzzle: Puzzle
    part: str
    source: KernelSource


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


def side_by_side(checks: list[Check], *, jobs: int, backend: str, timeout: float | None,
                 seed: int) -> Iterator[tuple[Check, dict]]:
    """(check, cell) for every check, as each ends: `jobs` at a time on this machine."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(grade_part, c.puzzle, c.part, c.source, backend=backend, timeout=timeout,
                               seed=seed, sharing=jobs): c for c in checks}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        except (KeyboardInterrupt, GeneratorExit):
            # the checks not started are dropped and the running ones' workers stopped; the last
            # gradebook stays as it was
            pool.shutdown(wait=False, cancel_futures=True)
            from checker.run.runner import kill_busy_workers
            kill_busy_workers()
            raise
