"""The child process that runs a learner's kernels on one backend and streams results as JSON lines.

It runs apart from the learner's shell or notebook so that a hang can be killed, a GPU fault cannot
take the notebook down, and TRITON_INTERPRET can be chosen before triton is imported.
Protocol: one JSON request on stdin; JSON lines on the file descriptor named by --fd.
"""
from __future__ import annotations

import argparse
import faulthandler
import json
import linecache
import os
import signal
import sys
import threading
import time
import types

STARTED = time.perf_counter()  # the worker's start-up (imports, CUDA) is reported in its hello


def _set_backend_env(backend: str) -> None:
    # must happen before triton is imported: @triton.jit picks interpreter or compiler at decoration
    if backend == "interpreter":
        os.environ["TRITON_INTERPRET"] = "1"
    else:
        os.environ.pop("TRITON_INTERPRET", None)
        # fp32 tl.dot would otherwise use TF32 (10-bit mantissa) on tensor cores
        os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")


class Channel:
    """Events to the parent process, one JSON line each."""

    def __init__(self, fd: int):
        self.stream = os.fdopen(fd, "w", buffering=1, encoding="utf-8")

    def send(self, kind: str, **fields) -> None:
        self.stream.write(json.dumps({"type": kind, **fields}) + "\n")
        self.stream.flush()


class ListChannel:
    """Events kept in a list: the worker run inside the caller's process (tests; see in_process)."""

    def __init__(self):
        self.events: list[dict] = []

    def send(self, kind: str, **fields) -> None:
        # through JSON, so the in-process path sees exactly what the pipe would carry
        self.events.append(json.loads(json.dumps({"type": kind, **fields})))


def run_in_process(request: dict) -> list[dict]:
    """The worker's events for `request`, run here. No hang or crash protection: for tests, where
    importing torch once for many checks matters and pytest-timeout guards against hangs. The
    backend must match how triton was imported in this process (TRITON_INTERPRET)."""
    channel = ListChannel()
    try:
        run(request, channel)
    finally:
        channel.send("done")
    return channel.events


def _load_kernels(source, module_name: str):
    """Execute the learner's text as a module whose functions inspect.getsource can read."""
    linecache.cache[source.filename] = (len(source.text), None, source.text.splitlines(True), source.filename)
    module = types.ModuleType(module_name)
    module.__file__ = source.filename
    sys.modules[module_name] = module
    exec(compile(source.text, source.filename, "exec"), module.__dict__)
    return module


def _device_name(backend: str) -> str:
    import torch
    if backend == "gpu":
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return "CPU"


def selected_cases(puzzle, backend: str, only_documented: bool) -> list:
    cases = [c for c in puzzle.cases() if backend == "gpu" or not c.gpu_only]
    return [c for c in cases if c.documented] if only_documented else cases


def run(request: dict, channel) -> None:
    backend = request["backend"]
    _set_backend_env(backend)
    import torch
    import triton
    if request.get("threads"):
        torch.set_num_threads(request["threads"])  # several workers share the machine's cores

    from checker import registry
    from checker.source import KernelSource

    puzzle = registry.get(request["puzzle"])
    source = KernelSource.from_json(request["source"])
    selected = selected_cases(puzzle, backend, request.get("only_documented", False))
    global STARTED
    channel.send("hello", backend=backend, device=_device_name(backend), triton=triton.__version__,
                 torch=torch.__version__, cuda=torch.cuda.is_available(), cases_per_part=len(selected),
                 startup=time.perf_counter() - STARTED if STARTED else 0.0)
    STARTED = 0.0  # a warm worker's later requests start at once
    if backend == "gpu" and not torch.cuda.is_available():
        return
    try:
        _run_parts(request, channel, puzzle, source, backend)
    finally:
        if backend == "interpreter":
            from checker.interpreter import frontend
            frontend.disable()
        if backend == "interpreter" and request.get("sanitize", True):
            from checker.interpreter import sanitizer
            sanitizer.disable()


def names_case(named: str, case, part: str) -> bool:
    """Whether a learner's words name this case: its name or title as the report gives it, the
    name's first words ("N=33" of "N=33: N not a power of two"), or its sizes."""
    return named.strip() in (case.name, case.title(part), case.name.split(":")[0], case.dims)


