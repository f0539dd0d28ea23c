"""Puzzle 21 reference kernel: the LayerNorm backward pass, parameter gradients by atomics.

Shapes (contiguous; the rows are every leading dimension flattened):
    x, dz, dx: [M, H]    gamma: [H]    dgamma, dbeta: [H], fp32, zeroed before the launch
    forward (given): z = gamma * x_hat + beta,  x_hat = (x - mean) * rstd,  rstd = 1 / sqrt(var + eps)
    g = dz * gamma
    dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))      (chapter 5; means over the row's H elements)
    dgamma = sum over the M rows of dz * x_hat,   dbeta = sum over the M rows of dz

The checker launches one program per row; a row may be wider than BLOCK_H:
    layernorm_bwd_kernel[(M,)](x, gamma, dz, dx, dgamma, dbeta, H, eps, BLOCK_H=BLOCK_H)
"""
import triton
import triton.language as tl


@triton.jit
def layernorm_bwd_kernel(x_ptr, gamma_ptr, dz_ptr, dx_ptr, dgamma_ptr, dbeta_ptr, H, eps,
                         BLOCK_H: tl.constexpr):
    """dx[row], and this row's shares dz * x_hat and dz added into dgamma and dbeta. Grid: (M,).

    The forward pass's mean and rstd are recomputed from x: one more read of the row, cheaper than
    writing them in the forward pass and reading them back. dgamma and dbeta are [H] fp32 buffers
    that every program adds into.
    """
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    dz_row = dz_ptr + row * H

    # sweep 1: the mean, and sum(g), which needs no statistics. All sums in fp32 whatever the dtype
    sum_x = tl.zeros([BLOCK_H], dtype=tl.float32)
    sum_g = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dz = tl.load(dz_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        sum_x += x
        sum_g += dz * gamma
    mean = tl.sum(sum_x, axis=0) / H

    # sweep 2: the variance as the mean of squared deviations (not E[x^2] - E[x]^2, which cancels
    # catastrophically when the mean is large), and sum(g * (x - mean)), from which
    # mean(g * x_hat) = rstd * sum(g * (x - mean)) / H once rstd is known
    sum_d2 = tl.zeros([BLOCK_H], dtype=tl.float32)
    sum_gd = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dz = tl.load(dz_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        # padded lanes loaded 0, and 0 - mean is not 0: keep them out of the variance
        diff = tl.where(mask, x - mean, 0.0)
        sum_d2 += diff * diff
        sum_gd += dz * gamma * diff
    rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H + eps)  # biased variance, eps inside the root
    mean_g = tl.sum(sum_g, axis=0) / H
    mean_gxhat = rstd * tl.sum(sum_gd, axis=0) / H

    # sweep 3: dx element by element (every element needs both row means: the cross terms), and
    # this row's shares of the parameter gradients
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dz = tl.load(dz_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        dx = rstd * (dz * gamma - mean_g - x_hat * mean_gxhat)
        tl.store(dx_ptr + row * H + cols, dx, mask=mask)  # cast to dx's dtype on store
        # all M programs add into the same H elements: a plain load + add + store would lose the
        # updates of programs that interleave with it; an atomic read-add-write cannot
        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)
        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)
