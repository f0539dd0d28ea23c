"""Puzzle 28 with the logits recomputed instead of stored: the design that keeps scratch small
however large V is, timed beside the reference (chunked, logits stored), torch.compile's step and
cuBLAS's four products, in one run on a GPU.

    cd book/experiments/linear_ce && ROOT=../../.. OUT=. python recompute.py      # GPU: recompute.json
    cd book/experiments/linear_ce && ROOT=../../.. TRITON_INTERPRET=1 python recompute.py --cpu-smoke

The design, for each chunk of C rows (C = N: one chunk):
  pass A, the forward: the logits x_c wᵀ tile by tile, never stored; each tile's epilogue keeps, per
      row, the tile's max and sum of exp (and the target's logit where the tile holds it); a row
      kernel merges a row's tiles into its lse and its loss share;
  pass B, the backward, VC vocabulary columns at a time: the logits again, and in the same epilogue
      the gradient g = dloss / n · (exp(z − lse) − one_hot) in x's dtype ([C, VC]: the only [., V]
      scratch); then dW[v0 : v0 + VC] (+)= gᵀ x_c (stored by the first row chunk, added by the
      others) and dx_c (+)= g w[v0 : v0 + VC] in an fp32 [C, H] accumulator.
Scratch: C·VC in x's dtype, C·H fp32 (dx's accumulator), C·cdiv(V, TILE_N)·8 B (pass A's partials).
Products: four (the logits twice), against the reference's three."""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

ROOT = os.environ.get("ROOT", ".")
OUT = os.environ.get("OUT", ".")
CPU = "--cpu-smoke" in sys.argv
sys.path.insert(0, ROOT)
from checker.experiments import run_stamp, solution  # noqa: E402
from checker.puzzle import timing  # noqa: E402
from checker.specs import p28_linear_cross_entropy as SPEC  # noqa: E402
from checker.specs.families.cross_entropy import IGNORE  # noqa: E402
from checker.specs.families.tiles import blocks_of  # noqa: E402

SOL = solution("p28")


@triton.jit
def logits_tile(x_desc, w_desc, C, V, H, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                GROUP_M: tl.constexpr):
    """This program's [BLOCK_M, BLOCK_N] tile of x wᵀ (x: C rows, w: V rows) in fp32, in the grouped
    tile order of puzzle 26, and the tile's (row tile, column tile)."""
    tile_m, tile_n = SOL.grouped_tile(tl.program_id(0), tl.cdiv(C, BLOCK_M), tl.cdiv(V, BLOCK_N), GROUP_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, H, BLOCK_K):
        acc = tl.dot(x_desc.load([tile_m * BLOCK_M, start]), w_desc.load([tile_n * BLOCK_N, start]).T, acc)
    return acc, tile_m, tile_n


@triton.jit
def lse_partials_kernel(x_desc, w_desc, target_ptr, tile_max_ptr, tile_sum_ptr, z_target_ptr, C, V, H,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """Pass A: a [BLOCK_M, BLOCK_N] tile of x_c wᵀ, kept in registers; per row, the tile's max and
    sum of exp(z − max) into [C, TILES] partials, and z[target] into z_target where this tile holds
    column target (one tile does: one writer per row). Grid: (cdiv(C, BLOCK_M) * cdiv(V, BLOCK_N),)."""
    tiles_n = tl.cdiv(V, BLOCK_N)
    acc, tile_m, tile_n = logits_tile(x_desc, w_desc, C, V, H, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < C
    z = tl.where((cols < V)[None, :], acc, -float("inf"))  # columns past V are no vocabulary entry
    m = tl.max(z, axis=1)
    tl.store(tile_max_ptr + rows * tiles_n + tile_n, m, mask=row_ok)
    tl.store(tile_sum_ptr + rows * tiles_n + tile_n, tl.sum(tl.exp(z - m[:, None]), axis=1), mask=row_ok)
    target = tl.load(target_ptr + rows, mask=row_ok, other=-1)
    hit = cols[None, :] == target[:, None]
    held = tl.max(hit.to(tl.int32), axis=1) > 0
    tl.store(z_target_ptr + rows, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok & held)


@triton.jit
def lse_rows_kernel(tile_max_ptr, tile_sum_ptr, z_target_ptr, target_ptr, n_valid_ptr, lse_ptr, loss_rows_ptr,
                    TILES, ignore_index, BLOCK_T: tl.constexpr):
    """Row r: lse from its TILES partials, and its loss share (lse − z[target]) / n. Grid: (C,)."""
    row = tl.program_id(0)
    t = tl.arange(0, BLOCK_T)
    m_t = tl.load(tile_max_ptr + row * TILES + t, mask=t < TILES, other=-float("inf"))
    s_t = tl.load(tile_sum_ptr + row * TILES + t, mask=t < TILES, other=0.0)
    m_row = tl.max(m_t, axis=0)
    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))
    tl.store(lse_ptr + row, lse)
    valid = tl.load(target_ptr + row) != ignore_index
    z_target = tl.load(z_target_ptr + row, mask=valid, other=0.0)  # never written on an ignored row
    tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / tl.load(n_valid_ptr), 0.0))


