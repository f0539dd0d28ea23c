"""book/p25_memory_instructions.py: the PTX census (lowered by book/ptx.py) that p25's page draws
its alignment table from, at build time."""
from __future__ import annotations

import sys

from checker.puzzle.model import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "book"))
from p25_memory_instructions import census  # noqa: E402


def test_aligned_rows_load_through_wide_asynchronous_copies():
    found = census(8192, "bf16")
    assert found["asynchronous copies (pipelining)"] > 0 and found["16-byte stores"] > 0
    assert found["narrower loads"] == 0 and found["narrower stores"] == 0


def test_unaligned_rows_lose_the_copies_and_the_wide_stores():
    found = census(8462, "bf16")
    assert found["asynchronous copies (pipelining)"] == 0 and found["16-byte stores"] == 0
    assert found["narrower loads"] > 0 and found["narrower stores"] > 0
