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


def markdown(data: dict, reads: int, writes: int) -> str:
    """The profile as a Markdown table; DRAM bytes next to those the work needs (`reads` and `writes`
    tensors of M x H elements)."""
    lines = ["| H | kernel | programs × warps | registers / thread | occupancy (achieved) | µs | DRAM read (needed) "
             "| DRAM written (needed) | spilled (local loads + stores) | instructions | issue slots used "
             "| cycles per instruction | largest stalls (cycles per instruction) |",
             "|---" * 13 + "|"]
    for row in data["rows"]:
        read, written = needed_bytes(row, reads, writes)
        spilled = row["local_loads"] + row["local_stores"]
        lines.append(
            f"| {row['H']} {DTYPE[row['dtype']]} | {row['kernel']} | {row['programs']} × {row['warps']} | {row['registers']:.0f} "
            f"| {row['occupancy_pct']:.1f} % | {row['time_us']:.0f} | {row['dram_read'] / 1e6:.0f} MB ({read / 1e6:.0f}) "
            f"| {row['dram_written'] / 1e6:.0f} MB ({written / 1e6:.0f}) "
            f"| {count(spilled)} | {row['instructions'] / 1e6:.1f} million "
            f"| {row['issue_active_pct']:.0f} % | {row['cycles_per_issue']:.1f} | {stall_words(row['stalls'])} |")
    return "\n".join(lines)
