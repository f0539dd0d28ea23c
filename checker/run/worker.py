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

        from checker.bench.columns import time_case
        for case in puzzle.bench.cases():
            channel.send("case_start", part=puzzle.bench.part, case=case.name, time=time.time())
            channel.send("launch", part=puzzle.bench.part, case=case.name)
            channel.send("bench_result", **asdict(time_case(puzzle, kernels, case, request.get("profile", False))))
        return

    device = "cuda" if backend == "gpu" else "cpu"
    selected = selected_cases(puzzle, backend, request.get("only_documented", False))
    selected = selected[request.get("shard", 0)::request.get("shards", 1)]  # hello counted them all
    for part_name in request["parts"]:
        part = puzzle.part(part_name)
        channel.send("part_start", part=part.name)
        for case in selected:
            channel.send("case_start", part=part.name, case=case.name, time=time.time())
            _gpu_memory(device, start=True)
            result = run_case(puzzle, part, case, kernels, source, device, request.get("seed", 0),
                              on_launch=lambda: channel.send("launch", part=part.name, case=case.name))
            if not result.get("fatal"):  # after a GPU fault the device answers nothing more
                result.update(_gpu_memory(device))
            channel.send("case_result", part=part.name, **result)
            if result.get("fatal"):  # the device is unusable after this (a GPU fault): stop here
                channel.send("stopped", reason=result["error"]["message"])
                return
            if request.get("first_failure") and result["status"] != "pass":
                channel.send("part_end", part=part.name)
                return  # the caller asked only whether the kernels are rejected
        channel.send("part_end", part=part.name)


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
    for line in sys.stdin:
        if line.strip():
            run(json.loads(line), channel)
            channel.send("done")


if __name__ == "__main__":
    main()
