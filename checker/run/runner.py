"""Start a worker process for one backend and turn what it says, or how it dies, into events.

The parent never imports torch or triton: it stays quick and survives whatever the kernels do.
A case that runs longer than the timeout is a hang: the worker's whole process group is killed.
"""
from __future__ import annotations

import atexit
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator

from checker.source import KernelSource
from checker.puzzle.model import REPO_ROOT

HANG_DUMP_WAIT = 1.0  # seconds a stuck worker gets to print where it is
SLOW_NOTICE = 10.0  # seconds of one case's kernels before the report says it is still running
from checker.run.hang_limits import DEFAULT_TIMEOUT  # noqa: E402 - one case's kernels, where no puzzle's limit applies
STARTUP_TIMEOUT = 120.0  # importing torch and triton on a cold machine
REAPER_THREAD = "checker-idle-workers"  # the thread that stops idle workers (WorkerPool._reap)
WORKER_IDLE_EXIT_S = 300.0  # an idle warm worker stops after this: the next check pays its start-up (~2 s)


@dataclass
class Request:
    puzzle: str
    parts: list[str]
    source: KernelSource
    backend: str                 # "interpreter" or "gpu"
    timeout: float = DEFAULT_TIMEOUT
    seed: int = 0
    sanitize: bool = True
    only_documented: bool = False
    bench: bool = False          # time the puzzle's benchmark sizes instead of checking (GPU)
    profile: bool = False        # with bench: also each kernel's time in one run (kernel_times)
    shard: int = 0               # this worker runs cases shard, shard + shards, ... (see session.sharded)
    shards: int = 1
    threads: int = 0             # torch's CPU threads in the worker (0: torch's default)
    first_failure: bool = False  # stop at the first case that fails (a test that needs only "rejected")
    experiments: bool = False    # run experiments on a failing part's cases (checker/experiment.py)
    interpreter_too: bool = False  # a GPU request beside the interpreter's: experiments on GPU-only cases alone
    timeout_why: str = ""        # where the limit comes from, for the report (checker/run/hang_limits.py)
    maps: bool = False           # the first failing case of each part carries its memory map (checker/case.py)
    map_case: str = ""           # instead: this case (its name) carries one, failing or not
    # the pool's generation when the check asked for it: an interrupt since then (kill_busy_workers)
    # stopped that check, and a thread of it that asks for a worker only now gets none
    generation: int = field(default_factory=lambda: POOL.generation)

    def to_json(self) -> str:
        return json.dumps({"puzzle": self.puzzle, "parts": self.parts, "source": self.source.to_json(),
                           "backend": self.backend, "seed": self.seed, "sanitize": self.sanitize,
                           "only_documented": self.only_documented, "bench": self.bench, "profile": self.profile,
                           "shard": self.shard, "shards": self.shards, "threads": self.threads,
                           "first_failure": self.first_failure,
                           "experiments": self.experiments, "interpreter_too": self.interpreter_too,
                           "maps": self.maps, "map_case": self.map_case})


def _child_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


_LIVE: set = set()  # workers still running: killed if the parent exits first (they have their own session)


@atexit.register
def kill_live_workers() -> None:
    """Stop every worker still running (the parent exits, or the learner interrupted the check)."""
    for proc in list(_LIVE):
        _kill(proc)


