"""How long one case's kernels may run before the check calls it a hang, per puzzle.

A single limit of 60 s made a hang in p01 (a one-line kernel whose slowest correct case takes
0.2 s in the interpreter) cost a minute. The interpreter's limit is a multiple of the reference
solution's slowest case, measured (SLOWEST_CASE_S: the interpreter with the sanitizer, on 2 CPU
cores shared with a test run, stored in slowest_cases.json beside this file: `python -m checker.selftime
--slowest-cases pNN --write` measures one puzzle's again), with a
floor for a slower or busier machine. A GPU compiles a kernel at its first launch (seconds, cold
cache), so its limit stays DEFAULT_TIMEOUT. `--timeout` (or check(timeout=...)) overrides both.
"""
from __future__ import annotations

import json
from pathlib import Path

DEFAULT_TIMEOUT = 60.0  # a GPU's limit, and a puzzle's that was never measured
FACTOR = 20.0           # the limit: this many times the reference's slowest case ...
FLOOR = 10.0            # ... and at least this (a laptop twice as slow, --all sharing its cores)

# the reference solution's slowest case, its kernels' seconds in the interpreter, per puzzle: measured and
# written by `python -m checker.selftime --slowest-cases [pNN ...] --write`, never typed in
MEASURED = Path(__file__).with_name("slowest_cases.json")
SLOWEST_CASE_S: dict[str, float] = json.loads(MEASURED.read_text(encoding="utf-8"))


def store(measured: dict[str, float]) -> None:
    """Write these puzzles' measurements into slowest_cases.json, beside the others'."""
    stored = {**json.loads(MEASURED.read_text(encoding="utf-8")), **measured}
    MEASURED.write_text(json.dumps(dict(sorted(stored.items())), indent=1) + "\n", encoding="utf-8")


def hang_limit(puzzle_key: str, backend: str) -> float:
    """Seconds one case's kernels get on this backend ("interpreter" or "gpu") by default."""
    slowest = SLOWEST_CASE_S.get(puzzle_key)
    if backend != "interpreter" or slowest is None:
        return DEFAULT_TIMEOUT
    return max(FLOOR, round(FACTOR * slowest))


def why(puzzle_key: str, backend: str) -> str:
    """The limit's reason, for the report: what the learner reads next to a hang."""
    if backend != "interpreter" or puzzle_key not in SLOWEST_CASE_S:
        return "the default limit"
    return (f"{puzzle_key}'s limit: {FACTOR:g}× its reference kernels' slowest case here, at least {FLOOR:g} s")
