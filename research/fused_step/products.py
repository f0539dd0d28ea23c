"""Puzzle 26's step, where its time goes and whether other tiles buy any of it back, in one run on a GPU:

  * the whole step at several product configurations (tile sizes, group, warps, pipeline stages),
    each checked against PyTorch first, beside torch.compile's step and cuBLAS's three products;
  * each of the three products alone at each configuration, beside cuBLAS's same product;
  * each memory-bound kernel alone, beside the time the copy (checker/bench/ceiling.py) takes for
    the bytes it must move, measured in the same run.

    cd research/fused_step && ROOT=../.. OUT=. python products.py     # writes products.json
"""
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
from checker.puzzle import timing  # noqa: E402
from checker.specs import p26_fused_layernorm_linear_step as SPEC  # noqa: E402
from checker.specs.families.layernorm import EPS  # noqa: E402
from checker.specs.families.tiles import blocks_of  # noqa: E402
from research.runs import run_stamp, solution  # noqa: E402

SOL = solution("p26")

SIZES = [dict(M=8192, H=4096, N=4096), dict(M=4096, H=2048, N=2048)]
# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages); the first is the reference's (SPEC.BIG)
CONFIGS = [(128, 256, 64, 8, 8, 3), (128, 256, 64, 8, 8, 4), (256, 128, 64, 8, 8, 3), (128, 256, 64, 4, 8, 3),
           (128, 256, 64, 16, 8, 3), (128, 128, 64, 8, 4, 4), (128, 128, 64, 8, 8, 4), (128, 256, 128, 8, 8, 2),
           (256, 128, 64, 8, 8, 4)]


def median_ms(fn) -> float:
    """As the benchmark times: a CUDA graph's replay (no Python launch cost), the median."""
    return replay_median_ms(fn)


def copy_ms(nbytes: int) -> float:
    """The copy that moves nbytes (half read, half written) in the same run: a memory-bound kernel's floor."""
    return median_ms(copy_work(nbytes)[0])


def step_inputs(M: int, H: int, N: int) -> tuple:
    """x, gamma, beta, w, b, dy in bf16, as the spec draws them (the same seed every run)."""
    gen = torch.Generator("cuda").manual_seed(0)

    def draw(*shape, mean=0.0, std=1.0):
        return (mean + std * torch.randn(*shape, generator=gen, device="cuda")).to(torch.bfloat16)
    return draw(M, H), draw(H, mean=1.0, std=0.5), draw(H, std=0.5), draw(N, H, std=0.1), draw(N, std=0.5), draw(M, N)


def rel(a, b) -> float:
    return float((a.float() - b.detach().float()).norm() / b.detach().float().norm())


def main():
    # on a side stream, as the benchmark times
    with torch.cuda.stream(torch.cuda.Stream()):
        sizes()


