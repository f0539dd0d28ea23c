"""Blind corpus (round 2 for p08-p22), puzzle 22 (LayerNorm + Linear): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

DBIAS_LOOP = """    for start_n in range(0, N, BLOCK_N):
        outs = start_n + tl.arange(0, BLOCK_N)
        dy = tl.load(dy_row + outs, mask=outs < N, other=0.0).to(tl.float32)
        tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)
"""
FUSED_STATS_MASK = """        mask = row_ok[:, None] & (cols[None, :] < H)
        acc += tl.load("""

MEASURED = [
    # part 1: unfused LayerNorm forward (row_statistics is shared with part 3)
    Bug("stats_pad_in_variance", "unfused",
        (("diff = tl.where(cols < H, x - mean, 0.0)", "diff = x - mean", 1),),
        "mask", "lets the padded lanes into the variance: each adds (0 - mean)^2", ("fill",)),
    Bug("stats_eps_outside_sqrt", "unfused",
        (("rstd = 1.0 / tl.sqrt(var + eps)", "rstd = 1.0 / tl.sqrt(var) + eps", 1),),
        "formula", "adds eps to 1/std instead of to the variance under the square root"),
    Bug("stats_unbiased_variance", "unfused",
        (("var = tl.sum(acc, axis=0) / H  # biased", "var = tl.sum(acc, axis=0) / (H - 1)  # biased", 1),),
        "formula", "divides the squared deviations by H - 1 (unbiased) where LayerNorm uses H"),
    Bug("stats_mean_overwritten", "unfused",
        (("acc += tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)",
          "acc = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)", 1),),
        "accumulate", "assigns each chunk to the mean's accumulator instead of adding: only the last chunk counts"),
    Bug("unfused_output_one_block", "unfused",
        (("for start in range(0, H, BLOCK_H):  # rows wider than one block", "for start in range(0, BLOCK_H, BLOCK_H):  # rows wider than one block", 1),),
        "loop", "writes z for the first BLOCK_H columns only: the output pass does not loop over the whole row"),
    # part 2: fused forward
    Bug("fused_w_read_as_H_by_N", "fused",
        (("w = tl.load(w_ptr + outs[None, :] * H + cols[:, None]", "w = tl.load(w_ptr + cols[:, None] * N + outs[None, :]", 1),),
        "address", "reads the W^T tile as if W were stored [H, N] instead of PyTorch's [N, H]"),
    Bug("fused_bias_forgotten", "fused",
        (("    y += tl.load(bias_ptr + outs, mask=out_ok, other=0.0).to(tl.float32)[None, :]\n", "", 1),),
        "formula", "leaves out the Linear bias"),
    Bug("fused_y_overwritten", "fused",
        (("y += tl.dot(z.to(w.dtype), w)", "y = tl.dot(z.to(w.dtype), w)", 1),),
        "accumulate", "assigns each H chunk's product to y instead of adding it"),
    Bug("fused_store_stride_H", "fused",
        (("tl.store(y_ptr + rows[:, None] * N", "tl.store(y_ptr + rows[:, None] * H", 1),),
        "address", "stores y's rows H apart (x's row length) instead of N"),
    Bug("fused_stats_no_row_mask", "fused",
        ((FUSED_STATS_MASK, """        mask = cols[None, :] < H
        acc += tl.load(""", 1),),
        "mask", "masks the mean's loads by columns only: the last row block reads rows past the end of x"),
    # part 3: fused backward
    Bug("bwd_dbias_plain_store", "backward",
        (("tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)", "tl.store(dbias_ptr + outs, dy, mask=outs < N)", 1),),
        "atomic", "stores each row's dy into dbias instead of adding it atomically: the rows overwrite each other"),
    Bug("bwd_dw_uses_xhat", "backward",
        (("dy[:, None] * z[None, :]", "dy[:, None] * x_hat[None, :]", 1),),
        "formula", "adds dy^T x_hat into dW: forgets that the Linear's input is z = gamma * x_hat + beta"),
    Bug("bwd_dz_overwritten", "backward",
        (("dz += tl.sum(dy[:, None] * w, axis=0)\n            tl.atomic_add(dw_ptr",
          "dz = tl.sum(dy[:, None] * w, axis=0)\n            tl.atomic_add(dw_ptr", 1),),
        "accumulate", "overwrites dz with each BLOCK_N chunk's part of dy @ W instead of adding (first sweep)"),
    Bug("bwd_pass2_w_transposed", "backward",
        (("w = tl.load(w_ptr + outs[:, None] * H + cols[None, :], mask=out_ok[:, None] & col_ok[None, :],",
          "w = tl.load(w_ptr + cols[None, :] * N + outs[:, None], mask=out_ok[:, None] & col_ok[None, :],", 1),),
        "address", "in the dx sweep reads W as if it were [H, N]: dz = dy @ W comes out wrong"),
    Bug("bwd_dbias_inside_h_loop", "backward",
        ((DBIAS_LOOP, "", 1),
         ("            dz += tl.sum(dy[:, None] * w, axis=0)\n            tl.atomic_add(dw_ptr",
          "            dz += tl.sum(dy[:, None] * w, axis=0)\n            tl.atomic_add(dbias_ptr + outs, dy, mask=out_ok)\n            tl.atomic_add(dw_ptr", 1)),
        "loop", "adds dy into dbias inside the loop over H chunks: a row wider than BLOCK_H adds it once per chunk"),
    Bug("bwd_dw_mask_outs_only", "backward",
        (("tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=tile_ok)",
          "tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=out_ok[:, None])", 1),),
        "mask", "masks the dW tile by outputs only: padded columns add into the next row of dW and past its end"),
]

RIGHT = [
    Right("unfused_own_stats_rsqrt",
          (Kernel("layernorm_fwd_kernel", '''@triton.jit
def layernorm_fwd_kernel(x_ptr, gamma_ptr, beta_ptr, z_ptr, H, eps, BLOCK_H: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    total = 0.0
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        total += tl.sum(tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32), axis=0)
    mean = total / H
    sq = 0.0
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)
        d = tl.where(cols < H, x - mean, 0.0)
        sq += tl.sum(d * d, axis=0)
    rstd = tl.rsqrt(sq / H + eps)
    start = 0
    while start < H:
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(z_ptr + row * H + cols, gamma * ((x - mean) * rstd) + beta, mask=mask)
        start += BLOCK_H
'''),),
          "its own statistics with scalar running sums and tl.rsqrt, and a while loop for the output pass"),
    Right("fused_w_tile_trans",
          (("w = tl.load(w_ptr + outs[None, :] * H + cols[:, None], mask=col_ok[:, None] & out_ok[None, :], other=0.0)",
            "w = tl.trans(tl.load(w_ptr + outs[:, None] * H + cols[None, :], mask=out_ok[:, None] & col_ok[None, :], other=0.0))", 1),),
          "loads W's [BLOCK_N, BLOCK_H] tile in its own layout and transposes it with tl.trans: the same W^T tile"),
    Right("bwd_dbias_at_end",
          ((DBIAS_LOOP, "", 1),
           ("    mean_g = tl.sum(sum_g, axis=0) / H\n",
            "    mean_g = tl.sum(sum_g, axis=0) / H\n    n0 = 0\n    while n0 < N:\n        o = n0 + tl.arange(0, BLOCK_N)\n"
            "        tl.atomic_add(dbias_ptr + o, tl.load(dy_row + o, mask=o < N, other=0.0).to(tl.float32), mask=o < N)\n"
            "        n0 += BLOCK_N\n", 1)),
          "adds the row's dy into dbias after the first sweep, with a while loop, instead of before it"),
]
