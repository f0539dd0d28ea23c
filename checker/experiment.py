"""Evidence by experiment: a failing case shrunk to the smallest case that still fails, and the
nearest cases that pass, each differing from it in exactly one declared property.

Which of the declared cases fail is a correlation: those cases differ in several properties at once
(sizes, blocks, dtype, inputs), and with enough properties one separates the failing cases from the
passing ones by chance. A case changed in one property whose verdict flips is a fact, and one a
learner can reproduce: "fails at N = 17, passes at N = 16". So, as Hypothesis and QuickCheck shrink
a failing input to a minimal counterexample (and Zeller's delta debugging cuts one until one change
flips the outcome), the checker changes one declared property of a failing case at a time, toward
simpler (the dtype to float32, the case's own inputs to the puzzle's plain ones, each size toward 1
and toward one block), keeps every change that still fails, and then tries the single changes that
make the smallest failing case pass (a size to a whole block, to the documented value; another block
size the puzzle declares).

A derived case counts only where it is a fair case of the puzzle: the reference solution passes it
(a size the kernels cannot take, a block the compiler rejects, are left out). The experiments never
change a verdict: they are evidence for the hints, bounded by the cases they may run (and a time
limit as a safety net), and the report says when the budget stopped them. Runs in the worker, which runs the learner's kernels.
"""
from __future__ import annotations

import math
import os
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from checker.puzzle.model import Case, Puzzle

# The budget is counted in cases run, so that the same kernels get the same report on any machine,
# however loaded (a budget in seconds would make the report depend on the machine's load); the
# seconds are a safety net for a derived case that runs far longer than the declared ones.
SHRINK_TRIALS = 20     # derived cases run while shrinking, per part
NEIGHBOUR_TRIALS = 12  # then, looking for the nearest cases that pass
REPEATS = (1,)         # the seeds (offsets from the check's) a pair is run again on: it must hold on each
REPEAT_TRIALS = 6      # runs those repeats may take
# of the time limit, where shrinking stops and where the search for passing neighbours stops: the
# rest is the repeats' (a pair not run again is not shown)
SHRINK_UNTIL, NEIGHBOURS_UNTIL = 0.5, 0.8
# seconds of one part's experiments at most: a share of what its declared cases took, or the time of
# so many runs of the case it starts from, whichever is more, between two bounds. Measured, not
# fixed, so that a slower machine (or a loaded one) runs about as many cases as a fast one, and a
# puzzle whose cases take long in the interpreter gets the time its cases need
SHARE_OF_PART = 0.3
RUNS_OF_START = 40
BUDGET_S = 1.0
# the safety net's top: TRITON_PUZZLES_EXPERIMENT_SECONDS raises it where the report must be the one
# the trial counts give, whatever the load (the test suite, on two cores shared by two workers)
BUDGET_MAX_S = float(os.environ.get("TRITON_PUZZLES_EXPERIMENT_SECONDS", "12"))


def budget_for(part_seconds: float, start_seconds: float = 0.0) -> float:
    """The time limit of a part's experiments, given how long its declared cases took and the one
    the experiment starts from."""
    wanted = max(SHARE_OF_PART * part_seconds, RUNS_OF_START * start_seconds)
    return max(BUDGET_S, min(BUDGET_MAX_S, wanted))
NO_EXPERIMENT = ("not_implemented", "compile", "stub", "gpu_fault")  # failures no other case would explain


# The alarm that cuts a case short interrupts the interpreter wherever it is, which can leave it
# half-patched (triton.language's stand-ins in place, a launch's state half set): only a checker
# worker's own process, which it leaves after such a cut (checker/run/worker.py), takes it. In any
# other process (a notebook's in_process check, the tests, the book) the budget is checked between
# cases only.
ALARM_ALLOWED = False
interrupted = False  # an alarm cut a case short in this process


class OutOfTime(KeyboardInterrupt):
    """A derived case ran past what is left of the budget (a loop that never ends at that size). An
    interrupt, so that the case runner, which takes any exception of the learner's code as a verdict,
    lets it through."""


