"""A hang costs what the puzzle needs, not 60 s for every puzzle (checker/run/hang_limits.py)."""
from __future__ import annotations

import time

import pytest

from checker import registry
from checker.run import hang_limits
from checker.run.session import run_check
from checker.source import from_text


def test_the_limit_scales_with_the_puzzles_reference():
    assert hang_limits.hang_limit("p01", "interpreter") == hang_limits.FLOOR == 10.0
    assert hang_limits.hang_limit("p22", "interpreter") == round(20 * hang_limits.SLOWEST_CASE_S["p22"])
    assert hang_limits.hang_limit("p01", "gpu") == hang_limits.DEFAULT_TIMEOUT == 60.0
    assert hang_limits.hang_limit("p99", "interpreter") == 60.0  # never measured


@pytest.mark.every_puzzle
def test_every_puzzle_has_its_reference_time():
    missing = sorted({p.key for p in registry.all_puzzles()} - set(hang_limits.SLOWEST_CASE_S))
    assert not missing, f"measure it: python -m checker.selftime --slowest-cases {' '.join(missing)} --write"
    assert set(hang_limits.SLOWEST_CASE_S) <= {p.key for p in registry.all_puzzles()}, "a puzzle that is gone"


def test_a_hang_in_p01_is_stopped_at_its_own_limit_and_the_report_says_why():
    p01 = registry.get("p01")
    hanging = p01.solution.read_text(encoding="utf-8").replace(
        "    tl.store(z_ptr + offsets, x + 10.0)", "    i = 0\n    while i >= 0:\n        i += 1")
    lines: list[str] = []
    started = time.monotonic()
    report = run_check(p01, ["forward"], from_text(hanging, "hang.py"), backend="interpreter", write=lines.append,
                       only_documented=True, shards=1)
    took = time.monotonic() - started
    text = "\n".join(lines)
    assert not report.passed
    assert "still running after 10 s (p01's limit: 20× its reference kernels' slowest case here, at least 10 s)" \
        in text, text
    assert took < 45, f"{took:.0f} s: the 60 s limit, not p01's"
