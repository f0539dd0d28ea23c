"""The attention pages' speed tables, drawn at build time from committed GPU data: each design tried
for p31 and p32 with its time next to cuDNN's in the same run (data/attention_designs.json), and
the Nsight Compute profile that says where the remaining gap is (data/attention_ncu.json)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import p32_bwd_launches as launches  # the launches research/attention/bwd_sweep.py times
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
    tutorial = [r.extra_ms["tutorial"] / r.ms for r in rows if "tutorial" in r.extra_ms]
    if tutorial:
        text += (f"; against Triton's tutorial 06 (float16), {span(tutorial)} times its speed at the "
                 f"{len(tutorial)} sizes it ran")
    return text + "."


# ---------------------------------------------------------------- p32's backward designs, per size

SWEEP = DATA / "p32_bwd_sweep.json"  # research/attention/bwd_sweep.py's JSON, from a GPU run
TARGET_SIZE = "causal, N=4096, D=64"  # where the tutorial's backward was ahead of the reference
ROLES = {"reference": "reference", "per-head-dim": "per-head-dim launch", "best own": "best launch here",
         "best any": "best design here"}


def _column(entry: dict, role: str, passed: str = "b") -> dict | None:
    return next((c for c in entry[passed] if c["role"] == role), None)


def _timed(column: dict | None) -> bool:
    """Timed, and its gradients within the sweep's check of the reference's."""
    return bool(column) and column["ms"] is not None and (column["err"] is None or column["err"] <= 2e-2)


def _cell(entry: dict, column: dict | None, passed: str = "b") -> str:
    """ms and cuDNN's time over it, in the same pass (above 1: faster than cuDNN)."""
    if column is None:
        return "-"
    if column.get("same_as"):
        return "= " + ROLES.get(column["same_as"], column["same_as"])
    if not _timed(column):
        return "not timed" if column["ms"] is None else "wrong"
    return f"{column['ms']:.3f} ({_column(entry, 'cudnn', passed)['ms'] / column['ms']:.2f})"


def _speed(entry: dict, role: str) -> float | None:
    """cuDNN's time over a pass B role's (following same_as), or None."""
    column = _column(entry, role)
    while column is not None and column.get("same_as"):
        column = _column(entry, column["same_as"])
    return _column(entry, "cudnn")["ms"] / column["ms"] if _timed(column) else None


def _best_fused(entry: dict) -> dict | None:
    fused = [c for c in entry["a"] if c["role"] == "fused" and _timed(c)]
    return min(fused, key=lambda c: c["ms"]) if fused else None


def sweep_sizes(data: dict) -> str:
    """Per size, the whole backward, each cell its ms and cuDNN's time over it: the reference, the
    per-head-dim launch, the best launch of the reference's kernels at that size, the best walks of
    any design there (one set of rounds, pass B), then from pass A the best fused arrangement and
    Triton's tutorial (another set of rounds, beside its own cuDNN time)."""
    head = ["size", "cuDNN ms", *ROLES.values(), "fused (best)", "tutorial 06, fp16"]
    body = []
    for entry in data["sizes"]:
        if not entry["b"]:
            continue
        cells = [entry["size"], f"{_column(entry, 'cudnn')['ms']:.3f}"]
        cells += [_cell(entry, _column(entry, role)) for role in ROLES]
        cells += [_cell(entry, _best_fused(entry), "a"), _cell(entry, _column(entry, "tutorial", "a"), "a")]
        body.append(cells)
    return "\n".join("| " + " | ".join(row) + " |" for row in [head, ["---"] * len(head), *body])


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _span(values: list[float]) -> str:
    low, high = f"{min(values):.2f}", f"{max(values):.2f}"
    return f"{_geomean(values):.2f}" + ("" if low == high else f" ({low}–{high})")


def sweep_walks(data: dict) -> str:
    """Every walk timed, per head dim, causal setting and kind, against the reference's walk at the same
    size (its time over the walk's: above 1, faster), over those sizes: the geometric mean and the
    range; the fused arrangements ("whole") against the whole reference backward."""
    rows: dict = {}
    for entry in data["sizes"]:
        D = entry["size"].rsplit("D=", 1)[1]
        causal = "yes" if entry["size"].startswith("causal") else "no"
        for kind in ("dK/dV", "dQ"):
            walks = [c for c in entry["a"] if c["role"] == "walk" and c["kind"] == kind]
            if not walks or not _timed(walks[0]):
                continue
            for walk in walks:  # the first of each kind is the reference's launch
                name = walk["name"].removeprefix(kind + " ")
                slot = rows.setdefault((D, causal, kind, name), [])
                slot.append(walks[0]["ms"] / walk["ms"] if _timed(walk) else None)
        reference = _column(entry, "reference", "a")
        for fused in (c for c in entry["a"] if c["role"] == "fused"):
            rows.setdefault((D, causal, "whole", fused["name"]), []).append(
                reference["ms"] / fused["ms"] if _timed(fused) and _timed(reference) else None)
    head = ["D", "causal", "walk", "launch and design", "sizes", "reference's / it"]
    body = []
    for (D, causal, kind, name), ratios in sorted(rows.items(), key=lambda kv: (int(kv[0][0]), *kv[0][1:3])):
        timed = [r for r in ratios if r is not None]
        missed = len(ratios) - len(timed)
        body.append([D, causal, kind, name, f"{len(timed)}" + (f" (+{missed} failed)" if missed else ""),
                     _span(timed) if timed else "-"])
    return "\n".join("| " + " | ".join(row) + " |" for row in [head, ["---"] * len(head), *body])


