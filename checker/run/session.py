"""One check from start to end, shared by the command line and the notebook: static checks, then
each backend's worker, all reported by one ReportWriter."""
from __future__ import annotations

import glob
import json
import os
import queue
import threading
from pathlib import Path
from typing import Callable, Iterator

from checker.report.model import Report
from checker.report.text import ReportWriter
from checker.run.hang_limits import hang_limit
from checker.run.hang_limits import why as limit_why
from checker.run.runner import DEFAULT_TIMEOUT, Request, cores, gpu_workers, run_backend
from checker.source import KernelSource, broken_chunks, static_problems
from checker.puzzle.model import Puzzle
from checker.run.worker import names_case, selected_cases

BACKENDS = ("auto", "interpreter", "gpu")


def _events(request: Request, in_process: bool) -> Iterator[dict]:
    if not in_process:
        yield from run_backend(request)
        return
    from checker.run.worker import run_in_process
    yield from run_in_process(json.loads(request.to_json()))


def run_check(puzzle: Puzzle, parts: list[str], source: KernelSource, *, backend: str = "auto",
              timeout: float | None = None, seed: int = 0, sanitize: bool = True, verbose: bool = False,
              only_documented: bool = False, write: Callable[[str], None] = print, in_process: bool = False,
              timeout_advice: str = "--timeout SECONDS", shards: int | None = None,
              first_failure: bool = False, sharing: int = 1, experiments: bool | None = None,
              maps: bool = False, map_case: str = "", map_folder: Path | None = None) -> Report:
    """backend 'auto': the interpreter always, and the GPU too when the worker finds CUDA.

    in_process: run the worker in this process (tests: torch is imported once for many checks;
    no protection from hangs or crashes, and only the backend this process imported triton for).
    timeout: seconds for one case's kernels; None: the puzzle's own limit on each backend
    (checker/run/hang_limits.py).
    timeout_advice: how the learner raises the time limit where they are (a flag, an argument).
    shards: interpreter workers sharing the cases (None: as many as the idle cores allow).
    first_failure: stop at the first failing case (tests that ask only whether a kernel is rejected;
    a GPU compiles a kernel anew for every case's block sizes, and most of a catalog's time is that).
    sharing: checks running side by side with this one (--all), whose workers share the cores.
    experiments: run a failing part's experiments (checker/experiment.py: its smallest failing case
    and the nearest that pass); None: the default, all but where first_failure.
    maps: each part's first failing case carries its memory map (who touched which element, beside
    the reference solution's launch: checker/evidence/memory_map.py); map_case: instead, this case
    does, failing or not. Only the interpreter with its checks on traces accesses. map_folder: the
    text report draws that map there as a PNG and names it (None: no file).
    """
    if experiments is None:
        experiments = not first_failure
    writer = ReportWriter(puzzle, write, verbose, timeout_advice)
    writer.only_documented = only_documented
    writer.map_folder = map_folder
    if map_case and not any(names_case(map_case, c, part) for c in puzzle.cases() for part in parts):
        writer.usage_error = (f"no case {map_case!r} to map in {puzzle.key}; name one as the report does, e.g. "
                              f"{', '.join(repr(c.name.split(':')[0]) for c in puzzle.cases()[:3])}")
        writer.say(f"❌ {writer.usage_error}")
        return writer.finish(parts)
    writer.title(source.origin, parts)
    runnable = []
    problems = {part: static_problems(source, puzzle.part(part).kernels) for part in parts}
    # a cell that does not run is said first, once, whichever parts it holds: no verdict on its code
    for lead in dict.fromkeys(p.lead for found in problems.values() for p in found if p.lead):
        writer.cell_problem(lead)
    for part in parts:
        if problems[part]:
            writer.backend = "Interpreter (CPU)" if backend != "gpu" else "GPU"
            for problem in problems[part]:
                writer.part_problem(part, problem.message, problem.where, problem.kind)
        else:
            runnable.append(part)

    if not runnable:
        return writer.finish(parts)
    # a cell that does not parse only fails the parts that need it; the others run without it
    source = source.without([chunk for chunk, _ in broken_chunks(source)])
    gpu_too = backend == "auto" and not in_process and cuda_likely()
    if shards is None:
        shards = 1 if in_process or backend == "gpu" else idle_core_shards(gpu_too)
    cases = [c.name for c in selected_cases(puzzle, "interpreter", only_documented)]
    shards = max(1, min(shards, len(cases)))
    # the workers share the cores (unless the user said how many threads: OMP_NUM_THREADS); GPU
    # workers with the others that may run beside them (--all)
    workers = gpu_workers() if backend == "gpu" else (shards + gpu_too) * max(1, sharing)
    threads = 0 if "OMP_NUM_THREADS" in os.environ else max(1, cores() // workers)

    def request(kind: str, chosen: list[str], shard: int = 0, of: int = 1) -> Request:
        limit = timeout if timeout is not None else hang_limit(puzzle.key, kind)
        return Request(puzzle.key, chosen, source, kind, limit, seed, sanitize, only_documented,
                       shard=shard, shards=of, threads=threads, first_failure=first_failure,
                       timeout_why="" if timeout is not None else limit_why(puzzle.key, kind),
                       experiments=experiments, interpreter_too=kind == "gpu" and backend == "auto",
                       maps=maps, map_case=map_case)

    def interpreter() -> Iterator[dict]:
        if shards == 1:
            return _events(request("interpreter", runnable), in_process)
        return sharded(lambda i: request("interpreter", runnable, i, shards), shards, runnable, cases)

    if backend == "gpu":
        streams = [("gpu", runnable, _events(request("gpu", runnable), in_process))]
    elif gpu_too:
        # a GPU host: the interpreter and the GPU side by side, the GPU's events shown after the
        # interpreter's section. The interpreter's cases are shared by several workers (the slow
        # half); the GPU has one (one worker per part was slower on an H100: every worker starting
        # torch and CUDA at once, and no float64 reference shared between parts).
        gpu = _background(request("gpu", runnable))
        streams = [("interpreter", runnable, interpreter()), ("gpu", runnable, gpu)]
    else:
        streams = [("interpreter", runnable, interpreter())]
    for kind, chosen, stream in streams:
        writer.pending_parts = list(chosen)
        for event in stream:
            if event["type"] == "hello" and kind == "gpu" and backend == "auto" and not event.get("cuda"):
                break  # auto found no usable CUDA after all: the interpreter's section is the report
            writer.handle(event)
    if backend == "auto" and len(streams) == 1 and writer.saw_cuda and not in_process:
        # the interpreter's worker found CUDA that cuda_likely() missed: the GPU's turn comes now
        writer.pending_parts = list(runnable)
        for event in _events(request("gpu", runnable), False):
            writer.handle(event)
    return writer.finish(parts)


MAX_SHARDS = 4  # interpreter workers per check: each costs a torch start-up (~5 s) and ~0.5 GB


def idle_core_shards(gpu_too: bool) -> int:
    """Interpreter workers worth starting: one per two cores left after the GPU's worker (a 2-core
    machine keeps one worker; an H100 host with 16 cores gets MAX_SHARDS)."""
    return max(1, min(MAX_SHARDS, (cores() - int(gpu_too)) // 2))


TERMINAL = ("load_error", "hang", "crash", "stopped")


def sharded(make: Callable[[int], Request], shards: int, parts: list[str], cases: list[str]) -> Iterator[dict]:
    """Events of `shards` workers, worker i running cases i, i + shards, ..., merged into the order
    one worker would have sent them: the report reads the same, only sooner. The first fault
    (a hang, a crash, cells that do not load) ends the stream as it would end one worker's."""
    stop = threading.Event()
    streams: list[Iterator[dict]] = []

    def next_result(i: int) -> dict | None:
        for event in streams[i]:
            if event["type"] == "case_result" or event["type"] in TERMINAL:
                return event
        return None

    def experiments_of(part: str) -> list[dict]:
        """Each worker's experiment on the part, read up to its part_end (each shrank its own smallest
        failing case)."""
        found = []
        for i in range(shards):
            for event in streams[i]:
                if event["type"] == "experiment":
                    found.append(event)
                if event["type"] == "part_end" and event.get("part") == part or event["type"] in TERMINAL:
                    break
        return found

    try:
        # inside the try: an interrupt between two workers' starts still stops the started ones
        streams += [_background(make(i), stop) for i in range(shards)]
        hello = next(streams[0], None)
        for other in streams[1:]:
            next(other, None)  # their hellos: shard 0's speaks for all (it counted every case)
        if hello is None:
            return
        yield hello
        if hello["type"] != "hello" or (hello["backend"] == "gpu" and not hello.get("cuda")):
            return
        first = next_result(0)
        if first is None or first["type"] == "load_error":  # before any part, as one worker says it
            if first is not None:
                yield first
            return
        pending = {0: first}
        for part in parts:
            yield {"type": "part_start", "part": part}
            for j, _ in enumerate(cases):
                event = pending.pop(j % shards, None) or next_result(j % shards)
                if event is None or event["type"] in TERMINAL:
                    if event is not None:
                        yield event
                    return
                yield event
            tried = experiments_of(part)
            if tried:  # the one that started from the smallest failing case: as one worker would have
                yield min(tried, key=lambda e: e["start_rank"])
            yield {"type": "part_end", "part": part}
    finally:
        stop.set()


def checks_at_once(backend: str) -> int:
    """Checks worth running side by side (--all, --grade), eight at most. One per core where each
    check is one interpreter worker (a 2-core laptop checks two puzzles at once: most puzzles are
    too small to share their cases among workers), one per two cores where a GPU worker may run
    beside it (the GPU itself takes gpu_workers() at a time: the pool makes the others wait)."""
    per_check = 1 if backend == "interpreter" or not cuda_likely() else 2
    return max(1, min(8, cores() // per_check))


def cuda_likely() -> bool:
    """Without importing torch (the parent stays light): is an NVIDIA device visible?"""
    return os.path.exists("/dev/nvidiactl") or bool(glob.glob("/dev/nvidia[0-9]*"))


def _background(request: Request, stop: threading.Event | None = None) -> Iterator[dict]:
    """Run a worker in a thread now; yield its events (in order) when asked. Setting `stop` ends
    the worker at its next event (its own time limit still ends a hang)."""
    events: queue.Queue = queue.Queue()

    def pump() -> None:
        stream = run_backend(request)
        try:
            for event in stream:
                events.put(event)
                if stop is not None and stop.is_set():
                    break
        finally:
            stream.close()  # kills the worker if it is still running
            events.put(None)

    def drain() -> Iterator[dict]:
        while (event := events.get()) is not None:
            yield event

    threading.Thread(target=pump, daemon=True).start()  # now, not when the caller first asks
    return drain()


def run_bench(puzzle: Puzzle, source: KernelSource, *, timeout: float = DEFAULT_TIMEOUT,
              write: Callable[[str], None] = print, profile: bool = False,
              checked: Callable[[Report], object] | None = None) -> tuple[int, list]:
    """--bench: check the benchmarked part on the GPU, then time it at the puzzle's benchmark sizes
    (profile: and list each kernel's time in one run, kernel_times). Returns (exit status, rows):
    2 without a GPU or a benchmark, 1 if the kernels are wrong. checked: given the GPU check's report
    (the command line records it as the learner's progress)."""
    from checker.bench.measured import BenchRow
    from checker.bench.tables import table
    if puzzle.bench is None:
        write(f"{puzzle.key} has no benchmark (--bench is for the puzzles about speed)")
        return 2, []
    report = run_check(puzzle, [puzzle.bench.part], source, backend="gpu", timeout=timeout, write=write)
    if checked is not None:
        checked(report)
    if report.usage_error:
        write("--bench needs a CUDA GPU: times taken in the interpreter say nothing about a GPU.")
        return 2, []
    if not report.passed:
        write("Not benchmarked: the kernels must pass the check first (a fast wrong kernel is not fast).")
        return 1, []
    rows, device = [], "GPU"
    request = Request(puzzle.key, [puzzle.bench.part], source, "gpu", max(timeout, 300.0), bench=True,
                      profile=profile)
    for event in run_backend(request):
        if event["type"] == "hello":
            device = event["device"]
        elif event["type"] == "bench_result":
            rows.append(BenchRow(**{k: v for k, v in event.items() if k != "type"}))
        elif event["type"] in ("crash", "hang", "load_error"):
            write(f"❌ the benchmark stopped: {event.get('reason') or event['type']}")
            return 1, rows
    write("")
    for line in table(rows, device, puzzle.bench.notes):
        write(line)
    return 0, rows
