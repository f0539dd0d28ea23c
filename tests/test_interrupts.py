"""A Ctrl-C stops a check's workers, and no thread of that check starts another afterwards
(checker/run/runner.py kill_busy_workers, WorkerPool.take; checker/run/session.py sharded).

A sharded check's threads start their workers while the check runs on; a thread that started
one just after kill_busy_workers took its list kept it running, and the warm server, which waits
for an interrupted check's threads to end, gave up on itself (issue 35, item 21)."""
from __future__ import annotations

import threading

import pytest

import checker.run.runner as runner
import checker.run.session as session
from checker import registry
from checker.run.runner import Request, WorkerPool, kill_busy_workers, run_backend
from checker.source import from_file

P01 = registry.get("p01")


@pytest.fixture
def pool(monkeypatch):
    pool = WorkerPool()
    monkeypatch.setattr(runner, "POOL", pool)
    yield pool
    pool.close()


def _request() -> Request:
    return Request(P01.key, ["forward"], from_file(P01.solution, "solution"), "interpreter", only_documented=True)


def test_a_request_made_before_an_interrupt_gets_no_worker_after_it(pool):
    request = _request()
    kill_busy_workers()
    live = set(runner._LIVE)
    assert list(run_backend(request)) == []
    assert set(runner._LIVE) == live, "a worker was started for an interrupted check"


def test_a_worker_started_as_the_interrupt_came_does_not_serve(pool, monkeypatch):
    """The interrupt lands while the worker starts: it is stopped, and no other takes its place."""
    started = []

    class InterruptedWhileStarting(runner.Worker):
        def __init__(self, backend: str):
            super().__init__(backend)
            started.append(self)
            kill_busy_workers()

    monkeypatch.setattr(runner, "Worker", InterruptedWhileStarting)
    assert list(run_backend(_request())) == []
    assert len(started) == 1 and not started[0].alive()


def test_a_warm_worker_stopped_before_its_request_reached_it_is_not_replaced(pool, monkeypatch):
    """The thread took a warm worker; the interrupt killed it before the request was sent: the
    failed send must not start a new worker for the interrupted check."""
    request = _request()
    assert [e for e in run_backend(request) if e["type"] == "case_result"]  # one warm worker now
    (warm,) = pool.idle["interpreter"]
    sent = warm.send

    def interrupted_first(request: Request) -> None:
        kill_busy_workers()
        sent(request)

    monkeypatch.setattr(warm, "send", interrupted_first)
    live = set(runner._LIVE)
    assert list(run_backend(_request())) == []
    assert not warm.alive() and set(runner._LIVE) <= live


def test_a_request_made_after_the_interrupt_is_served(pool):
    kill_busy_workers()
    results = [e for e in run_backend(_request()) if e["type"] == "case_result"]
    assert results and all(r["status"] == "pass" for r in results)


def test_an_interrupt_between_two_shards_starts_stops_the_started_one(monkeypatch):
    stops: list[threading.Event] = []

    def background(request, stop):
        stops.append(stop)
        return iter(())

    def make(i: int) -> Request:
        if i == 1:
            raise KeyboardInterrupt
        return _request()

    monkeypatch.setattr(session, "_background", background)
    with pytest.raises(KeyboardInterrupt):
        list(session.sharded(make, 2, ["forward"], ["a", "b"]))
    assert len(stops) == 1 and stops[0].is_set()
