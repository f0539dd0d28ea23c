"""One check from start to end, shared by the command line and the notebook: static checks, then
each backend's worker, all reported by one ReportWriter."""
from __future__ import annotations

from typing import Callable

from checker.report import Report, ReportWriter
from checker.runner import DEFAULT_TIMEOUT, Request, run_backend
from checker.source import KernelSource, static_problems
from checker.spec import Puzzle

BACKENDS = ("auto", "interpreter", "gpu")


def run_check(puzzle: Puzzle, parts: list[str], source: KernelSource, *, backend: str = "auto",
              timeout: float = DEFAULT_TIMEOUT, seed: int = 0, sanitize: bool = True, verbose: bool = False,
              only_documented: bool = False, write: Callable[[str], None] = print) -> Report:
    """backend 'auto': the interpreter always, and the GPU too when the worker finds CUDA."""
    writer = ReportWriter(puzzle, write, verbose)
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
        for event in run_backend(request):
            if event["type"] == "hello" and event.get("cuda") and current == "interpreter" and backend == "auto":
                queue.append("gpu")
            writer.handle(event)
    return writer.finish(parts)
