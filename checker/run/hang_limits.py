"""How long one case's kernels may run before the check calls it a hang, per puzzle.

A single limit of 60 s made a hang in p01 (a one-line kernel whose slowest correct case takes
0.2 s in the interpreter) cost a minute. The interpreter's limit is a multiple of the reference
solution's slowest case, measured (SLOWEST_CASE_S: the interpreter with the sanitizer, on 2 CPU
cores shared with a test run: `python -m checker.selftime --slowest-cases` measures them again), with a
floor for a slower or busier machine. A GPU compiles a kernel at its first launch (seconds, cold
cache), so its limit stays DEFAULT_TIMEOUT. `--timeout` (or check(timeout=...)) overrides both.
"""
from __future__ import annotations

DEFAULT_TIMEOUT = 60.0  # a GPU's limit, and a puzzle's that was never measured
FACTOR = 20.0           # the limit: this many times the reference's slowest case ...
FLOOR = 10.0            # ... and at least this (a laptop twice as slow, --all sharing its cores)

SLOWEST_CASE_S = {  # the reference solution's slowest case, its kernels' seconds in the interpreter
    "p01": 0.188, "p02": 0.027, "p03": 0.046, "p04": 0.107, "p05": 0.096, "p06": 0.054, "p07": 0.363,
    "p08": 0.165, "p09": 0.747, "p10": 0.777, "p11": 0.729, "p12": 0.721, "p13": 0.465, "p14": 0.264,
    "p15": 0.268, "p16": 0.283, "p17": 0.162, "p18": 1.016, "p19": 0.354, "p20": 1.08, "p21": 1.075,
    "p22": 2.949, "p23": 0.951, "p24": 1.325, "p25": 1.241, "p26": 1.41, "p27": 0.624, "p28": 1.257,
    "p29": 0.353, "p30": 0.336, "p31": 0.558, "p32": 0.91,
}


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
