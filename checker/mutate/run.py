"""Check one mutant as a learner's kernel is checked, and read from the report what the checker said.

A mutant runs through checker.run.session.run_check on the interpreter, in this process: the
sanitizer stops every out-of-bounds access before it touches memory (as tests/test_contract.py's
check_text relies on), and torch is imported once for hundreds of mutants. What could hang goes
to a worker process with the checker's own time limit: a kernel with a `while` loop (a spin
lock), and any mutant still running when an in-process watchdog fires (then it runs again in a
worker, so that the verdict is the checker's own, not the watchdog's). Loops over `range` whose
bounds a mutant changes still end: they only run fewer or shifted steps.

The mutants no check can catch (EQUIVALENT) and those that are also a bug of a second class
(SAME_BUG) are listed beside the puzzle's other known kernels, in tests/bugs/pNN.py: exemptions()
loads them from there by path (a developer tool, run from a checkout); without the file, none.
"""
from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.util
import sys
import signal
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Iterator

from checker.mutate.analysis import calls, kernels_of
from checker.mutate.operators import Mutant
from checker.report.model import Report
from checker.run.runner import DEFAULT_TIMEOUT
from checker.run.session import run_check
from checker.source import from_text
from checker.puzzle.model import REPO_ROOT, Puzzle

VERDICTS = ("right", "candidates", "misleading", "none")
BUGS = REPO_ROOT / "tests" / "bugs"   # one file per puzzle: pNN.py


@dataclass(frozen=True)
class Exemptions:
    equivalent: dict[str, str]              # mutant id -> why no input tells it from the solution
    same_bug: dict[str, tuple[str, str]]    # mutant id -> (its second class, why)


@functools.lru_cache(maxsize=None)
def exemptions(key: str) -> Exemptions:
    """EQUIVALENT and SAME_BUG of tests/bugs/<key>.py, loaded by path; empty without the file. The
    package tests/bugs is loaded as `bugs` (the name its files import from) unless it already is
    (under pytest, tests/ is on sys.path)."""
    path = BUGS / f"{key}.py"
    if not path.is_file():
        return Exemptions({}, {})
    if "bugs" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bugs", BUGS / "__init__.py",
                                                      submodule_search_locations=[str(BUGS)])
        package = importlib.util.module_from_spec(spec)
        sys.modules["bugs"] = package
        spec.loader.exec_module(package)
    module = importlib.import_module(f"bugs.{key}")
    return Exemptions(dict(getattr(module, "EQUIVALENT", {})), dict(getattr(module, "SAME_BUG", {})))


@dataclass
class Outcome:
    mutant: Mutant
    caught: bool
    stage: str = ""               # caught: "compile" (no case ran), "case", or "hang"
    # distinct hints: {"hint", "cause", "candidates", "verdict", "source", "part", "backend"}
    hints: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    first_failure: str = ""       # the report's first failing line, to say how it was caught
    isolated: bool = False        # ran in a worker process

    @property
    def verdicts(self) -> list[str]:
        """One verdict per hint that names a class ('none' once if none does)."""
        named = [h["verdict"] for h in self.hints if h["verdict"] != "none"]
        return named or ["none"]

    @property
    def report_verdict(self) -> str:
        """The report as a learner reads it, every sentence shown: "misleading" where any hint names
        another class or asks only about others, whatever else is right; else "right", "candidates"
        or "none" by the best hint."""
        found = set(self.verdicts)
        return next(v for v in ("misleading", "right", "candidates", "none") if v in found)

    def to_json(self) -> dict:
        m = self.mutant
        return {"id": m.id, "class": m.cls, "operator": m.operator, "kernel": m.kernel, "line": m.line,
                "description": m.description, "before": m.before, "after": m.after, "caught": self.caught,
                "stage": self.stage, "hints": self.hints, "seconds": round(self.seconds, 3),
                "first_failure": self.first_failure, "isolated": self.isolated}


def verdict(cls: str | tuple[str, ...], cause: str, candidates: list[str]) -> str:
    """right: the hint names the mutant's class; candidates: the class is among those it asks
    about; misleading: it names others only; none: it names no class (an observation). cls: the
    mutant's class, or its classes where tests/bugs/pNN.py's SAME_BUG lists a second."""
    classes = (cls,) if isinstance(cls, str) else tuple(cls)
    if cause:
        return "right" if cause in classes else "misleading"
    if candidates:
        return "candidates" if set(classes) & set(candidates) else "misleading"
    return "none"


