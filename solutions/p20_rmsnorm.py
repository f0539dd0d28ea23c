"""Puzzle 20 reference kernels: RMSNorm, forward and backward.

Shapes (contiguous; the rows are every leading dimension flattened):
    x, y, dy, dx: [M, H]    gamma: [H]    dgamma: [H], fp32, zeroed before the launch
    rstd = 1 / sqrt(mean(x^2) + eps)    x_hat = x * rstd    y = x_hat * gamma
    g = dy * gamma
    dx = rstd * (g - x_hat * mean(g * x_hat))          (the means are over the row's H elements)
    dgamma = sum over the M rows of dy * x_hat

The checker launches one program per row; a row may be wider than BLOCK_H:
    rmsnorm_fwd_kernel[(M,)](x, gamma, y, H, eps, BLOCK_H=BLOCK_H)
    rmsnorm_bwd_kernel[(M,)](x, gamma, dy, dx, dgamma, H, eps, BLOCK_H=BLOCK_H)
"""
import triton
import triton.language as tl


@triton.jit
def rmsnorm_fwd_kernel(x_ptr, gamma_ptr, y_ptr, H, eps, BLOCK_H: tl.constexpr):
    """y[row] = x[row] * rstd * gamma for one row, read in chunks of BLOCK_H. Grid: (M,)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    # pass 1: the sum of squares, BLOCK_H lanes at a time. Unlike LayerNorm there is no mean to
    # subtract, so one pass loses nothing (puzzle 10's cancellation cannot happen)
    acc = tl.zeros([BLOCK_H], dtype=tl.float32)  # fp32 whatever x's dtype: bf16 sums lose digits
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        # lanes at or past H must not read (the next row, or past the end of x); other=0.0 makes
        # them add 0 to the sum
        x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)
        acc += x * x
    # the mean over the row's H elements, not over the BLOCK_H lanes; eps inside the square root
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)
    # pass 2: rstd needed the whole row, so the row is read again to scale it
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * H + cols, x * rstd * gamma, mask=mask)  # cast to y's dtype on store


@triton.jit
def rmsnorm_bwd_kernel(x_ptr, gamma_ptr, dy_ptr, dx_ptr, dgamma_ptr, H, eps, BLOCK_H: tl.constexpr):
    """dx[row], and this row's share dy * x_hat added into dgamma. Grid: (M,).

    rstd is recomputed from x (one more read of the row, cheaper than storing it in the forward
    pass and loading it here). dgamma is one [H] fp32 buffer that every program adds into.
    """
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    dy_row = dy_ptr + row * H
    # pass 1: two row sums in one sweep. dx needs mean(g * x_hat) = rstd * mean(g * x), and
    # rstd is a constant of the row, so sum(g * x) can be taken before rstd is known
    sum_xx = tl.zeros([BLOCK_H], dtype=tl.float32)
    sum_gx = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        sum_xx += x * x
        sum_gx += dy * gamma * x
    rstd = 1.0 / tl.sqrt(tl.sum(sum_xx, axis=0) / H + eps)
    # the cross term: every x_i moves rstd, and rstd scales every output of the row
    mean_gxhat = rstd * tl.sum(sum_gx, axis=0) / H
    # pass 2: dx element by element, and the row's share of dgamma
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = x * rstd
        dx = rstd * (dy * gamma - x_hat * mean_gxhat)
        tl.store(dx_ptr + row * H + cols, dx, mask=mask)
        # all M programs add into the same H elements of dgamma: a plain load + add + store
        # would lose updates when two programs interleave; the atomic read-add-write cannot
        tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)
