"""Puzzle 32's backward designs (bwd_designs.py) timed at every size of its benchmark, beside cuDNN
(PyTorch's pick, as the benchmark times it) and Triton's tutorial 06 (where TRITON_TUTORIALS names a
checkout's python/tutorials/ folder) in the same run. On an H100, from the repository's root:

    TRITON_TUTORIALS=.tutorials python research/attention/bwd_sweep.py --out $OUT

(.tutorials: a folder, ignored by git, holding 06-fused-attention.py of the Triton installed there.)
--dry-run runs the same flow on the CPU (Triton's interpreter, 80 queries and keys): a check of the
script, nothing measured.

Two passes, each of medians of interleaved rounds (every column of a size in turn, then again: a
GPU's clock drifts as it warms). Pass A, per size: cuDNN, the reference as the checker launches it,
the tutorial, each dK/dV walk and each dQ walk alone (the reference's kernels at the launches tried
per head dim, and the designs' switches), and the fused arrangement. Pass B, per size, the whole
backward again beside cuDNN: the reference; the per-head-dim launch (the reference's own kernels,
the dK/dV and dQ launches that did best over all the sizes of that head dim and causal setting,
launched through the puzzle's declaration as the benchmark would); the best of the reference's
kernels at this size alone; the best walks of any design at this size. Every column is first checked
against the reference's gradients at the same size (relative error of the norm, at most 2e-2), and
a column that fails the check is timed but never picked.

The kernels compile in parallel before any timing (a process per core, Triton's cache on disk
shared). Prints a table per size and writes bwd_sweep.json into --out as it goes (a run cut short
keeps what it timed), for book/data/p32_bwd_sweep.json and puzzle 32's page; at the end, the
per-head-dim launch in the form of the declaration's BENCH_LAUNCH."""
import argparse
import dataclasses
import json
import math
import os
import statistics
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

DRY = False  # --dry-run: Triton's interpreter on the CPU at tiny sizes, wall-clock times: the flow checked
MAX_ERROR = 2e-2  # relative error of a column's gradients against the reference's, same size
REP_MS = 30  # do_bench's time per measurement at the least; long steps get 8 runs
TARGET = "causal, N=4096, D=64"  # the size first: a run cut short has it


def device() -> str:
    return "cpu" if DRY else "cuda"


def sync() -> None:
    if not DRY:
        import torch
        torch.cuda.synchronize()


def sizes_of(case) -> dict:
    """A case's sizes and parameters in one mapping (B, H, L, S, D beside KV, CAUSAL and the tiles)."""
    return {**case.sizes, **case.params}


def load_designs():
    """bwd_designs.py, by path (research/attention/ is no package), once per process."""
    if "bwd_designs" not in sys.modules:
        from research.runs import module_at
        sys.modules["bwd_designs"] = module_at(HERE / "bwd_designs.py", "bwd_designs")
    return sys.modules["bwd_designs"]


# ---------------------------------------------------------------- compiles, in parallel

def load_solution():
    """The reference solution's kernels, once per process, loaded as the timing process loads them (Triton's
    cache on disk is keyed by the kernel's source, its callees' and its specialisation)."""
    if "p32_solution" not in sys.modules:
        from research.runs import solution
        sys.modules["p32_solution"] = solution("p32")
    return sys.modules["p32_solution"]


def _warm(job: tuple) -> tuple[float, str]:
    """One kernel compiled for this GPU without a launch (JITFunction.warmup: pointers given as their
    dtypes), into Triton's cache on disk, where the timing process finds it: seconds taken, and the
    error where it did not compile (the timing then meets it again, and records it)."""
    import torch
    path, name, args, kwargs, grid = job
    module = load_designs() if path == "designs" else load_solution()
    start = time.perf_counter()
    try:
        getattr(module, name).warmup(*[getattr(torch, a[1:]) if isinstance(a, str) else a for a in args], grid=grid,
                                     **kwargs)
    except Exception as error:  # noqa: BLE001
        return time.perf_counter() - start, f"{name} {kwargs}: {type(error).__name__}"
    return time.perf_counter() - start, ""


