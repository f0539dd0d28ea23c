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
from checker.diagnosis.model import Diagnosis, Strength, asking
from checker.puzzle.model import Case, Puzzle


def trivial(case: Case) -> bool:
    """A case with a blocked size of 1 (one row, one key, one element): the one case that a formula
    slip (a missing 1/n, a softmax not divided by its sum) cannot break. Its passing says nothing.
    (One batch or one head is no such case: nothing is reduced over them.)"""
    return "trivial" in case.tags


def summary_hints(puzzle: Puzzle, results: list[tuple[Case, dict]]) -> list[Diagnosis]:
    """results: (case, its case_result event). The most specific one (fewest cases of its kind):
    a second, broader pattern over the same failures only adds a question that pulls elsewhere.
    A pattern holds only where a case outside it that is not trivial passes: where only trivial
    cases pass, what fails is every case a slip in the formula can break, whatever its kind. And
    a size every passing case shares and every failing case lacks (same_size), beside it."""
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
        if (covers and all(pattern.selects(case) for case, _ in failing)
                and any(not pattern.selects(c) and not trivial(c) for c in passing)):
            found.append((len(selected), pattern.diagnosis))
    shown = arbitrate.most_specific(found)
    shared = same_size(puzzle, [c for c, _ in failing], passing)
    if shared and not any(d.code == "cases.not_documented" for d in shown):
        shown.append(shared)
    empty = one_block_nonfinite(results)
    if empty:
        shown.append(empty)
    return shown


def _nonfinite(result: dict) -> bool:
    return any((o.get("n_nonfinite") or 0) > 0 for o in result.get("comparisons", ()))


def one_block_nonfinite(results: list[tuple[Case, dict]]) -> Diagnosis | None:
    """Every case whose size S fits in one block gives NaN or Inf (two at least), and the cases with S
    wider than a block fail with finite values (two at least): a loop over S's blocks that runs once
    fewer than it should, never where there is one block (range(0, S - BLOCK, BLOCK)), leaves the sum
    it divides by at 0 there and short elsewhere."""
    for name in results[0][0].sizes if results else ():
        wide = f"wide_{name}"
        narrow = [(c, r) for c, r in results if name in c.sizes and wide not in c.tags]
        broad = [(c, r) for c, r in results if wide in c.tags]
        if not broad or len(narrow) < 2 or not all(r.get("status") != "pass" and _nonfinite(r) for _, r in narrow):
            continue
        finite_failures = [c for c, r in broad if r.get("status") != "pass" and not _nonfinite(r)]
        if len(finite_failures) < 2:
            continue
        return Diagnosis(f"every case whose {name} fits in one block gives NaN or Inf, and the cases with {name} "
                         f"wider than a block come out finite but wrong: does a loop over {name}'s blocks stop a "
                         f"block early (range(0, {name} - BLOCK, BLOCK), or a bound of cdiv({name}, BLOCK) - 1)? "
                         f"Where there is one block it never runs, and what it sums stays 0 (0 / 0 = NaN); where "
                         f"there are several it misses the last.", "loop", code="cases.one_block_nonfinite",
                         strength=Strength.PATTERN, data={"size": name})
    return None


def same_size(puzzle: Puzzle, failing: list[Case], passing: list[Case]) -> Diagnosis | None:
    """Every passing case has size S = v (three at least, and not all trivial), and every failing case
    (two at least) has another S: a number written into the kernel where S belongs? (Two passing
    cases that share a size share it by chance too often: p31's two cases with S = 32.)"""
    if len(passing) < 3 or len(failing) < 2 or all(trivial(c) for c in passing):
        return None
    kinds = ("tail", "non_pow2", "wide")
    for name in failing[0].sizes:
        for tag in kinds + tuple(f"{kind}_{name}" for kind in kinds):
            if all(tag in c.tags for c in failing) and not any(tag in c.tags for c in passing):
                return None  # a kind of case splits them too: the size value may only be where it shows
    for name in failing[0].sizes:
        values = {c.sizes.get(name) for c in passing}
        if len(values) != 1:
            continue
        value = next(iter(values))
        if value is None or value == 1 or any(c.sizes.get(name) == value for c in failing):
            continue
        others = sorted({c.sizes.get(name) for c in failing if c.sizes.get(name) is not None})
        return asking(f"every case with {name} = {value} passes, and every case with another {name} "
                      f"({', '.join(map(str, others[:4]))}{', …' if len(others) > 4 else ''}) fails: is {name} — "
                      f"or a number made from it ({name} // 2, 1/√{name}, a block of {name}) — written into the "
                      f"kernel? Use the argument the kernel receives.", "hardcoded", code="cases.same_size",
                      strength=Strength.PATTERN, data={"size": name, "value": value})
    return None
