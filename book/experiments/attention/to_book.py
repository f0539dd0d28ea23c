"""explore.json (explore.py) and ncu_raw.csv (ncu_run.py) -> book/data/attention_designs.json and
attention_ncu.json: the designs the pages show, each named by what it changes, and the profile's
rows. python to_book.py explore.json ncu_raw.csv ../../data"""
import csv, json, sys
explore, ncu, out = sys.argv[1], sys.argv[2], sys.argv[3]
R = json.load(open(explore))
def t(kind, who, size):
    for r in R:
        if r["kind"] == kind and r["who"] == who and r["size"] == size and "ms" in r:
            return round(r["ms"], 4)
    return None
SZ = {"D=128 full": "B=4 H=16 N=4096 D=128 G=1 full", "D=128 causal": "B=4 H=16 N=4096 D=128 G=1 causal",
      "D=64 full": "B=4 H=16 N=4096 D=64 G=1 full", "D=64 causal": "B=4 H=16 N=4096 D=64 G=1 causal"}
def row(design, what, per_size, kind="fwd"):
    return {"design": design, "what": what, "ms": {s: t(kind, who, SZ[s]) if who else None for s, who in per_size.items()}}
fwd = [
    row("sdpa, cuDNN (PyTorch's pick)", "warp-specialised: a TMA producer warpgroup and two consumers; persistent, 132 programs",
        {s: "sdpa pick" for s in SZ}),
    row("sdpa, flash backend", "FlashAttention-2", {s: "sdpa FLASH_ATTENTION" for s in SZ}),
    row("the reference before", "scores scaled, then their max: a multiply and a subtract per score",
        {s: "main" for s in SZ}),
    row("max of the raw scores (the reference now)", "s · scale − m is one multiply-add per score",
        {"D=128 full": "ptr 128x64 w8 s3", "D=128 causal": "ptr 128x64 w8 s3", "D=64 full": "ptr 128x64 w4 s3",
         "D=64 causal": "ptr 128x64 w4 s3"}),
    row("  128 × 128 tiles", "twice the keys per step", {"D=128 full": "ptr 128x128 w8 s3", "D=128 causal": "ptr 128x128 w8 s3",
                                                        "D=64 full": None, "D=64 causal": None}),
    row("  TMA descriptors", "K and V by the copy engine (tl.make_tensor_descriptor), 3 stages",
        {"D=128 full": "tma 128x64 w8 s3", "D=128 causal": "tma 128x64 w8 s3", "D=64 full": "tma 128x64 w4 s3",
         "D=64 causal": "tma 128x64 w4 s3"}),
    row("  TMA, 128 × 128 tiles", "", {"D=128 full": "tma 128x128 w8 s3", "D=128 causal": "tma 128x128 w8 s3",
                                      "D=64 full": "tma 128x128 w4 s3", "D=64 causal": "tma 128x128 w4 s3"}),
    row("  TMA, 4 stages", "", {"D=128 full": "tma 128x64 w8 s4", "D=128 causal": "tma 128x64 w8 s4",
                               "D=64 full": "tma 128x64 w4 s4", "D=64 causal": "tma 128x64 w4 s4"}),
    row("  TMA, 4 warps at D = 128", "", {"D=128 full": "tma 128x64 w4 s3", "D=128 causal": "tma 128x64 w4 s3",
                                         "D=64 full": None, "D=64 causal": None}),
    row("  TMA, 256 queries a program", "16 warps at D = 128, 8 at D = 64",
        {"D=128 full": "tma 256x64 w16 s2", "D=128 causal": "tma 256x64 w16 s2", "D=64 full": "tma 256x64 w8 s2",
         "D=64 causal": "tma 256x64 w8 s2"}),
    row("  persistent grid", "132 programs, tiles in head order (K and V shared in L2), causal: longest first",
        {"D=128 full": "persist 128x128 w8 s3", "D=128 causal": "persist 128x128 w8 s3",
         "D=64 full": "persist 128x128 w8 s3", "D=64 causal": "persist 128x128 w8 s3"}),
    row("  warp_specialize=True", "tl.range's flag: accepted by Triton 3.6 on Hopper, no faster",
        {"D=128 full": "ws 128x128 w8 s3", "D=128 causal": "ws 128x128 w8 s3", "D=64 full": None, "D=64 causal": None}),
]
B = {"D=128 full": "B=4 H=16 N=4096 D=128 G=1 full", "D=128 causal": "B=4 H=16 N=4096 D=128 G=1 causal",
     "D=64 full": "B=4 H=16 N=4096 D=64 G=1 full"}
