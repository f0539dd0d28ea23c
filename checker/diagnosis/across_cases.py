"""Hints that only show across cases: exactly the cases of one kind fail (non-power-of-two widths,
wide rows, bf16, ...). Which cases fail is weak evidence, so these hints keep to their premise:

- the failing cases are all of the pattern's kind, enough of that kind fail (coverage), and cases
  of other kinds pass;
- a hint that only asks (it names no cause) stays quiet where the failing cases' own hints name
  causes it does not ask about: the learner has something better to go on, and a question beside
  it would only pull the other way;
- and where a failing case stopped with an error (an access the sanitizer saw), it stays quiet
  unless it asks about every cause that error names or asks about: which cases fail is weaker
  evidence than the access itself, and a question about one of its causes alone would narrow it.

Pure Python, so the report can use it without torch.
"""
from __future__ import annotations

from checker.diagnosis.model import Diagnosis
from checker.puzzle.model import Case, Puzzle


def _named_causes(result: dict) -> set[str]:
    """The causes this failing case's own evidence points at: those a fault, a known-bug variant or
    the addresses name, and those a fault or the addresses ask about (they saw the kernel run)."""
    if result.get("status") == "error":
        error = result.get("error") or {}
        return {c for c in [error.get("cause", ""), *error.get("candidates", [])] if c}
    named = {c["cause"] for c in result.get("comparisons", []) if not c.get("ok") and c.get("cause")}
    for h in result.get("hints", []):
        named |= {c for c in [h.get("cause", ""), *h.get("candidates", [])] if c}
    return named


def _error_causes(result: dict) -> set[str]:
    """The causes a failing case's error names or asks about (none if it did not stop with one)."""
    if result.get("status") != "error":
        return set()
    error = result.get("error") or {}
    return {c for c in [error.get("cause", ""), *error.get("candidates", [])] if c}


def _contradicted(pattern, failing: list[tuple[Case, dict]]) -> bool:
    """A hint that asks about atomics, where every failing case's kernels already add with atomics
    and store nothing plainly to the outputs they add into: asking 'add, not store?' would mislead."""
    if "atomic" not in set(pattern.candidates) | {pattern.cause}:
        return False
    def atomic_only(result: dict) -> bool:
        kinds = [set(k) for k in result.get("accesses", {}).values() if "atomic" in k]
        return bool(kinds) and all("store" not in k for k in kinds)
    return all(atomic_only(r) for _, r in failing)


def summary_hints(puzzle: Puzzle, results: list[tuple[Case, dict]]) -> list[Diagnosis]:
    """results: (case, its case_result event). The most specific one (fewest cases of its kind):
    a second, broader pattern over the same failures only adds a question that pulls elsewhere."""
    failing = [(case, r) for case, r in results if r.get("status") != "pass"]
    passing = [case for case, r in results if r.get("status") == "pass"]
    if not failing or not passing:
        return []
    named = set().union(*[_named_causes(r) for _, r in failing])
    errors = set().union(*[_error_causes(r) for _, r in failing])
    found = []
    for pattern in puzzle.summary_patterns:
        if named and not pattern.cause and not named & set(pattern.candidates) or _contradicted(pattern, failing):
            continue
        if not pattern.cause and errors - set(pattern.candidates):
            continue
        selected = [case for case, _ in results if pattern.selects(case)]
        covers = len(failing) >= pattern.coverage * len(selected)  # 3 wide rows failing is not "every H != 8"
        if covers and all(pattern.selects(case) for case, _ in failing) and any(not pattern.selects(c) for c in passing):
            found.append((len(selected), Diagnosis(pattern.hint, pattern.cause, tuple(pattern.candidates))))
    return [hint for _, hint in sorted(found, key=lambda item: item[0])[:1]]
