"""python -m checker pNN --bench: how fast the learner's kernels are, on a GPU, next to PyTorch.

Only after the kernels pass the GPU check (a fast wrong kernel is not fast). Per benchmark size:
the median time of the learner's part, of the same work in PyTorch eager, under torch.compile and,
where Liger-Kernel has that kernel and is installed, with Liger's, each as GB/s (the bytes the work
must move, spec.Bench.traffic) and TFLOP/s where it has flops, and the device's copy bandwidth
measured in the same run: the ceiling a memory-bound kernel can reach.

torch.compile compiles the same work the learner's kernels do: the spec builds the PyTorch work
from a `wrap` it is given (torch.compile, or nothing for eager) around the forward computation, so a
backward is the compiled forward's own backward graph, and a training step is compiled whole. The
column says whether compile really compiled (Dynamo's counters: graphs made, graph breaks), so a
column that ran eager under another name cannot pass for a compiled one.
Each is captured once in a CUDA graph and the graph's replay is timed (triton's do_bench: the L2
cache flushed before every run): the GPU's time, without Python's launch overhead (tens of
microseconds per launch, more than a small kernel's whole run). Where one of them cannot be
captured, all of that size fall back to plain launches, and the table says which. The columns (and
the copy that measures the ceiling) are timed in turn, ROUNDS times over, and each keeps the median
of its rounds: a GPU's clock drifts as it warms (on an H100, the same product took 5 % longer a
minute later), and timing one after the other would hand that drift to whichever ran last.

The timing runs in the checker's worker process (worker.run_bench); this module holds what both
sides share: the timing itself (worker side) and the table and chart (parent side).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable

TIMING_REPS_MS = 100  # triton.testing.do_bench's time budget per measurement
ROUNDS = 3  # turns of (learner, PyTorch, torch.compile, Liger); each keeps its median
# The ceiling. The copy of a size's own bytes is timed at both ends of every round (the median of
# 2 x ROUNDS: one bad measurement cannot move it), and a large copy beside it gives the memory's rate
# with no launch or cache effect to hide behind. One row of p30 once read 2,409 GB/s for the copy
# where the others read ~2,950: cudaMemcpy's rate at a gigabyte, not the device's (ceiling.py).
LARGE_COPY_BYTES = 2 * 2**30  # 1 GiB read and 1 GiB written
# a device's usual large-copy rate, read + write, as this project's machines measured it (2026-11):
# a run more than CEILING_DRIFT away from it says so, and its fractions of the copy are suspect
USUAL_COPY_GBPS = {"NVIDIA H100 80GB HBM3": 3000.0, "NVIDIA H200": 4300.0}
CEILING_DRIFT = 0.10
METHOD = ("medians of {rounds} interleaved rounds of triton.testing.do_bench ({reps} ms each, the L2 cache "
          "flushed before every run)")


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
    compile_status: str = ""       # "compiled", "compiled with N graph breaks", "ran eager: ...", "failed: ..."
    liger_ms: float | None = None  # Liger-Kernel's kernel for the same work, where it has one
    torch_version: str = ""
    triton_version: str = ""
    scratch_mib: dict[str, float] | None = None  # per column, where the spec asks (scratch_bytes)
    extra_ms: dict[str, float] = field(default_factory=dict)  # the spec's further baselines, by column name
    liger_status: str = ""         # "kernel", "not installed", or "no kernel" (the spec names none)
    # --profile: per column ("yours", "compile"), the kernels of one run: [name, µs, launches] (kernel_times)
    kernels: dict[str, list[list]] | None = None
    floors: list[str] = field(default_factory=list)  # extra_ms columns that do only part of the work
    torch_backend: str = ""        # the library PyTorch picked for the torch column ("cuDNN"), where the spec names it
    copy_samples_gbps: list[float] = field(default_factory=list)  # each timing of the same-bytes copy
    copy_large_gbps: float | None = None  # the LARGE_COPY_BYTES copy, same rounds: the memory's own rate
    absent: dict[str, str] = field(default_factory=dict)  # the spec's further baselines left out here, and why
    baseline_versions: dict[str, str] = field(default_factory=dict)  # the baselines' libraries installed: name -> version

    def others(self) -> dict[str, float]:
        """The non-learner times of this row, by column."""
        found = {"torch": self.torch_ms, "compile": self.compile_ms, "liger": self.liger_ms, **self.extra_ms}
        return {name: ms for name, ms in found.items() if ms is not None}

    def column_ms(self, name: str) -> float | None:
        """The time of one column: "yours", a fixed baseline, or one of the spec's further baselines."""
        return self.ms if name == "yours" else {**self.others()}.get(name)

    def best_other(self) -> str:
        """The fastest column that is not yours and does the whole work (a floor does only part)."""
        others = {name: ms for name, ms in self.others().items() if name not in self.floors}
        return min(others, key=others.get) if others else ""

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


