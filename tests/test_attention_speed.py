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
    from checker.bench.measured import BenchRow
    for key in ("p31", "p32"):
        rows = [BenchRow(**r) for r in json.loads((REPO_ROOT / "book" / "data" / f"{key}_bench.json").read_text())["rows"]]
        text = attention_speed.standing(rows)
        ratios = [r.torch_ms / r.ms for r in rows]
        grouped = [r.torch_ms / r.ms for r in rows if "grouped-query" in r.case]
        assert f"{min(ratios):.2f} to {max(ratios):.2f} of its speed" in text, text
        assert grouped and f"{min(grouped):.2f}" in text.split("grouped-query")[0].rsplit("(", 1)[1], text


def _walk(name, kind, ms, err=0.0, own=True, **switches):
    design = {**dict(block_q=64, block_k=64, warps=4, stages=3, slice=1, split=False, reverse=False, own=own), **switches}
    return {"name": f"{kind} {name}", "role": "walk", "kind": kind, "ms": ms, "err": err, "error": "",
            "same_as": "", "design": [design]}


def _whole(role, ms, err=0.0, name="", same_as=""):
    return {"name": name or role, "role": role, "kind": "whole", "ms": ms, "err": err, "error": "", "same_as": same_as,
            "design": []}


SWEPT = {"date": "2026-12-08", "device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "triton": "3.6.0",
         "method": "medians", "per_head_dim": {"64, causal": {"dkdv": "reference kernel 32x128 w4 s5",
                                                             "dq": "reference kernel 128x32 w4 s5", "launch": {}}},
         "sizes": [{"size": "causal, N=4096, D=64",
                    "a": [_whole("cudnn", 1.0), _whole("tutorial", 1.25), _whole("reference", 1.4),
                          _walk("reference kernel 64x64 w4 s3", "dK/dV", 0.8),
                          _walk("64x64 w4 s3, slice 2", "dK/dV", 0.64, own=False, slice=2),
                          _walk("64x64 w4 s3, split", "dK/dV", 0.9, err=0.5, own=False, split=True),
                          _walk("reference kernel 64x64 w4 s3", "dQ", 0.5),
                          _whole("fused", 2.0, name="fused: dK/dV 32x128, dQ 128x32, w4 s5"),
                          _whole("fused", 1.75, name="fused: dK/dV 64x64, dQ 64x64, w4 s3")],
                    "b": [_whole("cudnn", 1.1), _whole("reference", 1.5), _whole("per-head-dim", 1.25),
                          _whole("best own", None, same_as="per-head-dim"), _whole("best any", 1.1)]}]}


def test_the_sweep_table_gives_each_column_with_cudnns_time_over_it_in_the_same_pass():
    table = attention_speed.sweep_sizes(SWEPT)
    row = next(line for line in table.splitlines() if line.startswith("| causal, N=4096, D=64"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # pass B against pass B's cuDNN (1.1 ms); the fused and the tutorial against pass A's (1.0 ms)
    assert cells == ["causal, N=4096, D=64", "1.100", "1.500 (0.73)", "1.250 (0.88)", "= per-head-dim launch",
                     "1.100 (1.00)", "1.750 (0.57)", "1.250 (0.80)"]


def test_the_sweep_names_every_walk_against_the_reference_walk_and_leaves_a_wrong_one_out():
    walks = attention_speed.sweep_walks(SWEPT)
    assert "| 64 | yes | dK/dV | 64x64 w4 s3, slice 2 | 1 | 1.25 |" in walks
    assert "| 64 | yes | dK/dV | 64x64 w4 s3, split | 0 (+1 failed) | - |" in walks  # its gradients were off
    assert "| 64 | yes | whole | fused: dK/dV 64x64, dQ 64x64, w4 s3 | 1 | 0.80 |" in walks


def test_the_sweep_sentences_are_computed_from_its_data():
    words = attention_speed.sweep_sentences(SWEPT)
    assert "At causal, N=4096, D=64, of cuDNN's speed: reference 0.73, per-head-dim launch 0.88, " in words
    assert "best launch here 0.88, best design here 1.00; the tutorial 0.80 (float16)." in words
    assert "The per-head-dim launch reaches 0.8 of cuDNN's speed or more at 1 of 1 sizes" in words
    assert "(slice): the walk's time without it over its time with it (above 1, it helps), 1.25 over 1 walks" in words
    assert "(split)" not in words  # its only walk failed the check


def test_without_a_sweep_the_page_names_every_design_it_would_time():
    import p32_bwd_launches as designs  # the launches research/attention/bwd_sweep.py times (bwd_designs.py's)
    text = attention_speed.not_swept()
    assert text.startswith("*Not measured yet")
    for D in (64, 128):
        for walk in designs.DKDV[D] + designs.DKDV_DESIGNS[D] + designs.DQ[D] + designs.DQ_DESIGNS[D] + designs.FUSED[D]:
            assert walk.name in text
