"""Puzzle 28 with the logits recomputed instead of stored: the design that keeps scratch small
however large V is, timed beside the reference (chunked, logits stored), torch.compile's step and
cuBLAS's four products, in one run on a GPU.

    cd research/linear_ce && ROOT=../.. OUT=. python recompute.py      # GPU: recompute.json
    cd research/linear_ce && ROOT=../.. OUT=. python recompute.py --filtered   # filtered.json
    cd research/linear_ce && ROOT=../.. OUT=. python recompute.py --lookup     # lookup.json
    cd research/linear_ce && ROOT=../.. TRITON_INTERPRET=1 python recompute.py --cpu-smoke

The design, for each chunk of C rows (C = N: one chunk):
  pass A, the forward: the logits x_c wᵀ tile by tile, never stored; each tile's epilogue keeps, per
      row, the tile's max and sum of exp (and the target's logit where the tile holds it); a row
      kernel merges a row's tiles into its lse and its loss share;
  pass B, the backward, VC vocabulary columns at a time: the logits again, and in the same epilogue
      the gradient g = dloss / n · (exp(z − lse) − one_hot) in x's dtype ([C, VC]: the only [., V]
      scratch); then dW[v0 : v0 + VC] (+)= gᵀ x_c (stored by the first row chunk, added by the
      others) and dx_c (+)= g w[v0 : v0 + VC] in an fp32 [C, H] accumulator.
Scratch: C·VC in x's dtype, C·H fp32 (dx's accumulator), C·cdiv(V, TILE_N)·8 B (pass A's partials).
Products: four (the logits twice), against the reference's three.

Filtered (Cut Cross-Entropy's gradient filter): pass B keeps a [TILE_M, TILE_N] tile of g only where
some |exp(z − lse) − one_hot| reaches FILTER_EPS; dW's and dx's products then read the kept tiles
alone, in a fixed order (compact_kernel lists them). What it drops is measured, not assumed: the
errors against PyTorch as fractions of puzzle 28's tolerances, on the benchmark's inputs and on
peaked rows (peaked_inputs)."""
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
from checker.puzzle import timing  # noqa: E402
from checker.specs import p28_linear_cross_entropy as SPEC  # noqa: E402
from checker.specs.families.cross_entropy import IGNORE  # noqa: E402
from checker.specs.families.tiles import blocks_of  # noqa: E402
from research.runs import run_stamp, solution  # noqa: E402
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "book"))  # p28_recompute.py
from p28_recompute import FAMILIES, FILTER_EPS, peaked_plan  # noqa: E402,F401  (kept_profile.py: FILTER_EPS)

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
def grad_tile_kernel(x_desc, w_desc, target_ptr, lse_ptr, dloss_ptr, n_valid_ptr, g_ptr, keep_ptr, C, VC, v0, H,
                     G_STRIDE, ignore_index, filter_eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, FILTER: tl.constexpr):
    """Pass B: a tile of the logits recomputed (w_desc holds the VC rows of w from v0), and in its
    epilogue the gradient dloss / n · (exp(z − lse) − one_hot) into g ([C, G_STRIDE], columns < VC),
    in g's dtype. With FILTER, a tile whose every |exp(z − lse) − one_hot| is below filter_eps (or
    whose rows are all ignored) is not stored: keep[tile_m, tile_n] says which tiles were, and the
    products read only those. Grid: (cdiv(C, BLOCK_M) * cdiv(VC, BLOCK_N),)."""
    acc, tile_m, tile_n = logits_tile(x_desc, w_desc, C, VC, H, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < C
    lse = tl.load(lse_ptr + rows, mask=row_ok, other=0.0)
    target = tl.load(target_ptr + rows, mask=row_ok, other=ignore_index)
    counted = target != ignore_index
    scale = tl.where(counted, tl.load(dloss_ptr) / tl.load(n_valid_ptr), 0.0)
    p = tl.exp(acc - lse[:, None])
    # p − 1 at the target in fp32 (a confident row's p rounds to 1.0 in bf16), rounded once, at the store
    d = tl.where((v0 + cols)[None, :] == target[:, None], p - 1.0, p)
    inside = row_ok[:, None] & (cols < VC)[None, :]
    if FILTER:
        # the softmax's share before dloss / n, as Cut Cross-Entropy filters it; an ignored row's is 0
        largest = tl.max(tl.max(tl.where(inside & counted[:, None], tl.abs(d), 0.0), axis=1), axis=0)
        kept = largest >= filter_eps
        tl.store(keep_ptr + tile_m * tl.cdiv(VC, BLOCK_N) + tile_n, kept.to(tl.int32))
    else:
        kept = True
    if kept:
        tl.store(g_ptr + rows[:, None].to(tl.int64) * G_STRIDE + cols[None, :], d * scale[:, None], mask=inside)


@triton.jit
def compact_kernel(keep_ptr, R, CC, row_list_ptr, row_count_ptr, col_list_ptr, col_count_ptr,
                   BLOCK: tl.constexpr):
    """keep is [R, CC]. Program r < R lists, in order, the columns of keep's row r that are kept
    (row_list[r, :row_count[r]]); program R + c lists the kept rows of column c (col_list[c, ...]).
    Ordered lists: the products then add their kept blocks in a fixed order (the same bits every
    run). Grid: (R + CC,)."""
    pid = tl.program_id(0)
    i = tl.arange(0, BLOCK)
    if pid < R:
        k = tl.load(keep_ptr + pid * CC + i, mask=i < CC, other=0)
        list_ptr, count_ptr, line = row_list_ptr, row_count_ptr, pid
    else:
        k = tl.load(keep_ptr + i * CC + (pid - R), mask=i < R, other=0)
        list_ptr, count_ptr, line = col_list_ptr, col_count_ptr, pid - R
    slot = tl.cumsum(k, axis=0) - k
    tl.store(list_ptr + line * BLOCK + slot, i, mask=k > 0)
    tl.store(count_ptr + line, tl.sum(k, axis=0))


@triton.jit
def product_step(a_desc, b_desc, acc, start, tile_m, tile_n, A_T: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    """acc plus a's block at K offset `start` times b's: one step of the solution's chunk_matmul_kernel
    (with A_T, a's block comes from the stored transpose and is transposed in registers)."""
    if A_T:
        a = a_desc.load([start, tile_m * BLOCK_M]).T
    else:
        a = a_desc.load([tile_m * BLOCK_M, start])
    return tl.dot(a, b_desc.load([start, tile_n * BLOCK_N]), acc)


@triton.jit
def kept_matmul_kernel(a_desc, b_desc, c_ptr, M, N, K, list_ptr, count_ptr, LIST_STRIDE: tl.constexpr,
                       A_T: tl.constexpr, ACCUMULATE: tl.constexpr, FLAG_M: tl.constexpr, FLAG_K: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                       LIST_IN_REGISTERS: tl.constexpr = True):
    """The solution's chunk_matmul_kernel over the kept blocks of a alone: a's flags are FLAG_M × FLAG_K
    blocks (of a, so transposed from g's tiles for dW), and the blocks of K kept for this program's
    row of flags are list[f, :count[f]] (f = its rows' flag row; LIST_STRIDE, a power of two, is the
    longest list). A tile with none kept adds nothing (and stores zeros when it does not accumulate).
    LIST_IN_REGISTERS: the program's list is loaded once, before the loop, and each step picks its
    entry in registers; without it each step loads its entry from memory, and the pipeliner then
    spends a stage on that load, so the copies run one step ahead of the products instead of two
    (p28's page profiles both)."""
    tile_m, tile_n = SOL.grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    flag_row = tile_m * BLOCK_M // FLAG_M
    n_kept = tl.load(count_ptr + flag_row)
    STEPS: tl.constexpr = FLAG_K // BLOCK_K
    if LIST_IN_REGISTERS:
        slots = tl.arange(0, LIST_STRIDE)
        kept = tl.load(list_ptr + flag_row * LIST_STRIDE + slots, mask=slots < n_kept, other=0)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for i in range(0, n_kept * STEPS):
        if LIST_IN_REGISTERS:
            block = tl.sum(tl.where(slots == i // STEPS, kept, 0))
        else:
            block = tl.load(list_ptr + flag_row * LIST_STRIDE + i // STEPS)
        acc = product_step(a_desc, b_desc, acc, block * FLAG_K + (i % STEPS) * BLOCK_K, tile_m, tile_n, A_T,
                           BLOCK_M, BLOCK_N)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if ACCUMULATE:
        mask = mask & ((rows * 0 + n_kept) > 0)[:, None]  # nothing kept: nothing to add, nothing read or written
        acc += tl.load(c_ptrs, mask=mask)
    tl.store(c_ptrs, acc, mask=mask)


def launch(x, w, target, dloss, loss, dx, dw, C, VC, TILE_M, TILE_N, TILE_K, GROUP_M, NUM_WARPS, NUM_STAGES,
           filter_eps: "float | None" = None, kept_tiles: "list | None" = None, list_in_registers: bool = True,
           **_):
    """The whole step: loss, dx (x's dtype) and dw (fp32), C rows by VC vocabulary columns at a time.
    filter_eps: skip the gradient's tiles whose softmax share is below it everywhere (None: keep all,
    the products of the solution); kept_tiles, when given, gets (kept, all) per slice (synchronizes);
    list_in_registers: how the filtered products find their kept blocks (kept_matmul_kernel)."""
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
    filtered = filter_eps is not None
    # which of g's [TILE_M, TILE_N] tiles were kept, and per row (column) of tiles the kept columns (rows)
    i32 = dict(device=x.device, dtype=torch.int32)
    flags = (triton.cdiv(C, TILE_M), triton.cdiv(VC, TILE_N))
    longest = triton.next_power_of_2(max(flags))
    keep = torch.empty(flags[0] * flags[1] if filtered else 1, **i32)  # unfiltered: never written
    if filtered:
        row_list, row_count = torch.empty((flags[0], longest), **i32), torch.empty(flags[0], **i32)
        col_list, col_count = torch.empty((flags[1], longest), **i32), torch.empty(flags[1], **i32)
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
            tiles_m, tiles_n = triton.cdiv(rows, TILE_M), triton.cdiv(cols, TILE_N)
            grad_tile_kernel[(tiles_m * tiles_n,)](
                x_rows, blocks_of(w_v, TILE_N, TILE_K), target_c, lse, dloss, n_valid, g, keep, rows, cols, v0, H,
                g_stride, IGNORE, filter_eps or 0.0, FILTER=filtered, **gemm)
            dw_grid = (triton.cdiv(cols, TILE_M) * triton.cdiv(H, TILE_N),)
            dx_grid = (tiles_m * triton.cdiv(H, TILE_N),)
            dw_operands = (blocks_of(g_v, TILE_K, TILE_M), blocks_of(x_c, TILE_K, TILE_N), dw[v0:v0 + cols], cols, H,
                           rows)
            dx_operands = (blocks_of(g_v, TILE_M, TILE_K), blocks_of(w_v, TILE_K, TILE_N), dx_acc, rows, H, cols)
            # dW's rows v0 .. v0 + cols: stored by the first row chunk, added by the later ones
            if not filtered:
                SOL.chunk_matmul_kernel[dw_grid](*dw_operands, A_T=True, ACCUMULATE=r0 > 0, **gemm)
                SOL.chunk_matmul_kernel[dx_grid](*dx_operands, A_T=False, ACCUMULATE=v0 > 0, **gemm)
                continue
            compact_kernel[(tiles_m + tiles_n,)](keep, tiles_m, tiles_n, row_list, row_count, col_list, col_count,
                                                 BLOCK=longest)
            if kept_tiles is not None:
                kept_tiles.append((int(keep[:tiles_m * tiles_n].sum()), tiles_m * tiles_n))
            # dW reads gᵀ: its rows are g's columns (a flag's TILE_N), its K g's rows (a flag's TILE_M)
            kept_matmul_kernel[dw_grid](*dw_operands, col_list, col_count, longest, A_T=True, ACCUMULATE=r0 > 0,
                                        FLAG_M=TILE_N, FLAG_K=TILE_M, LIST_IN_REGISTERS=list_in_registers, **gemm)
            kept_matmul_kernel[dx_grid](*dx_operands, row_list, row_count, longest, A_T=False, ACCUMULATE=v0 > 0,
                                        FLAG_M=TILE_M, FLAG_K=TILE_N, LIST_IN_REGISTERS=list_in_registers, **gemm)
        dx[r0:r0 + rows].copy_(dx_acc[:rows])
    loss.copy_(loss_rows.sum().reshape(1))


def scratch_mib(N, H, V, C, VC, TILE_N, esize=2, **_) -> float:
    C, VC = min(C, N), min(VC, V)
    return (C * VC * esize + C * H * 4 + 2 * C * triton.cdiv(V, TILE_N) * 4 + (N + 2 * C + 1) * 4) / 2**20


def tolerance_ratios(dx, dw, ref_dx, ref_dw) -> dict:
    """The largest error of dx and dw as a fraction of what puzzle 28's check allows a bf16 step
    (its tolerances, the absolute part at the reference's RMS): below 1 passes."""
    from checker.evidence.compare import absolute_tolerance
    from checker.registry import get
    puzzle = get("p28")
    outputs = {o.name: o for part in puzzle.parts for o in part.outputs}
    ratios = {}
    for name, got, ref in (("dx", dx, ref_dx), ("dw", dw, ref_dw)):
        tol = puzzle.tolerance("bfloat16", outputs[name])
        absolute = absolute_tolerance(tol, float(ref.double().pow(2).mean().sqrt()))
        worst = 0.0
        for lo in range(0, ref.shape[0], 8192):  # a few rows at a time: dW is 2 GB in fp32
            r, g = ref[lo:lo + 8192], got[lo:lo + 8192].float()
            worst = max(worst, float(((g - r).abs() / (absolute + tol.rtol * r.abs())).max()))
        ratios[name] = worst
    return ratios


def check(x, w, target, dloss, tiles: dict, C: int, VC: int, filter_eps: "float | None" = None,
          to_tolerance: bool = False) -> dict:
    """Relative errors (norms) of loss, dx and dw against PyTorch in fp32; with filter_eps, the share
    of the gradient's tiles kept; with to_tolerance, the errors as fractions of the check's tolerance."""
    N, H = x.shape
    V = w.shape[0]
    loss = torch.empty(1, device=x.device)
    dx, dw = torch.full_like(x, float("nan")), torch.full((V, H), float("nan"), device=x.device)
    kept = []
    launch(x, w, target, dloss, loss, dx, dw, C, VC, filter_eps=filter_eps, kept_tiles=kept, **tiles)
    leaves = [t.detach().float().requires_grad_() for t in (x, w)]
    ref = F.cross_entropy(leaves[0] @ leaves[1].T, target.long(), ignore_index=IGNORE) * float(dloss)
    ref.backward()

    def rel(a, b):
        return float((a.float() - b).norm() / b.norm())
    ref = float(ref.detach())
    found = {"loss": abs(float(loss) * float(dloss) - ref) / abs(ref),
             "dx": rel(dx, leaves[0].grad), "dw": rel(dw, leaves[1].grad), "mean_loss": ref / float(dloss)}
    if filter_eps is not None:
        found["kept"] = sum(k for k, _ in kept) / sum(n for _, n in kept)
    if to_tolerance:
        found["of_tolerance"] = tolerance_ratios(dx, dw, leaves[0].grad, leaves[1].grad)
    return found


def filtered_reference(x, w, target, dloss, C: int, VC: int, TILE_M: int, TILE_N: int, eps: float, **_):
    """dx and dW in float64 with the gradient's tiles that a filter of eps skips set to 0 (the tiles
    of each C-row chunk and VC-column slice, as launch walks them), and how many tiles it keeps."""
    xd, wd = x.double(), w.double()
    counted = target != IGNORE
    d = torch.softmax(xd @ wd.T, dim=1)
    d[counted, target[counted].long()] -= 1.0
    d[~counted] = 0.0
    g = d * float(dloss) / int(counted.sum())
    kept = 0
    for r0 in range(0, x.shape[0], C):
        for v0 in range(0, w.shape[0], VC):
            for tr in range(r0, min(r0 + C, x.shape[0]), TILE_M):
                for tv in range(v0, min(v0 + VC, w.shape[0]), TILE_N):
                    tile = (slice(tr, min(tr + TILE_M, r0 + C)), slice(tv, min(tv + TILE_N, v0 + VC)))
                    if d[tile].abs().max() < eps:
                        g[tile] = 0.0
                    else:
                        kept += 1
    return g @ wd, g.T @ xd, kept


def cpu_smoke():
    """The interpreter, tiny sizes: several chunkings (the last chunks short), ignored rows; then the
    filter, at a threshold that skips some tiles and keeps others, against the step that zeroes the
    same tiles of the gradient."""
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
        assert all(errs[k] < 1e-5 for k in ("loss", "dx", "dw")), errs
    # targets in the first 48 columns: the tiles right of them hold softmax shares alone, some of
    # them below 0.2 everywhere (skipped), the others not (kept)
    eps, target = 0.2, torch.where(target == IGNORE, target, target % 48)
    for C, VC in ((40, 150), (16, 64)):
        loss, dx, dw, kept = torch.empty(1), torch.full_like(x, float("nan")), torch.full((V, H), float("nan")), []
        launch(x, w, target, dloss, loss, dx, dw, C, VC, filter_eps=eps, kept_tiles=kept, **tiles)
        ref_dx, ref_dw, ref_kept = filtered_reference(x, w, target, dloss, C, VC, eps=eps, **tiles)
        n_kept, n_all = sum(k for k, _ in kept), sum(n for _, n in kept)
        errs = {"dx": float((dx - ref_dx).norm() / ref_dx.norm()), "dw": float((dw - ref_dw).norm() / ref_dw.norm())}
        print(C, VC, f"filtered at {eps}: {n_kept} of {n_all} tiles kept", errs, flush=True)
        assert n_kept == ref_kept and 0 < n_kept < n_all, (n_kept, ref_kept, n_all)
        assert all(e < 1e-5 for e in errs.values()), errs
        # the other way of finding the kept blocks: the same blocks in the same order, so the same bits
        loads_dx, loads_dw = torch.full_like(dx, float("nan")), torch.full_like(dw, float("nan"))
        launch(x, w, target, dloss, loss, loads_dx, loads_dw, C, VC, filter_eps=eps, list_in_registers=False, **tiles)
        assert torch.equal(loads_dx, dx) and torch.equal(loads_dw, dw)


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


def benchmark_inputs(N: int, H: int, V: int):
    """The benchmark's inputs: x = randn, w = 0.02·randn (logits about N(0, 0.02²·H)), uniform targets."""
    x = torch.randn(N, H, device="cuda", dtype=torch.bfloat16)
    w = (0.02 * torch.randn(V, H, device="cuda")).to(torch.bfloat16)
    return x, w, torch.randint(0, V, (N,), device="cuda", dtype=torch.int32)


def peaked_inputs(N: int, H: int, V: int, plausible: int, zipf: bool, device: str = "cuda"):
    """x, w and targets whose logits x wᵀ are peaked_plan's: w = 0.02·randn; x_r = randn / (0.02·√H)
    (the N(0, 1) bulk), moved along w[token] for each plausible token until its logit is set."""
    w = 0.02 * torch.randn(V, H, device=device)
    tokens, logits = peaked_plan(N, V, plausible, zipf, device)
    x = torch.randn(N, H, device=device) / (0.02 * H ** 0.5)
    for k in range(plausible):
        toward = w[tokens[:, k]]
        x = x + ((logits[k] - (x * toward).sum(1)) / (toward * toward).sum(1))[:, None] * toward
    return x.to(torch.bfloat16), w.to(torch.bfloat16), tokens[:, 0].to(torch.int32)


# the GPU runs' sizes, each with the recomputing design's chunking there: ((N, H, V), (C, VC))
FILTERED_SIZES = (((8192, 4096, 128256), (4096, 4096)), ((8192, 2048, 32000), (4096, 8192)))


def filtered_inputs():
    """For each size and each kind of input (FAMILIES), in turn on the GPU: (size, C, VC, inputs, x,
    w, target, dloss), every 97th row ignored. A caller that drops its x, w and target before asking
    for the next has them freed before the next kind is made."""
    torch.manual_seed(0)
    for (N, H, V), (C, VC) in FILTERED_SIZES:
        for inputs, plan in FAMILIES.items():
            x, w, target = benchmark_inputs(N, H, V) if plan is None else peaked_inputs(N, H, V, *plan)
            target[::97] = IGNORE
            yield f"N={N}, H={H}, V={V}", C, VC, inputs, x, w, target, torch.ones(1, device="cuda")
            del x, w, target
            torch.cuda.empty_cache()


def gpu_filtered():
    """The logits recomputed, with and without Cut Cross-Entropy's filter, on the benchmark's inputs
    and on peaked rows: time, scratch, the share of tiles kept, and the errors against PyTorch in
    fp32 as fractions of puzzle 28's tolerances. Writes filtered.json."""
    from chunks import baselines, peak_mib
    from checker.bench.kernel_times import kernel_times
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    records, t0 = [], time.time()

    def write():
        with open(f"{OUT}/filtered.json", "w") as f:
            json.dump(run_stamp(filter_eps=FILTER_EPS, rows=records), f, indent=1)
    for size, C, VC, inputs, x, w, target, dloss in filtered_inputs():
        loss = torch.empty(1, device="cuda")
        dx, dw = torch.empty_like(x), torch.empty(w.shape, device="cuda", dtype=torch.float32)
        for eps in (None, FILTER_EPS):
            found = check(x, w, target, dloss, SPEC.BIG, C, VC, filter_eps=eps, to_tolerance=True)
            run = lambda eps=eps: launch(x, w, target, dloss, loss, dx, dw, C, VC, filter_eps=eps,  # noqa: E731
                                         **SPEC.BIG)
            found.update(ms=round(median_ms(run), 3), scratch_mib=round(peak_mib(run), 1),
                         kernels=kernel_times(run, steps=2))
            records.append({"size": size, "inputs": inputs, "design": f"recompute C={C} VC={VC}",
                            "filter_eps": eps, "list_in_registers": eps is not None, **found})
            print({k: v for k, v in records[-1].items() if k != "kernels"}, round(time.time() - t0), flush=True)
            write()  # after every record: a run stopped early keeps what it measured
        if inputs.startswith("benchmark"):
            for name, found in baselines(x, w, target).items():
                records.append({"size": size, "inputs": inputs, "design": name, **found})
                print(records[-1], round(time.time() - t0), flush=True)
            write()
        del x, w, target, dx, dw
    write()


def gpu_lookup():
    """The filtered step with each way kept_matmul_kernel finds its blocks (a load per step, or the
    list in registers), on each kind of input at both sizes: bit for bit the same, then timed in
    turn (medians). Writes lookup.json."""
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    records = []
    for size, C, VC, inputs, x, w, target, dloss in filtered_inputs():
        loss, found = torch.empty(1, device="cuda"), {}
        for in_registers in (False, True):
            dx, dw = torch.empty_like(x), torch.empty(w.shape, device="cuda", dtype=torch.float32)
            run = lambda r=in_registers, dx=dx, dw=dw: launch(  # noqa: E731
                x, w, target, dloss, loss, dx, dw, C, VC, filter_eps=FILTER_EPS, list_in_registers=r, **SPEC.BIG)
            run()
            found[in_registers] = (dx, dw, round(median_ms(run), 3))
        same = all(torch.equal(a, b) for a, b in zip(found[False][:2], found[True][:2]))
        records.append({"size": size, "inputs": inputs, "bit_identical": same,
                        "a load per step": found[False][2], "list in registers": found[True][2]})
        print(records[-1], flush=True)
        del x, w, target, found, dx, dw
    with open(f"{OUT}/lookup.json", "w") as f:
        json.dump(run_stamp(filter_eps=FILTER_EPS, rows=records), f, indent=1)


if __name__ == "__main__":
    modes = {"--filtered": gpu_filtered, "--lookup": gpu_lookup}
    cpu_smoke() if CPU else next((run for flag, run in modes.items() if flag in sys.argv), gpu)()
