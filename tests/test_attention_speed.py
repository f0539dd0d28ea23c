"""book/attention_speed.py: the attention pages' tables of designs and profile, drawn at build time
from committed GPU data, each ratio against cuDNN's time in the same run."""
from __future__ import annotations

import json
import sys

from checker.puzzle.model import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "book"))
import attention_speed  # noqa: E402

DESIGNS = json.loads((REPO_ROOT / "book" / "data" / "attention_designs.json").read_text())


def test_every_design_is_a_row_with_its_ratio_to_cudnn_of_the_same_run():
    for kind in ("forward", "backward"):
        rows = [line.rstrip(" |") for line in attention_speed.designs(kind).splitlines() if line.startswith("| ")][2:]
        assert len(rows) == len(DESIGNS[kind])
        cudnn = DESIGNS[kind][0]
        assert "cuDNN" in cudnn["design"] and rows[0].split(" | ")[-1] == "1.00"
        for design, line in zip(DESIGNS[kind], rows):
            times = [ms for ms in design["ms"].values() if ms]
            ratios = [cudnn["ms"][size] / ms for size, ms in design["ms"].items() if ms]
            assert all(f"{ms:.3f}" in line for ms in times)
            assert f"{min(ratios):.2f}" in line.split(" | ")[-1] and f"{max(ratios):.2f}" in line.split(" | ")[-1]
            if design["what"]:  # what it changes: listed under the table, not in a column
                assert f"*{design['design'].strip()}*: {design['what']}" in attention_speed.designs(kind)


def test_the_profile_names_each_kernel_with_its_tensor_core_share():
    text = attention_speed.profile()
    assert "Nsight Compute" in text and "H100" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")][2:]
    profile = json.loads((REPO_ROOT / "book" / "data" / "attention_ncu.json").read_text())
    assert len(rows) == len(profile["rows"])
    assert any(line.startswith("| cuDNN forward |") for line in rows)
    fwd = next(line for line in rows if line.startswith("| `attn_fwd_kernel` |"))
    assert f"{round(profile['rows'][0]['tensor_pct'])} %" in fwd and "barrier" in fwd


def test_every_benchmark_size_has_its_profile_row():
    from checker import registry
    profile = json.loads((REPO_ROOT / "book" / "data" / "attention_ncu.json").read_text())
    sizes = [c.name for c in registry.get("p31").bench.cases()]
    assert [r["size"] for r in profile["by_size"]] == sizes == [c.name for c in registry.get("p32").bench.cases()]
    for kind in ("forward", "backward"):
        rows = [line for line in attention_speed.by_size(kind).splitlines() if line.startswith("| ")][2:]
        assert [line.split(" | ")[0].lstrip("| ") for line in rows] == sizes


def test_the_standing_sentence_spans_the_committed_ratios():
    from checker.bench.columns import BenchRow
    for key in ("p31", "p32"):
        rows = [BenchRow(**r) for r in json.loads((REPO_ROOT / "book" / "data" / f"{key}_bench.json").read_text())["rows"]]
        text = attention_speed.standing(rows)
        ratios = [r.torch_ms / r.ms for r in rows]
        grouped = [r.torch_ms / r.ms for r in rows if "grouped-query" in r.case]
        assert f"{min(ratios):.2f} to {max(ratios):.2f} of its speed" in text, text
        assert grouped and f"{min(grouped):.2f}" in text.split("grouped-query")[0].rsplit("(", 1)[1], text