def kill_busy_workers() -> None:
    """Stop every worker that serves a request now (the learner interrupted the check); the idle
    warm ones stay for the next check (the warm server's pool, checker/server.py). A request made
    before this call gets no worker after it (WorkerPool.take): a sharded check's thread that was
    starting its worker as the interrupt came would otherwise keep a new one running."""
    locked = POOL.lock.acquire(timeout=1.0)  # an interrupt may have landed while it was held
    try:
        POOL.generation += 1
        idle = {w.proc for workers in POOL.idle.values() for w in workers}
        busy = list(_LIVE - idle)
    finally:
        if locked:
            POOL.lock.release()
    for proc in busy:
        if proc.returncode is None:  # not one already stopped (its pid may be another's by now)
            _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _describe_exit(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        return f"the checker's worker process was killed by {name}"
    return f"the checker's worker process exited with status {code}"


class LineReader:
    """Lines from a pipe with a deadline. Reads the raw fd: select() on a buffered file object would
    miss lines already sitting in its buffer, and wait for data that never comes."""

    def __init__(self, fd: int):
        self.fd, self.pending = fd, b""

    def readline(self, deadline: float) -> str | None:
        """The next line ('' at end of stream), or None if the deadline passes first."""
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                line, self.pending = self.pending, b""
                return line.decode("utf-8", "replace")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode("utf-8", "replace") + "\n"


def _where_it_hangs(proc: subprocess.Popen, stderr, source: KernelSource) -> str:
    """Ask the stuck worker where it is (faulthandler dumps every thread's stack on SIGUSR1) and
    name the learner's innermost line in that stack: a spin lock never released, a loop whose
    bound never comes. '' if the stack holds no learner line (a GPU kernel spinning on the device)."""
    try:
        stderr.seek(0, os.SEEK_END)
        start = stderr.tell()
        os.kill(proc.pid, signal.SIGUSR1)
        time.sleep(HANG_DUMP_WAIT)
        stderr.seek(start)
        dump = stderr.read()
    except (OSError, ValueError):
        return ""
    lines = re.findall(rf'File "{re.escape(source.filename)}", line (\d+)', dump)
    if not lines:
        return ""
    # faulthandler prints the innermost frame first
    lineno = int(lines[0])
    where = f"{source.describe_line(lineno)}: {source.line_text(lineno)}"
    loop = source.loop_around(lineno)
    if loop is None:
        return where
    # the sample lands anywhere in the loop's body; the loop itself is what never ends
    return (f"{source.describe_line(loop)}: {source.line_text(loop)} "
            f"(the loop around line {source.learner_line(lineno)}: {source.line_text(lineno)})")


class Worker:
    """One worker process for one backend: torch and triton imported once, many requests served,
    one after another (a request is a JSON line on its stdin; its events end with 'done')."""

    def __init__(self, backend: str):
        self.backend = backend
        read_fd, write_fd = os.pipe()
        self.stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        self.proc = subprocess.Popen([sys.executable, "-m", "checker.run.worker", "--fd", str(write_fd)],
                                     stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self.stderr,
                                     pass_fds=(write_fd,), env=_child_env(), start_new_session=True)
        _LIVE.add(self.proc)
        os.close(write_fd)
        self.read_fd = read_fd
        self.reader = LineReader(read_fd)
        self.started = False  # has it imported torch yet (its first request pays for that)
        self.closed = False
        self.holds_turn = False  # it serves a request that holds the GPU's turn (WorkerPool.take)
        self.idle_since = 0.0  # when it was last given back to the pool (time.monotonic())

    def send(self, request: Request) -> None:
        self.proc.stdin.write((request.to_json() + "\n").encode())
        self.proc.stdin.flush()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Stop the process (killed: it may be stuck in a kernel) and free its pipes. Once only: a
        second os.close of the pipe's number would close whatever file reused it since (another
        worker's pipe)."""
        if self.closed:
            return
        self.closed = True
        if self.proc.poll() is None:
            _kill(self.proc)
        _LIVE.discard(self.proc)
        for close in (lambda: os.close(self.read_fd), self.stderr.close, self.proc.stdin.close):
            try:
                close()
            except OSError:
                pass


def gpu_workers() -> int:
    """GPU requests served at once: TRITON_PUZZLES_GPU_WORKERS, else one per GPU_CORES_PER_WORKER
    cores, GPU_WORKERS_MAX at most (measured on an H100 host with 16 cores, see the constants)."""
    chosen = os.environ.get("TRITON_PUZZLES_GPU_WORKERS", "")
    if chosen.isdigit() and int(chosen) > 0:
        return int(chosen)
    return max(1, min(GPU_WORKERS_MAX, cores() // GPU_CORES_PER_WORKER))


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


GPU_CORES_PER_WORKER = 4
GPU_WORKERS_MAX = 3


class Stopped(Exception):
    """The check that made this request was interrupted (kill_busy_workers): no worker for it."""


class WorkerPool:
    """Idle warm workers by backend. A request takes one (or starts one) and gives it back when it
    ended cleanly; after a hang, a crash, a GPU fault, or a run that may have corrupted its memory
    (the interpreter without the sanitizer) the worker is stopped and the next request gets a new
    one. Safe to use from several threads (sharded checks run workers side by side).

    The GPU serves a few requests at a time (gpu_workers()): checks that want it side by side
    (--all, a class's notebooks) wait for a warm GPU worker. Eight GPU workers only took turns on
    the same device, each paying for its own torch import and CUDA context (--all on an H100 host:
    89 s with eight, 46 s with one); a few overlap one check's CPU work (compiling, references)
    with another's kernels."""

    def __init__(self, idle_exit_s: float | None = None) -> None:
        self.idle: dict[str, list[Worker]] = {}
        self.lock = threading.Lock()
        self.gpu_turn = threading.Semaphore(gpu_workers())
        self.idle_exit_s = idle_exit_s if idle_exit_s is not None else _idle_exit_s()
        self._reaper: threading.Thread | None = None
        self.generation = 0  # interrupts so far (kill_busy_workers)

    def take(self, backend: str, generation: int | None = None) -> Worker:
        """A warm worker, or a new one. Stopped when an interrupt came after `generation` (the
        request's): checked before, and again after starting a worker, both under the lock that
        kill_busy_workers holds, so a worker is either among those it kills or never serves."""
        if backend == "gpu":
            self.gpu_turn.acquire()
        try:
            with self.lock:
                if generation is not None and generation != self.generation:
                    raise Stopped
                idle = self.idle.get(backend, [])
                while idle:
                    worker = idle.pop()
                    if worker.alive():
                        worker.holds_turn = backend == "gpu"
                        return worker
                    worker.close()
            worker = self.spawn(backend, generation)
        except BaseException:
            if backend == "gpu":
                self.gpu_turn.release()
            raise
        worker.holds_turn = backend == "gpu"
        return worker

    def spawn(self, backend: str, generation: int | None = None) -> Worker:
        """A new worker; Stopped (and none left running) when an interrupt came after `generation`."""
        worker = Worker(backend)
        with self.lock:
            stopped = generation is not None and generation != self.generation
        if stopped:
            worker.close()
            raise Stopped
        return worker

    def end_turn(self, worker: Worker) -> None:
        """The request that took `worker` is over (given back or closed): the GPU's next one may go."""
        if worker.holds_turn:
            worker.holds_turn = False
            self.gpu_turn.release()

    def give_back(self, worker: Worker) -> None:
        with self.lock:
            worker.idle_since = time.monotonic()
            self.idle.setdefault(worker.backend, []).append(worker)
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._reap, name=REAPER_THREAD, daemon=True)
                self._reaper.start()
        self.end_turn(worker)

    def _reap(self) -> None:
        """Stop the workers idle for idle_exit_s: each holds torch (340-420 MB), and a notebook that
        ran check() once kept its worker for as long as its kernel lived. Taking a worker and
        stopping one both hold the lock, so a worker is never stopped under a request."""
        while True:
            time.sleep(max(0.05, min(self.idle_exit_s / 4, 30.0)))
            now, stale = time.monotonic(), []
            with self.lock:
                for backend, workers in self.idle.items():
                    stale += [w for w in workers if now - w.idle_since >= self.idle_exit_s]
                    workers[:] = [w for w in workers if now - w.idle_since < self.idle_exit_s]
            for worker in stale:
                worker.close()

    def reset_turn(self) -> None:
        """The GPU's turn free again, after an interrupted check whose threads have all ended (an
        interrupt can land between taking the turn and the code that gives it back)."""
        self.gpu_turn = threading.Semaphore(gpu_workers())

    def close(self) -> None:
        with self.lock:
            workers = [w for ws in self.idle.values() for w in ws]
            self.idle.clear()
        for worker in workers:
            worker.close()


def _idle_exit_s() -> float:
    """Seconds an idle warm worker waits for the next check before it stops:
    TRITON_PUZZLES_WORKER_IDLE_S, else WORKER_IDLE_EXIT_S."""
    chosen = os.environ.get("TRITON_PUZZLES_WORKER_IDLE_S", "")
    try:
        return float(chosen) if float(chosen) > 0 else WORKER_IDLE_EXIT_S
    except ValueError:
        return WORKER_IDLE_EXIT_S


POOL = WorkerPool()
atexit.register(POOL.close)


def run_backend(request: Request) -> Iterator[dict]:
    """Yield a worker's messages for one request; add 'hang' and 'crash' events when it stops
    answering or dies. A warm worker serves it when one is idle."""
    try:
        worker = POOL.take(request.backend, request.generation)
    except Stopped:
        return  # its check was interrupted: nobody reads these events
    try:
        worker.send(request)
    except OSError:  # it died since it was last used, or an interrupt stopped it: a new one, in the same turn
        worker.close()
        turn, worker.holds_turn = worker.holds_turn, False
        try:
            worker = POOL.spawn(request.backend, request.generation)
        except Stopped:
            if turn:
                POOL.gpu_turn.release()
            return
        worker.holds_turn = turn
        try:
            worker.send(request)
        except BaseException:
            worker.close()
            POOL.end_turn(worker)
            raise
    reusable = False
    mark = worker.stderr.seek(0, os.SEEK_END)  # this request's share of the worker's stderr starts here
    current, deadline, done = None, time.monotonic() + STARTUP_TIMEOUT, False
    notice = None  # when to say that the running case's kernels are slow (once per case)
    faulted = False
    try:
        while True:
            line = worker.reader.readline(min(deadline, notice) if notice else deadline)
            if line is None and notice and time.monotonic() < deadline:
                notice = None
                yield {"type": "slow", "part": current and current["part"], "case": current and current["case"],
                       "after": SLOW_NOTICE, "timeout": request.timeout, "why": request.timeout_why}
                continue
            if line is None:
                where = _where_it_hangs(worker.proc, worker.stderr, request.source) if current else ""
                worker.close()
                yield {"type": "hang", "part": current and current["part"], "case": current and current["case"],
                       "timeout": request.timeout, "where": where, "why": request.timeout_why}
                return
            if line == "":
                break
            if not line.strip():
                continue
            message = json.loads(line)
            if message["type"] == "case_start":
                # making inputs and the float64 reference is the checker's time, not the kernel's
                current, deadline = message, time.monotonic() + STARTUP_TIMEOUT
            elif message["type"] == "launch":
                deadline = time.monotonic() + request.timeout
                notice = time.monotonic() + SLOW_NOTICE if request.timeout > SLOW_NOTICE else None
            elif message["type"] in ("case_result", "bench_result"):
                current, deadline, notice = None, time.monotonic() + STARTUP_TIMEOUT, None
                faulted |= bool(message.get("fatal"))
            elif message["type"] == "stopped":
                faulted = True
            elif message["type"] == "done":
                done = True
                # the interpreter without the sanitizer lets a kernel write anywhere in the process
                reusable = (not faulted and not message.get("retire")
                            and (request.sanitize or request.backend != "interpreter"))
                return
            yield message
        code = worker.proc.wait()
        worker.stderr.seek(mark)
        yield {"type": "crash", "part": current and current["part"], "case": current and current["case"],
               "reason": _describe_exit(code), "stderr": worker.stderr.read()[-4000:]}
    finally:
        if done and reusable and worker.alive():
            POOL.give_back(worker)
        else:
            worker.close()  # stopped mid-request (the caller closed the stream), or not to be trusted
            POOL.end_turn(worker)