def compile_jobs(cases) -> list[tuple]:
    """Every walk's and fused launch's compile the sweep will need, each once."""
    designs = load_designs()
    jobs = {}
    for case in cases:
        p = sizes_of(case)
        D, causal, group = p["D"], p["CAUSAL"], p["H"] // p["KV"]
        heads = "@bfloat16" if group == 1 else "@float32"  # dk and dv: fp32 shares per query head
        ints = (p["L"], p["S"], p["D"] ** -0.5, group)
        base = dict(D=D, BLOCK_D=designs.block_d(D), CAUSAL=causal)
        pointers = ("@bfloat16",) * 4 + ("@float32",) * 3
        for walk in designs.runs(designs.DKDV[D] + designs.DKDV_DESIGNS[D], causal):
            switches = {} if walk.own else dict(SLICE=walk.slice, SPLIT=walk.split)
            jobs[("kv", walk, D, causal, group)] = (
                "solution" if walk.own else "designs", "attn_bwd_dkdv_kernel", pointers + (heads, heads) + ints,
                dict(base, BLOCK_Q=walk.block_q, BLOCK_K=walk.block_k, num_warps=walk.warps, num_stages=walk.stages,
                     **switches), (1, 1))
        for walk in designs.runs(designs.DQ[D] + designs.DQ_DESIGNS[D], causal):
            switches = {} if walk.own else dict(SLICE=walk.slice, SPLIT=walk.split, REVERSE=walk.reverse)
            jobs[("dq", walk, D, causal, group)] = (
                "solution" if walk.own else "designs", "attn_bwd_dq_kernel", pointers + ints,
                dict(base, BLOCK_Q=walk.block_q, BLOCK_K=walk.block_k, num_warps=walk.warps, num_stages=walk.stages,
                     **switches), (1, 1))
        if p["L"] == p["S"]:
            for fused in designs.runs(designs.FUSED[D], causal):
                jobs[("fused", fused, D, causal, group)] = (
                    "designs", "fused_kernel", pointers + (heads, heads) + ints,
                    dict(base, BLOCK_Q1=fused.block_q1, BLOCK_K1=fused.block_k1, BLOCK_K2=fused.block_k2,
                         SLICE=fused.slice, SPLIT=fused.split, num_warps=fused.warps, num_stages=fused.stages), (1, 1))
    return list(jobs.values())


def compile_all(cases) -> str:
    """The sweep's kernels compiled by a pool of processes; what it took, in words."""
    jobs = compile_jobs(cases)
    start = time.time()
    workers = max(1, min(len(jobs), (os.cpu_count() or 2) - 2))
    try:
        import multiprocessing
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            done = list(pool.map(_warm, jobs))
        failed = [error for _, error in done if error]
        return (f"{len(jobs)} compiles in {time.time() - start:.0f} s on {workers} processes "
                f"({sum(seconds for seconds, _ in done):.0f} s of compiling in all)"
                + (f"; {len(failed)} failed: " + "; ".join(failed) if failed else ""))
    except Exception as error:  # noqa: BLE001  (the timing still compiles what it needs, one at a time)
        return f"parallel compiles failed after {time.time() - start:.0f} s ({type(error).__name__}: {error}); serial"


# ---------------------------------------------------------------- timing

def event_ms(fn) -> float:
    """One run of fn, ms (CUDA events; the wall clock in a dry run): the estimate that sizes a measurement."""
    import torch
    if DRY:
        begin = time.perf_counter()
        fn()
        return 1e3 * (time.perf_counter() - begin)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def relative_error(got, want) -> float:
    return max(float((g.float() - w.float()).norm() / w.float().norm().clamp_min(1e-30)) for g, w in zip(got, want))


@dataclasses.dataclass
class Column:
    name: str
    role: str  # cudnn, tutorial, reference, walk (kind dK/dV or dQ), fused; pass B: per-head-dim, best own, best any
    kind: str = "whole"  # what fn runs: the whole backward, or one walk ("dK/dV", "dQ")
    fn: object = None
    outputs: object = None  # fn's results to check, read after a run
    want: object = None  # the reference's, at this size
    design: object = None  # the Walk or Fused it runs
    err: float = None
    error: str = ""
    est: float = 0.0
    samples: list = dataclasses.field(default_factory=list)
    same_as: str = ""  # pass B: the role of the column that runs the same walks

    def prepare(self) -> None:
        """One run (compiles, warms up) and the check against the reference, then an estimate."""
        if self.fn is None:  # left out before it ran: error says why
            return
        try:
            result = self.fn()
            sync()
            got = self.outputs() if self.outputs else result
            self.err = relative_error(got, self.want) if self.want is not None else None
            self.est = event_ms(self.fn)
        except Exception as failure:  # noqa: BLE001  (a design that fails is a finding, not the end)
            sync()
            self.error = f"{type(failure).__name__}: {str(failure).splitlines()[0][:200] if str(failure) else ''}"
            self.fn = None

    def time(self) -> None:
        from checker.bench.timing import replay_median_ms
        if self.fn is not None and DRY:
            self.samples.append(event_ms(self.fn))
        elif self.fn is not None:
            self.samples.append(replay_median_ms(self.fn, min(max(REP_MS, 8 * self.est), 400)))

    @property
    def ms(self):
        return statistics.median(self.samples) if self.samples else None

    @property
    def good(self) -> bool:
        return self.ms is not None and (self.err is None or self.err <= MAX_ERROR)

    def record(self) -> dict:
        designs = self.design if isinstance(self.design, tuple) else (self.design,) if self.design else ()
        return {"name": self.name, "role": self.role, "kind": self.kind, "ms": self.ms, "samples_ms": self.samples,
                "err": self.err, "error": self.error, "same_as": self.same_as,
                "design": [dataclasses.asdict(d) for d in designs]}


