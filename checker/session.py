"""One check from start to end, shared by the command line and the notebook: static checks, then
each backend's worker, all reported by one ReportWriter."""
from __future__ import annotations

import json
from typing import Callable, Iterator

from checker.report import Report, ReportWriter
from checker.runner import DEFAULT_TIMEOUT, Request, run_backend
from checker.source import KernelSource, static_problems
from checker.spec import Puzzle

BACKENDS = ("auto", "interpreter", "gpu")


def _events(request: Request, in_process: bool) -> Iterator[dict]:
    if not in_process:
        yield from run_backend(request)
        return
    from checker.worker import run_in_process
    yield from run_in_process(json.loads(request.to_json()))


def run_check(puzzle: Puzzle, parts: list[str], source: KernelSource, *, backend: str = "auto",
              timeout: float = DEFAULT_TIMEOUT, seed: int = 0, sanitize: bool = True, verbose: bool = False,
              only_documented: bool = False, write: Callable[[str], None] = print, in_process: bool = False,
              timeout_advice: str = "--timeout SECONDS") -> Report:
    """backend 'auto': the interpreter always, and the GPU too when the worker finds CUDA.

    in_process: run the worker in this process (tests: torch is imported once for many checks;
    no protection from hangs or crashes, and only the backend this process imported triton for).
    timeout_advice: how the learner raises the time limit where they are (a flag, an argument).
    """
    writer = ReportWriter(puzzle, write, verbose, timeout_advice)
    writer.title(source.origin, parts)
    runnable = []
    for part in parts:
        problems = static_problems(source, puzzle.part(part).kernels)
        if problems:
            writer.backend = "Interpreter (CPU)" if backend != "gpu" else "GPU"
            for problem in problems:
                writer.part_problem(part, problem.message, problem.where)
        else:
            runnable.append(part)

    queue = ["gpu"] if backend == "gpu" else ["interpreter"]
    while queue and runnable:
        current = queue.pop(0)
        writer.pending_parts = list(runnable)
        request = Request(puzzle.key, runnable, source, current, timeout, seed, sanitize, only_documented)
        for event in _events(request, in_process):
            if event["type"] == "hello" and event.get("cuda") and current == "interpreter" and backend == "auto":
                queue.append("gpu")
            writer.handle(event)
    return writer.finish(parts)
