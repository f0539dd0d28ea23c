"""Hints that only show across cases: exactly the cases of one kind fail (non-power-of-two widths,
wide rows, ...). Pure Python, so the report can use it without torch."""
from __future__ import annotations

from checker.spec import Case, Puzzle


def summary_hints(puzzle: Puzzle, results: list[tuple[Case, bool]]) -> list[str]:
    """Hints that only show across cases: the failing cases are all of one kind, enough cases of that
    kind fail (SummaryPattern.coverage), and cases of other kinds pass. Most specific first, two at most."""
    failing = [case for case, ok in results if not ok]
    passing = [case for case, ok in results if ok]
    if not failing or not passing:
        return []
    found = []
    for pattern in puzzle.summary_patterns:
        selected = [case for case, _ in results if pattern.selects(case)]
        covers = len(failing) >= pattern.coverage * len(selected)  # 3 wide rows failing is not "every H != 8"
        if covers and all(pattern.selects(case) for case in failing) and any(not pattern.selects(c) for c in passing):
            found.append((len(selected), pattern.hint))
    return [hint for _, hint in sorted(found, key=lambda item: item[0])[:2]]