def rounds_of(columns: list, rounds: int) -> None:
    for column in columns:
        column.prepare()
    for _ in range(rounds):
        for column in columns:
            column.time()


# ---------------------------------------------------------------- one size

class Size:
    """One benchmark size: its inputs, the saved forward, the reference's gradients and buffers."""

    def __init__(self, puzzle, spec, solution, case):
        import torch
        self.case, self.spec, self.solution, self.puzzle = case, spec, solution, puzzle
        p = sizes_of(case)
        self.causal, self.D = p["CAUSAL"], p["D"]
        self.part = puzzle.part(puzzle.bench.part)
        self.inputs = puzzle.make_inputs(case, device(), 0)
        self.outputs = self.part.allocate(self.inputs, case)
        q, k, v, do = (self.inputs[n] for n in ("q", "k", "v", "do"))
        self.q, self.k, self.v, self.do = q, k, v, do
        self.flops = spec.backward_flops(p["B"], p["H"], p["L"], p["S"], p["D"], self.causal)
        self.reference()()
        self.want = [self.outputs[n].clone() for n in ("dq", "dk", "dv")]
        self.o, self.lse = spec.forward_saved(q, k, v, self.causal)
        B, H, L, D = q.shape
        S, KV = k.shape[2], k.shape[1]
        self.delta = torch.empty((B, H, L), dtype=torch.float32, device=device())
        solution.attn_bwd_preprocess[(triton_cdiv(L, 128), B * H)](self.o, do, self.delta, L, D=D, BLOCK_Q=128,
                                                                   BLOCK_D=load_designs().block_d(D))
        self.dq = torch.zeros(q.shape, dtype=torch.float32, device=device())
        self.dk, self.dv = torch.empty_like(k), torch.empty_like(v)
        self.dk_heads, self.dv_heads = (self.dk, self.dv) if KV == H else (
            torch.empty((B, H, S, D), dtype=torch.float32, device=device()) for _ in range(2))

    def reference(self, launch: dict | None = None):
        """The backward as the benchmark times it (checker/bench/timing.py: the accumulated dq zeroed, then the
        declaration's launch), at the declaration's launch or another (a BENCH_LAUNCH entry)."""
        case = self.case if launch is None else dataclasses.replace(self.case, params={**self.case.params, **launch})

        def run():
            self.outputs["dq"].zero_()
            self.part.launch(self.solution, self.inputs, self.outputs, case)
        return run

    def declared(self, name: str, role: str, launch: dict | None = None):
        """A column of the backward launched through the declaration (reference())."""
        return Column(name, role, "whole", self.reference(launch),
                      lambda: [self.outputs[n] for n in ("dq", "dk", "dv")], self.want)

    def walk(self, kind: str, walk):
        designs = load_designs()
        kernels = self.solution if walk.own else designs.DESIGNS
        if kind == "dK/dV":
            return lambda: designs.dkdv_launch(kernels, walk, self.q, self.k, self.v, self.do, self.lse, self.delta,
                                               self.dq, self.dk_heads, self.dv_heads, self.causal)
        return lambda: designs.dq_launch(kernels, walk, self.q, self.k, self.v, self.do, self.lse, self.delta,
                                         self.dq, self.causal)

    def whole(self, design):
        designs = load_designs()
        return lambda: designs.backward(self.solution, design, self.q, self.k, self.v, self.do, self.o, self.lse,
                                        self.dq, self.dk, self.dv, self.causal)

    def baselines(self, tutorial: bool = True) -> list:
        """cuDNN (PyTorch's pick, as the benchmark's torch column) and the tutorial, checked against the
        reference like the designs."""
        from checker.specs.families.attention import tutorial_backward
        columns = [Column("cuDNN (PyTorch's pick)", "cudnn", fn=self.spec.sdpa_backward(
            self.q, self.k, self.v, self.do, self.causal, lambda fn: fn), want=self.want)]
        if not tutorial:
            return columns
        tutorial = tutorial_backward(self.q, self.k, self.v, self.do, self.causal)
        if tutorial is None:
            columns.append(Column("tutorial 06 (float16)", "tutorial", error=tutorial_backward.why_absent()))
        else:
            columns.append(Column("tutorial 06 (float16)", "tutorial", fn=tutorial, want=self.want))
        return columns

    def backend(self) -> str:
        """The library behind PyTorch's pick, named from its GPU kernels, as the benchmark names it."""
        if DRY:
            return "(dry run)"
        from checker.bench.kernel_times import kernel_times
        from checker.specs.families.attention import sdpa_backend
        work = self.spec.sdpa_backward(self.q, self.k, self.v, self.do, self.causal, lambda fn: fn)
        return sdpa_backend([name for name, *_ in kernel_times(work, steps=1)])


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pass_a(size: Size, rounds: int) -> list:
    """cuDNN, the reference, the tutorial, every walk alone and the fused arrangement, at one size."""
    designs = load_designs()
    D, causal = size.D, size.causal
    columns = size.baselines() + [size.declared("reference (the declaration's launch)", "reference")]
    columns[-1].design = (designs.DKDV[D][0], designs.DQ[D][0])
    kv_want = [size.dk_heads, size.dv_heads]
    designs.dkdv_launch(size.solution, designs.DKDV[D][0], size.q, size.k, size.v, size.do, size.lse, size.delta,
                        size.dq, size.dk_heads, size.dv_heads, causal)
    kv_want = [t.clone() for t in kv_want]
    designs.dq_launch(size.solution, designs.DQ[D][0], size.q, size.k, size.v, size.do, size.lse, size.delta, size.dq,
                      causal)
    dq_want = [size.dq.clone()]
    for walk in designs.runs(designs.DKDV[D] + designs.DKDV_DESIGNS[D], causal):
        columns.append(Column(f"dK/dV {walk.name}", "walk", "dK/dV", size.walk("dK/dV", walk),
                              lambda: [size.dk_heads, size.dv_heads], kv_want, walk))
    for walk in designs.runs(designs.DQ[D] + designs.DQ_DESIGNS[D], causal):
        columns.append(Column(f"dQ {walk.name}", "walk", "dQ", size.walk("dQ", walk), lambda: [size.dq], dq_want,
                              walk))
    if sizes_of(size.case)["L"] == sizes_of(size.case)["S"]:
        for fused in designs.runs(designs.FUSED[D], causal):
            columns.append(Column(fused.name, "fused", "whole", size.whole(fused),
                                  lambda: [size.dq, size.dk, size.dv], size.want, fused))
    rounds_of(columns, rounds)
    return columns


