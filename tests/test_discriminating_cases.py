"""Every pattern across cases must be decidable from the cases a puzzle runs in the interpreter.

"Only the cases larger than one block fail" means something only where a case that fits in one
block, and is not trivial (no blocked size of 1: one row, one key, where a slip in the formula
cannot show),
passes; "not a power of two" and "more than one block" are told apart only by a case that is one and
not the other; a kernel that swaps two block sizes shows only where they differ. The checker's
summaries keep to this (checker/diagnosis/across_cases.py); this test keeps the specs to it.
"""
from __future__ import annotations

import pytest

from checker import registry
from checker.puzzle.model import Case


def problems(cases: list[Case]) -> list[str]:
    """What the interpreter's cases cannot decide (empty: every pattern is decidable)."""
    cpu = [c for c in cases if not c.gpu_only]
    found = []
    has = lambda *tags: [c for c in cpu if all(t in c.tags for t in tags)]  # noqa: E731
    if has("wide") and not [c for c in cpu if "wide" not in c.tags and "trivial" not in c.tags]:
        found.append("no case fits in one block without being trivial (every one-block case has a blocked size of 1)")
    if has("wide") and has("non_pow2"):
        if not [c for c in cpu if "non_pow2" in c.tags and "wide" not in c.tags]:
            found.append("no case is one partly filled block (not a power of two, not wider than a block)")
        if not [c for c in cpu if "wide" in c.tags and "non_pow2" not in c.tags and "tail" not in c.tags]:
            found.append("no case is several whole blocks (wider than a block, every size a multiple of it)")
    names = {k for c in cpu for k in c.blocks}
    if len(names) >= 2 and not [c for c in cpu if len(set(c.blocks.values())) >= 2]:
        found.append(f"no case has two different block sizes ({', '.join(sorted(names))} always equal)")
    return found


@pytest.mark.parametrize("key", [p.key for p in registry.all_puzzles()])
def test_every_pattern_is_decidable_from_the_cases(key):
    assert problems(registry.get(key).cases()) == []


def test_a_spec_with_only_trivial_one_block_cases_fails():
    """The test itself: one-block cases that are all trivial, and blocks always equal, are caught."""
    trivial = Case("M=1, N=4", tags=frozenset({"single", "trivial"}), params={"BLOCK_M": 4, "BLOCK_N": 4}, sizes={"M": 1, "N": 4})
    wide = Case("M=8, N=40", tags=frozenset({"wide", "non_pow2", "tail"}), params={"BLOCK_M": 4, "BLOCK_N": 4},
                sizes={"M": 8, "N": 40})
    found = problems([trivial, wide])
    assert any("trivial" in p for p in found)
    assert any("partly filled" in p for p in found) and any("several whole blocks" in p for p in found)
    assert any("two different block sizes" in p for p in found)
