"""Where a benchmark's time goes: the GPU kernels of one run of a column's work, each with its time,
read by torch.profiler from replays of the CUDA graph that --bench times (--bench --profile).

A step of several kernels is as fast as the sum of its kernels and of the gaps between them; the
table's one number per column cannot say which kernel to work on, nor whether a baseline wins in
its matrix products or in the memory-bound kernels around them. Times are per step: the profiler
records STEPS replays and each kernel's time is divided by STEPS (a name launched twice a step
shows its two launches summed, and the count). The profiler adds no work inside a graph's replay,
but its clock is not do_bench's: the sum here need not equal the table's median to the microsecond.
"""
from __future__ import annotations

from typing import Any, Callable

STEPS = 5
NAME_CHARS = 44  # cuBLAS and ATen kernel names run past 100 characters


BOOK_NAME_CHARS = 26  # two names side by side in a laptop's page column, each on one line


def short(name: str, chars: int = NAME_CHARS) -> str:
    """A kernel's name cut to fit a column: its head and its tail, where cuBLAS's names differ
    (nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT and ..._NTT: which operand is transposed)."""
    name = name.removeprefix("void ")
    tail = chars // 3
    return name if len(name) <= chars else name[:chars - tail - 1] + "…" + name[-tail:]


def group(events: list[tuple[str, float]], steps: int) -> list[list]:
    """[(name, µs)] of every GPU event of `steps` runs, in launch order -> [[name, µs per step,
    launches per step]], names in order of their first launch."""
    found: dict[str, list] = {}
    for name, us in events:
        entry = found.setdefault(name, [name, 0.0, 0])
        entry[1] += us
        entry[2] += 1
    return [[name, us / steps, count // steps] for name, us, count in found.values()]


def kernel_times(run: Callable[[], Any], steps: int = STEPS) -> list[list]:
    """Each GPU kernel (and memset or copy) that `run` launches, with its time per run: profiled
    over `steps` runs after one unprofiled run."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            run()
        torch.cuda.synchronize()
    gpu = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    gpu.sort(key=lambda e: e.time_range.start)
    return group([(e.name, e.time_range.elapsed_us()) for e in gpu], steps)


def total_us(kernels: list[list]) -> float:
    return sum(us for _, us, _ in kernels)


def side_by_side(columns: dict[str, list[list]]) -> list[list[list | None]]:
    """Row i: each column's i-th kernel [name, µs, launches], or None where a column has fewer."""
    return [[kernels[i] if i < len(kernels) else None for kernels in columns.values()]
            for i in range(max(len(k) for k in columns.values()))]


def lines(dims: str, columns: dict[str, list[list]]) -> list[str]:
    """The columns' kernels side by side, in launch order, for the terminal."""
    width = NAME_CHARS + 12
    out = [f"where one run's time goes, {dims} (torch.profiler on the CUDA-graph replays, µs per run):",
           "  " + " | ".join(f"{name}: {total_us(k):.1f} µs in {sum(n for *_, n in k)} launches".ljust(width)
                             for name, k in columns.items())]
    for row in side_by_side(columns):
        cells = ["" if entry is None else
                 f"{short(entry[0]):{NAME_CHARS}} {entry[1]:7.1f}{f' x{entry[2]}' if entry[2] > 1 else '':>4}"
                 for entry in row]
        out.append("  " + " | ".join(c.ljust(width) for c in cells))
    return out


def markdown(columns: dict[str, list[list]]) -> str:
    """The columns' kernels side by side as a Markdown table, for the book."""
    head = [cell for name in columns for cell in (f"{name}: kernel", "µs")]
    body = [[cell for entry in row for cell in (
        ("", "") if entry is None else
        (f"`{short(entry[0], BOOK_NAME_CHARS)}`" + (f" ×{entry[2]}" if entry[2] > 1 else ""), f"{entry[1]:.1f}"))]
        for row in side_by_side(columns)]
    body.append([cell for name in columns for cell in ("**all**", f"**{total_us(columns[name]):.1f}**")])
    return "\n".join("| " + " | ".join(r) + " |" for r in [head, ["---"] * len(head)] + body)
