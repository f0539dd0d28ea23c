"""book/ncu_table.py: a committed ncu profile drawn as a page's table at build time."""
from __future__ import annotations

import json
import sys

from checker.puzzle.model import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "book"))
import ncu_table  # noqa: E402

PROFILE = json.loads((REPO_ROOT / "book" / "data" / "p25_ncu.json").read_text())


def test_the_largest_stalls_come_first_in_words():
    stalls = {"barrier": 1.0, "long_scoreboard": 11.1, "wait": 1.6, "madeup_reason": 3.0}
    assert ncu_table.top_stalls(stalls, 3) == [("long_scoreboard", 11.1), ("madeup_reason", 3.0), ("wait", 1.6)]
    assert ncu_table.stall_words(stalls) == "waiting for memory (global or spilled) 11.1; madeup_reason 3.0"


def test_every_profiled_launch_is_a_row_with_the_bytes_its_work_needs():
    memory, instructions = (t.splitlines() for t in ncu_table.markdown(PROFILE, reads=2, writes=1).split("\n\n"))
    assert len(memory) == len(instructions) == 2 + len(PROFILE["rows"])
    row = next(line for line in memory if line.startswith("| 16384 fp32 | reference |"))
    # x and dz read, dx written: 2 and 1 times 4096 x 16384 fp32 values
    assert "(537)" in row and "(268)" in row
    spilled = next(line for line in instructions if line.startswith("| 16384 fp32 | reference |"))
    assert "million" in spilled.split("|")[3] and "waiting for" in spilled


def test_each_table_fits_a_laptops_column():
    """Thirteen columns in one table showed 8 at 1280 px, in rows ~170 px tall (issue 35, item 10):
    two tables, each with the launch's key columns and at most 8 columns in all."""
    for table in ncu_table.markdown(PROFILE, reads=2, writes=1).split("\n\n"):
        head = [c.strip() for c in table.splitlines()[0].strip("|").split("|")]
        assert head[:2] == ["H", "kernel"] and len(head) <= 8, head


def test_the_committed_profile_names_its_tool_device_and_date():
    assert PROFILE["tool"].startswith("Nsight Compute") and "H100" in PROFILE["device"] and PROFILE["date"]
    for row in PROFILE["rows"]:
        assert row["stalls"] and row["instructions"] > 0 and row["time_us"] > 0
