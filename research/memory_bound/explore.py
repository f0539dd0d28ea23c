"""Times the designs of kernels_ce.py (p27) and kernels_ln.py (p25) next to the copy of the same bytes,
after checking each against PyTorch in fp32 at the benchmark's own size. On a GPU:

    cd research/memory_bound && ROOT=../.. OUT=. BUDGET=330 python explore.py all   # or ce, ln

writes $OUT/explore.json (one record per design and size, rewritten after every record: a run cut
short keeps what it timed) and prints a summary: the best design per size, as a fraction of the copy.
On the CPU, the same logic end to end at tiny sizes (no timing worth reading):

    TRITON_INTERPRET=1 python explore.py all --cpu-smoke

A record: {puzzle, design, params, size, dtype, ms, copy_ms, fraction_of_copy, max_err, ok, t}
(+ the compiled kernel's n_regs / spills / programs for the row-split designs, or error).
fraction_of_copy = copy_ms / ms: the copy (checker/bench/ceiling.py) moves the same bytes, half read
and half written, timed just before and just after the size's designs (the median of those)."""
import json
import os
import statistics
import sys
import time
import traceback

import torch
import triton

import common  # noqa: F401  (puts ROOT and this folder on sys.path)

T0 = time.time()
BUDGET = float(os.environ.get("BUDGET", 330))
OUT = os.environ.get("OUT", ".")
CPU = "--cpu-smoke" in sys.argv
DEV = "cpu" if CPU else "cuda"
REP_MS = 40  # do_bench's time per measurement (median of its runs)
RESERVE = 15  # seconds kept for the summary and for a slow last record
RESULTS = []
# ONLY="D ref,C split": those designs (and the reference, the run's baseline) at the sizes that have any
ONLY = [d for d in os.environ.get("ONLY", "").split(",") if d]
WIDTHS = [int(h) for h in os.environ.get("WIDTHS", "").split(",") if h]  # p25's widths to run (all if empty)

from checker.bench import ceiling  # noqa: E402
from checker.bench.timing import replay_median_ms  # noqa: E402

import kernels_ce as KC  # noqa: E402
import kernels_ln as KL  # noqa: E402
import sync  # noqa: E402


STOP = [BUDGET]  # "all": p27 stops at CE_SHARE of the budget, so p25 gets the rest
CE_SHARE = 0.4


def left() -> float:
    return min(BUDGET, STOP[0]) - (time.time() - T0)


def save(entry: dict) -> None:
    entry["t"] = round(time.time() - T0, 1)
    RESULTS.append(entry)
    with open(os.path.join(OUT, "explore.json"), "w") as f:
        json.dump(RESULTS, f, indent=0)
    print(json.dumps(entry), flush=True)


def timed(fn) -> float:
    """Median ms. GPU: a CUDA graph's replay (no Python launch cost, as the checker's bench), L2 flushed
    before each run by do_bench. CPU smoke: one plain run."""
    if CPU:
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    return replay_median_ms(fn, REP_MS)


