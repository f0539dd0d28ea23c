"""explore.py's records (one file per run: p27's "ce", p25's "ln") and ncu_profile.py's Nsight Compute
CSV -> book/data/memory_bound_designs.json: per puzzle and size, the best launch of each design as a
fraction of the copy of the same bytes (timed in the same run), and the profile of the reference next
to the copy's.

    python to_book.py explore_ce.json explore_ln.json [more runs' records ...] ncu_profile.csv ../../book/data"""
import json
import sys

sys.path.insert(0, "../..")
from research.runs import ncu_launches, ncu_number  # noqa: E402

# what each design of explore.py changes, as the pages name it
DESIGNS = {
    ("p27", "A ref"): "the benchmark's launch",
    ("p27", "B ref"): "the reference's kernel at other launches (block of the vocabulary, warps, programs per SM)",
    ("p27", "C one-read"): "a row that fits one block held in registers, read once, its exponentials kept "
                           "for the gradient",
    ("p27", "D split"): "K programs a row, each holding its slice in registers (read once), exchanging "
                        "(max, sum of exp) through memory behind a spin wait on a per-row counter",
    ("p27", "E ref"): "the reference's kernel with the vocabulary a compile-time constant (a kernel per width), at "
                      "its launch and others",
    ("p25", "A ref"): "the benchmark's launch",
    ("p25", "D ref"): "the reference's kernel at other launches (rows per step, warps, programs per SM, stages)",
    ("p25", "B two-pass"): "column blocks walked twice: the row's four sums, then dx from the same blocks "
                           "again (in L2), dgamma and dbeta added into partial rows in memory",
    ("p25", "C split"): "K programs a row, each holding its columns' gamma, dgamma and dbeta in registers, "
                        "exchanging the row's four sums through memory behind a spin wait",
    ("p25", "E padded"): "the row as one masked block of the next power of two, a row a step at 16 warps and a "
                         "program per SM around it (the shape of Helion's example), its statistics recomputed",
    ("p25", "E padded, constant width"): "the padded row with the width a compile-time constant (a kernel per "
                                         "width, as Helion compiles its example per shape)",
    ("p25", "F ref"): "the reference's kernel with the width a compile-time constant (a kernel per width), at "
                      "its launch and others",
}
METRICS = {"us": "gpu__time_duration.sum", "read": "dram__bytes_read.sum", "write": "dram__bytes_write.sum",
           "dram_pct": "dram__throughput.avg.pct_of_peak_sustained_elapsed", "l2_hit_pct": "lts__t_sector_hit_rate.pct",
           "warps_active_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
           "registers": "launch__registers_per_thread", "spill_load": "l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum"}
# ncu_profile.py's SIZES, in order, and the main kernel of each (the others are small: a count, a reduction)
PROFILED = [("p27", "M=8192 V=32000", "bfloat16"), ("p27", "M=8192 V=128256", "bfloat16"),
            ("p25", "M=4096 H=8462", "float32"), ("p25", "M=4096 H=16384", "float32"),
            ("p25", "M=4096 H=8462", "bfloat16"), ("p25", "M=4096 H=16384", "bfloat16")]
MAIN = ("ce_fwd_bwd_kernel", "ln_bwd_roofline_kernel", "ln_split_kernel")


def best_designs(records):
    best = {}
    for r in records:
        if not r.get("ok"):
            continue
        # E's launches with the width a compile-time constant are a design of their own on the page
        if r["design"] == "E padded" and r["params"].get("CONST_H"):
            r = {**r, "design": "E padded, constant width"}
        key = (r["puzzle"], r["size"], r["dtype"], r["design"])
        if key not in best or r["fraction_of_copy"] > best[key]["fraction_of_copy"]:
            best[key] = r
    rows = []
    for (puzzle, size, dtype, design), r in sorted(best.items()):
        rows.append({"puzzle": puzzle, "size": size, "dtype": dtype, "design": design,
                     "what": DESIGNS[(puzzle, design)], "params": r["params"], "ms": round(r["ms"], 5),
                     "copy_ms": round(r["copy_ms"], 5), "fraction_of_copy": r["fraction_of_copy"]})
    return rows


def profile(path):
    kernels = [{"kernel": d["Kernel Name"][:40], **{k: ncu_number(d, m) for k, m in METRICS.items()}}
               for d in ncu_launches(path)]
    for k in kernels:  # µs, and MB (1e6 bytes)
        k["us"] = round(k["us"] / 1e3, 1)
        for field in ("read", "write", "spill_load"):
            k[field] = round(k[field] / 1e6, 1)
    rows, i = [], 0
    for puzzle, size, dtype in PROFILED:
        group = []
        while not kernels[i]["kernel"].startswith("copy_words"):
            group.append(kernels[i])
            i += 1
        copy = kernels[i]
        i += 1
        main = next(k for k in group if k["kernel"].startswith(MAIN))
        rows.append({"puzzle": puzzle, "size": size, "dtype": dtype, "design": "the reference",
                     "kernel": main, "others_us": round(sum(k["us"] for k in group if k is not main), 1),
                     "copy": copy})
    # the row split (explore.py's C, K = 4) at fp32 H = 16384, profiled last, without its copy
    main = next(k for k in kernels[i:] if k["kernel"].startswith("ln_split_kernel"))
    rows.append({"puzzle": "p25", "size": "M=4096 H=16384", "dtype": "float32", "design": "row split, K = 4",
                 "kernel": main, "others_us": round(sum(k["us"] for k in kernels[i:] if k is not main), 1),
                 "copy": rows[3]["copy"]})
    return rows


if __name__ == "__main__":
    *runs, ncu, out = sys.argv[1:]
    records = [r for run in runs for r in json.load(open(run))]
    json.dump({"date": "2026-11-27", "device": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130", "triton": "3.6.0",
               "timing": "explore.py: medians of triton.testing.do_bench over CUDA-graph replays, each size's "
                         "copy (checker/bench/ceiling.py, the same bytes) timed before and after its designs",
               "profile_tool": "Nsight Compute 2025.3.1.0, one launch each after two warm-ups, ncu's locked clocks "
                               "(MB = 1e6 bytes)",
               "designs": best_designs(records), "profile": profile(ncu)},
              open(f"{out}/memory_bound_designs.json", "w"), indent=1)
