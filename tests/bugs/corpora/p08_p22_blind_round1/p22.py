"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 22 (LayerNorm + Linear): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_STAT_DIFF = "        diff = tl.where(cols < H, x - mean, 0.0)\n        acc += diff * diff\n"
_STAT_VAR = "    var = tl.sum(acc, axis=0) / H  # biased"
_Z = "        z = (x - mean) * rstd * gamma + beta\n"
_Z_STORE = "        tl.store(z_ptr + row * H + cols, z, mask=mask)  # cast"
_F_W = "        w = tl.load(w_ptr + outs[None, :] * H + cols[:, None], mask=col_ok[:, None] & out_ok[None, :], other=0.0)\n"
_F_DOT = "        y += tl.dot(z.to(w.dtype), w)\n"
_F_BIAS = "    y += tl.load(bias_ptr + outs, mask=out_ok, other=0.0).to(tl.float32)[None, :]\n"
_F_STORE = "    tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=row_ok[:, None] & out_ok[None, :])\n"
_B_DW = "            tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=tile_ok)\n"
_B_DBIAS = "        tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)\n"
_B_DX = "        dx = rstd * (dz * gamma - mean_g - x_hat * mean_g_xhat)\n"
_B_P1_PARAMS = ("        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)\n"
                "        tl.atomic_add(dbeta_ptr + cols, dz, mask=col_ok)\n")
_B_P2_HEAD = ("    for start in range(0, H, BLOCK_H):\n"
              "        cols = start + tl.arange(0, BLOCK_H)\n"
              "        col_ok = cols < H\n"
              "        x = tl.load(x_row + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
              "        x_hat = (x - mean) * rstd\n"
              "        gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
              "        dz = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
              "        for start_n in range(0, N, BLOCK_N):\n")
_B_P2_NLOOP = ("        gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
               "        dz = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
               "        for start_n in range(0, N, BLOCK_N):\n")
_B_P2_STORE = "        tl.store(dx_ptr + row * H + cols, dx, mask=col_ok)\n"

_LN_NO_LOOP = '''
@triton.jit
def layernorm_fwd_kernel(x_ptr, gamma_ptr, beta_ptr, z_ptr, H, eps, BLOCK_H: tl.constexpr):
    """One program per row: z[row] = gamma * x_hat + beta. Grid: (M,)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    mean, rstd = row_statistics(x_row, H, eps, BLOCK_H)
    cols = tl.arange(0, BLOCK_H)
    mask = cols < H
    x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
    gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    z = (x - mean) * rstd * gamma + beta
    tl.store(z_ptr + row * H + cols, z, mask=mask)
'''

_LN_WHILE = '''
@triton.jit
def layernorm_fwd_kernel(x_ptr, gamma_ptr, beta_ptr, z_ptr, H, eps, BLOCK_H: tl.constexpr):
    """Statistics inline with while loops and scalar sums, rsqrt; z written as x_hat * gamma + beta."""
    row = tl.program_id(0)
    base = row * H
    s = 0.0
    start = 0
    while start < H:
        c = start + tl.arange(0, BLOCK_H)
        s += tl.sum(tl.load(x_ptr + base + c, mask=c < H, other=0.0).to(tl.float32), axis=0)
        start += BLOCK_H
    mu = s / H
    q = 0.0
    start = 0
    while start < H:
        c = start + tl.arange(0, BLOCK_H)
        ok = c < H
        d = tl.where(ok, tl.load(x_ptr + base + c, mask=ok, other=0.0).to(tl.float32) - mu, 0.0)
        q += tl.sum(d * d, axis=0)
        start += BLOCK_H
    inv = tl.rsqrt(q / H + eps)
    start = 0
    while start < H:
        c = start + tl.arange(0, BLOCK_H)
        ok = c < H
        xh = (tl.load(x_ptr + base + c, mask=ok, other=0.0).to(tl.float32) - mu) * inv
        g = tl.load(gamma_ptr + c, mask=ok, other=0.0).to(tl.float32)
        b = tl.load(beta_ptr + c, mask=ok, other=0.0).to(tl.float32)
        tl.store(z_ptr + base + c, xh * g + b, mask=ok)
        start += BLOCK_H
'''