@triton.jit
def grad_tile_kernel(x_desc, w_desc, target_ptr, lse_ptr, dloss_ptr, n_valid_ptr, g_ptr, C, VC, v0, H, G_STRIDE,
                     ignore_index, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr):
    """Pass B: a tile of the logits recomputed (w_desc holds the VC rows of w from v0), and in its
    epilogue the gradient dloss / n · (exp(z − lse) − one_hot) into g ([C, G_STRIDE], columns < VC),
    in g's dtype. Grid: (cdiv(C, BLOCK_M) * cdiv(VC, BLOCK_N),)."""
    acc, tile_m, tile_n = logits_tile(x_desc, w_desc, C, VC, H, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < C
    lse = tl.load(lse_ptr + rows, mask=row_ok, other=0.0)
    target = tl.load(target_ptr + rows, mask=row_ok, other=ignore_index)
    scale = tl.where(target != ignore_index, tl.load(dloss_ptr) / tl.load(n_valid_ptr), 0.0)
    p = tl.exp(acc - lse[:, None])
    # p − 1 at the target in fp32 (a confident row's p rounds to 1.0 in bf16), rounded once, at the store
    grad = tl.where((v0 + cols)[None, :] == target[:, None], p - 1.0, p) * scale[:, None]
    tl.store(g_ptr + rows[:, None].to(tl.int64) * G_STRIDE + cols[None, :], grad,
             mask=row_ok[:, None] & (cols < VC)[None, :])


def launch(x, w, target, dloss, loss, dx, dw, C, VC, TILE_M, TILE_N, TILE_K, GROUP_M, NUM_WARPS, NUM_STAGES,
           **_):
    """The whole step: loss, dx (x's dtype) and dw (fp32), C rows by VC vocabulary columns at a time."""
    N, H = x.shape
    V = w.shape[0]
    C, VC = min(C, N), min(VC, V)
    tiles = triton.cdiv(V, TILE_N)
    f32 = dict(device=x.device, dtype=torch.float32)
    n_valid, loss_rows, lse, z_target = (torch.empty(k, **f32) for k in (1, N, C, C))
    tile_max, tile_sum = (torch.empty((C, tiles), **f32) for _ in range(2))
    # g's rows padded to a multiple of 16 bytes (a descriptor's row stride must be)
    g_stride = triton.cdiv(VC * x.element_size(), 16) * 16 // x.element_size()
    g = torch.empty((C, g_stride), device=x.device, dtype=x.dtype)
    dx_acc = torch.empty((C, H), **f32)
    gemm = dict(BLOCK_M=TILE_M, BLOCK_N=TILE_N, BLOCK_K=TILE_K, GROUP_M=GROUP_M, num_warps=NUM_WARPS,
                num_stages=NUM_STAGES)
    SOL.chunk_count_kernel[(1,)](target, n_valid, N, IGNORE, BLOCK_M=triton.next_power_of_2(N))
    for r0 in range(0, N, C):
        rows = min(C, N - r0)
        x_c, target_c = x[r0:r0 + rows], target[r0:r0 + rows]
        x_rows = blocks_of(x_c, TILE_M, TILE_K)
        lse_partials_kernel[(triton.cdiv(rows, TILE_M) * tiles,)](
            x_rows, blocks_of(w, TILE_N, TILE_K), target_c, tile_max, tile_sum, z_target, rows, V, H, **gemm)
        lse_rows_kernel[(rows,)](tile_max, tile_sum, z_target, target_c, n_valid, lse, loss_rows[r0:r0 + rows],
                                 tiles, IGNORE, BLOCK_T=triton.next_power_of_2(tiles))
        for v0 in range(0, V, VC):
            cols = min(VC, V - v0)
            w_v = w[v0:v0 + cols]
            g_v = g[:rows, :cols]
            grid = (triton.cdiv(rows, TILE_M) * triton.cdiv(cols, TILE_N),)
            grad_tile_kernel[grid](x_rows, blocks_of(w_v, TILE_N, TILE_K), target_c, lse, dloss, n_valid, g,
                                       rows, cols, v0, H, g_stride, IGNORE, **gemm)
            # dW's rows v0 .. v0 + cols: stored by the first row chunk, added by the later ones
            SOL.chunk_matmul_kernel[(triton.cdiv(cols, TILE_M) * triton.cdiv(H, TILE_N),)](
                blocks_of(g_v, TILE_K, TILE_M), blocks_of(x_c, TILE_K, TILE_N), dw[v0:v0 + cols], cols, H, rows,
                A_T=True, ACCUMULATE=r0 > 0, **gemm)
            SOL.chunk_matmul_kernel[(triton.cdiv(rows, TILE_M) * triton.cdiv(H, TILE_N),)](
                blocks_of(g_v, TILE_M, TILE_K), blocks_of(w_v, TILE_K, TILE_N), dx_acc, rows, H, cols,
                A_T=False, ACCUMULATE=v0 > 0, **gemm)
        dx[r0:r0 + rows].copy_(dx_acc[:rows])
    loss.copy_(loss_rows.sum().reshape(1))


def scratch_mib(N, H, V, C, VC, TILE_N, esize=2, **_) -> float:
    C, VC = min(C, N), min(VC, V)
    return (C * VC * esize + C * H * 4 + 2 * C * triton.cdiv(V, TILE_N) * 4 + (N + 2 * C + 1) * 4) / 2**20


def check(x, w, target, dloss, tiles: dict, C: int, VC: int) -> dict:
    """Relative errors of loss, dx and dw against PyTorch in fp32."""
    N, H = x.shape
    V = w.shape[0]
    loss = torch.empty(1, device=x.device)
    dx, dw = torch.full_like(x, float("nan")), torch.full((V, H), float("nan"), device=x.device)
    launch(x, w, target, dloss, loss, dx, dw, C, VC, **tiles)
    leaves = [t.detach().float().requires_grad_() for t in (x, w)]
    ref = F.cross_entropy(leaves[0] @ leaves[1].T, target.long(), ignore_index=IGNORE) * float(dloss)
    ref.backward()

    def rel(a, b):
        return float((a.float() - b).norm() / b.norm())
    return {"loss": abs(float(loss) * float(dloss) - float(ref.detach())) / abs(float(ref)), "dx": rel(dx, leaves[0].grad),
            "dw": rel(dw, leaves[1].grad)}


def cpu_smoke():
    """The interpreter, tiny sizes: several chunkings (the last chunks short), ignored rows."""
    tiles = dict(TILE_M=16, TILE_N=32, TILE_K=16, GROUP_M=2, NUM_WARPS=4, NUM_STAGES=1)
    gen = torch.Generator().manual_seed(0)
    N, H, V = 40, 48, 150
    x = torch.randn(N, H, generator=gen)
    w = 0.3 * torch.randn(V, H, generator=gen)
    target = torch.randint(0, V, (N,), generator=gen, dtype=torch.int32)
    target[::7] = IGNORE
    dloss = torch.tensor([1.5])
    for C, VC in ((40, 150), (16, 64), (32, 40)):
        errs = check(x, w, target, dloss, tiles, C, VC)
        print(C, VC, errs, flush=True)
        assert all(e < 1e-5 for e in errs.values()), errs


def median_ms(fn) -> float:
    import triton.testing
    return float(triton.testing.do_bench(fn, warmup=3, rep=400, return_mode="median"))


def gpu():
    from chunks import baselines, peak_mib  # the same scratch measure and baselines as chunks.py
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    records = []
    t0 = time.time()
    torch.manual_seed(0)
    for size, designs in ((dict(N=8192, H=4096, V=128256), ((4096, 4096), (4096, 2048), (2048, 8192), (2048, 4096),
                                                             (8192, 2048))),
                          (dict(N=8192, H=2048, V=32000), ((8192, 2048), (8192, 4096), (4096, 8192), (8192, 1024)))):
        N, H, V = size["N"], size["H"], size["V"]
        x = torch.randn(N, H, device="cuda", dtype=torch.bfloat16)
        w = (0.02 * torch.randn(V, H, device="cuda")).to(torch.bfloat16)
        target = torch.randint(0, V, (N,), device="cuda", dtype=torch.int32)
        target[::97] = IGNORE
        dloss = torch.ones(1, device="cuda")
        loss = torch.empty(1, device="cuda")
        dx = torch.empty_like(x)
        dw = torch.empty(V, H, device="cuda", dtype=torch.float32)
        row = {"size": f"N={N}, H={H}, V={V}"}
        for C, VC in designs:
            errs = check(x, w, target, dloss, SPEC.BIG, C, VC)
            run = lambda C=C, VC=VC: launch(x, w, target, dloss, loss, dx, dw, C, VC, **SPEC.BIG)  # noqa: E731
            row[f"recompute C={C} VC={VC}"] = {"ms": round(median_ms(run), 3), "scratch_mib": round(peak_mib(run), 1),
                                               "formula_mib": round(scratch_mib(N, H, V, C, VC, **SPEC.BIG), 1),
                                               "errors": errs}
            print(row["size"], C, VC, row[f"recompute C={C} VC={VC}"], round(time.time() - t0), flush=True)
        for chunk in (512, 2048):
            def ours(chunk=chunk):
                with timing():  # scratch unpoisoned, as the benchmark times it (chunks.py's run poisoned it)
                    SPEC.launch(SOL, x, w, target, dloss, loss, dx, dw, N, H, V, chunk, triton.next_power_of_2(N),
                                **SPEC.BIG)
            row[f"reference chunk {chunk}"] = {"ms": round(median_ms(ours), 3), "scratch_mib": round(peak_mib(ours), 1)}
            print(row["size"], chunk, row[f"reference chunk {chunk}"], flush=True)
        row.update(baselines(x, w, target))
        print(row["size"], row["torch.compile"], row["cuBLAS, 4 products"], round(time.time() - t0), flush=True)
        records.append(row)
        del x, w, dx, dw
        torch.cuda.empty_cache()
    with open(f"{OUT}/recompute.json", "w") as f:
        json.dump(run_stamp(rows=records), f, indent=1)


if __name__ == "__main__":
    cpu_smoke() if CPU else gpu()