def sizes():
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    t0 = time.time()
    records = []
    for size in SIZES:
        M, H, N = size["M"], size["H"], size["N"]
        bf = dict(device="cuda", dtype=torch.bfloat16)
        x, gamma, beta, w, b, dy = step_inputs(M, H, N)
        y, dx, z, dz = torch.empty(M, N, **bf), torch.empty(M, H, **bf), torch.empty(M, H, **bf), torch.empty(M, H, **bf)
        f32 = dict(device="cuda", dtype=torch.float32)
        # the gradients in the case's dtype, as the checker gives them (a 128 x 256 fp32 tile's store
        # would need more shared memory than an H100 has)
        dgamma, dbeta, dw, db = torch.empty(H, **bf), torch.empty(H, **bf), torch.empty(N, H, **bf), torch.empty(N, **bf)
        rows = dict(ROWS=1, BLOCK_H=min(1024, triton.next_power_of_2(H)), BLOCK_ROW=triton.next_power_of_2(H),
                    BLOCK_R=SPEC.BIG["BLOCK_R"], BLOCK_COLS=SPEC.BIG["BLOCK_COLS"],
                    DB_ROWS_PER_PROGRAM=SPEC.BIG["DB_ROWS_PER_PROGRAM"])

        # PyTorch's step in fp32, for the check
        leaves = [t.detach().float().requires_grad_() for t in (x, gamma, beta, w, b)]
        ln = torch.nn.functional.layer_norm(leaves[0], (H,), leaves[1], leaves[2], EPS)
        y_ref = torch.nn.functional.linear(ln, leaves[3], leaves[4])
        grads = torch.autograd.grad(y_ref, leaves, dy.float())
        row = {"size": f"M={M}, H={H}, N={N}", "tflop": 3 * 2 * M * N * H / 1e12, "configs": []}

        # the same-run baseline: cuBLAS's products (torch.compile's step is the benchmark's column,
        # timed there as the benchmark times it)
        cub = {"forward": lambda: x @ w.T, "dz": lambda: dy @ w, "dw": lambda: dy.T @ x}
        row["cuBLAS ms"] = {name: median_ms(fn) for name, fn in cub.items()}
        row["cuBLAS three products ms"] = median_ms(SPEC.cublas_products(x, w, dy))
        print(row["size"], "cuBLAS", row["cuBLAS ms"],
              round(time.time() - t0), flush=True)

        wg = (w.float() * gamma.float()).to(torch.bfloat16)
        wg_sum, bias = wg.float().sum(1), w.float() @ beta.float() + b.float()
        mean = x.float().mean(1)
        rstd = (x.float().var(1, unbiased=False) + EPS).rsqrt()
        for BM, BN, BK, G, warps, stages in CONFIGS:
            cfg = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G, NUM_WARPS=warps, NUM_STAGES=stages)
            entry = {"config": cfg}
            gemm = dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=G, num_warps=warps, num_stages=stages)

            def step():
                SPEC.step(SOL, x, gamma, beta, w, b, dy, y, dx, dgamma, dbeta, dw, db, M, N, H, **cfg, **rows)
            try:
                with timing():
                    step()
                torch.cuda.synchronize()
                entry["errors"] = {name: rel(got, want) for name, got, want in
                                   (("y", y, y_ref), ("dx", dx, grads[0]), ("dgamma", dgamma, grads[1]),
                                    ("dbeta", dbeta, grads[2]), ("dw", dw, grads[3]), ("db", db, grads[4]))}
                with timing():
                    entry["step ms"] = median_ms(step)
                tiles = lambda a, c: SPEC.product_programs(x, triton.cdiv(a, BM) * triton.cdiv(c, BN), None)  # noqa: E731
                alone = {
                    "forward": lambda: SOL.ln_epilogue_linear_kernel[(tiles(M, N),)](
                        blocks_of(x, BM, BK), blocks_of(wg, BN, BK), mean, rstd, wg_sum, bias, y, M, N, H, **gemm),
                    "dz": lambda: SOL.linear_dz_kernel[(tiles(M, H),)](
                        blocks_of(dy, BM, BK), blocks_of(w, BK, BN), dz, M, N, H, **gemm),
                    "dw": lambda: SOL.linear_dw_kernel[(tiles(N, H),)](
                        blocks_of(dy, BK, BM), blocks_of(z, BK, BN), dw, M, N, H, **gemm)}
                entry["products ms"] = {name: median_ms(fn) for name, fn in alone.items()}
            except Exception as error:  # a configuration that does not fit (shared memory) is a finding
                entry["error"] = f"{type(error).__name__}: {str(error)[:200]}"
            row["configs"].append(entry)
            print(row["size"], cfg, {k: v for k, v in entry.items() if k != "config"}, round(time.time() - t0),
                  flush=True)

        # the memory-bound kernels alone (the reference's launches), each beside the copy of its bytes
        es = 2
        p = SPEC.dx_programs(x, M, rows["BLOCK_ROW"], None)
        parts = torch.empty((p, H), **f32), torch.empty((p, H), **f32)
        splits = triton.cdiv(M, rows["DB_ROWS_PER_PROGRAM"])
        db_part = torch.empty((splits, N), **f32)
        BC, BR = rows["BLOCK_COLS"], rows["BLOCK_R"]
        memory = {
            "fold_weight_kernel (W read, wg written)": (
                lambda: SOL.fold_weight_kernel[(N,)](w, gamma, beta, b, wg, wg_sum, bias, N, H, BLOCK_H=rows["BLOCK_H"]),
                2 * N * H * es),
            "ln_stats_kernel (x read)": (
                lambda: SOL.ln_stats_kernel[(M,)](x, mean, rstd, M, H, EPS, ROWS=1, BLOCK_H=rows["BLOCK_ROW"],
                                                  num_warps=SPEC.row_warps(rows["BLOCK_ROW"])),
                M * H * es),
            "ln_dx_kernel (x, dz read; dx, z written)": (
                lambda: SOL.ln_dx_kernel[(p,)](x, mean, rstd, gamma, beta, dz, dx, z, *parts, M, H, ROWS=1,
                                               BLOCK_H=rows["BLOCK_ROW"], num_warps=SPEC.dx_warps(rows["BLOCK_ROW"])),
                4 * M * H * es),
            "fixed_order_sum_kernel, db's slabs (dy read)": (
                lambda: SOL.fixed_order_sum_kernel[(triton.cdiv(N, BC), splits)](
                    dy, db_part, M, N, rows["DB_ROWS_PER_PROGRAM"], BLOCK_R=BR, BLOCK_COLS=BC),
                M * N * es),
        }
        row["memory-bound"] = {}
        for name, (fn, nbytes) in memory.items():
            row["memory-bound"][name] = {"ms": median_ms(fn), "bytes": nbytes, "copy ms": copy_ms(nbytes)}
            print(row["size"], name, row["memory-bound"][name], flush=True)
        records.append(row)
        torch.cuda.empty_cache()
    with open(f"{OUT}/products.json", "w") as f:
        json.dump(run_stamp(rows=records), f, indent=1)


if __name__ == "__main__":
    main()
