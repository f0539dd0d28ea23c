"""Puzzle 22 reference kernels: LayerNorm + Linear, forward, fused forward and fused backward.

Shapes (all tensors contiguous, rows = every leading dimension flattened):
    x: [M, H]   gamma, beta: [H]   w: [N, H] (PyTorch Linear layout)   bias: [N]
    z = LayerNorm(x) = gamma * x_hat + beta,  x_hat = (x - mean) * rstd,  rstd = 1 / sqrt(var + eps)
    y = z @ w.T + bias                       : [M, N]

The checker launches these kernels; see `python -m checker p22 --solution`.
"""
import triton
import triton.language as tl


@triton.jit
def row_statistics(x_row, H, eps, BLOCK_H: tl.constexpr):
    """Mean and 1/std of one row of length H, read in BLOCK_H chunks.

    Two passes (mean, then the mean of squared deviations) instead of E[x^2] - E[x]^2:
    the one-pass form cancels catastrophically when the mean is large (x near 1000).
    """
    acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        # statistics in fp32 whatever the input dtype: bf16 sums lose digits fast
        acc += tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / H
    acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)
        # padded lanes hold 0, and 0 - mean is not 0: keep them out of the variance
        diff = tl.where(cols < H, x - mean, 0.0)
        acc += diff * diff
    var = tl.sum(acc, axis=0) / H  # biased (divide by H), as torch.nn.LayerNorm does
    rstd = 1.0 / tl.sqrt(var + eps)  # eps inside the square root
    return mean, rstd


@triton.jit
def layernorm_fwd_kernel(x_ptr, gamma_ptr, beta_ptr, z_ptr, H, eps, BLOCK_H: tl.constexpr):
    """One program per row: z[row] = gamma * x_hat + beta. Grid: (M,)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    mean, rstd = row_statistics(x_row, H, eps, BLOCK_H)
    for start in range(0, H, BLOCK_H):  # rows wider than one block: loop over the row
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        z = (x - mean) * rstd * gamma + beta
        tl.store(z_ptr + row * H + cols, z, mask=mask)  # cast to z's dtype on store


@triton.jit
def ln_linear_fwd_kernel(x_ptr, gamma_ptr, beta_ptr, w_ptr, bias_ptr, y_ptr, M, H, N, eps,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr):
    """Fused: a BLOCK_M x BLOCK_N tile of y = LayerNorm(x) @ W.T + bias; z never goes to memory.

    Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)).
    """
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    outs = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M  # the last row block may stick out past M
    out_ok = outs < N

    # statistics of BLOCK_M rows at once, two passes as in row_statistics
    acc = tl.zeros([BLOCK_M, BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = row_ok[:, None] & (cols[None, :] < H)
        acc += tl.load(x_ptr + rows[:, None] * H + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=1) / H
    acc = tl.zeros([BLOCK_M, BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = row_ok[:, None] & (cols[None, :] < H)
        x = tl.load(x_ptr + rows[:, None] * H + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        diff = tl.where(mask, x - mean[:, None], 0.0)
        acc += diff * diff
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=1) / H + eps)

    y = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        col_ok = cols < H
        mask = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + rows[:, None] * H + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        z = (x - mean[:, None]) * rstd[:, None] * gamma[None, :] + beta[None, :]
        z = tl.where(mask, z, 0.0)
        # W is [N, H]; this tile of W.T is [BLOCK_H, BLOCK_N]
        w = tl.load(w_ptr + outs[None, :] * H + cols[:, None], mask=col_ok[:, None] & out_ok[None, :], other=0.0)
        # tl.dot wants both operands in one dtype; it accumulates in fp32
        y += tl.dot(z.to(w.dtype), w)
    y += tl.load(bias_ptr + outs, mask=out_ok, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=row_ok[:, None] & out_ok[None, :])


@triton.jit
def ln_linear_bwd_kernel(x_ptr, gamma_ptr, beta_ptr, w_ptr, dy_ptr,
                         dx_ptr, dgamma_ptr, dbeta_ptr, dw_ptr, dbias_ptr,
                         H, N, eps, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr):
    """One program per row: writes dx[row] and adds this row's share to dgamma, dbeta, dw, dbias.

    Grid: (M,). The four parameter gradients are fp32 buffers shared by all programs, so every
    update is a tl.atomic_add: a plain load + add + store would race between programs.
    With dz = dy @ W (the gradient reaching the LayerNorm output) and g = dz * gamma:
        dw += dy^T z    dbias += dy    dgamma += dz * x_hat    dbeta += dz
        dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat))
    """
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    dy_row = dy_ptr + row * N
    mean, rstd = row_statistics(x_row, H, eps, BLOCK_H)  # recomputed: cheaper than storing them

    for start_n in range(0, N, BLOCK_N):
        outs = start_n + tl.arange(0, BLOCK_N)
        dy = tl.load(dy_row + outs, mask=outs < N, other=0.0).to(tl.float32)
        tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)

    # pass 1: the parameter gradients, and the two row sums that dx needs
    sum_g = tl.zeros([BLOCK_H], dtype=tl.float32)
    sum_g_xhat = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        col_ok = cols < H
        x = tl.load(x_row + cols, mask=col_ok, other=0.0).to(tl.float32)
        x_hat = tl.where(col_ok, (x - mean) * rstd, 0.0)
        gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        z = x_hat * gamma + beta
        dz = tl.zeros([BLOCK_H], dtype=tl.float32)
        for start_n in range(0, N, BLOCK_N):
            outs = start_n + tl.arange(0, BLOCK_N)
            out_ok = outs < N
            dy = tl.load(dy_row + outs, mask=out_ok, other=0.0).to(tl.float32)
            tile = outs[:, None] * H + cols[None, :]
            tile_ok = out_ok[:, None] & col_ok[None, :]
            w = tl.load(w_ptr + tile, mask=tile_ok, other=0.0).to(tl.float32)
            dz += tl.sum(dy[:, None] * w, axis=0)
            tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=tile_ok)
        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)
        tl.atomic_add(dbeta_ptr + cols, dz, mask=col_ok)
        g = dz * gamma
        sum_g += g
        sum_g_xhat += g * x_hat
    mean_g = tl.sum(sum_g, axis=0) / H
    mean_g_xhat = tl.sum(sum_g_xhat, axis=0) / H

    # pass 2: dx needs the whole row's sums, so recompute dz block by block
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        col_ok = cols < H
        x = tl.load(x_row + cols, mask=col_ok, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
        dz = tl.zeros([BLOCK_H], dtype=tl.float32)
        for start_n in range(0, N, BLOCK_N):
            outs = start_n + tl.arange(0, BLOCK_N)
            out_ok = outs < N
            dy = tl.load(dy_row + outs, mask=out_ok, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + outs[:, None] * H + cols[None, :], mask=out_ok[:, None] & col_ok[None, :],
                        other=0.0).to(tl.float32)
            dz += tl.sum(dy[:, None] * w, axis=0)
        dx = rstd * (dz * gamma - mean_g - x_hat * mean_g_xhat)
        tl.store(dx_ptr + row * H + cols, dx, mask=col_ok)