def total(parts):
    out = {}
    for s, size in B.items():
        ms = [t(k, w, size) for k, w in parts]
        out[s] = None if None in ms else round(sum(ms), 4)
    return out
bwd = [
    {"design": "sdpa, cuDNN (PyTorch's pick)", "what": "Δ kernel, one warp-specialised kernel with dQ added by atomics, dQ converted",
     "ms": {s: t("bwd", "sdpa pick", z) for s, z in B.items()}},
    {"design": "sdpa, flash backend", "what": "FlashAttention-2", "ms": {s: t("bwd", "sdpa FLASH_ATTENTION", z) for s, z in B.items()}},
    {"design": "the reference: Δ, dK/dV walk, dQ walk", "what": "three kernels; seven products (P and dP computed twice)",
     "ms": {s: t("bwd", "main", z) for s, z in B.items()}},
    {"design": "  dQ walk by TMA descriptors", "what": "K and V of the dQ walk by the copy engine",
     "ms": {**total([("bwd", "preprocess"), ("bwd-kv", "ptr 32x64 w4 s4"), ("bwd-dq", "tma 128x64 w8 s3")]),
            "D=64 full": total([("bwd", "preprocess"), ("bwd-kv", "tma 32x64 w4 s4"), ("bwd-dq", "tma 64x128 w4 s3")])["D=64 full"]}},
    {"design": "  dK/dV on 64 × 128 tiles", "what": "128 keys a program, 8 warps (spills registers)",
     "ms": total([("bwd", "preprocess"), ("bwd-kv", "tma 64x128 w8 s2"), ("bwd-dq", "tma 128x64 w8 s3")])},
    {"design": "  one walk, dQ by tl.atomic_add", "what": "five products; every step adds its dQ block into fp32 memory",
     "ms": total([("bwd", "preprocess"), ("bwd-atomic", "ptr 32x64 w4 s4 a1")])},
    {"design": "  one walk, dQ by TMA reductions", "what": "the copy engine adds each dQ block (descriptor.atomic_add), 64 × 128 tiles",
     "ms": {**total([("bwd", "preprocess"), ("bwd-atomic", "tma 64x128 w8 s2 a2")]),
            "D=64 full": total([("bwd", "preprocess"), ("bwd-atomic", "tma 64x64 w4 s3 a2")])["D=64 full"]}},
]
rows = list(csv.reader(open(ncu)))
hi = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
head = rows[hi]
def num(r, k):
    return float(r[head.index(k)].replace(",", ""))
prof = []
for d in rows[hi + 2:]:
    stalls = {h.replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""): num(d, h)
              for h in head if h.startswith("smsp__average_warps_issue_stalled_") and h.endswith("_per_issue_active.ratio")
              and d[head.index(h)] not in ("", "n/a")}
    stalls.pop("selected", None)
    prof.append({"kernel": d[head.index("Kernel Name")][:60], "time_us": num(d, "gpu__time_duration.sum") / 1e3,
                 "tensor_pct": num(d, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"),
                 "registers": num(d, "launch__registers_per_thread"), "programs": num(d, "launch__grid_size"),
                 "threads": num(d, "launch__block_size"),
                 "shared_kib": num(d, "launch__shared_mem_per_block_dynamic") / 1024,
                 "stalls": {k: round(v, 2) for k, v in sorted(stalls.items(), key=lambda kv: -kv[1]) if v >= 0.05}})
meta = {"date": "2026-11-27", "device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130", "triton": "3.6.0"}
json.dump({**meta, "sizes": "bf16, B = 4, H = 16, L = S = 4096", "timing": "medians of triton.testing.do_bench "
           "(40 ms, L2 flushed), CUDA-graph replays, every design in one run",
           "forward": fwd, "backward": bwd}, open(f"{out}/attention_designs.json", "w"), indent=1)
json.dump({**meta, "tool": "Nsight Compute 2025.3.1.0", "note": "one launch each after two warm-ups; ncu's locked "
           "clocks (times longer than the benchmark's)", "sizes": "bf16, B = 4, H = 16, L = S = 4096, D = 128, not causal",
           "rows": prof}, open(f"{out}/attention_ncu.json", "w"), indent=1)
