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

from checker.diagnosis import arbitrate
from checker.diagnosis.model import Diagnosis
from checker.puzzle.model import Case, Puzzle


def summary_hints(puzzle: Puzzle, results: list[tuple[Case, dict]]) -> list[Diagnosis]:
    """results: (case, its case_result event). The most specific one (fewest cases of its kind):
    a second, broader pattern over the same failures only adds a question that pulls elsewhere."""
    failing = [(case, r) for case, r in results if r.get("status") != "pass"]
    passing = [case for case, r in results if r.get("status") == "pass"]
    if not failing or not passing:
        return []
    found = []
    for pattern in puzzle.summary_patterns:
        if not arbitrate.keeps_pattern(pattern, [r for _, r in failing]):
            continue
        selected = [case for case, _ in results if pattern.selects(case)]
        covers = len(failing) >= pattern.coverage * len(selected)  # 3 wide rows failing is not "every H != 8"
        if covers and all(pattern.selects(case) for case, _ in failing) and any(not pattern.selects(c) for c in passing):
            found.append((len(selected), pattern.diagnosis))
    return arbitrate.most_specific(found)