def replay_median_ms(fn: Callable[[], Any], rep_ms: float = TIMING_REPS_MS) -> float:
    """fn's median time, ms: its CUDA graph's replay where it can be captured (no Python launch cost),
    else plain launches; do_bench flushes L2 before each run. The experiments time designs this way."""
    import triton
    run = _as_graph(fn) or fn
    return float(triton.testing.do_bench(run, warmup=10, rep=rep_ms, return_mode="median"))


def copy_work(nbytes: float) -> tuple[Callable[[], Any], int]:
    """A device-to-device copy that moves this many bytes (read + write counted), and the bytes it
    moves: the ceiling a memory-bound kernel is compared with. A Triton kernel of the SMs, not
    cudaMemcpy, which moved a fifth less than a learner's kernel at a gigabyte (checker/bench/ceiling.py)."""
    import torch

    from checker.bench import ceiling
    words = max(1 << 18, int(nbytes // 8))  # half the bytes are read, half written, 4 bytes a word
    src = torch.empty(words, dtype=torch.int32, device="cuda")
    dst = torch.empty_like(src)
    return (lambda: ceiling.launch(src, dst)), 8 * words


def scratch_bytes(fn: Callable[[], Any]) -> int:
    """The GPU memory one run of fn allocates at its peak beyond what was allocated before it and
    what it returns (the gradients PyTorch's backward makes, which the learner's kernels write into
    buffers made beforehand): its temporaries, such as a loss's [rows, V] logits."""
    import torch
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    result = fn()
    torch.cuda.synchronize()
    found = result if isinstance(result, (tuple, list)) else (result,)
    kept = sum(t.untyped_storage().nbytes() for t in found if torch.is_tensor(t))
    return max(0, torch.cuda.max_memory_allocated() - before - kept)


def compiled_work(make: Callable[[Callable], Callable[[], Any]]) -> tuple[Callable[[], Any] | None, str]:
    """make(wrap) -> the work; here with wrap = torch.compile. Returns (the work, what compile did),
    judged by Dynamo's counters after one run: graphs it made and graph breaks it took."""
    import torch
    try:
        from torch._dynamo.utils import counters
        torch._dynamo.reset()
        counters.clear()
        work = make(torch.compile)
        work()
        graphs = int(counters["stats"].get("unique_graphs", 0))
        breaks = sum(counters["graph_break"].values())
    except Exception as exc:  # no compiler on this machine, an unsupported op
        return None, f"failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    if graphs == 0:
        return work, "ran eager: torch.compile made no graph"
    return work, "compiled" if not breaks else f"compiled with {breaks} graph break{'s' if breaks > 1 else ''}"


def time_case(puzzle, kernels, case, profile: bool = False) -> BenchRow:
    """The worker's side: time the learner's part, PyTorch eager and torch.compile on one size.

    All of it runs on a side stream: autograd runs a backward on the stream its forward ran on, and
    a forward on the legacy default stream makes a backward uncapturable ("would make the legacy
    stream depend on a capturing blocking stream"): that size fell back to plain launches. And
    under checker.puzzle.timing(): the check's poison fills of scratch buffers are not the learner's work."""
    import torch

    from checker.puzzle import timing
    with torch.cuda.stream(torch.cuda.Stream()), timing():
        return _time_case(puzzle, kernels, case, profile)


def _time_case(puzzle, kernels, case, profile: bool) -> BenchRow:
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

    eager = bench.torch(inputs, case, lambda fn: fn)
    compiled, status = compiled_work(lambda wrap: bench.torch(inputs, case, wrap))
    liger, liger_status = _liger(bench, inputs, case)
    extra = {name: make(inputs, case) for name, make in bench.extra.items()}
    # a baseline that needs what this machine lacks (Helion's examples) is left out, and says why;
    # so is one that fails at this size (an example written for other shapes): the others still run
    absent = {name: getattr(bench.extra[name], "why_absent", lambda: "not available here")()
              for name, work in extra.items() if work is None}
    for name, work in extra.items():
        if work is not None:
            try:
                work()
            except Exception as error:  # noqa: BLE001  (any failure of a baseline is the baseline's)
                torch.cuda.synchronize()
                extra[name] = None
                absent[name] = f"it failed at this size ({type(error).__name__}: {str(error).splitlines()[0][:160]})"
    traffic = bench.traffic(inputs, case)
    flops = bench.flops(inputs, case) if bench.flops else None
    copy, copied = copy_work(traffic)
    large, large_bytes = copy_work(LARGE_COPY_BYTES)
    # the copies are timed in the same rounds as the columns: a ceiling measured once, at another
    # moment, would carry the clock's drift (see the module docstring) into every fraction of it
    plain = [learner, eager, compiled, liger, *extra.values(), large, copy]
    scratch = None
    if bench.memory:  # plain runs, before the CUDA graphs take their own memory pools
        names = [name for name, _ in COLUMNS] + list(extra)
        scratch = {name: scratch_bytes(fn) / 2**20 for name, fn in zip(names, plain) if fn is not None}
    replays = [None if fn is None else _as_graph(fn) for fn in plain]
    graphs = all(r is not None for r, fn in zip(replays, plain) if fn is not None)
    chosen = replays if graphs else plain
    timed = [i for i, fn in enumerate(plain) if fn is not None][:-1]  # the same-bytes copy: below
    rounds, copies = [], []
    for _ in range(ROUNDS):  # the ceiling at both ends of every round
        copies.append(_median_ms(chosen[-1]))
        rounds.append([_median_ms(chosen[i]) for i in timed])
        copies.append(_median_ms(chosen[-1]))
    ms: list[float | None] = [None] * len(plain)
    for i, column in zip(timed, zip(*rounds)):
        ms[i] = statistics.median(column)
    ms[-1] = statistics.median(copies)
    backend = ""
    if bench.backend is not None:  # after the timing, which the profiler must not disturb
        from checker.bench.kernel_times import kernel_times
        backend = bench.backend([name for name, *_ in kernel_times(plain[1], steps=1)])
    found = None
    if profile:  # after the timing, which the profiler must not disturb
        from checker.bench.kernel_times import kernel_times
        found = {name: kernel_times(chosen[i]) for name, i in (("yours", 0), ("compile", 2)) if chosen[i] is not None}
    import triton
    return BenchRow(case.name, case.dims, case.dtype, ms[0], ms[1], ms[2], traffic / 1e9,
                    None if flops is None else flops / 1e12, copied / (ms[-1] / 1e3) / 1e9,
                    torch.cuda.get_device_name(0), "CUDA graphs" if graphs else "launches", status, ms[3],
                    torch.__version__, triton.__version__, scratch,
                    {name: t for name, t in zip(extra, ms[4:-2]) if t is not None}, liger_status, found,
                    [name for name in extra if name in bench.floors], backend,
                    [copied / (t / 1e3) / 1e9 for t in copies], large_bytes / (ms[-2] / 1e3) / 1e9, absent,
                    _installed(BASELINE_LIBRARIES))


BASELINE_LIBRARIES = ("liger-kernel", "helion")  # the baseline columns' libraries, whose versions a row keeps


def _installed(names: tuple[str, ...]) -> dict[str, str]:
    """name -> version of each of these distributions that is installed here."""
    from importlib import metadata
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def _liger(bench, inputs, case) -> tuple[Callable[[], Any] | None, str]:
    """Liger-Kernel's kernel for the same work, where the spec names one and Liger is installed,
    and which of those it was: "kernel", "no kernel" (Liger has none for this work), "not installed"."""
    if bench.liger is None:
        return None, "no kernel"
    try:
        import liger_kernel  # noqa: F401  (optional: a pure-Python wheel)
    except ImportError:
        return None, "not installed"
    work = bench.liger(inputs, case)
    work()
    return work, "kernel"


def _fmt(value: float | None, unit: str) -> str:
    return "      -" if value is None else f"{value:7.0f}" if unit == "GB/s" else f"{value:7.2f}"


COLUMNS = (("yours", "ms"), ("torch", "torch_ms"), ("compile", "compile_ms"), ("liger", "liger_ms"))


def _columns(rows: list[BenchRow]) -> list[str]:
    """The timed columns: Liger's only where some row has it; then the spec's further baselines."""
    fixed = [name for name, _ in COLUMNS if name != "liger" or any(r.liger_ms for r in rows)]
    return fixed + list(dict.fromkeys(name for r in rows for name in r.extra_ms))


KEY_COLUMN = "best other / yours"  # the verdict of a row: above 1, yours is the fastest


def _label(name: str, rows: list[BenchRow]) -> str:
    """A column's name in the head: the torch column with the library PyTorch picked ("torch
    (cuDNN)"), all of them where the sizes got different ones (each cell then says its own)."""
    backends = list(dict.fromkeys(r.torch_backend for r in rows if r.torch_backend))
    return f"torch ({' / '.join(backends)})" if name == "torch" and backends else name


def _cells(rows: list[BenchRow]) -> tuple[str, list[str], list[list[str]]]:
    """Per row: size, then time and rate of each column (the best non-learner time marked *), the
    copy bandwidth, and the best non-learner time over yours; in TFLOP/s where the work has flops,
    else GB/s. Returns (unit, head, rows)."""
    unit = "TFLOP/s" if any(r.tflop for r in rows) else "GB/s"
    columns = _columns(rows)
    head = ["size"] + [h for name in columns for h in (f"{_label(name, rows)} ms", unit)] + ["copy GB/s", KEY_COLUMN]
    several = len({r.torch_backend for r in rows if r.torch_backend}) > 1
    cells = []
    # rows whose sizes are alike differ by a flag (causal or not): they are named by their case
    twins = {r.dims for r in rows if sum(o.dims == r.dims and o.dtype == r.dtype for o in rows) > 1}
    for r in rows:
        rate = r.tflops if unit == "TFLOP/s" else r.gbps
        best = r.best_other()
        row = [(r.case if r.dims in twins else r.dims) + ("" if r.dtype == "float32" else " " + r.dtype)]
        for name in columns:
            ms = r.column_ms(name)
            mark = "*" if name == best else ""
            own = f" ({r.torch_backend})" if name == "torch" and several and r.torch_backend else ""
            row += ["-", "-"] if ms is None else [f"{ms:.3f}{mark}{own}", _fmt(rate(ms), unit).strip()]
        best_ms = r.others().get(best)
        cells.append(row + [f"{r.copy_gbps:.0f}", f"{best_ms / r.ms:.2f}x" if best_ms else "-"])
    return unit, head, cells


def header(rows: list[BenchRow], device: str, notes: tuple[str, ...] = ()) -> list[str]:
    """What the numbers were measured against, and how (notes: the spec's own lines, Bench.notes)."""
    timing = " and ".join(sorted({r.timing for r in rows})) or "launches"
    versions = next(((r.torch_version, r.triton_version) for r in rows if r.torch_version), ("?", "?"))
    statuses = sorted({r.compile_status for r in rows if r.compile_status})
    lines = [f"Benchmark on {device}; torch {versions[0]}, triton {versions[1]}; timed in {timing}, "
             + METHOD.format(rounds=ROUNDS, reps=TIMING_REPS_MS) + ".",
             "torch.compile: " + ("; ".join(statuses) if statuses else "not measured") + ". "
             + _liger_words(rows)
             + " * marks the best time that is not yours; copy = the device's copy bandwidth, same run."]
    floors = list(dict.fromkeys(name for r in rows for name in r.floors))
    if floors:
        lines.append(", ".join(floors) + ": part of the work only (a floor under a design), never the best other.")
    if any(r.torch_backend for r in rows):
        lines.append("torch: the library PyTorch picked for this work, named from its GPU kernels.")
    for name, why in dict.fromkeys((name, why) for r in rows for name, why in r.absent.items()):
        where = [r.dims for r in rows if r.absent.get(name) == why]
        somewhere = any(name in r.extra_ms for r in rows)  # then it is left out at some sizes only
        lines.append(f"{name}: left out{' at ' + '; '.join(where) if somewhere else ''}, {why}.")
    versions = {name: v for r in rows for name, v in r.baseline_versions.items()}
    if versions:
        lines.append("baselines' libraries installed: " + ", ".join(f"{n} {v}" for n, v in versions.items()) + ".")
    return lines + ceiling_lines(rows, device) + list(notes)


def ceiling_lines(rows: list[BenchRow], device: str) -> list[str]:
    """How the copy ceiling was measured, and where it is not to be trusted: a run whose large copy
    is more than CEILING_DRIFT off the device's usual rate (the device, not the kernel, was slow or
    fast), and sizes whose own copy fell short of the large one (too few bytes to reach the memory's
    rate: a fraction of it is a fraction of a lower ceiling). Rows measured before the large copy
    was kept say nothing."""
    measured = [r for r in rows if r.copy_large_gbps]
    if not measured:
        return []
    large = statistics.median(r.copy_large_gbps for r in measured)
    lines = [f"copy: the same bytes as each size, timed at both ends of every round (the median of {2 * ROUNDS}); "
             f"a copy of {LARGE_COPY_BYTES / 2**31:.0f} GiB in the same rounds (read and written): {large:.0f} GB/s."]
    usual = USUAL_COPY_GBPS.get(device)
    if usual and abs(large / usual - 1) > CEILING_DRIFT:
        lines.append(f"! this run's large copy moved {large:.0f} GB/s, {large / usual - 1:+.0%} from this device's usual "
                     f"{usual:.0f}: the copy or the device was off its usual rate, and every fraction of the copy here "
                     "is suspect.")
    short = [r for r in measured if r.copy_gbps < (1 - CEILING_DRIFT) * r.copy_large_gbps]
    if short:
        each = ", ".join(f"{r.dims}{'' if r.dtype == 'float32' else ' ' + r.dtype} "
                         f"({r.copy_gbps / r.copy_large_gbps:.0%})" for r in short)
        lines.append(f"! the copy of the same bytes fell short of the large copy at {each}: too few bytes to reach "
                     "the memory's rate, so a fraction of it there is a fraction of a lower ceiling.")
    return lines


def _liger_words(rows: list[BenchRow]) -> str:
    """What the Liger column is, or why there is none (rows measured before the status was kept
    say only that it is absent)."""
    if any(r.liger_ms for r in rows):
        return "Liger-Kernel: its kernel for the same work."
    statuses = {r.liger_status for r in rows}
    if "not installed" in statuses:
        return "Liger-Kernel: not installed here (pip install liger-kernel to time it)."
    if statuses == {"no kernel"}:
        return "Liger-Kernel: it has no kernel for this work."
    return "Liger-Kernel: not measured."


def memory_lines(rows: list[BenchRow]) -> list[str]:
    """Per size, each column's scratch memory (speed.scratch_bytes), where it was measured."""
    lines = []
    for r in rows:
        if r.scratch_mib:
            each = ", ".join(f"{name} {mib:,.0f}" for name, mib in r.scratch_mib.items())
            lines.append(f"scratch memory, MiB (peak beyond inputs and returned outputs), {r.dims}: {each}")
    return lines


def against(rows: list[BenchRow], name: str, label: str) -> str:
    """For a memory-bound page: per size, yours and column `name`'s (`label`, e.g. "Liger-Kernel's
    kernel") fraction of the copy bandwidth and which is faster (two kernels at the memory's limit can
    differ by less than the clock's drift)."""
    timed = [(r, r.column_ms(name)) for r in rows if r.column_ms(name)]
    faster = [r for r, ms in timed if r.ms < ms]
    each = "; ".join(f"{r.dims}{'' if r.dtype == 'float32' else ' ' + r.dtype}: {r.ms:.4f} ms against {ms:.4f} ms, "
                     f"{r.gbps(r.ms) / r.copy_gbps:.3f} and {r.gbps(ms) / r.copy_gbps:.3f} of the copy bandwidth"
                     for r, ms in timed)
    above = [r.dims for r, _ in timed if r.gbps(r.ms) > r.copy_gbps]
    caveat = (f" At {', '.join(above)} the copy of the same bytes, timed in the same rounds, was slower than "
              "this kernel: there the copy is no ceiling." if above else "")
    missing = "".join(f" Not timed at {r.dims}: {r.absent[name]}." for r in rows if name in r.absent)
    return f"Faster than {label} at {len(faster)} of {len(timed)} sizes ({each}).{caveat}{missing}"


def against_liger(rows: list[BenchRow]) -> str:
    return against(rows, "liger", "Liger-Kernel's kernel")


def table(rows: list[BenchRow], device: str, notes: tuple[str, ...] = ()) -> list[str]:
    """The printed table: per size, time and throughput of yours and of each baseline."""
    unit, head, cells = _cells(rows)
    widths = [28] + [10, 8] * (len(head) // 2 - 1) + [9, 18]
    fmt = lambda row: " ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))  # noqa: E731
    return header(rows, device, notes) + [fmt(head)] + [fmt(row) for row in cells] + memory_lines(rows) + kernel_lines(rows)


def kernel_lines(rows: list[BenchRow]) -> list[str]:
    """--profile: per size, the kernels of one run, yours next to torch.compile's."""
    from checker.bench.kernel_times import lines
    return [line for r in rows if r.kernels for line in [""] + lines(r.dims, r.kernels)]


def markdown_table(rows: list[BenchRow]) -> str:
    """The table as Markdown, for the book (a page column is narrower than the terminal's table):
    the rate of yours only, beside its time. Its key column, the best other time over yours, comes right after the size: a table wider than
    the column scrolls, and the verdict must not be what scrolls out of sight."""
    unit, head, cells = _cells(rows)
    if unit == "TFLOP/s":  # the copy bandwidth bounds memory-bound work only: a narrower table without it
        drop = head.index("copy GB/s")
        head, cells = head[:drop] + head[drop + 1:], [row[:drop] + row[drop + 1:] for row in cells]
    # the other baselines' rates go (the same work: a rate says no more than its time), yours stays
    keep = [i for i, name in enumerate(head) if not (name == unit and i > 2)]
    head, cells = [head[i] for i in keep], [[row[i] for i in keep] for row in cells]
    key = head.index(KEY_COLUMN)
    head, cells = [head[0], head[key], *head[1:key], *head[key + 1:]], \
        [[row[0], row[key], *row[1:key], *row[key + 1:]] for row in cells]
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
    pytorch = _label("torch", rows).replace("torch", "PyTorch")
    series = [("yours", [rate(r, r.ms) for r in rows]), (pytorch, [rate(r, r.torch_ms) for r in rows]),
              ("torch.compile", [rate(r, r.compile_ms) for r in rows])]
    if any(r.liger_ms for r in rows):
        series.append(("Liger-Kernel", [rate(r, r.liger_ms) for r in rows]))
    for name in dict.fromkeys(n for r in rows for n in r.extra_ms):
        series.append((name, [rate(r, r.extra_ms.get(name)) for r in rows]))
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=label)
    if not flops:
        ax.plot(x, [r.copy_gbps for r in rows], "k--", marker="_", markersize=20, label="device copy")
    ax.set_xticks(x, [r.dims for r in rows], fontsize=8)
    ax.set_ylabel("TFLOP/s" if flops else "GB/s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
