"""The attention pages' speed tables, drawn at build time from committed GPU data: each design tried
for p31 and p32 with its time next to cuDNN's in the same run (data/attention_designs.json), and
the Nsight Compute profile that says where the remaining gap is (data/attention_ncu.json)."""
from __future__ import annotations

import json
from pathlib import Path

from ncu_table import STALL_NAMES, top_stalls

DATA = Path(__file__).resolve().parent / "data"
PICK = 0  # the first row of each list is PyTorch's pick, cuDNN: every ratio is against it


def designs(kind: str) -> str:
    """kind "forward" or "backward": a Markdown table, one row per design, its time per size and
    cuDNN's time over it (above 1: faster than cuDNN), then what each design changes, as a list
    under the table (a column of it pushed the table past a laptop's page column), and where and how
    it was all measured."""
    data = json.loads((DATA / "attention_designs.json").read_text(encoding="utf-8"))
    rows = data[kind]
    sizes = list(rows[PICK]["ms"])
    head = ["design", *[f"{size} ms" for size in sizes], "cuDNN / it"]
    body, notes = [], []
    for row in rows:
        ratios = [rows[PICK]["ms"][s] / row["ms"][s] for s in sizes if row["ms"].get(s)]
        cells = [f"{row['ms'][s]:.3f}" if row["ms"].get(s) else "-" for s in sizes]
        low, high = (f"{min(ratios):.2f}", f"{max(ratios):.2f}") if ratios else ("-", "-")
        name = row["design"].strip() if not row["design"].startswith("  ") else "↳ " + row["design"].strip()
        body.append([name, *cells, low if low == high else f"{low}–{high}"])
        if row["what"]:
            notes.append(f"- *{row['design'].strip()}*: {row['what']}")
    table = "\n".join("| " + " | ".join(r) + " |" for r in [head, ["---"] * len(head), *body])
    return (table + "\n\n" + "\n".join(notes) + f"\n\n{data['sizes']}; {data['device']}, torch {data['torch']}, "
            f"triton {data['triton']}, {data['date']}; {data['timing']}. ↳: a change to the row above the arrows, "
            "one at a time.")


def profile() -> str:
    """The Nsight Compute rows as a Markdown table: per kernel, the share of cycles its tensor cores
    were busy, its launch, and the two stall reasons that cost the most."""
    data = json.loads((DATA / "attention_ncu.json").read_text(encoding="utf-8"))
    head = ["kernel", "µs (ncu)", "tensor cores busy", "programs × threads", "registers", "shared KiB",
            "warps mostly wait for (cycles per issue)"]
    body = []
    for row in data["rows"]:
        name = row["kernel"]
        if name.startswith("cudnn"):
            name = "cuDNN " + ("forward" if "fprop" in name else "backward")
        stalls = "; ".join(f"{STALL_NAMES.get(r, r)} {c:.1f}" for r, c in top_stalls(row["stalls"]))
        body.append([f"`{name}`" if not name.startswith("cuDNN") else name, f"{row['time_us']:.0f}",
                     f"{row['tensor_pct']:.0f} %", f"{row['programs']:.0f} × {row['threads']:.0f}",
                     f"{row['registers']:.0f}", f"{row['shared_kib']:.0f}", stalls])
    table = "\n".join("| " + " | ".join(r) + " |" for r in [head, ["---"] * len(head), *body])
    return f"{data['sizes']}; {data['device']}, {data['tool']}, {data['date']}; {data['note']}.\n\n" + table


def by_size(kind: str) -> str:
    """kind "forward" or "backward": per benchmark size, the reference's kernels and cuDNN's with the
    share of cycles their tensor cores were busy (Nsight Compute, every size of the benchmark)."""
    data = json.loads((DATA / "attention_ncu.json").read_text(encoding="utf-8"))
    if kind == "forward":
        head = ["size", "reference µs", "tensor cores busy", "cuDNN µs", "cuDNN's busy"]
        body = [[r["size"], f"{r['forward']['ours_us']:.0f}", f"{r['forward']['ours_tensor_pct']:.0f} %",
                 f"{r['forward']['cudnn_us']:.0f}", f"{r['forward']['cudnn_tensor_pct']:.0f} %"] for r in data["by_size"]]
    else:
        head = ["size", "reference µs (Δ + dK/dV + dQ)", "dK/dV busy", "dQ busy", "cuDNN walk µs", "cuDNN's busy"]
        body = [[r["size"], f"{r['backward']['delta_us'] + r['backward']['dkdv_us'] + r['backward']['dq_us']:.0f}",
                 f"{r['backward']['dkdv_tensor_pct']:.0f} %", f"{r['backward']['dq_tensor_pct']:.0f} %",
                 f"{r['backward']['cudnn_walk_us']:.0f}", f"{r['backward']['cudnn_walk_tensor_pct']:.0f} %"]
                for r in data["by_size"]]
    table = "\n".join("| " + " | ".join(row) + " |" for row in [head, ["---"] * len(head), *body])
    return table + f"\n\n{data['device']}, {data['tool']}, {data['date']}: {data['by_size_note']}."


def standing(rows: list) -> str:
    """Where the reference stands in a committed benchmark (BenchRows): its speed over PyTorch's pick's
    and over the flash backend's, lowest to highest across the sizes, the grouped-query sizes named."""
    def span(values: list[float]) -> str:
        low, high = min(values), max(values)
        return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f} to {high:.2f}"
    pick = [r.torch_ms / r.ms for r in rows]
    flash = [r.extra_ms["sdpa flash"] / r.ms for r in rows if "sdpa flash" in r.extra_ms]
    grouped = [r.torch_ms / r.ms for r in rows if "grouped-query" in r.case]
    backends = sorted({r.torch_backend for r in rows if r.torch_backend})
    text = (f"Against PyTorch's pick ({', '.join(backends) or 'its backend'}), the reference reaches {span(pick)} of its "
            f"speed")
    if grouped:
        text += f" ({span(grouped)} at the grouped-query size)"
    if flash:
        text += f"; against PyTorch's FlashAttention-2 backend, {span(flash)} times its speed"
    return text + "."
