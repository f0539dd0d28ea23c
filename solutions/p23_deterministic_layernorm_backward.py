"""Puzzle 23 reference kernels: a LayerNorm backward whose parameter gradients are reproducible.

Shapes (contiguous):  x, dz, dx: [M, H]   gamma: [H]   dgamma, dbeta: [H] (fp32)
    x_hat = (x - mean) * rstd,  g = dz * gamma
    dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))      (chapter 5, puzzle 21)
    dgamma = sum over rows of dz * x_hat,   dbeta = sum over rows of dz

Puzzle 21 adds every row's share of dgamma and dbeta with tl.atomic_add. That is correct, but the
order in which programs' atomics land changes from run to run, and fp32 addition is not
associative: the last bits of dgamma differ between two runs of the same training step. Here
each program sums its own group of rows into its own row of a [P, H] partial buffer (no other
program touches it), and a second kernel adds the P partial rows up in a fixed order.

The checker launches (P = cdiv(M, ROWS_PER_PROGRAM), partials are [P, H] fp32):
    ln_bwd_partial_kernel[(P,)](x, gamma, dz, dx, dgamma_part, dbeta_part, M, H, eps,
                                ROWS_PER_PROGRAM=..., BLOCK_H=...)
    ln_bwd_reduce_kernel[(cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, P, H,
                                                 BLOCK_P=..., BLOCK_COLS=...)
"""
import triton
import triton.language as tl


@triton.jit
def ln_bwd_partial_kernel(x_ptr, gamma_ptr, dz_ptr, dx_ptr, dgamma_part_ptr, dbeta_part_ptr, M, H, eps,
                          ROWS_PER_PROGRAM: tl.constexpr, BLOCK_H: tl.constexpr):
    """Program p: dx for rows [p * R, (p + 1) * R), and their dgamma, dbeta shares summed into row p
    of the partial buffers. One block holds a whole row (BLOCK_H >= H). Grid: (cdiv(M, R),)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_H)
    col_ok = cols < H
    gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    # this program's share of dgamma and dbeta, summed over its rows in a fixed order
    dgamma_acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    dbeta_acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    for r in range(ROWS_PER_PROGRAM):
        row = pid * ROWS_PER_PROGRAM + r
        if row < M:  # the last group may be short
            x = tl.load(x_ptr + row * H + cols, mask=col_ok, other=0.0).to(tl.float32)
            dz = tl.load(dz_ptr + row * H + cols, mask=col_ok, other=0.0).to(tl.float32)
            mean = tl.sum(x, axis=0) / H
            diff = tl.where(col_ok, x - mean, 0.0)  # padded lanes must not enter the variance
            rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)
            x_hat = diff * rstd
            g = dz * gamma
            mean_g = tl.sum(g, axis=0) / H
            mean_g_xhat = tl.sum(g * x_hat, axis=0) / H
            dx = rstd * (g - mean_g - x_hat * mean_g_xhat)
            tl.store(dx_ptr + row * H + cols, dx, mask=col_ok)
            dgamma_acc += dz * x_hat
            dbeta_acc += dz
    # row pid of the partial buffers belongs to this program alone: a plain store, no race
    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc, mask=col_ok)
    tl.store(dbeta_part_ptr + pid * H + cols, dbeta_acc, mask=col_ok)


@triton.jit
def ln_bwd_reduce_kernel(dgamma_part_ptr, dbeta_part_ptr, dgamma_ptr, dbeta_ptr, P, H,
                         BLOCK_P: tl.constexpr, BLOCK_COLS: tl.constexpr):
    """dgamma[c] = sum over p of dgamma_part[p, c] (and dbeta alike), for a block of columns c.
    The partial rows are visited in the same order every run: the same bits every run.
    Grid: (cdiv(H, BLOCK_COLS),)."""
    cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    col_ok = cols < H
    dgamma = tl.zeros([BLOCK_COLS], dtype=tl.float32)
    dbeta = tl.zeros([BLOCK_COLS], dtype=tl.float32)
    for start in range(0, P, BLOCK_P):
        rows = start + tl.arange(0, BLOCK_P)
        tile = rows[:, None] * H + cols[None, :]
        ok = (rows[:, None] < P) & col_ok[None, :]
        dgamma += tl.sum(tl.load(dgamma_part_ptr + tile, mask=ok, other=0.0), axis=0)
        dbeta += tl.sum(tl.load(dbeta_part_ptr + tile, mask=ok, other=0.0), axis=0)
    tl.store(dgamma_ptr + cols, dgamma, mask=col_ok)
    tl.store(dbeta_ptr + cols, dbeta, mask=col_ok)
