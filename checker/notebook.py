"""check(...) for a notebook cell: the kernels as last run in this notebook, the report printed
inline, and a picture of where wrong outputs differ. Runs in a child process, so a hang or a GPU
fault cannot take the notebook's kernel down."""
from __future__ import annotations

import inspect
import re

from checker import registry
from checker.report import Report
from checker.runner import DEFAULT_TIMEOUT
from checker.session import run_check
from checker.source import from_file, from_namespace
from checker.spec import REPO_ROOT, Puzzle

LIVE_ORIGIN = "this notebook (the kernels as last run)"


class CheckUsageError(Exception):
    """A check() call that cannot be answered: which puzzle, which part. Shown as one line."""


def learner_namespace() -> dict:
    """The globals of the notebook (or script) that called check().

    In Jupyter that is IPython's user namespace, whatever wrapper stands in between; elsewhere,
    the first frame up the stack that is not the checker's own code.
    """
    try:
        from IPython import get_ipython
        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None and getattr(shell, "user_ns", None) is not None:
        return shell.user_ns
    frame = inspect.currentframe()
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] == "checker":
        frame = frame.f_back
    return frame.f_globals if frame is not None else {}


def _is_puzzle_key(text: str) -> bool:
    return bool(re.fullmatch(r"p?\d+(_\w+)?", text.lower()))


def puzzle_of_namespace(namespace: dict) -> Puzzle:
    """The puzzle whose kernels this notebook defines (kernel names are unique across puzzles)."""
    defined = set(namespace)
    found = [p for p in registry.all_puzzles() if any(k in defined for k in p.kernel_names)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise CheckUsageError("this notebook defines none of the puzzles' kernels yet: run the kernel "
                              "cells first, or name the puzzle, e.g. check(\"p01\")")
    keys = ", ".join(p.key for p in found)
    raise CheckUsageError(f"this notebook defines kernels of several puzzles ({keys}): name one, "
                          f"e.g. check(\"{found[0].key}\")")


def check(puzzle: str | None = None, part: str | list[str] | None = None, *, solution: bool = False,
          namespace: dict | None = None, backend: str = "auto", timeout: float = DEFAULT_TIMEOUT,
          seed: int = 0, sanitize: bool = True, verbose: bool = False, plot: bool = True,
          only_documented: bool = False, in_process: bool = False) -> Report:
    """Check `part` of `puzzle` (None: every part); `check("backward")` finds the puzzle itself.

    The kernels come from `namespace` (default: the calling notebook's globals, as last run), or
    from the reference solution with solution=True. Returns a Report (truthy when all passed).
    """
    if puzzle is not None and part is None and not _is_puzzle_key(puzzle):
        puzzle, part = None, puzzle  # check("unfused"): a part of this notebook's puzzle
    if namespace is None and not solution:
        namespace = learner_namespace()
    try:
        spec = registry.get(puzzle) if puzzle is not None else puzzle_of_namespace(namespace or {})
        parts = [p.name for p in spec.parts] if part is None else ([part] if isinstance(part, str) else list(part))
        unknown = [p for p in parts if p not in [q.name for q in spec.parts]]
        if unknown:
            raise CheckUsageError(f"{spec.key} has no part {unknown[0]!r}; its parts: "
                                  f"{', '.join(q.name for q in spec.parts)}")
    except (KeyError, CheckUsageError) as err:
        message = err.args[0]
        print(f"❌ {message}")
        return Report(False, message, [])
    if solution:
        source = from_file(spec.solution, str(spec.solution.relative_to(REPO_ROOT)))
    else:
        source = from_namespace(namespace, LIVE_ORIGIN)
    try:
        report = run_check(spec, parts, source, backend=backend, timeout=timeout, seed=seed, sanitize=sanitize,
                           verbose=verbose, only_documented=only_documented, in_process=in_process,
                           write=lambda line: print(line, flush=True), timeout_advice="timeout=SECONDS")
    except KeyboardInterrupt:  # ■ in Jupyter: stop the workers, keep the notebook's kernel, no traceback
        from checker.runner import kill_live_workers
        kill_live_workers()
        print("❌ Interrupted: the check stopped. Nothing was written; run the cell again to check.")
        return Report(False, "interrupted", [])
    if plot and not report.passed:
        from checker.plot import plot_failures
        plot_failures(report)
    return report