@dataclass
class Trial:
    change: dict          # the derived case as changes from the start case (cumulative)
    case: Case
    verdict: str          # "pass", "fail", or "unfair" (the reference solution fails it too)
    result: dict | None = None


@dataclass
class Experiment:
    """One part's experiment: shrink from `start`, then look for the passing neighbours."""
    puzzle: Puzzle
    start: Case
    run: Callable[[Case, int], dict]             # the learner's kernels on (a case, a seed offset) -> its result
    fair: Callable[[Case], bool]                 # the reference solution passes the case
    budget: float = BUDGET_S
    written: Mapping[Any, Any] = field(default_factory=dict)  # numbers the learner's kernels write (not the solution's)
    trials: list[Trial] = field(default_factory=list)
    stopped: str = ""                            # why it ended early: "trials", "time" ("" where it finished)

    def __post_init__(self) -> None:
        self.began = time.perf_counter()
        self.deadline = self.began + SHRINK_UNTIL * self.budget
        self.allowed = SHRINK_TRIALS             # new cases this phase may run
        self.smallest: dict = {}
        self.smallest_case = self.start
        self.smallest_result: dict | None = None
        self.done: dict[str, Trial] = {}         # derived case name -> its trial
        self.chain: list[Trial] = []             # the failing cases the shrinking kept, in order
        self.unfair: dict[str, set] = {}         # size -> values at which the reference solution failed
        self.repeated: dict[tuple[str, int], bool | None] = {}  # (case, seed offset) -> failed there
        # the dtype or inputs whose change made a failing case of the chain pass: held from then on, for a
        # case that still fails with it changed fails for another reason (a row of one value near 1000,
        # whose variance is 0, where a GPU's fused multiply-add leaves x²'s rounding): the search would
        # slip from the failure it started from to that one. Kept as a pair the report may show.
        self.held: dict[str, dict] = {}          # property -> {"at": chain change, "change": step, "case": Case}

    # -- running one derived case ---------------------------------------------------------------
    def trial(self, change: Mapping[str, Any]) -> Trial | None:
        """Run the case `change` derives from the start case (once); None when out of time or trials."""
        try:
            case = self.puzzle.derive(self.start, change)
        except Exception:  # noqa: BLE001 (a change the declaration cannot make: no such case)
            return Trial(dict(change), self.start, "unfair")
        if case.name in self.done:
            return self.done[case.name]
        if self.allowed <= 0:
            self.stopped = self.stopped or "trials"
            return None
        if time.perf_counter() >= self.deadline:
            self.stopped = self.stopped or "time"
            return None
        self.allowed -= 1
        try:
            with _time_limit(self.deadline - time.perf_counter()):
                result = self.run(case, 0)
                verdict = "pass" if result.get("status") == "pass" else "fail"
                # a case the reference solution fails too is no fair case of the puzzle (a size its
                # kernels cannot take): never kept, or the search would go on from it
                if verdict == "fail" and not self.fair(case):
                    verdict = "unfair"
        except OutOfTime:
            self.stopped = self.stopped or "time"
            return None
        except Exception:  # noqa: BLE001 (the case cannot be made here: not a fair case)
            result, verdict = None, "unfair"
        found = Trial(dict(change), case, verdict, result)
        self.done[case.name] = found
        self.trials.append(found)
        return found

    # -- the search -------------------------------------------------------------------------------
    def shrink(self) -> None:
        """Keep every simpler change that still fails, until none does (or the budget ends)."""
        change: dict = {}
        case = self.start
        while True:
            for step in simpler(self.puzzle, case, self.unfair, hold=self.held):
                found = self.trial({**change, **step})
                if found is None:
                    break
                prop = next(iter(step))
                if found.verdict == "pass" and prop in HELD and prop not in self.held:
                    self.held[prop] = {"at": dict(change), "change": dict(step), "case": found.case}
                if found.verdict == "unfair":
                    for name, value in step.items():
                        self.unfair.setdefault(name, set()).add(value)
                if found.verdict == "fail":
                    change, case = found.change, found.case
                    self.chain.append(found)
                    break
            else:
                break  # no simpler change fails: the case is minimal
            if self.stopped:
                break
        # a failure that does not hold on other inputs of the same sizes is the inputs' chance (one
        # random value near 0 in a row of one): step back to the last one that holds
        self.allowed = REPEAT_TRIALS
        self.deadline = self._repeats_deadline()
        while self.chain and not all(self.repeat(self.chain[-1].case, offset) for offset in REPEATS):
            self.chain.pop()
        if self.chain:
            self.smallest, self.smallest_case = self.chain[-1].change, self.chain[-1].case
            self.smallest_result = self.chain[-1].result

    def _repeats_deadline(self) -> float:
        """The repeats' end: the budget's, or their own share of it from now where the phase before ran
        past its end (a case that cannot be cut short, as in a notebook's process, runs to its end):
        a pair found is worth its repeat, which runs a small case."""
        return max(self.began + self.budget, time.perf_counter() + (1 - NEIGHBOURS_UNTIL) * self.budget)

    def repeat(self, case: Case, offset: int) -> bool | None:
        """Whether the case fails on the inputs of another seed (None: not run, the budget is spent)."""
        key = (case.name, offset)
        if key not in self.repeated:
            if self.allowed <= 0 or time.perf_counter() >= self.deadline:
                self.stopped = self.stopped or ("trials" if self.allowed <= 0 else "time")
                return None
            self.allowed -= 1
            try:
                with _time_limit(self.deadline - time.perf_counter()):
                    self.repeated[key] = self.run(case, offset).get("status") != "pass"
            except OutOfTime:
                self.stopped = self.stopped or "time"
                return None
        return self.repeated[key]

    def neighbours(self) -> list[dict]:
        """The single changes of the smallest failing case that pass, the nearest per property."""
        self.allowed = NEIGHBOUR_TRIALS
        self.deadline = self.began + NEIGHBOURS_UNTIL * self.budget
        found: dict[str, tuple[float, dict]] = {}
        # the nearest first, across properties: one value either side of each size before any far one
        candidates = sorted(enumerate(around(self.puzzle, self.smallest_case, self.written)),
                            key=lambda item: (item[1][2], item[0]))
        for _, (prop, step, distance) in candidates:
            if prop in found:
                continue  # its nearest passing value is found
            trial = self.trial({**self.smallest, **step})
            if trial is None:
                break
            if trial.verdict == "pass":
                found[prop] = (distance, {"property": prop, "change": _jsonable(step), "case": trial.case.name,
                                          "dims": trial.case.dims, "dtype": trial.case.dtype, "_case": trial.case})
        # a pass that does not hold on other inputs is no pair: each one shown is run again
        self.allowed = REPEAT_TRIALS
        self.deadline = self._repeats_deadline()
        kept = []
        for _, entry in sorted(found.values(), key=lambda item: item[0]):
            case = entry.pop("_case")
            if all(self.repeat(case, offset) is False for offset in REPEATS):
                kept.append(entry)
        # a held property whose change does not make the smallest case pass: its pair on the way (a
        # larger case of the chain that passes with it changed) is the evidence that it decides
        for prop, flip in self.held.items():
            if any(entry["property"] == prop for entry in kept) or flip["at"] == self.smallest:
                continue
            if all(self.repeat(flip["case"], offset) is False for offset in REPEATS):
                case = flip["case"]
                kept.append({"property": prop, "change": _jsonable(flip["change"]), "case": case.name,
                             "dims": case.dims, "dtype": case.dtype, "at": _jsonable(flip["at"])})
        return kept

    def report(self, part: str) -> dict:
        """The experiment as the worker sends it (JSON)."""
        minimal = not self.stopped
        passing = self.neighbours()
        searched = not self.stopped  # every neighbour was tried
        smallest = self.smallest_result
        return {"part": part, "start": self.start.name, "smallest": _jsonable(self.smallest),
                "smallest_case": self.smallest_case.name, "smallest_dims": self.smallest_case.dims,
                "smallest_dtype": self.smallest_case.dtype, "smallest_result": _slim(smallest),
                "passing": passing, "minimal": minimal, "searched": searched, "stopped": self.stopped,
                "trials": len(self.trials), "seconds": round(time.perf_counter() - self.began, 3)}


