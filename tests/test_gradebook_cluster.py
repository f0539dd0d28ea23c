"""The gradebook on a Dask cluster (`python -m checker --grade DIR --scheduler ADDRESS`): a small class
(a solved, a broken, a hanging and a missing notebook) graded on a local cluster of two worker
processes, one of them killed in the middle of the grading, gives the CSV and the JSON of the
one-machine gradebook, cell for cell; a check whose workers all died gets a cell that says so; the
GPU checks go only to workers that declare a GPU. On inputs of another seed, which the gradebook
records. One puzzle (p01) and a one-second time limit: seconds, not minutes."""
from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from checker import registry
from checker.grade import cell as cells
from checker.grade import cluster
from checker.grade.run import grade
from learner_notebooks import solved_notebook

distributed = pytest.importorskip("distributed")
P01 = registry.get("p01")
TAG = "TRITON_PUZZLES_TEST_CLUSTER"  # marks this test's processes, to find any left behind
SEED = 3  # inputs the students never ran: recorded in the gradebook
# a loop on one line: a hang stopped anywhere in it is stopped at the same line, so the two
# gradebooks' reasons agree to the letter
HANG = '''import triton
import triton.language as tl


@triton.jit
def add_constant_kernel(x_ptr, z_ptr, N, BLOCK: tl.constexpr):
    i = 0
    while i >= 0: i += 1
'''


def _class(folder):
    solved_notebook(P01, folder / "ada" / P01.notebook.name)
    solution = P01.solution.read_text(encoding="utf-8")
    solved_notebook(P01, folder / "bob" / P01.notebook.name, solution.replace("x + 10.0", "x + 1.0"))
    solved_notebook(P01, folder / "carol" / P01.notebook.name, HANG)
    (folder / "dan").mkdir()  # no notebook at all


def _same_but_times(data: dict) -> dict:
    """The JSON gradebook without the moments it was written at."""
    data = json.loads(json.dumps(data))
    data.pop("graded")
    for student in data["students"].values():
        for entry in student["puzzles"].values():
            entry.pop("checked")
    return data


def test_a_class_graded_on_a_cluster_with_a_worker_killed_midway_matches_one_machine(tmp_path, monkeypatch):
    monkeypatch.setenv(TAG, str(tmp_path))  # the processes of this test, and theirs, carry it
    folder = tmp_path / "class"
    _class(folder)
    options = dict(backend="interpreter", timeout=1.0, seed=SEED)
    # one check at a time here (one worker to start), as each of the cluster's two workers runs them
    alone, alone_csv, alone_json = grade(folder, [P01], out=tmp_path / "one", jobs=1, say=lambda line: None,
                                         **options)

    said: list[str] = []
    killed: list[str] = []

    def say(line: str) -> None:
        """At the first check done, kill the worker process running another one."""
        said.append(line)
        if killed or not line.startswith("  ") or "missing" in line:
            return
        client = distributed.default_client()  # the gradebook's own
        busy = [address for address, keys in client.processing().items() if keys]
        if busy:
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed.append(busy[0])

    book, csv_path, json_path = grade(folder, [P01], out=tmp_path / "cluster", jobs=2, scheduler=cluster.LOCAL,
                                      say=say, **options)
    assert killed, "no check was running when the first one ended: nothing was killed"
    assert csv_path.read_text(encoding="utf-8") == alone_csv.read_text(encoding="utf-8")
    assert _same_but_times(book.to_json()) == _same_but_times(alone.to_json())
    assert json.loads(json_path.read_text(encoding="utf-8"))["checked_with"]["seed"] == SEED
    verdicts = [book.cell(name, "p01", "forward")["verdict"] for name in ("ada", "bob", "carol", "dan")]
    assert verdicts == [cells.PASS, cells.FAIL, cells.HANG, cells.MISSING]
    assert "line 8 of its cell: while i >= 0: i += 1" in book.cell("carol", "p01", "forward")["reason"]
    assert any(line.endswith(": 2 workers, 0 with a GPU.") for line in said)
    assert any("seed 3 (not those the students ran)" in line for line in said)
    _no_orphan_left(str(tmp_path))