MEASURED = [
    # part 1: unfused forward
    Bug("unfused_one_pass_variance", "unfused",
        ((_STAT_DIFF, "        acc += x * x\n", 1),
         (_STAT_VAR, "    var = tl.sum(acc, axis=0) / H - mean * mean  # biased", 1)),
        "stability", "the variance as E[x^2] - mean^2 in row_statistics: it cancels catastrophically for rows with a large mean"),
    Bug("unfused_store_unmasked", "unfused",
        ((_Z_STORE, "        tl.store(z_ptr + row * H + cols, z)  # cast", 1),),
        "mask", "z stored without the mask: the last chunk's lanes past H overwrite the start of the next row (and run past z)"),
    Bug("unfused_beta_dropped", "unfused",
        (("        beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n" + _Z,
          "        beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        z = (x - mean) * rstd * gamma\n", 1),),
        "formula", "beta is loaded but never added: z = gamma * x_hat"),
    Bug("unfused_single_chunk", "unfused",
        (Kernel("layernorm_fwd_kernel", _LN_NO_LOOP),),
        "loop", "the normalisation writes only the first BLOCK_H columns (no loop over the row): rows wider than BLOCK_H keep their tail unwritten"),
    # part 2: fused forward
    Bug("fused_w_read_as_h_by_n", "fused",
        ((_F_W, "        w = tl.load(w_ptr + outs[None, :] + cols[:, None] * N, mask=col_ok[:, None] & out_ok[None, :], other=0.0)\n", 1),),
        "address", "the W^T tile read as if W were stored [H, N] (h * N + n): W is [N, H], element (h, n) of W^T is at n * H + h"),
    Bug("fused_y_store_rows_only", "fused",
        ((_F_STORE, "    tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=row_ok[:, None])\n", 1),),
        "mask", "y's store masks the rows but not the columns: the last column tile writes past N into the next row"),
    Bug("fused_dot_overwrites", "fused",
        ((_F_DOT, "        y = tl.dot(z.to(w.dtype), w)\n", 1),),
        "accumulate", "y = tl.dot(...) in the loop over H: each chunk replaces the partial product, only the last chunk of H counts"),
    Bug("fused_dot_in_bf16", "fused",
        ((_F_DOT, "        y += tl.dot(z.to(tl.bfloat16), w.to(tl.bfloat16))\n", 1),),
        "precision", "both operands rounded to bf16 for the dot whatever the input dtype: fp32 inputs lose all but 8 bits of z and W"),
    Bug("fused_bias_inside_loop", "fused",
        ((_F_BIAS, "", 1),
         (_F_DOT, _F_DOT + "        y += tl.load(bias_ptr + outs, mask=out_ok, other=0.0).to(tl.float32)[None, :]\n", 1)),
        "formula", "the bias added inside the loop over H: it is added once per chunk instead of once", accept=("loop",)),
    # part 3: backward
    Bug("bwd_dw_uses_x_hat", "backward",
        ((_B_DW, "            tl.atomic_add(dw_ptr + tile, dy[:, None] * x_hat[None, :], mask=tile_ok)\n", 1),),
        "formula", "dW's share is dy^T x_hat instead of dy^T z: the Linear layer's input is z = gamma * x_hat + beta"),
    Bug("bwd_dx_gamma_forgotten", "backward",
        ((_B_DX, "        dx = rstd * (dz - mean_g - x_hat * mean_g_xhat)\n", 1),),
        "formula", "dx built from dz instead of g = dz * gamma in its first term: the scale gamma lost between the Linear and the normalisation"),
    Bug("bwd_dbias_plain_store", "backward",
        ((_B_DBIAS, "        tl.store(dbias_ptr + outs, dy, mask=outs < N)\n", 1),),
        "atomic", "dbias stored with tl.store: every row overwrites it, only one row's dy survives instead of the sum over rows"),
    Bug("bwd_dy_row_stride_h", "backward",
        (("    dy_row = dy_ptr + row * N\n", "    dy_row = dy_ptr + row * H\n", 1),),
        "address", "dy's row located with x's row length H: dy is [M, N], row r starts at r * N"),
    Bug("bwd_dz_not_reset", "backward",
        ((_B_P2_HEAD, "    dz = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
                      "    for start in range(0, H, BLOCK_H):\n"
                      "        cols = start + tl.arange(0, BLOCK_H)\n"
                      "        col_ok = cols < H\n"
                      "        x = tl.load(x_row + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
                      "        x_hat = (x - mean) * rstd\n"
                      "        gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
                      "        for start_n in range(0, N, BLOCK_N):\n", 1),),
        "accumulate", "in the dx sweep dz is zeroed once before the loop over chunks of H: each chunk's dz carries the previous chunks' sums"),
    Bug("bwd_dz_loop_over_h", "backward",
        ((_B_P2_NLOOP, "        gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
                       "        dz = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
                       "        for start_n in range(0, H, BLOCK_N):\n", 1),),
        "loop", "the dx sweep's inner loop over the outputs runs to H instead of N: dz = dy W sums the wrong number of outputs"),
]

RIGHT = [
    Right("unfused_inline_while_stats", (Kernel("layernorm_fwd_kernel", _LN_WHILE),),
          "the row statistics computed inline with while loops and scalar sums, rsqrt; z = x_hat * gamma + beta"),
    Right("fused_trans_of_stored_w", (
        (_F_W, "        w = tl.trans(tl.load(w_ptr + outs[:, None] * H + cols[None, :], mask=out_ok[:, None] & col_ok[None, :], other=0.0))\n", 1),),
          "W's [BLOCK_N, BLOCK_H] tile loaded as stored and turned with tl.trans: the same W^T tile"),
    Right("bwd_param_grads_in_dx_sweep", (
        (_B_P1_PARAMS, "", 1),
        (_B_P2_STORE, _B_P2_STORE + "        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)\n"
                                    "        tl.atomic_add(dbeta_ptr + cols, dz, mask=col_ok)\n", 1)),
          "dgamma and dbeta added in the second sweep, where dz is recomputed anyway: the same shares, masked"),
]