class Copy:
    """The ceiling for `nbytes` of traffic: int32 src -> dst, nbytes / 8 words each (half read, half written)."""

    def __init__(self, nbytes: int):
        words = max(1 << (10 if CPU else 18), nbytes // 8)
        self.src = torch.zeros(words, dtype=torch.int32, device=DEV)
        self.dst = torch.empty_like(self.src)
        self.samples = []

    def sample(self) -> None:
        self.samples.append(timed(lambda: ceiling.launch(self.src, self.dst)))

    def ms(self) -> float:
        return statistics.median(self.samples)


def rel(out, ref) -> float:
    """max |out - ref| / max |ref| (the output's scale); NaN anywhere -> inf."""
    d = (out.float() - ref.float()).abs().max()
    if not torch.isfinite(d):
        return float("inf")
    return float(d / ref.float().abs().max().clamp_min(1e-30))


def elementwise(out, ref) -> float:
    """max |out - ref| / (|ref| + 1e-6 max |ref|): a softmax entry of 1/V wrong by any factor shows here
    (relative to the max it would hide). bf16 rounding alone gives <= 2^-8."""
    r = ref.float()
    d = (out.float() - r).abs() / (r.abs() + 1e-6 * r.abs().max())
    m = d.max()
    return float(m) if torch.isfinite(m) else float("inf")


def record(puzzle, design, params, size, dtype, run, check, nbytes, copy: Copy, info: dict) -> None:
    """Check, then time, one design at one size; any exception becomes the record's error."""
    base = dict(puzzle=puzzle, design=design, params=params, size=size, dtype=dtype)
    try:
        errs, ok = check()
        if not ok:
            save(dict(base, ok=False, max_err=errs, **info, error="wrong answer: not timed"))
            return
        ms = timed(run)
        save(dict(base, ms=round(ms, 5), copy_ms=round(copy.ms(), 5), fraction_of_copy=round(copy.ms() / ms, 3),
                  gbps=round(nbytes / ms / 1e6, 1), max_err=errs, ok=True, **info))
    except Exception as e:
        save(dict(base, ok=False, **info, error=f"{type(e).__name__}: {str(e)[:300]}",
                  trace=traceback.format_exc()[-800:]))


# -- p27 ----------------------------------------------------------------------------------------------
def explore_ce() -> None:
    sizes = [(7, 100), (5, 300)] if CPU else [(8192, 32000), (8192, 128256)]
    for M, V in sizes:
        if left() < RESERVE + 20:
            return
        gen = torch.Generator(DEV).manual_seed(0)
        logits = torch.randn(M, V, generator=gen, device=DEV).to(torch.bfloat16)
        target = torch.randint(0, V, (M,), generator=gen, device=DEV, dtype=torch.int32)
        target[::7] = KC.IGNORE  # the mean over counted rows, and zero rows, checked too
        dloss = torch.randn(1, generator=gen, device=DEV)
        ref_loss, ref_g = KC.reference(logits, target, dloss)
        nbytes = 2 * M * V * logits.element_size()
        copy = Copy(nbytes)
        copy.sample()
        size = f"M={M} V={V}"
        for design, params in KC.designs(V, cpu=CPU):
            if left() < RESERVE:
                break
            info = {}
            extra = dict(info=info) if design[0] in "CD" else {}

            def check():
                KC.POISON = True
                sync._BUFFERS.clear()  # fresh counters: an earlier design's abort must not leak
                try:
                    loss, g = KC.launch(design, logits, target, dloss, **params, **extra)
                finally:
                    KC.POISON = False
                errs = dict(loss=rel(loss, ref_loss), dlogits=rel(g, ref_g), dlogits_elem=elementwise(g, ref_g))
                clean = all(int(t.abs().sum()) == 0 for bufs in sync._BUFFERS.values() for t in bufs)
                errs["sync_clean"] = clean
                ok = errs["loss"] < 1e-4 and errs["dlogits_elem"] < 2 ** -6 and clean
                return errs, ok

            record("p27", design, params, size, "bfloat16",
                   lambda: KC.launch(design, logits, target, dloss, **params, **extra), check, nbytes, copy, info)
        copy.sample()
        del logits, ref_g
        if not CPU:
            torch.cuda.empty_cache()


# -- p25 ----------------------------------------------------------------------------------------------
# the failing widths first: a run cut short by its budget has timed those
LN_SIZES = [("bfloat16", 16384), ("float32", 16384), ("bfloat16", 8462), ("float32", 8462),
            ("bfloat16", 1024), ("bfloat16", 4096), ("bfloat16", 5120), ("bfloat16", 5632),
            ("bfloat16", 8192), ("float32", 8192), ("float32", 1024), ("float32", 4096), ("float32", 5120),
            ("float32", 5632)]
LN_CPU_SIZES = [("float32", 37, 100), ("bfloat16", 9, 300), ("float32", 5, 48)]


def explore_ln() -> None:
    sizes = LN_CPU_SIZES if CPU else [(d, 4096, h) for d, h in LN_SIZES]
    for dtype, M, H in sizes:
        if left() < RESERVE + 10:
            return
        chosen = [(d, p) for d, p in KL.designs(H, dtype, cpu=CPU) if not ONLY or d == "A ref" or d in ONLY]
        if len(chosen) < 2 or (WIDTHS and not CPU and H not in WIDTHS):
            continue
        dt = getattr(torch, dtype)
        gen = torch.Generator(DEV).manual_seed(0)
        x = torch.randn(M, H, generator=gen, device=DEV).to(dt)
        gamma = (1.0 + 0.5 * torch.randn(H, generator=gen, device=DEV)).to(dt)
        dz = torch.randn(M, H, generator=gen, device=DEV).to(dt)
        ref = KL.reference(x, gamma, dz)
        nbytes = 3 * M * H * x.element_size()
        copy = Copy(nbytes)
        copy.sample()
        size = f"M={M} H={H}"
        tol_dx = 1e-2 if dtype == "bfloat16" else 1e-4
        for design, params in chosen:
            if left() < RESERVE:
                break
            info = {}
            extra = dict(info=info) if design.startswith("C") else {}

            def check():
                KL.POISON = True
                sync._BUFFERS.clear()
                try:
                    out = KL.launch(design, x, gamma, dz, **params, **extra)
                finally:
                    KL.POISON = False
                errs = dict(zip(("dx", "dgamma", "dbeta"), (rel(o, r) for o, r in zip(out, ref))))
                clean = all(int(t.abs().sum()) == 0 for bufs in sync._BUFFERS.values() for t in bufs)
                errs["sync_clean"] = clean
                ok = errs["dx"] < tol_dx and errs["dgamma"] < 1e-3 and errs["dbeta"] < 1e-3 and clean
                return errs, ok

            record("p25", design, params, size, dtype, lambda: KL.launch(design, x, gamma, dz, **params, **extra),
                   check, nbytes, copy, info)
        copy.sample()


def summary() -> None:
    """Per size: the reference (A) and the best checked design, as fractions of the copy."""
    best, ref = {}, {}
    for r in RESULTS:
        if not r.get("ok") or "fraction_of_copy" not in r:
            continue
        key = (r["puzzle"], r["size"], r["dtype"])
        if r["design"] == "A ref":
            ref[key] = r["fraction_of_copy"]
        if key not in best or r["fraction_of_copy"] > best[key]["fraction_of_copy"]:
            best[key] = r
    print(f"\n{'puzzle':6} {'size':16} {'dtype':9} {'A ref':>6} {'best':>6}  best design")
    for key, r in best.items():
        print(f"{key[0]:6} {key[1]:16} {key[2]:9} {ref.get(key, float('nan')):6.3f} {r['fraction_of_copy']:6.3f}  "
              f"{r['design']} {json.dumps(r['params'])}")
    failed = [r for r in RESULTS if not r.get("ok")]
    print(f"{len(RESULTS)} records, {len(failed)} failed or wrong; {time.time() - T0:.0f} s")
    for r in failed:
        print("  failed:", r["puzzle"], r["size"], r["dtype"], r["design"], json.dumps(r["params"]),
              r.get("error", "")[:120])


if __name__ == "__main__":
    what = next((a for a in sys.argv[1:] if not a.startswith("--")), "all")
    torch.manual_seed(0)
    if not CPU:
        print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
    try:
        if what in ("ce", "all"):
            STOP[0] = BUDGET * CE_SHARE + RESERVE if what == "all" else BUDGET
            explore_ce()
        if what in ("ln", "all"):
            STOP[0] = BUDGET
            explore_ln()
    finally:
        summary()
