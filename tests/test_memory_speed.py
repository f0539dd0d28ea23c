"""book/memory_speed.py: puzzles 25 and 27's tables of the designs tried and of the profile, drawn at
build time from committed GPU data (every fraction against the copy of the same run)."""
from __future__ import annotations

import json
import sys

from checker.puzzle.model import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "book"))
import memory_speed  # noqa: E402

DATA = json.loads((REPO_ROOT / "book" / "data" / "memory_bound_designs.json").read_text())


def test_every_size_and_design_is_in_its_puzzles_table_with_its_fraction():
    for puzzle in ("p25", "p27"):
        text = memory_speed.designs(puzzle)
        lines = [line for line in text.splitlines() if line.startswith("| ")][1:]
        records = [r for r in DATA["designs"] if r["puzzle"] == puzzle]
        assert len(lines) == len({(r["size"], r["dtype"]) for r in records})
        for r in records:
            line = next(line for line in lines if line.startswith(f"| {memory_speed.row_label(r['size'], r['dtype'])} |"))
            assert f"{r['fraction_of_copy']:.2f}" in line
            assert r["what"] in text
        for line in lines:  # the best of each row in bold, and it is the largest
            cells = [c.strip("* ") for c in line.strip("| ").split(" | ")[1:]]
            best = max(float(c) for c in cells if c != "-")
            assert f"**{best:.2f}**" in line


def test_the_profile_puts_each_kernel_beside_what_the_work_needs_and_the_copy():
    for puzzle in ("p25", "p27"):
        text = memory_speed.profile(puzzle)
        rows = [r for r in DATA["profile"] if r["puzzle"] == puzzle]
        lines = [line for line in text.splitlines() if line.startswith("| ")][1:]
        assert len(lines) == len(rows) and "Nsight Compute" in text
        for r, line in zip(rows, lines):
            read, write = memory_speed._needed(puzzle, r["size"], r["dtype"])
            assert f"{r['kernel']['read']:.0f} / {read:.0f}" in line and f"({r['copy']['us']:.0f})" in line
    # the work's bytes: p27 reads the logits once and writes the gradient once, in bf16
    assert memory_speed._needed("p27", "M=8192 V=32000", "bfloat16") == (8192 * 32000 * 2 / 1e6,) * 2
