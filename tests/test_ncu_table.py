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
    table = ncu_table.markdown(PROFILE, reads=2, writes=1).splitlines()
    assert len(table) == 2 + len(PROFILE["rows"])
    spilled = next(line for line in table if line.startswith("| 16384 fp32 | reference |"))
    # x and dz read, dx written: 2 and 1 times 4096 x 16384 fp32 values
    assert "(537)" in spilled and "(268)" in spilled and "million" in spilled.split("|")[9]


def test_the_committed_profile_names_its_tool_device_and_date():
    assert PROFILE["tool"].startswith("Nsight Compute") and "H100" in PROFILE["device"] and PROFILE["date"]
    for row in PROFILE["rows"]:
        assert row["stalls"] and row["instructions"] > 0 and row["time_us"] > 0
