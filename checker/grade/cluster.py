"""`python -m checker --grade DIR --scheduler ADDRESS`: the gradebook's checks on a Dask cluster.

Each check (one student's puzzle part) is one Dask task, `check_on_worker`, which runs
checker/grade/check.py's `grade_part` on the worker: the kernels in a checker worker process of
that machine, with the same time limit and hang handling as on one machine, into the same cell. A
check that needs a GPU goes only to workers started with `--resources GPU=N` (N: the checks of
that worker that may use its GPU at once). A worker that dies (its machine lost, the job
preempted) costs no check: the scheduler runs it again on another worker; a check whose worker
died as often as the scheduler allows gets a "lost" cell, never a gap. The tasks import this
checkout's checker on the workers: every worker needs the same checkout installed (`pip install
-e .`), and a worker whose checker differs answers with an error cell rather than other verdicts.

dask.distributed is imported here only, when a gradebook is asked for a cluster: a learner's
check() never pays for it.
"""
from __future__ import annotations

import functools
from typing import Callable, Iterator

from checker import registry
from checker.grade import cell as cells
from checker.grade.check import Check, grade_part
from checker.run.client import checker_hash
from checker.source import KernelSource

LOCAL = "local"  # --scheduler local: a cluster of worker processes on this machine (LocalCluster)
# how often a check's worker may die before the check is given up as lost: a check that kills every
# worker it runs on costs two workers, not the class (on a cluster of your own scheduler, its
# distributed.scheduler.allowed-failures decides, and the cell says how many)
ALLOWED_FAILURES = 1
GPU = "GPU"  # the worker resource a GPU check asks for (dask worker --resources GPU=1)


class ClusterError(Exception):
    """The cluster cannot be reached or used: a one-line message for the command line."""


def check_on_worker(puzzle: str, part: str, source: KernelSource, backend: str, timeout: float | None,
                    seed: int, checker: str) -> dict:
    """One check, run by a Dask worker: the cell of `part` of `puzzle` (a key: the worker finds the
    puzzle in its own checkout). checker: the grading machine's checker_hash()."""
    if _own_checker() != checker:
        return cells.cell(cells.ERROR, reason="this worker's checker differs from the grading machine's: "
                                              "install the same checkout on every worker")
    return grade_part(registry.get(puzzle), part, source, backend=backend, timeout=timeout, seed=seed,
                      sharing=_threads_of_this_worker())


@functools.lru_cache(maxsize=1)
def _own_checker() -> str:
    """This worker's checker_hash(), once: the code it imported when it ran its first check."""
    return checker_hash()


def _threads_of_this_worker() -> int:
    """The checks this worker runs at once (its --nthreads): their checker workers share its cores."""
    try:
        from distributed import get_worker
        return max(1, get_worker().state.nthreads)
    except (ImportError, ValueError, AttributeError):
        return 1


def on_cluster(address: str, checks: list[Check], *, jobs: int, backend: str, timeout: float | None,
               seed: int, say: Callable[[str], None]) -> Iterator[tuple[Check, dict]]:
    """(check, cell) for every check, as each ends, on the Dask cluster whose scheduler is at
    `address` ("tcp://host:8786"), or on a LocalCluster of `jobs` worker processes ("local")."""
    try:
        import dask
        from distributed import Client, as_completed
    except ImportError as err:
        raise ClusterError(f"--scheduler needs dask.distributed ({err}): pip install -r requirements.txt") from None
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
        cluster = _local_cluster(jobs, backend) if address == LOCAL else None
    try:
        client = Client(cluster if cluster is not None else address)
    except OSError as err:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"no Dask scheduler answers at {address} ({err}); start one with "
                           f"`dask scheduler`, or grade with --scheduler {LOCAL}") from None
    try:
        resources, run_as = _placement(client, backend, say)
        futures = {client.submit(check_on_worker, c.puzzle.key, c.part, c.source, run_as, timeout, seed,
                                 checker_hash(), resources=resources, pure=False): c for c in checks}
        try:
            for future in as_completed(futures):
                yield futures[future], _cell_of(future)
        except (KeyboardInterrupt, GeneratorExit):
            client.cancel(list(futures))  # the checks still waiting are dropped; the last gradebook stays
            raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _local_cluster(jobs: int, backend: str):
    """One worker process per check at once, each with its GPU share where this machine has one."""
    from distributed import LocalCluster
    from checker.run.session import cuda_likely
    resources = {GPU: 1} if backend != "interpreter" and cuda_likely() else None
    return LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=True, dashboard_address=None,
                        resources=resources)


def _placement(client, backend: str, say: Callable[[str], None]) -> tuple[dict | None, str]:
    """(the resources a check asks for, the backend it runs with). The GPU checks go to the workers
    that declare a GPU; 'auto' runs the interpreter and the GPU on those where the cluster has any
    (as on one GPU host) and the interpreter alone on any worker where it has none."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {}).values()
    with_gpu = sum(1 for w in workers if w.get("resources", {}).get(GPU))
    say(f"The cluster at {client.scheduler.address}: {len(workers)} worker{'s' * (len(workers) != 1)}, "
        f"{with_gpu} with a GPU.")
    if backend == "interpreter" or (backend == "auto" and not with_gpu):
        return None, "interpreter"
    if not with_gpu:
        say(f"  no worker declares a GPU (dask worker ... --resources {GPU}=1): the GPU checks wait for one")
    return {GPU: 1}, backend


def _cell_of(future) -> dict:
    """The check's cell; where the cluster lost the check, a cell that says so."""
    from distributed import KilledWorker
    try:
        return future.result()
    except KilledWorker as err:
        return lost(err.allowed_failures + 1, getattr(err.last_worker, "address", ""))
    except Exception as err:  # noqa: BLE001 - the worker could not run it (no checker there, ...): its own cell
        return cells.cell(cells.ERROR, reason=cells.whole(f"the cluster could not run it: {type(err).__name__}: {err}"))


def lost(deaths: int, last_worker: str = "") -> dict:
    """The cell of a check whose worker died `deaths` times while running it."""
    times = {1: "once", 2: "twice"}.get(deaths, f"{deaths} times")
    where = f" (the last: {last_worker})" if last_worker else ""
    return cells.cell(cells.LOST, reason=f"worker died {times}{where}")
