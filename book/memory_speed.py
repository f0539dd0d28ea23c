"""Puzzles 25 and 27's pages, the designs tried against their speed goals and the profile of where the
time goes, drawn at build time from committed GPU data (data/memory_bound_designs.json, written by
research/memory_bound/to_book.py from explore.py's and ncu_profile.py's runs)."""
from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "memory_bound_designs.json"
# explore.py's designs, in the order a table shows them; the reference's other launches are one column
ORDER = {"p27": ("A ref", "B ref", "C one-read", "D split", "E ref"),
         "p25": ("A ref", "D ref", "B two-pass", "C split", "E padded", "E padded, constant width", "F ref")}
HEADS = {"A ref": "the reference", "B ref": "other launches", "D ref": "other launches", "C one-read": "one read",
         "D split": "row split", "B two-pass": "two passes", "C split": "row split", "E padded": "padded row",
         "E padded, constant width": "padded, constant H",
         "F ref": "constant H", "E ref": "constant V"}


def _load() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def launch_text(params: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in params.items())


def row_label(size: str, dtype: str) -> str:
    """A designs table's first cell: the width and the dtype ("H = 8462, fp32"); M is in the caption."""
    return f"{size.split()[-1].replace('=', ' = ')}, {'fp32' if dtype == 'float32' else 'bf16'}"


def designs(puzzle: str) -> str:
    """A Markdown table: per size, the fraction of the copy bandwidth (same bytes, same run) of the
    reference and of the best launch of each other design, with that launch's parameters listed
    below the table, and what each design is."""
    data = _load()
    rows = [r for r in data["designs"] if r["puzzle"] == puzzle]
    order = [d for d in ORDER[puzzle] if any(r["design"] == d for r in rows)]
    # fp32 first, then by width: the size's last number (V or H)
    sizes = sorted(dict.fromkeys((r["size"], r["dtype"]) for r in rows),
                   key=lambda s: (s[1] != "float32", int(s[0].rsplit("=", 1)[1])))
    found = {(r["size"], r["dtype"], r["design"]): r for r in rows}
    # one column for the size: M is the same at every size (the caption says which), the width and dtype differ
    lines = ["| width | " + " | ".join(HEADS[d] for d in order) + " |", "|---" * (len(order) + 1) + "|"]
    launches = []
    for size, dtype in sizes:
        cells = []
        for design in order:
            r = found.get((size, dtype, design))
            cells.append(f"{r['fraction_of_copy']:.2f}" if r else "-")
            if r and r["params"] and design != "A ref":
                launches.append(f"{size} {dtype}, {HEADS[design]}: {launch_text(r['params'])}")
        best = max((found[(size, dtype, d)] for d in order if (size, dtype, d) in found),
                   key=lambda r: r["fraction_of_copy"])
        cells = [f"**{c}**" if c == f"{best['fraction_of_copy']:.2f}" else c for c in cells]
        lines.append(f"| {row_label(size, dtype)} | " + " | ".join(cells) + " |")
    what = "\n".join(f"- *{HEADS[d]}*: {next(r['what'] for r in rows if r['design'] == d)}" for d in order)
    row_counts = sorted({size.split()[0].replace("=", " = ") for size, _ in sizes})  # "M = 4096"
    return (f"Fractions of the copy bandwidth at {', '.join(row_counts)} rows, the copy of the same bytes timed in "
            f"the same run "
            f"({data['date']}, {data['device']}, torch {data['torch']}, triton {data['triton']}; {data['timing']}); "
            f"the best of each row in bold:\n\n" + "\n".join(lines) + "\n\n" + what
            + "\n\nThe best launch of each design, where it has parameters:\n\n"
            + "\n".join(f"- {line}" for line in launches))


def _needed(puzzle: str, size: str, dtype: str) -> tuple[float, float]:
    """MB the work must read and write: p27 the logits and the gradient, p25 x and dz, and dx."""
    dims = dict(part.split("=") for part in size.split())
    itemsize = 2 if dtype == "bfloat16" else 4
    if puzzle == "p27":
        once = int(dims["M"]) * int(dims["V"]) * itemsize / 1e6
        return once, once
    once = int(dims["M"]) * int(dims["H"]) * itemsize / 1e6
    return 2 * once, once


def profile(puzzle: str) -> str:
    """A Markdown table: the main kernel of each profiled size, with the copy of the same bytes in
    parentheses (its time and how busy it kept DRAM); sizes at M = 8192 (p27) and 4096 (p25)."""
    data = _load()
    lines = ["| size | kernel | µs (copy) | DRAM read / needed, MB | written / needed, MB | DRAM busy (copy) "
             "| spilled, read MB | registers |", "|---" * 8 + "|"]
    for r in (r for r in data["profile"] if r["puzzle"] == puzzle):
        k, c = r["kernel"], r["copy"]
        read, write = _needed(puzzle, r["size"], r["dtype"])
        size = f"{r['size'].split()[-1]} {'fp32' if r['dtype'] == 'float32' else 'bf16'}"
        lines.append(f"| {size} | {r['design']} | {k['us']:.0f} ({c['us']:.0f}) | {k['read']:.0f} / {read:.0f} | "
                     f"{k['write']:.0f} / {write:.0f} | {k['dram_pct']:.0f} % ({c['dram_pct']:.0f} %) | "
                     f"{k['spill_load']:.0f} | {k['registers']:.0f} |")
    return f"{data['profile_tool']}:\n\n" + "\n".join(lines)


def row(puzzle: str, size: str, dtype: str, design: str) -> dict:
    """One design's best record at one size (for the pages' sentences)."""
    return next(r for r in _load()["designs"]
                if (r["puzzle"], r["size"], r["dtype"], r["design"]) == (puzzle, size, dtype, design))


def ahead(puzzle: str, margin: float = 0.005) -> list[dict]:
    """The sizes where another design beat the reference by more than `margin` of the copy bandwidth:
    the best such design's record, with the reference's fraction beside it."""
    rows = [r for r in _load()["designs"] if r["puzzle"] == puzzle]
    found = []
    for size, dtype in dict.fromkeys((r["size"], r["dtype"]) for r in rows):
        here = [r for r in rows if (r["size"], r["dtype"]) == (size, dtype)]
        ref = next(r for r in here if r["design"] == "A ref")
        best = max(here, key=lambda r: r["fraction_of_copy"])
        if best["fraction_of_copy"] > ref["fraction_of_copy"] + margin:
            found.append({**best, "reference_fraction": ref["fraction_of_copy"]})
    return found
