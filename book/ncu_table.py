"""A committed Nsight Compute (`ncu`) profile as a page's table: the book is built on a CPU, so the
profile is measured on a GPU once, saved as JSON (book/data/pNN_ncu.json) and drawn at build time.

Each row of the file is one kernel launch: its width and dtype, the kernel's name on the page, its
launch (programs, warps) and the metrics ncu reported, among them `stalls`: the cycles a warp spent,
per instruction it issued, waiting for each reason (ncu's smsp__average_warps_issue_stalled_*)."""
from __future__ import annotations

# ncu's stall reasons, in words a reader of the page can act on
STALL_NAMES = {
    "long_scoreboard": "waiting for memory (global or spilled)",
    "short_scoreboard": "waiting for shared memory or special math",
    "barrier": "waiting at a barrier",
    "wait": "fixed-latency dependency",
    "not_selected": "ready, another warp issued",
    "mio_throttle": "shared-memory queue full",
    "lg_throttle": "global-memory queue full",
    "no_instruction": "instruction fetch",
    "dispatch_stall": "dispatch",
    "math_pipe_throttle": "math pipe busy",
    "imc_miss": "constant-cache miss",
    "drain": "draining stores at exit",
    "branch_resolving": "branch",
    "membar": "memory barrier",
    "sleeping": "sleeping",
    "tex_throttle": "texture queue full",
    "misc": "other",
}
DTYPE = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}


def top_stalls(stalls: dict[str, float], count: int = 2) -> list[tuple[str, float]]:
    """The `count` reasons that cost the most cycles per issued instruction, largest first."""
    return sorted(stalls.items(), key=lambda item: -item[1])[:count]


def stall_words(stalls: dict[str, float], count: int = 2) -> str:
    return "; ".join(f"{STALL_NAMES.get(reason, reason)} {cycles:.1f}" for reason, cycles in top_stalls(stalls, count))


def needed_bytes(row: dict, reads: int, writes: int) -> tuple[int, int]:
    """The bytes the work must read and write: `reads` and `writes` tensors of M x H elements."""
    elements = row["M"] * row["H"] * BYTES[row["dtype"]]
    return reads * elements, writes * elements


def count(n: int) -> str:
    if n == 0:
        return "none"
    return f"{n / 1e6:.1f} million" if n >= 100_000 else f"{n:,}"


# The profile as two tables with the same key columns (H and dtype, kernel): thirteen columns in one
# table left a laptop's page column 8 of them, in rows ~170 px tall. The first: where the time and
# the bytes went; the second: what the instructions did and what the warps waited for.
KEY = ("H", "kernel")
MEMORY = ("µs", "DRAM read, MB (needed)", "DRAM written, MB (needed)", "programs × warps", "registers / thread",
          "occupancy (achieved)")
INSTRUCTIONS = ("spilled (local loads + stores)", "instructions", "issue slots used", "cycles per instruction",
                "largest stalls (cycles per instruction)")


def _cells(row: dict, reads: int, writes: int) -> dict[str, str]:
    read, written = needed_bytes(row, reads, writes)
    return {
        "H": f"{row['H']} {DTYPE[row['dtype']]}", "kernel": row["kernel"],
        "µs": f"{row['time_us']:.0f}",
        "DRAM read, MB (needed)": f"{row['dram_read'] / 1e6:.0f} ({read / 1e6:.0f})",
        "DRAM written, MB (needed)": f"{row['dram_written'] / 1e6:.0f} ({written / 1e6:.0f})",
        "programs × warps": f"{row['programs']} × {row['warps']}",
        "registers / thread": f"{row['registers']:.0f}",
        "occupancy (achieved)": f"{row['occupancy_pct']:.1f} %",
        "spilled (local loads + stores)": count(row["local_loads"] + row["local_stores"]),
        "instructions": f"{row['instructions'] / 1e6:.1f} million",
        "issue slots used": f"{row['issue_active_pct']:.0f} %",
        "cycles per instruction": f"{row['cycles_per_issue']:.1f}",
        "largest stalls (cycles per instruction)": stall_words(row["stalls"]),
    }


def markdown(data: dict, reads: int, writes: int) -> str:
    """The profile as two Markdown tables (MEMORY, then INSTRUCTIONS, each after the KEY columns),
    one row per launch; DRAM bytes next to those the work needs (`reads` and `writes` tensors of
    M x H elements)."""
    rows = [_cells(row, reads, writes) for row in data["rows"]]
    tables = []
    for columns in (KEY + MEMORY, KEY + INSTRUCTIONS):
        lines = ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
        lines += ["| " + " | ".join(row[c] for c in columns) + " |" for row in rows]
        tables.append("\n".join(lines))
    return "\n\n".join(tables)
