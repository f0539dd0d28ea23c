"""python -m checker pNN --bench: how fast the learner's kernels are, on a GPU, next to PyTorch.

Only after the kernels pass the GPU check (a fast wrong kernel is not fast). Per benchmark size:
the median time of the learner's part, of the same work in PyTorch eager and under torch.compile,
each as GB/s (the bytes the work must move, spec.Bench.traffic) and TFLOP/s where it has flops, and
the device's copy bandwidth measured in the same run: the ceiling a memory-bound kernel can reach.
Each is captured once in a CUDA graph and the graph's replay is timed (triton's do_bench: the L2
cache flushed before every run): the GPU's time, without Python's launch overhead (tens of
microseconds per launch, more than a small kernel's whole run). Where one of them cannot be
captured, all of that size fall back to plain launches, and the table says which. The three are
timed in turn, ROUNDS times over, and each keeps the median of its rounds: a GPU's clock drifts as
it warms (on an H100, the same product took 5 % longer a minute later), and timing one after the
other would hand that drift to whichever ran last.

The timing runs in the checker's worker process (worker.run_bench); this module holds what both
sides share: the timing itself (worker side) and the table and chart (parent side).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Callable

TIMING_REPS_MS = 100  # triton.testing.do_bench's time budget per measurement
ROUNDS = 3  # turns of (learner, PyTorch, torch.compile); each keeps its median


@dataclass
class BenchRow:
    case: str
    dims: str
    dtype: str
    ms: float
    torch_ms: float
    compile_ms: float | None       # None: torch.compile did not work here
    gbytes: float                  # the work's traffic, 1e9 bytes
    tflop: float | None
    copy_gbps: float               # device copy bandwidth, read + write
    device: str = ""
    timing: str = "launches"       # "CUDA graphs" or "launches" (see the module docstring)

    def gbps(self, ms: float | None) -> float | None:
        return None if ms is None else self.gbytes / (ms / 1e3)

    def tflops(self, ms: float | None) -> float | None:
        return None if ms is None or self.tflop is None else self.tflop / (ms / 1e3)


def _median_ms(fn: Callable[[], Any]) -> float:
    import triton
    return float(triton.testing.do_bench(fn, rep=TIMING_REPS_MS, return_mode="median"))


def _as_graph(fn: Callable[[], Any]) -> Callable[[], Any] | None:
    """`fn` captured in a CUDA graph: its replay, or None where it cannot be captured (a host
    synchronisation, a CPU tensor)."""
    import torch
    try:
        fn()  # allocator and compilation warm-up outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        graph.replay()
        torch.cuda.synchronize()
        return graph.replay
    except Exception:  # any capture error: plain launches for this size
        torch.cuda.synchronize()
        return None


def copy_bandwidth(nbytes: float, graphs: bool = False) -> float:
    """GB/s of a device-to-device copy of this many bytes (read + write counted)."""
    import torch
    n = max(1 << 20, int(nbytes // 2))
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy = lambda: dst.copy_(src)  # noqa: E731
    ms = _median_ms((_as_graph(copy) or copy) if graphs else copy)
    return 2 * n / (ms / 1e3) / 1e9


def time_case(puzzle, kernels, case) -> BenchRow:
    """The worker's side: time the learner's part, PyTorch eager and torch.compile on one size.

    All of it runs on a side stream: autograd runs a backward on the stream its forward ran on, and
    a forward on the legacy default stream makes a backward uncapturable ("would make the legacy
    stream depend on a capturing blocking stream"): that size fell back to plain launches."""
    import torch
    with torch.cuda.stream(torch.cuda.Stream()):
        return _time_case(puzzle, kernels, case)


def _time_case(puzzle, kernels, case) -> BenchRow:
    import torch
    bench = puzzle.bench
    part = puzzle.part(bench.part)
    inputs = puzzle.make_inputs(case, "cuda", 0)
    outputs = part.allocate(inputs, case)

    def learner():
        for output in part.outputs:  # accumulated outputs start at zero in every run
            if output.accumulated and output.name in outputs:
                outputs[output.name].zero_()
        part.launch(kernels, inputs, outputs, case)

    eager = bench.torch(inputs, case)
    compiled = None
    try:
        compiled = torch.compile(eager)
        compiled()  # compile now, not inside the timing
    except Exception:  # torch.compile is not available everywhere (no compiler, old GPU)
        compiled = None
    traffic = bench.traffic(inputs, case)
    flops = bench.flops(inputs, case) if bench.flops else None
    plain = [learner, eager, compiled]
    replays = [None if fn is None else _as_graph(fn) for fn in plain]
    graphs = all(r is not None for r, fn in zip(replays, plain) if fn is not None)
    timed = [fn for fn in (replays if graphs else plain) if fn is not None]
    rounds = [[_median_ms(fn) for fn in timed] for _ in range(ROUNDS)]
    ms = [statistics.median(column) for column in zip(*rounds)]
    return BenchRow(case.name, case.dims, case.dtype, ms[0], ms[1],
                    ms[2] if compiled is not None else None, traffic / 1e9,
                    None if flops is None else flops / 1e12, copy_bandwidth(traffic, graphs),
                    torch.cuda.get_device_name(0), "CUDA graphs" if graphs else "launches")


def _fmt(value: float | None, unit: str) -> str:
    return "      -" if value is None else f"{value:7.0f}" if unit == "GB/s" else f"{value:7.2f}"


def _cells(rows: list[BenchRow]) -> tuple[str, list[list[str]]]:
    """Per row: size, then time and rate of yours, PyTorch's and torch.compile's, the copy
    bandwidth and torch / yours; in TFLOP/s where the work has flops, else GB/s. Returns (unit, rows)."""
    unit = "TFLOP/s" if any(r.tflop for r in rows) else "GB/s"
    cells = []
    for r in rows:
        rate = r.tflops if unit == "TFLOP/s" else r.gbps
        row = [r.dims + ("" if r.dtype == "float32" else " " + r.dtype)]
        for ms in (r.ms, r.torch_ms, r.compile_ms):
            row += ["-", "-"] if ms is None else [f"{ms:.3f}", _fmt(rate(ms), unit).strip()]
        cells.append(row + [f"{r.copy_gbps:.0f}", f"{r.torch_ms / r.ms:.2f}x"])
    return unit, cells


def table(rows: list[BenchRow], device: str) -> list[str]:
    """The printed table: per size, time and throughput of yours, PyTorch's and torch.compile's."""
    unit, cells = _cells(rows)
    timing = " and ".join(sorted({r.timing for r in rows})) or "launches"
    widths = (28, 9, 8, 9, 8, 10, 8, 9, 12)
    head = ["size", "yours ms", unit, "torch ms", unit, "compile ms", unit, "copy GB/s", "yours/torch"]
    fmt = lambda row: " ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))  # noqa: E731
    return [f"Benchmark on {device} (medians, timed in {timing}; {unit}; copy = device copy bandwidth, same run)",
            fmt(head)] + [fmt(row) for row in cells]


def markdown_table(rows: list[BenchRow]) -> str:
    """The table as Markdown, for the book (a page column is narrower than the terminal's table)."""
    unit, cells = _cells(rows)
    head = ["size", "yours ms", unit, "torch ms", unit, "compile ms", unit, "copy GB/s", "speed-up"]
    if unit == "TFLOP/s":  # the copy bandwidth bounds memory-bound work only: a narrower table without it
        head, cells = head[:7] + head[8:], [row[:7] + row[8:] for row in cells]
    return "\n".join("| " + " | ".join(row) + " |" for row in [head, ["---"] * len(head)] + cells)


def chart(rows: list[BenchRow], title: str):
    """Per size: yours, PyTorch and torch.compile, as TFLOP/s where the work is counted in flops
    (a matmul), else as GB/s with the device's copy bandwidth as the ceiling. Returns the figure."""
    import matplotlib.pyplot as plt
    import numpy as np
    flops = any(r.tflop for r in rows)
    rate = (lambda r, ms: r.tflops(ms) or 0) if flops else (lambda r, ms: r.gbps(ms) or 0)  # noqa: E731
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(rows) + 2), 3.6))
    series = [("yours", [rate(r, r.ms) for r in rows]), ("PyTorch", [rate(r, r.torch_ms) for r in rows]),
              ("torch.compile", [rate(r, r.compile_ms) for r in rows])]
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series):
        ax.bar(x + (i - 1) * width, values, width, label=label)
    if not flops:
        ax.plot(x, [r.copy_gbps for r in rows], "k--", marker="_", markersize=20, label="device copy")
    ax.set_xticks(x, [r.dims for r in rows], fontsize=8)
    ax.set_ylabel("TFLOP/s" if flops else "GB/s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