# -- which changes to try ---------------------------------------------------------------------------

def _sizes(puzzle: Puzzle, case: Case) -> dict[str, int]:
    return dict(puzzle.sizes_of(case) if puzzle.sizes_of is not None else case.sizes)


def _declared_values(puzzle: Puzzle, name: str) -> set[int]:
    return {_sizes(puzzle, c).get(name) for c in puzzle.cases() if not c.gpu_only} - {None}


def _volume(sizes: Mapping[str, int]) -> int:
    return math.prod(sizes.values()) if sizes else 1


HELD = ("dtype", "inputs")  # the properties a passing change holds for the rest of the shrinking


def simpler(puzzle: Puzzle, case: Case, avoid: Mapping[str, set] | None = None,
            hold: Mapping[str, Any] = {}) -> list[dict]:
    """The single changes toward a simpler case, the most aggressive first: float32 for bfloat16,
    the puzzle's plain inputs for the case's own, then each size toward 1 and toward one block (a
    size no block covers, only toward values the puzzle declares for it). Values the puzzle declares
    for a size come before others of the same size (its kernels are known to take them); avoid: the
    values of each size already found unfair (the reference solution fails them); hold: the properties
    left as they are (a change of them made a larger case of the chain pass)."""
    steps: list[dict] = []
    if case.dtype != "float32" and "dtype" not in hold:
        steps.append({"dtype": "float32"})
    if "recipe" in case.tags and "inputs" not in hold:
        steps.append({"inputs": "plain"})
    sizes = _sizes(puzzle, case)
    by_volume = []
    for name, n in sizes.items():
        block = case.block_of(name)
        declared = _declared_values(puzzle, name)
        if block:
            values = {1, 2, block - 1, block, block + 1, n - block, n // 2, n - 1}
        else:
            values = {1} | declared
        values -= set((avoid or {}).get(name, ()))
        for v in sorted(v for v in values if 0 < v < n):
            by_volume.append((v not in declared, _volume({**sizes, name: v}), name, v))
    steps += [{name: v} for _, _, name, v in sorted(by_volume)]
    return steps


def around(puzzle: Puzzle, case: Case, written: Mapping[int, Any] = {}) -> Iterator[tuple[str, dict, float]]:
    """The single changes that might make the smallest failing case pass, each with its property and
    how far it moves (nearest first within a property): each size to one value below and above it,
    to a whole block and to two, to the documented value, to a number the learner's kernels write
    that the solution's do not; each parameter (a block, a mask's switch, a head count) to the other
    values the puzzle's cases give it; float32; the plain inputs."""
    if case.dtype != "float32":
        yield "dtype", {"dtype": "float32"}, 0
    if "recipe" in case.tags:
        yield "inputs", {"inputs": "plain"}, 0
    documented = next((c for c in puzzle.cases() if c.documented), None)
    sizes = _sizes(puzzle, case)
    doc_sizes = _sizes(puzzle, documented) if documented is not None else {}
    for name, n in sizes.items():
        block = case.block_of(name)
        values = {n - 1, n + 1, doc_sizes.get(name, n)} | {v for v in written
                                                           if type(v) is int and v <= 4 * max(n, doc_sizes.get(name, n))}
        values |= {block, 2 * block} if block else _declared_values(puzzle, name)
        for v in sorted((v for v in values if v and v > 0 and v != n), key=lambda v: (abs(v - n), v)):
            # a number the kernel writes first: the one test that says whether a size is written in
            yield name, {name: v}, 0.0 if v in written else abs(v - n) / max(n, 1)
    for name, value in case.params.items():  # blocks, and any other parameter the cases set (CAUSAL, KV)
        if not isinstance(value, (bool, int, str)):
            continue
        others = {c.params.get(name) for c in puzzle.cases() if not c.gpu_only} - {value, None}
        others = {v for v in others if type(v) is type(value)}
        if type(value) is int:  # a number the kernel writes where this parameter belongs (a block's step)
            mine = {v for v in written if type(v) is int and 0 < v <= 4 * max(value, 1)} - {value}
            for v in sorted(mine, key=lambda v: (abs(v - value), v)):
                yield name, {name: v}, 0.0
            others -= mine
        if isinstance(value, bool) or isinstance(value, str):
            for v in sorted(others, key=str):
                yield name, {name: v}, 0.5
            continue
        for v in sorted(others, key=lambda v: (abs(v - value), v)):
            yield name, {name: v}, abs(v - value) / max(value, 1)


# -- helpers --------------------------------------------------------------------------------------------

@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise OutOfTime in this thread after `seconds`, where the alarm is ours to take: a checker
    worker's main thread (ALARM_ALLOWED), and no timer of someone else's running (the mutation tool's
    watchdog, pytest-timeout); elsewhere the budget is checked between cases only."""
    def stop(signum, frame):  # noqa: ARG001
        global interrupted
        interrupted = True
        raise OutOfTime()
    if (not ALARM_ALLOWED or threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0] > 0
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)):
        yield
        return
    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.01))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _jsonable(change: Mapping[str, Any]) -> dict:
    return {k: (v if isinstance(v, (int, float, str, bool)) else str(v)) for k, v in change.items()}


def _slim(result: dict | None) -> dict | None:
    """A case result without what only the plots need (the error maps)."""
    if result is None:
        return None
    return {k: v for k, v in result.items() if k not in ("error_maps", "timings")}


def start_case(failing: list[tuple[Case, dict]], puzzle: Puzzle) -> Case | None:
    """The case an experiment starts from: the smallest failing case (fewest elements, float32 first,
    then the declared order), unless what stopped it no other case would explain (a stub, code the
    compiler rejects, a GPU fault)."""
    usable = [(c, r) for c, r in failing
              if not (r.get("status") == "error" and (r.get("error") or {}).get("kind") in NO_EXPERIMENT)]
    if not usable or puzzle.derive is None:
        return None
    return min((c for c, _ in usable), key=lambda c: rank(puzzle, c))


def rank(puzzle: Puzzle, case: Case) -> list:
    """How a case orders among the start cases: fewest elements, float32 first, then declared order.
    (Workers sharing a part's cases each start from their own smallest: the smallest of all wins.)"""
    order = {c.name: i for i, c in enumerate(puzzle.cases())}
    return [_volume(_sizes(puzzle, case)), int(case.dtype != "float32"), order.get(case.name, 0)]


def run_experiment(puzzle: Puzzle, part: str, failing: list[tuple[Case, dict]], run: Callable[[Case], dict],
                   fair: Callable[[Case], bool], budget: float = BUDGET_S,
                   written: Mapping[int, Any] | None = None) -> dict | None:
    """The part's experiment (the event the worker sends), or None where none applies. written: the
    integers the learner's kernels write that the solution's do not (checker/diagnosis/literals.py)."""
    start = start_case(failing, puzzle)
    if start is None or budget <= 0:
        return None
    took = next((r for c, r in failing if c.name == start.name), {}).get("timings", {})
    budget = max(budget, budget_for(0.0, sum(took.values())))
    experiment = Experiment(puzzle, start, run, fair, budget, dict(written or {}))
    experiment.shrink()
    if experiment.smallest_result is None:
        experiment.smallest_result = next(r for c, r in failing if c.name == start.name)
    return {**experiment.report(part), "start_rank": rank(puzzle, start),
            "written": {str(v): [list(w) for w in where[:2]] for v, where in (written or {}).items()}}