def best(columns: list, kind: str, own: bool):
    """The fastest checked walk of a kind (the reference's own kernels only, or any design)."""
    found = [c for c in columns if c.kind == kind and c.good and (c.design.own or not own)]
    return min(found, key=lambda c: c.ms).design if found else None


def per_head_dim(results: dict) -> dict:
    """(D, causal) -> (dK/dV walk, dQ walk): the reference's own kernels at the launch with the least
    geometric mean, over that class's sizes, of its time over the reference launch's time."""
    chosen = {}
    for key in {(s.D, s.causal) for s, _ in results.values()}:
        pick = []
        for kind in ("dK/dV", "dQ"):
            ratios: dict = {}
            for size, columns in results.values():
                if (size.D, size.causal) != key:
                    continue
                first = next((c for c in columns if c.kind == kind and c.design.own), None)
                for c in columns:
                    if c.kind == kind and c.design.own and c.good and first is not None and first.ms:
                        ratios.setdefault(c.design, []).append(c.ms / first.ms)
            sizes = max((len(r) for r in ratios.values()), default=0)
            full = {d: math.exp(statistics.fmean(math.log(x) for x in r)) for d, r in ratios.items() if len(r) == sizes}
            pick.append(min(full, key=full.get) if full else None)
        chosen[key] = tuple(pick)
    return chosen


