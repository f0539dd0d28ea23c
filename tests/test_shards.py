"""Several interpreter workers sharing a check's cases (on machines with idle cores) must write the
report one worker writes: the same lines in the same order, faults included."""
from __future__ import annotations

import re

import pytest

from bugs import entries, patched
from checker import registry
from checker.run.session import run_check
from checker.source import from_text


def report_lines(key: str, text: str, part: str, shards: int, **options) -> tuple[bool, list[str]]:
    lines: list[str] = []
    report = run_check(registry.get(key), [part], from_text(text, "kernels.py"), backend="interpreter",
                       write=lines.append, shards=shards, **options)
    return report.passed, [re.sub(r"\d+(\.\d+)? s\b", "N s", line) for line in lines]  # times differ


def catalog_text(key: str, name: str) -> tuple[str, str]:
    bug = next(b for b in entries(registry.get(key)).pinned if b.name == name)
    return patched(registry.get(key), bug.name, bug.patches), bug.part


@pytest.mark.parametrize(("key", "bug", "options"), [
    ("p02", "program_id_not_times_block", {}),           # wrong values in some cases, errors in others
    ("p24", "lock_never_released", {"timeout": 2.0}),    # a hang in the first case ends the stream
])
def test_two_workers_write_the_report_one_worker_writes(key, bug, options):
    text, part = catalog_text(key, bug)
    one = report_lines(key, text, part, 1, **options)
    two = report_lines(key, text, part, 2, **options)
    assert not one[0]
    assert two == one


def test_cells_that_do_not_load_are_reported_as_one_worker_reports_them():
    text = registry.get("p01").solution.read_text(encoding="utf-8") + "\nraise RuntimeError('top-level oops')\n"
    one = report_lines("p01", text, "forward", 1)
    two = report_lines("p01", text, "forward", 2)
    assert not one[0] and two == one
    assert any("top-level oops" in line for line in two[1])


def test_a_worker_closed_twice_leaves_other_files_open():
    """A hang closes its worker, and the request's clean-up closes it again: the second close must
    not close the file that reused the pipe's number since (another worker's pipe, in CI)."""
    import os

    from checker.run.runner import Worker
    worker = Worker("interpreter")
    worker.close()
    read_fd, write_fd = os.pipe()  # the lowest free numbers: the closed worker's, most likely
    try:
        worker.close()
        os.fstat(read_fd)  # raises OSError (bad file descriptor) if the second close took it
    finally:
        os.close(read_fd)
        os.close(write_fd)


def test_gpu_workers_follow_the_cores_unless_chosen(monkeypatch):
    """A few GPU requests at once on a host with cores to spare (--all overlaps one check's compiles
    with another's kernels), one on a small machine, and what TRITON_PUZZLES_GPU_WORKERS says."""
    from checker.run import runner
    monkeypatch.delenv("TRITON_PUZZLES_GPU_WORKERS", raising=False)
    monkeypatch.setattr(runner.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert runner.gpu_workers() == runner.GPU_WORKERS_MAX
    monkeypatch.setattr(runner.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert runner.gpu_workers() == 1
    monkeypatch.setenv("TRITON_PUZZLES_GPU_WORKERS", "2")
    assert runner.gpu_workers() == 2