def _map_wanted(request: dict, case, part, mapped: bool) -> str:
    """Whether this case's result carries its memory map: the case the learner named (whatever its
    verdict), else the part's first failing case, where maps are asked for."""
    from checker.case import MAP_ALWAYS, MAP_IF_FAILING, MAP_NONE
    named = request.get("map_case", "")
    if named:
        return MAP_ALWAYS if names_case(named, case, part.name) else MAP_NONE
    return MAP_IF_FAILING if request.get("maps") and not mapped else MAP_NONE


def _run_parts(request: dict, channel, puzzle, source, backend: str) -> None:
    from checker.case import error_event, run_case
    try:
        kernels = _load_kernels(source, f"learner_{puzzle.key}")
    except BaseException as exc:  # the learner's top-level code: anything can happen
        channel.send("load_error", error=error_event(exc, source))
        return

    if backend == "interpreter":
        from checker.interpreter import bf16, undefined
        from checker.interpreter import frontend
        from checker.interpreter.compat import fix_interpreter
        fix_interpreter()
        bf16.enable()  # bf16 arithmetic as a GPU rounds it (the interpreter alone returns garbage)
        undefined.enable()  # masked-off lanes of a load without other= read as poison, not zeros
        # what no GPU compiles fails here too, before the interpreter runs it
        frontend.enable()
    if backend == "interpreter" and request.get("sanitize", True):
        from checker.interpreter import sanitizer
        sanitizer.enable(learner_files=lambda f: f == source.filename,
                         describe_line=lambda f, n: source.describe_line(n),
                         in_loop=lambda f, n: source.in_loop(n))

    if request.get("bench"):
        from dataclasses import asdict

        from checker.bench.timing import time_case
        for case in puzzle.bench.cases():
            channel.send("case_start", part=puzzle.bench.part, case=case.name, time=time.time())
            channel.send("launch", part=puzzle.bench.part, case=case.name)
            channel.send("bench_result", **asdict(time_case(puzzle, kernels, case, request.get("profile", False))))
        return

    device = "cuda" if backend == "gpu" else "cpu"
    seed = request.get("seed", 0)
    selected = selected_cases(puzzle, backend, request.get("only_documented", False))
    selected = selected[request.get("shard", 0)::request.get("shards", 1)]  # hello counted them all
    experiments = bool(request.get("experiments"))
    for part_name in request["parts"]:
        part = puzzle.part(part_name)
        channel.send("part_start", part=part.name)
        failing, mapped, began = [], False, time.perf_counter()
        for case in selected:
            channel.send("case_start", part=part.name, case=case.name, time=time.time())
            _gpu_memory(device, start=True)
            result = run_case(puzzle, part, case, kernels, source, device, seed,
                              on_launch=lambda: channel.send("launch", part=part.name, case=case.name),
                              map_case=_map_wanted(request, case, part, mapped))
            if not result.get("fatal"):  # after a GPU fault the device answers nothing more
                result.update(_gpu_memory(device))
            if "memory_map" in result:
                mapped = True
                result["memory_map"]["reference"] = _reference_map(puzzle, part, case, device, seed)
                result["memory_map"]["asked"] = bool(request.get("map_case"))
            channel.send("case_result", part=part.name, **result)
            if result.get("fatal"):  # the device is unusable after this (a GPU fault): stop here
                channel.send("stopped", reason=result["error"]["message"])
                return
            if result["status"] != "pass":
                failing.append((case, result))
            if request.get("first_failure") and result["status"] != "pass":
                channel.send("part_end", part=part.name)
                return  # the caller asked only whether the kernels are rejected
        if backend == "gpu" and request.get("interpreter_too"):
            failing = [(case, result) for case, result in failing if case.gpu_only]  # the others: the interpreter's
        if failing and experiments:
            from checker.experiment import budget_for
            _experiment(puzzle, part, failing, kernels, source, device, seed,
                        budget_for(time.perf_counter() - began), channel)
        channel.send("part_end", part=part.name)


_FAIR: dict[tuple, bool] = {}   # (puzzle, case, device, seed) -> the reference solution passes it
_SOLUTIONS: dict[str, tuple | None] = {}  # puzzle -> (its reference kernels, their source), None if absent