def launch_entry(kv, dq) -> dict:
    """A (dK/dV, dQ) pair of the reference's kernels as the declaration's launch parameters."""
    entry = dict(BLOCK_Q=kv.block_q, BLOCK_K=kv.block_k, NUM_WARPS=kv.warps, NUM_STAGES=kv.stages)
    same = (dq.block_q, dq.block_k, dq.warps, dq.stages) == (kv.block_q, kv.block_k, kv.warps, kv.stages)
    entry["DQ_TILES"] = None if same else (dq.block_q, dq.block_k, dq.warps, dq.stages)
    return entry


def pass_b(size: Size, chosen, rounds: int) -> list:
    """The whole backward beside cuDNN: the reference; the per-head-dim launch, through the declaration;
    the best launch of the reference's kernels at this size; the best walks of any design at this size.
    A pair already timed is not timed again: its column says which it is the same as (same_as)."""
    designs = load_designs()
    columns = size.baselines(tutorial=False) + [size.declared("reference (the declaration's launch)", "reference")]
    columns[-1].design = (designs.DKDV[size.D][0], designs.DQ[size.D][0])
    results = RESULTS[size.case.name][1]
    pairs = [("per-head-dim launch", "per-head-dim", chosen),
             ("best launch of the reference's kernels here", "best own",
              (best(results, "dK/dV", True), best(results, "dQ", True))),
             ("best walks of any design here", "best any", (best(results, "dK/dV", False), best(results, "dQ", False)))]
    for label, role, pair in pairs:
        if not all(pair):
            continue
        name = f"{label}: " + " + ".join(w.name for w in pair)
        twin = next((c for c in columns if c.design == pair), None)
        if twin is not None:
            columns.append(Column(name, role, design=pair, error=f"same as {twin.role}", same_as=twin.role))
        elif role == "per-head-dim":
            columns.append(size.declared(name, role, launch_entry(*pair)))
            columns[-1].design = pair
        else:
            columns.append(Column(name, role, "whole", size.whole(pair), lambda: [size.dq, size.dk, size.dv],
                                  size.want, pair))
    rounds_of(columns, rounds)
    return columns


RESULTS: dict = {}  # case name -> (Size, pass A's columns)


def table(size: Size, columns: list, title: str) -> str:
    """One size's columns: ms, TFLOP/s (whole backwards), cuDNN's time over it, the error."""
    cudnn = columns[0].ms
    lines = [f"-- {size.case.name} ({size.case.dims}): {title}"]
    for c in columns:
        if c.ms is None:
            lines.append(f"   {c.name:78} not timed: {c.error}")
            continue
        rate = f"{size.flops / c.ms / 1e9:6.0f}" if c.kind == "whole" else "      "
        ratio = f"{cudnn / c.ms:5.2f}" if cudnn and c.kind == "whole" else "     "
        err = "" if c.err is None else f"  err {c.err:.1e}{' WRONG' if c.err > MAX_ERROR else ''}"
        lines.append(f"   {c.name:78} {c.ms:8.3f} ms {rate} TFLOP/s  cuDNN/it {ratio}{err}")
    return "\n".join(lines)


def shrunk(case):
    """A benchmark case at a dry run's size: one batch, two query heads (one key/value head where the case
    groups them), 80 queries and keys (a partial block in every walk), float32 (Triton's interpreter
    takes bfloat16 tensors only through the checker's own layer)."""
    p = sizes_of(case)
    kv = 1 if p["KV"] != p["H"] else 2
    return dataclasses.replace(case, sizes={**case.sizes, "B": 1, "H": 2, "L": 80, "S": 80},
                               params={**case.params, "KV": kv}, dtype="float32")