def report_hints(report: Report, cls: str | tuple[str, ...]) -> list[dict]:
    """Every distinct hint of a report: each failing comparison's, each error's, each case's (the
    addresses), and the report's own list of hints across cases. Distinct by where it comes from
    and the classes it names (the text names cases and programs: the same hint in ten cases counts
    once). A key the checker does not send yet counts as empty."""
    found: dict[tuple, dict] = {}

    def add(text: str, cause: str, candidates: list, source: str, part: str, backend: str, code: str = "") -> None:
        if not text and not cause and not candidates:
            return
        key = (source, cause, tuple(candidates), code)
        if key not in found:
            found[key] = {"hint": text, "cause": cause, "candidates": list(candidates), "source": source,
                          "part": part, "backend": backend, "code": code,
                          "verdict": verdict(cls, cause, list(candidates))}

    for shown in report.shown():  # what the report shows, as decided once (checker/report/build.py)
        d = shown.diagnosis
        source = {"output": "comparison"}.get(shown.source, shown.source)
        add(d.text, d.cause, list(d.candidates), source, shown.part, shown.backend, d.code)
    return list(found.values())


def _stage(report: Report) -> str:
    problems = [p["problem"] for p in report.parts if p.get("problem")]
    if any(p.startswith("hang") for p in problems):
        return "hang"
    if not report.results:
        return "compile"
    failing = [r for r in report.results if r["status"] != "pass"]
    if failing and all(r["status"] == "error" and r["error"].get("kind") == "compile" for r in failing):
        return "compile"
    return "case"


def _first_failure(text: str) -> str:
    for line in text.split("\n"):
        if "❌" in line or "hint:" in line:
            return line.strip()[:200]
    return ""


def parts_touched(puzzle: Puzzle, solution: str, function: str) -> list[str]:
    """The parts whose kernels run `function`, directly or through the helpers they call."""
    kernels = {k.name: k for k in kernels_of(ast.parse(solution))}

    def reaches(name: str, seen: frozenset = frozenset()) -> bool:
        if name == function:
            return True
        kernel = kernels.get(name)
        return kernel is not None and any(reaches(c, seen | {name}) for c in calls(kernel) - seen if c in kernels)

    return [part.name for part in puzzle.parts if any(reaches(k) for k in part.kernels)]


def may_hang(mutant: Mutant) -> bool:
    """A `while` in the mutated function: a lock that is never released spins forever."""
    for node in ast.walk(ast.parse(mutant.text)):
        if isinstance(node, ast.FunctionDef) and node.name == mutant.kernel:
            return any(isinstance(n, ast.While) for n in ast.walk(node))
    return False


class CannotCheck(Exception):
    """The checker could not run as asked (no CUDA device for the GPU backend)."""


class WatchdogFired(KeyboardInterrupt):
    """A KeyboardInterrupt, so that the checker's own handlers (which turn any exception of a
    learner's kernel into a verdict) let it through."""


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """Interrupt the block after `seconds`, unless SIGALRM is not ours to take (another thread, or
    a timer already set by someone else, such as pytest-timeout)."""
    if (not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0 or signal.getsignal(signal.SIGALRM) not in
            (signal.SIG_DFL, signal.SIG_IGN, None)):
        yield
        return

    def fire(signum, frame):
        raise WatchdogFired()

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# Set once a watchdog has interrupted an in-process check: the interrupt can land in the middle of an
# interpreted launch, which leaves Triton's interpreter half-patched (its stand-ins wrapped again at
# every later launch, until each one fails with RecursionError). From then on every mutant runs in a
# worker process, as a hang does in the checker itself.
_interrupted_here = False


def check_mutant(puzzle: Puzzle, mutant: Mutant, parts: list[str], *, backend: str = "interpreter",
                 timeout: float = DEFAULT_TIMEOUT, seed: int = 0) -> Outcome:
    """Run the checker on a mutant's text, for the parts it touches, and say what it caught."""
    started = time.perf_counter()
    lines: list[str] = []
    source = from_text(mutant.text, "kernels.py")
    options = dict(backend=backend, timeout=timeout, seed=seed, write=lines.append, shards=1)
    global _interrupted_here
    isolated = backend != "interpreter" or may_hang(mutant) or _interrupted_here
    report = None
    if not isolated:
        try:
            with warnings.catch_warnings(), watchdog(timeout):
                warnings.simplefilter("ignore")  # numpy's overflow warnings from a mutant's exp
                report = run_check(puzzle, parts, source, in_process=True, **options)
        except WatchdogFired:
            lines.clear()
            isolated = _interrupted_here = True
    if isolated:
        report = run_check(puzzle, parts, source, in_process=False, **options)
    if report.usage_error:  # no CUDA for --backend gpu: nothing was checked
        raise CannotCheck(report.usage_error)
    text = "\n".join(lines)
    outcome = Outcome(mutant, caught=not report.passed, seconds=time.perf_counter() - started, isolated=isolated)
    if outcome.caught:
        outcome.stage = _stage(report)
        outcome.first_failure = _first_failure(text.split("\n", 1)[-1])
        if outcome.stage != "compile":
            also = exemptions(puzzle.key).same_bug.get(mutant.id)
            outcome.hints = report_hints(report, (mutant.cls, also[0]) if also else mutant.cls)
    return outcome