def _no_orphan_left(tag: str, within: float = 10.0) -> None:
    """The killed worker's own checker worker (a hang, maybe) stops with it: none of this test's
    processes is left without its parent."""
    deadline = time.monotonic() + within
    while True:
        orphans = [pid for pid in _tagged(tag) if _parent(pid) == 1]
        if not orphans or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not orphans, f"processes left running without their parent: {orphans}"


def _tagged(tag: str) -> list[int]:
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"{TAG}={tag}".encode() in environ.read_bytes().split(b"\0"):
                found.append(int(environ.parent.name))
        except OSError:  # ended meanwhile, or another user's
            pass
    return found


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_a_check_whose_workers_died_is_lost_in_so_many_words():
    """What KilledWorker becomes (the scheduler gave the check up): a cell, never a gap."""
    lost = cluster.lost(2, "tcp://10.0.0.7:39211")
    assert lost["verdict"] == cells.LOST
    assert cells.csv_text(lost) == "lost: worker died twice (the last: tcp://10.0.0.7:39211)"
    assert cells.csv_text(cluster.lost(4)) == "lost: worker died 4 times"


def test_an_unreachable_scheduler_is_one_line_with_exit_status_2(tmp_path, capsys):
    from checker import cli
    solved_notebook(P01, tmp_path / "class" / "ada" / P01.notebook.name)
    import dask
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        assert cli.main(["--grade", str(tmp_path / "class"), "--puzzles", "p01",
                         "--scheduler", "tcp://127.0.0.1:9"]) == 2
    said = capsys.readouterr().err
    assert "no Dask scheduler answers at tcp://127.0.0.1:9" in said and "Traceback" not in said


class _Cluster:
    """A client's view of a cluster of these workers' resources (no cluster started)."""

    def __init__(self, *resources: dict):
        self.workers = {f"tcp://10.0.0.{i}:1": {"resources": r} for i, r in enumerate(resources)}
        self.scheduler = type("Scheduler", (), {"address": "tcp://10.0.0.9:8786"})()

    def scheduler_info(self, n_workers: int = 0) -> dict:
        return {"workers": self.workers}


def test_gpu_checks_go_only_to_workers_that_declare_a_gpu():
    said: list[str] = []
    mixed, cpus = _Cluster({}, {"GPU": 2}), _Cluster({}, {})
    # auto: where the cluster has GPUs, each check runs there, the interpreter beside the GPU
    assert cluster._placement(mixed, "auto", said.append) == ({"GPU": 1}, "auto")
    assert said[-1] == "The cluster at tcp://10.0.0.9:8786: 2 workers, 1 with a GPU."
    assert cluster._placement(mixed, "gpu", said.append) == ({"GPU": 1}, "gpu")
    assert cluster._placement(mixed, "interpreter", said.append) == (None, "interpreter")
    # without: the interpreter alone, on any worker (a CUDA device no worker declares is not used)
    assert cluster._placement(cpus, "auto", said.append) == (None, "interpreter")
    assert cluster._placement(cpus, "gpu", said.append) == ({"GPU": 1}, "gpu")
    assert "no worker declares a GPU" in said[-1]


@pytest.mark.gpu
def test_on_a_gpu_host_a_local_cluster_checks_on_the_interpreter_and_the_gpu(tmp_path):
    folder = tmp_path / "class"
    solved_notebook(P01, folder / "ada" / P01.notebook.name)
    book, _, _ = grade(folder, [P01], jobs=2, backend="auto", scheduler=cluster.LOCAL, say=lambda line: None)
    assert set(book.cell("ada", "p01", "forward")["backends"]) == {"interpreter", "gpu"}
    assert book.cell("ada", "p01", "forward")["verdict"] == cells.PASS