def main() -> None:
    global DRY
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    parser.add_argument("--budget", type=float, default=390.0, help="seconds for the whole run, at most (later sizes "
                        "get fewer rounds when it runs late)")
    parser.add_argument("--rounds-a", type=int, default=2, help="rounds of pass A (every walk alone)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of pass B (the whole backward)")
    parser.add_argument("--sizes", default="", help="only the sizes whose name holds this text")
    parser.add_argument("--dry-run", action="store_true", help="the flow on the CPU: Triton's interpreter, "
                        "80 queries and keys, wall-clock times (nothing measured)")
    args = parser.parse_args()
    if args.dry_run:
        DRY = True
        os.environ["TRITON_INTERPRET"] = "1"  # before Triton is imported
    import contextlib

    import torch

    from checker import registry
    from research.runs import run_stamp
    from checker.puzzle import timing
    from checker.specs import p32_flash_attention_backward as spec
    start = time.time()
    torch.manual_seed(0)
    puzzle = registry.get("p32")
    cases = sorted((c for c in puzzle.bench.cases() if args.sizes in c.name), key=lambda c: c.name != TARGET)
    if DRY:
        cases = [shrunk(c) for c in cases]
        stamp = {"date": time.strftime("%Y-%m-%d"), "device": "CPU (dry run: Triton's interpreter)",
                 "torch": torch.__version__, "triton": triton_version()}
        compiled = "none (dry run)"
    else:
        compiled = compile_all(cases)  # before this process takes the GPU: the compiling processes each take it
        print(f"torch {torch.__version__}, triton {triton_version()}, {torch.cuda.get_device_name()}", flush=True)
        stamp = run_stamp()
    print(compiled, flush=True)
    kernels = load_solution()
    out = Path(args.out) / "bwd_sweep.json"
    record = {**stamp, "method": f"medians of interleaved rounds of triton.testing.do_bench on CUDA-graph replays "
                                 f"(the L2 cache flushed before each run), at least {REP_MS} ms each; every column "
                                 f"checked against the reference's gradients (relative error at most {MAX_ERROR})",
              "compiles": compiled, "sizes": [], "per_head_dim": {}}
    stream = contextlib.nullcontext() if DRY else torch.cuda.stream(torch.cuda.Stream())
    with stream, timing():
        for i, case in enumerate(cases):  # pass A gets 70 % of the time; later sizes fewer rounds when late
            left = 0.7 * args.budget - (time.time() - start)
            if left <= 0:
                print(f"pass A out of time before {case.name}", flush=True)
                break
            rounds = args.rounds_a if left / (len(cases) - i) > 8 else 1
            try:
                size = Size(puzzle, spec, kernels, case)
                columns = pass_a(size, rounds)
            except Exception as failure:  # noqa: BLE001  (one size's failure leaves the others measured)
                print(f"{case.name}: {traceback.format_exc()}", flush=True)
                record.setdefault("failed", {})[case.name] = f"{type(failure).__name__}: {failure}"[:300]
                continue
            RESULTS[case.name] = (size, columns)
            print(table(size, columns, f"pass A, {rounds} rounds"), flush=True)
            record["sizes"].append({"size": case.name, "dims": case.dims, "flops": size.flops,
                                    "backend": size.backend(), "rounds_a": rounds,
                                    "a": [c.record() for c in columns], "b": []})
            for column in columns:  # what their works hold (PyTorch's saved forward, the tutorial's) goes
                column.fn = column.outputs = None
            out.write_text(json.dumps(record, indent=1))
        chosen = per_head_dim(RESULTS)
        record["per_head_dim"] = {f"{D}, {'causal' if c else 'non-causal'}": {
            "dkdv": kv.name if kv else None, "dq": dq.name if dq else None,
            "launch": launch_entry(kv, dq) if kv and dq else None} for (D, c), (kv, dq) in sorted(chosen.items())}
        for n, entry in enumerate(record["sizes"]):
            if time.time() - start > args.budget - 15:
                print("pass B out of time", flush=True)
                break
            size, _ = RESULTS[entry["size"]]
            late = (args.budget - (time.time() - start)) / (len(record["sizes"]) - n) < 5
            try:
                columns = pass_b(size, chosen[size.D, size.causal], 1 if late else args.rounds)
            except Exception as failure:  # noqa: BLE001
                print(f"{entry['size']}, pass B: {traceback.format_exc()}", flush=True)
                record.setdefault("failed", {})[entry["size"] + ", pass B"] = f"{type(failure).__name__}: {failure}"[:300]
                continue
            print(table(size, columns, "pass B: the whole backward"), flush=True)
            entry["b"] = [c.record() for c in columns]
            entry["rounds_b"] = 1 if late else args.rounds
            out.write_text(json.dumps(record, indent=1))
    print("\nBENCH_LAUNCH = {" + ", ".join(f"({D}, {c}): {launch_entry(kv, dq)}" for (D, c), (kv, dq)
                                          in sorted(chosen.items()) if kv and dq) + "}")
    print(f"done in {time.time() - start:.0f} s; {out}", flush=True)


def triton_version() -> str:
    import triton
    return triton.__version__


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(1)
