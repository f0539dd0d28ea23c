"""Puzzle 26's memory-bound kernels at other launches, each beside the copy of the bytes it must move,
in one run on a GPU (products.py found them 16 % above that copy at M = 8192):

    cd research/fused_step && ROOT=../.. OUT=. python row_kernels.py     # writes row_kernels.json

Each launch's output is compared with the reference launch's (the same bits for the sums: their
order is fixed by the launch, so only an order-changing launch may differ, in the last bits)."""
import json
import os
import sys
import time

import torch
import triton

ROOT = os.environ.get("ROOT", ".")
OUT = os.environ.get("OUT", ".")
sys.path.insert(0, ROOT)
from checker.bench.timing import copy_work, replay_median_ms  # noqa: E402
from checker.specs import p26_fused_layernorm_linear_step as SPEC  # noqa: E402
from checker.specs.families.layernorm import EPS  # noqa: E402
from research.runs import run_stamp, solution  # noqa: E402
from products import step_inputs  # noqa: E402  (this folder: run from it)

SOL = solution("p26")
SIZES = [dict(M=8192, H=4096, N=4096), dict(M=4096, H=2048, N=2048)]


def launches(M, H, N, x, gamma, beta, w, b, dy, sms):
    """name -> [(params, run, result)]: the reference's launch first."""
    bf = dict(device="cuda", dtype=torch.bfloat16)
    f32 = dict(device="cuda", dtype=torch.float32)
    wg, wg_sum, bias = torch.empty(N, H, **bf), torch.empty(N, **f32), torch.empty(N, **f32)
    mean, rstd = torch.empty(M, **f32), torch.empty(M, **f32)
    dz, dx, z = torch.randn(M, H, **bf), torch.empty(M, H, **bf), torch.empty(M, H, **bf)
    db = torch.empty(N, **f32)
    row = triton.next_power_of_2(H)
    out = {"fold_weight_kernel": [], "ln_stats_kernel": [], "ln_dx_kernel": [], "db (slabs, then their sum)": []}
    for BLOCK_H, warps in ((min(1024, row), 4), (min(2048, row), 4), (min(2048, row), 8), (row, 8), (row, 16)):
        out["fold_weight_kernel"].append((dict(BLOCK_H=BLOCK_H, warps=warps), lambda BLOCK_H=BLOCK_H, warps=warps:
            SOL.fold_weight_kernel[(N,)](w, gamma, beta, b, wg, wg_sum, bias, N, H, BLOCK_H=BLOCK_H, num_warps=warps),
            (wg, wg_sum, bias)))
    for ROWS, warps in ((1, SPEC.row_warps(row)), (1, 4), (1, 16), (2, 8), (2, 16), (4, 16)):
        out["ln_stats_kernel"].append((dict(ROWS=ROWS, warps=warps), lambda ROWS=ROWS, warps=warps:
            SOL.ln_stats_kernel[(triton.cdiv(M, ROWS),)](x, mean, rstd, M, H, EPS, ROWS=ROWS, BLOCK_H=row,
                                                         num_warps=warps), (mean, rstd)))
    for per_sm, warps in ((2, SPEC.row_warps(row)), (4, 4), (1, 8), (3, 8), (4, 8), (2, 4), (1, 16), (2, 16)):
        P = min(M, per_sm * sms)
        parts = torch.empty(P, H, **f32), torch.empty(P, H, **f32)
        out["ln_dx_kernel"].append((dict(per_sm=per_sm, warps=warps), lambda P=P, parts=parts, warps=warps:
            SOL.ln_dx_kernel[(P,)](x, mean, rstd, gamma, beta, dz, dx, z, *parts, M, H, ROWS=1, BLOCK_H=row,
                                   num_warps=warps), (dx, z)))
    for BLOCK_R, BLOCK_COLS, ROWS_PER, warps in ((8, 32, 128, 4), (8, 64, 128, 4), (8, 128, 128, 4),
                                                 (16, 128, 256, 4), (32, 64, 256, 4), (8, 256, 256, 4),
                                                 (16, 64, 512, 4), (16, 256, 512, 8), (32, 128, 512, 8)):
        splits = triton.cdiv(M, ROWS_PER)
        part = torch.empty(splits, N, **f32)

        def run(BLOCK_R=BLOCK_R, BLOCK_COLS=BLOCK_COLS, ROWS_PER=ROWS_PER, splits=splits, part=part, warps=warps):
            SOL.fixed_order_sum_kernel[(triton.cdiv(N, BLOCK_COLS), splits)](
                dy, part, M, N, ROWS_PER, BLOCK_R=BLOCK_R, BLOCK_COLS=BLOCK_COLS, num_warps=warps)
            SOL.fixed_order_sum_kernel[(triton.cdiv(N, 32), 1)](part, db, splits, N, splits, BLOCK_R=8, BLOCK_COLS=32)
        out["db (slabs, then their sum)"].append(
            (dict(BLOCK_R=BLOCK_R, BLOCK_COLS=BLOCK_COLS, DB_ROWS_PER_PROGRAM=ROWS_PER, warps=warps), run, (db,)))
    nbytes = {"fold_weight_kernel": 4 * N * H, "ln_stats_kernel": 2 * M * H, "ln_dx_kernel": 8 * M * H,
              "db (slabs, then their sum)": 2 * M * N}
    return out, nbytes


def main():
    t0 = time.time()
    records = []
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for size in SIZES:
        M, H, N = size["M"], size["H"], size["N"]
        x, gamma, beta, w, b, dy = step_inputs(M, H, N)
        table, nbytes = launches(M, H, N, x, gamma, beta, w, b, dy, sms)
        row = {"size": f"M={M}, H={H}, N={N}", "kernels": {}}
        for name, variants in table.items():
            copy = replay_median_ms(copy_work(nbytes[name])[0])
            found = []
            first = None
            for params, run, outputs in variants:
                run()
                torch.cuda.synchronize()
                got = [t.float().clone() for t in outputs]
                if first is None:
                    first = got
                diff = max(float((a - r).abs().max()) for a, r in zip(got, first))
                ms = replay_median_ms(run)
                found.append({"params": params, "ms": ms, "fraction_of_copy": copy / ms, "max_diff_vs_ref": diff})
                print(row["size"], name, params, round(ms * 1000, 1), "us", round(copy / ms, 3), diff,
                      round(time.time() - t0), flush=True)
            row["kernels"][name] = {"bytes": nbytes[name], "copy_ms": copy, "launches": found}
        records.append(row)
    with open(f"{OUT}/row_kernels.json", "w") as f:
        json.dump(run_stamp(rows=records), f, indent=1)


if __name__ == "__main__":
    main()
