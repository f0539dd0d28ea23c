"""The timing of a benchmark's columns, in the checker's worker, on a GPU: CUDA graphs replayed by
triton's do_bench, interleaved rounds, the copy that measures the ceiling (checker/bench/measured.py
says how and why)."""
from __future__ import annotations

import statistics
from typing import Any, Callable

from checker.bench.measured import LARGE_COPY_BYTES, ROUNDS, TIMING_REPS_MS, BenchRow


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
