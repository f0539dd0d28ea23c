"""Puzzle 24 reference kernels: LayerNorm backward with dgamma, dbeta accumulated in G partial
buffers, each guarded by a spin lock (the scheme of Triton's LayerNorm tutorial, in our words).

Shapes (contiguous):  x, dz, dx: [M, H]   gamma: [H]   dgamma, dbeta: [H] (fp32)
    partial buffers dgamma_part, dbeta_part: [G, H] fp32, NOT zeroed (torch.empty)
    locks: [2 * G] int32 zeros: locks[g] is group g's lock, locks[G + g] its "written yet?" count

One program per row: with M programs adding into one [H] buffer, atomics on the same H addresses
queue up behind each other (contention). Splitting the rows into G groups, each adding into its
own partial row, cuts the queue G times; a lock per group makes each read-add-write of a whole
partial row indivisible, and a second kernel adds the G partial rows up.

The checker launches (G = min(GROUP_SIZE, M), so that every group has a row):
    ln_bwd_locked_kernel[(M,)](x, gamma, dz, dx, dgamma_part, dbeta_part, locks, M, H, eps,
                               G=G, BLOCK_H=BLOCK_H)                      # BLOCK_H >= H
    ln_bwd_group_reduce_kernel[(cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, G, H,
                                                       BLOCK_G=..., BLOCK_COLS=...)
"""
import triton
import triton.language as tl


@triton.jit
def ln_bwd_locked_kernel(x_ptr, gamma_ptr, dz_ptr, dx_ptr, dgamma_part_ptr, dbeta_part_ptr, locks_ptr,
                         M, H, eps, G: tl.constexpr, BLOCK_H: tl.constexpr):
    """Row `row`: dx, then its dgamma and dbeta shares added into partial row `row % G` under that
    group's lock. Grid: (M,)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_H)
    col_ok = cols < H
    x = tl.load(x_ptr + row * H + cols, mask=col_ok, other=0.0).to(tl.float32)
    dz = tl.load(dz_ptr + row * H + cols, mask=col_ok, other=0.0).to(tl.float32)
    gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / H
    diff = tl.where(col_ok, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)
    x_hat = diff * rstd
    g = dz * gamma
    dx = rstd * (g - tl.sum(g, axis=0) / H - x_hat * (tl.sum(g * x_hat, axis=0) / H))
    tl.store(dx_ptr + row * H + cols, dx, mask=col_ok)

    group = row % G
    lock = locks_ptr + group
    count = locks_ptr + G + group
    partial = group * H + cols
    # spin until this program swaps the lock from 0 (free) to 1 (taken)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    # the buffers start as garbage: the group's first program stores, the others add
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
        tl.store(dgamma_part_ptr + partial, dz * x_hat, mask=col_ok)
        tl.store(dbeta_part_ptr + partial, dz, mask=col_ok)
    else:
        dgamma = tl.load(dgamma_part_ptr + partial, mask=col_ok, other=0.0) + dz * x_hat
        dbeta = tl.load(dbeta_part_ptr + partial, mask=col_ok, other=0.0) + dz
        tl.store(dgamma_part_ptr + partial, dgamma, mask=col_ok)
        tl.store(dbeta_part_ptr + partial, dbeta, mask=col_ok)
    # let every thread's stores land before the lock opens to the next program
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def ln_bwd_group_reduce_kernel(dgamma_part_ptr, dbeta_part_ptr, dgamma_ptr, dbeta_ptr, G, H,
                               BLOCK_G: tl.constexpr, BLOCK_COLS: tl.constexpr):
    """dgamma[c] = sum over the G partial rows (dbeta alike), for a block of columns.
    Grid: (cdiv(H, BLOCK_COLS),)."""
    cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    col_ok = cols < H
    dgamma = tl.zeros([BLOCK_COLS], dtype=tl.float32)
    dbeta = tl.zeros([BLOCK_COLS], dtype=tl.float32)
    for start in range(0, G, BLOCK_G):
        rows = start + tl.arange(0, BLOCK_G)
        tile = rows[:, None] * H + cols[None, :]
        ok = (rows[:, None] < G) & col_ok[None, :]
        dgamma += tl.sum(tl.load(dgamma_part_ptr + tile, mask=ok, other=0.0), axis=0)
        dbeta += tl.sum(tl.load(dbeta_part_ptr + tile, mask=ok, other=0.0), axis=0)
    tl.store(dgamma_ptr + cols, dgamma, mask=col_ok)
    tl.store(dbeta_ptr + cols, dbeta, mask=col_ok)
