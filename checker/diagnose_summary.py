"""Hints that only show across cases: exactly the cases of one kind fail (non-power-of-two widths,
wide rows, bf16, ...). Which cases fail is weak evidence, so these hints keep to their premise:

- the failing cases are all of the pattern's kind, enough of that kind fail (coverage), and cases
  of other kinds pass;
- a hint that only asks (it names no cause) stays quiet where the failing cases' own hints name
  causes it does not ask about: the learner has something better to go on, and a question beside
  it would only pull the other way.

Pure Python, so the report can use it without torch.
"""
from __future__ import annotations

from checker.hints import Hint
from checker.spec import Case, Puzzle


def _named_causes(result: dict) -> set[str]:
    """The causes this failing case's own report already names (a fault, a variant, an address)."""
    if result.get("status") == "error":
        error = result.get("error") or {}
        return {error["cause"]} if error.get("cause") else set()
    found = [c for c in result.get("comparisons", []) if not c.get("ok")] + list(result.get("hints", []))
    return {item["cause"] for item in found if item.get("cause")}


def summary_hints(puzzle: Puzzle, results: list[tuple[Case, dict]]) -> list[Hint]:
    """results: (case, its case_result event). Most specific first, two at most."""
    failing = [(case, r) for case, r in results if r.get("status") != "pass"]
    passing = [case for case, r in results if r.get("status") == "pass"]
    if not failing or not passing:
        return []
    named = set().union(*[_named_causes(r) for _, r in failing])
    found = []
    for pattern in puzzle.summary_patterns:
        if named and not pattern.cause and not named & set(pattern.candidates):
            continue
        selected = [case for case, _ in results if pattern.selects(case)]
        covers = len(failing) >= pattern.coverage * len(selected)  # 3 wide rows failing is not "every H != 8"
        if covers and all(pattern.selects(case) for case, _ in failing) and any(not pattern.selects(c) for c in passing):
            found.append((len(selected), Hint(pattern.hint, pattern.cause, tuple(pattern.candidates))))
    return [hint for _, hint in sorted(found, key=lambda item: item[0])[:2]]