def _switch_gains(data: dict, switch: str) -> list[float]:
    """Per size and kind, the walk without `switch` (its other switches and tiles the same) over the
    walk with it: what turning it on changed."""
    gains = []
    for entry in data["sizes"]:
        walks = [c for c in entry["a"] if c["role"] == "walk" and _timed(c)]
        for walk in walks:
            design = walk["design"][0]
            if not (design["slice"] > 1 if switch == "slice" else design[switch]):
                continue
            off = {**design, switch: 1 if switch == "slice" else False}
            twin = next((c for c in walks if c["kind"] == walk["kind"] and
                         {**c["design"][0], "own": False} == {**off, "own": False}), None)
            if twin is not None:
                gains.append(twin["ms"] / walk["ms"])
    return gains


def sweep_sentences(data: dict) -> str:
    """What the sweep found, each figure computed here from its JSON."""
    sizes = [e for e in data["sizes"] if e["b"]]
    words = [f"Measured on {data['date']}, {data['device']}, torch {data['torch']}, triton {data['triton']}: "
             f"{data['method']}."]
    target = next((e for e in sizes if e["size"] == TARGET_SIZE), None)
    if target is not None:
        parts = [f"{ROLES[role]} {_speed(target, role):.2f}" for role in ROLES if _speed(target, role) is not None]
        tutorial = _column(target, "tutorial", "a")
        if _timed(tutorial):
            said = f"the tutorial {_column(target, 'cudnn', 'a')['ms'] / tutorial['ms']:.2f} (float16)"
        elif tutorial and tutorial.get("ms") and not tutorial.get("error"):
            # timed, but its gradients are not PyTorch's: its time is no standing beside the others
            said = (f"the tutorial {_column(target, 'cudnn', 'a')['ms'] / tutorial['ms']:.2f} (float16) with "
                    f"gradients that differ from PyTorch's by {tutorial['err']:.2g} of their norm")
        else:
            said = f"the tutorial not timed ({tutorial['error'] if tutorial and tutorial.get('error') else 'absent'})"
        words.append(f"At {TARGET_SIZE}, of cuDNN's speed: " + ", ".join(parts) + f"; {said}.")
    for role in ("per-head-dim", "best any"):
        speeds = [(s, e["size"]) for e in sizes if (s := _speed(e, role)) is not None]
        if speeds:
            low = min(speeds)
            words.append(f"The {ROLES[role]} reaches 0.8 of cuDNN's speed or more at {sum(s >= 0.8 for s, _ in speeds)} "
                         f"of {len(speeds)} sizes; its lowest, {low[0]:.2f}, at {low[1]}.")
    for key, value in sorted(data.get("per_head_dim", {}).items()):
        if value.get("launch"):
            words.append(f"Per-head-dim launch at D = {key}: dK/dV {value['dkdv']}, dQ {value['dq']}.")
    for switch, what in (("slice", "the diagonal in half steps"), ("split", "no row mask on whole blocks"),
                         ("reverse", "the longest dQ walks first")):
        gains = _switch_gains(data, switch)
        if gains:
            words.append(f"{what[0].upper() + what[1:]} ({switch}): the walk's time without it over its time with "
                         f"it (above 1, it helps), {_span(gains)} over {len(gains)} walks.")
    return " ".join(words)


def sweep() -> str:
    """p32's page: the backward designs at every size beside cuDNN and Triton's tutorial, from the
    committed sweep; where none is committed, what the sweep times, named, and how to run it."""
    if not SWEEP.is_file():
        return not_swept()
    data = json.loads(SWEEP.read_text(encoding="utf-8"))
    return (sweep_sentences(data) + "\n\n" + sweep_sizes(data) + "\n\nEach walk against the reference's walk at the "
            "same size:\n\n" + sweep_walks(data))


def not_swept() -> str:
    """Every design the sweep times, by name, and the command that times them."""
    lines = []
    for D in (64, 128):
        lines.append(f"- D = {D}, dK/dV: " + "; ".join(w.name for w in launches.DKDV[D] + launches.DKDV_DESIGNS[D]))
        lines.append(f"- D = {D}, dQ: " + "; ".join(w.name for w in launches.DQ[D] + launches.DQ_DESIGNS[D]))
        lines.append(f"- D = {D}: " + "; ".join(f.name for f in launches.FUSED[D]))
    return ("*Not measured yet: run `python research/attention/bwd_sweep.py` on a GPU (with TRITON_TUTORIALS for "
            "the tutorial's column) and commit its JSON as `book/data/p32_bwd_sweep.json`.* The launches and "
            "designs it times, each walk alone at every size of the benchmark (the reference's launch first):\n\n"
            + "\n".join(lines))