def _experiment(puzzle, part, failing, kernels, source, device, seed, budget, channel) -> None:
    """Shrink the part's smallest failing case (checker/experiment.py) and send what it found."""
    from checker.case import run_case
    from checker.experiment import run_experiment

    def run(case, offset: int = 0):
        return run_case(puzzle, part, case, kernels, source, device, seed + offset, diagnose=False)

    def fair(case) -> bool:
        # a derived case's name leaves out what it takes from the case it came from (a block its sizes
        # compute, its data's seed): the whole case and its data's seed say which case it is
        key = (puzzle.key, part.name, repr(case), puzzle.data_of(case) if puzzle.data_of else "", device, seed)
        if key not in _FAIR:
            solution = _solution(puzzle)
            # without the reference solution (a student edition), a derived case is taken as fair
            _FAIR[key] = solution is None or run_case(puzzle, part, case, solution[0], solution[1], device, seed,
                                                      diagnose=False)["status"] == "pass"
        return _FAIR[key]

    from checker.diagnosis.literals import foreign_floats, foreign_integers
    written = {**foreign_integers(source.text, list(part.kernels), puzzle.solution),
               **foreign_floats(source.text, list(part.kernels), puzzle.solution)}
    found = run_experiment(puzzle, part.name, failing, run, fair, budget, written)
    if found is not None:
        channel.send("experiment", **found)


_REFERENCE_MAPS: dict[tuple, dict | None] = {}   # (puzzle, part, case, seed) -> the reference launch's map


def _reference_map(puzzle, part, case, device, seed) -> dict | None:
    """The memory map of the reference solution's launch on the same case ("who should have written
    what"), traced as the learner's was; None without the reference solution (a student edition)."""
    from checker.case import MAP_ALWAYS, run_case
    key = (puzzle.key, part.name, repr(case), puzzle.data_of(case) if puzzle.data_of else "", seed)
    if key not in _REFERENCE_MAPS:
        solution = _solution(puzzle)
        _REFERENCE_MAPS[key] = None if solution is None else run_case(
            puzzle, part, case, solution[0], solution[1], device, seed, diagnose=False,
            map_case=MAP_ALWAYS).get("memory_map")
    return _REFERENCE_MAPS[key]


def _solution(puzzle):
    """The puzzle's reference kernels, loaded once per process (None where the file is absent)."""
    if puzzle.key not in _SOLUTIONS:
        from checker.source import from_text
        path = puzzle.solution
        if not path.is_file():
            _SOLUTIONS[puzzle.key] = None
        else:
            source = from_text(path.read_text(encoding="utf-8"), f"reference solution of {puzzle.key}")
            _SOLUTIONS[puzzle.key] = (_load_kernels(source, f"solution_{puzzle.key}"), source)
    return _SOLUTIONS[puzzle.key]


def _stop_with_parent(parent: int) -> None:
    """Stop this worker (its process group) once its parent is gone: a parent killed (a cluster's
    worker lost, a `kill -9`) cannot stop a kernel that never ends, which would run on forever."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    if os.getpgid(0) == os.getpid():  # its own group (the runner starts it so): what it started too
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(1)


PARENT_POLL_S = 1.0


def _gpu_memory(device: str, start: bool = False) -> dict:
    """On a GPU: a case's peak memory (bytes allocated and reserved; a learner's card has 16 GiB), and
    its cached blocks given back after it, so that a warm worker holds none while it waits and the next
    case starts from nothing."""
    if device != "cuda":
        return {}
    import torch
    if start:
        torch.cuda.reset_peak_memory_stats()
        return {}
    peak = {"allocated": torch.cuda.max_memory_allocated(), "reserved": torch.cuda.max_memory_reserved()}
    torch.cuda.empty_cache()
    return {"gpu_memory": peak}


def main() -> None:
    threading.Thread(target=_stop_with_parent, args=(os.getppid(),), daemon=True, name="parent-watch").start()
    parser = argparse.ArgumentParser()
    parser.add_argument("--fd", type=int, required=True)
    args = parser.parse_args()
    channel = Channel(args.fd)
    # anything the kernels print goes to stderr, never into the protocol
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    # a hang: the runner asks where we are (SIGUSR1) before it stops us, to name the learner's line
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    # one request per line, served one after another with torch and triton imported once (a warm
    # worker); the parent closes stdin to end us. An exception here is the checker's own bug: it
    # ends the process, and the parent reports a crash with this stderr.
    from checker import experiment
    experiment.ALARM_ALLOWED = True
    for line in sys.stdin:
        if line.strip():
            run(json.loads(line), channel)
            # an alarm cut a case short: the interpreter may be left half-patched, so no next check
            # runs in this process (the runner starts another)
            channel.send("done", retire=experiment.interrupted)
            if experiment.interrupted:
                break


if __name__ == "__main__":
    main()
