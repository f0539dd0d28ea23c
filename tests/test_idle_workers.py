"""An idle warm worker stops after a while (checker/run/runner.py, WorkerPool): each holds torch,
340-420 MB, and a notebook that ran check() once kept its worker as long as its kernel lived."""
from __future__ import annotations

import time

from checker import registry
from checker.run.runner import Request, WorkerPool, run_backend
from checker.source import from_file


def test_an_idle_worker_stops_and_the_next_check_starts_another(monkeypatch):
    import checker.run.runner as runner
    pool = WorkerPool(idle_exit_s=1.0)
    monkeypatch.setattr(runner, "POOL", pool)
    p01 = registry.get("p01")
    request = Request(p01.key, ["forward"], from_file(p01.solution, "solution"), "interpreter", only_documented=True)
    assert [e for e in run_backend(request) if e["type"] == "case_result"]  # run to its end: the worker given back
    (worker,) = pool.idle["interpreter"]
    assert worker.alive()
    deadline = time.monotonic() + 30
    while worker.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not worker.alive() and pool.idle["interpreter"] == []
    results = [e for e in run_backend(request) if e["type"] == "case_result"]  # a new worker serves it
    assert results and all(r["status"] == "pass" for r in results)
    pool.close()


def test_the_idle_limit_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("TRITON_PUZZLES_WORKER_IDLE_S", "42")
    assert WorkerPool().idle_exit_s == 42.0
    monkeypatch.setenv("TRITON_PUZZLES_WORKER_IDLE_S", "soon")
    assert WorkerPool().idle_exit_s == 300.0
