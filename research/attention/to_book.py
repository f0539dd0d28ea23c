"""explore.json (explore.py), ncu_raw.csv (ncu_run.py) and ncu_sizes.csv (ncu_sizes.py) ->
book/data/attention_designs.json and attention_ncu.json: the designs the pages show, each named by
what it changes, the profile's rows, and per benchmark size the kernels' times and tensor-core shares.
python to_book.py explore.json ncu_raw.csv ncu_sizes.csv ../../book/data

or, for the per-size profile alone (attention_ncu.json's by_size, the rest kept):

python to_book.py sizes ncu_sizes.csv ../../book/data"""
import json, sys, time
sys.path.insert(0, "../..")
from research.runs import ncu_launches, ncu_number, ncu_stalls  # noqa: E402


def by_size(path):
    """Six kernels a size, in ncu_sizes.py's order: the reference's forward, Δ, dK/dV and dQ, then
    cuDNN's forward and its backward walk (its Δ and dQ conversion are not matched by the filter)."""
    from checker.specs.families.attention import bench_sizes
    launches = ncu_launches(path)
    us = lambda d: round(ncu_number(d, "gpu__time_duration.sum") / 1e3, 1)  # noqa: E731
    busy = lambda d: round(ncu_number(d, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"), 1)  # noqa: E731
    sizes = bench_sizes()
    assert len(launches) == 6 * len(sizes), len(launches)
    rows = []
    for i, (name, size) in enumerate(sizes):
        fwd, delta, dkdv, dq, cudnn_fwd, cudnn_bwd = launches[6 * i:6 * i + 6]
        assert "fprop" in cudnn_fwd["Kernel Name"] and "bprop" in cudnn_bwd["Kernel Name"]
        rows.append({"size": name, "B": size["B"], "H": size["H"], "KV": size["KV"],
                     "forward": {"ours_us": us(fwd), "ours_tensor_pct": busy(fwd), "cudnn_us": us(cudnn_fwd),
                                 "cudnn_tensor_pct": busy(cudnn_fwd)},
                     "backward": {"delta_us": us(delta), "dkdv_us": us(dkdv), "dkdv_tensor_pct": busy(dkdv),
                                  "dq_us": us(dq), "dq_tensor_pct": busy(dq), "cudnn_walk_us": us(cudnn_bwd),
                                  "cudnn_walk_tensor_pct": busy(cudnn_bwd)}})
    return rows


SIZES_NOTE = ("every benchmark size, one launch of each kernel after two warm-ups, ncu's locked clocks; cuDNN's "
              "walk alone (its Δ and dQ-conversion kernels are not matched by the kernel filter)")


if sys.argv[1] == "sizes":
    ncu_sizes, out = sys.argv[2:4]
    found = json.load(open(f"{out}/attention_ncu.json"))
    found.update(by_size=by_size(ncu_sizes), by_size_note=SIZES_NOTE, by_size_date=time.strftime("%Y-%m-%d"))
    json.dump(found, open(f"{out}/attention_ncu.json", "w"), indent=1)
    sys.exit()
explore, ncu, ncu_sizes, out = sys.argv[1:5]
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
    row("sdpa, cuDNN (PyTorch's pick)", "one kernel, persistent: 132 programs of three warpgroups (384 threads), wgmma",
        {s: "sdpa pick" for s in SZ}),
    row("sdpa, flash backend", "FlashAttention-2", {s: "sdpa FLASH_ATTENTION" for s in SZ}),
    row("the reference before", "scores scaled, then their max: a multiply and a subtract per score",
        {s: "main" for s in SZ}),
    row("max of the raw scores (as the reference now)", "s · scale − m is one multiply-add per score (the "
        "exploration's kernel; the reference compiles to the same instructions)",
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
    {"design": "sdpa, cuDNN (PyTorch's pick)", "what": "three kernels: Δ (compute_dot_do_o), the walk (132 programs of 384 threads), dQ from an "
             "fp32 buffer to bf16 (convert_dq_to_16bits)",
     "ms": {s: t("bwd", "sdpa pick", z) for s, z in B.items()}},
    {"design": "sdpa, flash backend", "what": "FlashAttention-2", "ms": {s: t("bwd", "sdpa FLASH_ATTENTION", z) for s, z in B.items()}},
    {"design": "the reference: Δ, dK/dV walk, dQ walk", "what": "three kernels; seven products (P and dP computed twice)",
     "ms": {s: t("bwd", "main", z) for s, z in B.items()}},
    {"design": "  dQ walk by TMA descriptors", "what": "K and V of the dQ walk by the copy engine",
     "ms": {**total([("bwd", "preprocess"), ("bwd-kv", "ptr 32x64 w4 s4"), ("bwd-dq", "tma 128x64 w8 s3")]),
            "D=64 full": total([("bwd", "preprocess"), ("bwd-kv", "tma 32x64 w4 s4"), ("bwd-dq", "tma 64x128 w4 s3")])["D=64 full"]}},
    {"design": "  dK/dV on 64 × 128 tiles", "what": "128 keys a program, 64 queries a step, 8 warps",
     "ms": total([("bwd", "preprocess"), ("bwd-kv", "tma 64x128 w8 s2"), ("bwd-dq", "tma 128x64 w8 s3")])},
    {"design": "  one walk, dQ by tl.atomic_add", "what": "five products; every step adds its dQ block into fp32 memory",
     "ms": total([("bwd", "preprocess"), ("bwd-atomic", "ptr 32x64 w4 s4 a1")])},
    {"design": "  one walk, dQ by TMA reductions", "what": "the copy engine adds each dQ block (descriptor.atomic_add), 64 × 128 tiles",
     "ms": {**total([("bwd", "preprocess"), ("bwd-atomic", "tma 64x128 w8 s2 a2")]),
            "D=64 full": total([("bwd", "preprocess"), ("bwd-atomic", "tma 64x64 w4 s3 a2")])["D=64 full"]}},
]
prof = []
for d in ncu_launches(ncu):
    num = lambda k: ncu_number(d, k)  # noqa: E731
    prof.append({"kernel": d["Kernel Name"][:60], "time_us": num("gpu__time_duration.sum") / 1e3,
                 "tensor_pct": num("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"),
                 "registers": num("launch__registers_per_thread"), "programs": num("launch__grid_size"),
                 "threads": num("launch__block_size"),
                 "shared_kib": num("launch__shared_mem_per_block_dynamic") / 1024,
                 "stalls": ncu_stalls(d)})
meta = {"date": "2026-11-27", "device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130", "triton": "3.6.0"}
json.dump({**meta, "sizes": "bf16, B = 4, H = 16, L = S = 4096", "timing": "medians of triton.testing.do_bench "
           "(40 ms, L2 flushed), CUDA-graph replays, every design in one run",
           "forward": fwd, "backward": bwd}, open(f"{out}/attention_designs.json", "w"), indent=1)


json.dump({**meta, "tool": "Nsight Compute 2025.3.1.0", "note": "one launch each after two warm-ups; ncu's locked "
           "clocks (times longer than the benchmark's)", "sizes": "bf16, B = 4, H = 16, L = S = 4096, D = 128, not causal",
           "rows": prof, "by_size": by_size(ncu_sizes), "by_size_note": SIZES_NOTE},
          open(f"{out}/attention_ncu.json", "w"), indent=1)
