"""Learner bugs for puzzle 22 (LayerNorm + Linear), and correct kernels written differently."""
from entries import Bug, Right

Z_STORE = "tl.store(z_ptr + row * H + cols, z, mask=mask)  # cast to z's dtype on store"
W_FUSED = "w = tl.load(w_ptr + outs[None, :] * H + cols[:, None], mask=col_ok[:, None] & out_ok[None, :], other=0.0)"
BIAS_FUSED = "y += tl.load(bias_ptr + outs, mask=out_ok, other=0.0).to(tl.float32)[None, :]"
DW_ADD = "tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=tile_ok)"
PASS1 = ("        z = x_hat * gamma + beta\n        dz = tl.zeros([BLOCK_H], dtype=tl.float32)\n")

BUGS = [
    Bug("unfused_rows_block_apart", "unfused",
        ((Z_STORE, Z_STORE.replace("row * H", "row * BLOCK_H"), 1),),
        "address", "z's row stored at row * BLOCK_H instead of row * H"),
    Bug("unfused_beta_scaled_by_gamma", "unfused",
        (("z = (x - mean) * rstd * gamma + beta", "z = ((x - mean) * rstd + beta) * gamma", 1),),
        "formula", "z = (x̂ + β) γ: β scaled by γ"),
    Bug("fused_w_rows_n_long", "fused",
        ((W_FUSED, W_FUSED.replace("outs[None, :] * H", "outs[None, :] * N"), 1),),
        "address", "W's row n read at n * N instead of n * H"),
    Bug("fused_product_in_fp16", "fused",
        (("y += tl.dot(z.to(w.dtype), w)", "y += tl.dot(z.to(tl.float16), w.to(tl.float16))", 1),),
        "precision", "both operands of the product cast to fp16"),
    Bug("backward_dgamma_times_gamma", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)", "tl.atomic_add(dgamma_ptr + cols, dz * gamma * x_hat, mask=col_ok)", 1),),
        "formula", "dgamma's share dz·γ·x̂ instead of dz·x̂"),
    Bug("backward_dw_added_transposed", "backward",
        ((DW_ADD, "tl.atomic_add(dw_ptr + cols[None, :] * N + outs[:, None], dy[:, None] * z[None, :], mask=tile_ok)", 1),),
        "address", "dW's share added at the transposed offsets (h * N + n) of an [N, H] tensor"),
    Bug("backward_dy_rows_h_long", "backward",
        (("dy_row = dy_ptr + row * N", "dy_row = dy_ptr + row * H", 1),),
        "address", "dy's row read at row * H instead of row * N"),
    Bug("backward_dz_carried_across_chunks", "backward",
        ((PASS1, "        z = x_hat * gamma + beta\n", 1),
         ("    sum_g_xhat = tl.zeros([BLOCK_H], dtype=tl.float32)\n    for start in range(0, H, BLOCK_H):\n",
          "    sum_g_xhat = tl.zeros([BLOCK_H], dtype=tl.float32)\n    dz = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
          "    for start in range(0, H, BLOCK_H):\n", 1)),
        "accumulate", "pass 1's dz created once before the loop over H: each chunk's dz adds onto the previous chunk's"),
    Bug("backward_dw_load_add_store", "backward",
        ((DW_ADD, "tl.store(dw_ptr + tile, tl.load(dw_ptr + tile, mask=tile_ok) + dy[:, None] * z[None, :], mask=tile_ok)", 1),),
        "atomic", "dW's share added with a plain load, add and store (a race between the row programs)"),
    # passes every case, on an H100 too: no case has cdiv(N, 16) > cdiv(H, 16) (N well above H, as in an MLP's up-projection)
    Bug("backward_dx_pass_loops_n_to_h", "backward",
        (("        for start_n in range(0, N, BLOCK_N):\n            outs = start_n + tl.arange(0, BLOCK_N)\n"
          "            out_ok = outs < N\n            dy = tl.load(dy_row + outs, mask=out_ok, other=0.0).to(tl.float32)\n"
          "            w = tl.load(",
          "        for start_n in range(0, H, BLOCK_N):\n            outs = start_n + tl.arange(0, BLOCK_N)\n"
          "            out_ok = outs < N\n            dy = tl.load(dy_row + outs, mask=out_ok, other=0.0).to(tl.float32)\n"
          "            w = tl.load(", 1),),
        "loop", "pass 2's loop over the outputs bounded by H instead of N"),
]

RIGHT = [
    Right("fused_padded_z_left_unzeroed", (("        z = tl.where(mask, z, 0.0)\n", "", 1),),
          "the fused kernel's padded z lanes are not zeroed: they meet zero rows of W or rows that are never stored"),
    Right("unfused_rsqrt_and_fma_form", (
        ("rstd = 1.0 / tl.sqrt(var + eps)  # eps inside the square root", "rstd = tl.rsqrt(var + eps)", 1),
        ("z = (x - mean) * rstd * gamma + beta", "z = x * (rstd * gamma) + (beta - mean * rstd * gamma)", 1)),
          "rstd with tl.rsqrt; z as x·a + b with a = rstd·γ, b = β − mean·a"),
]
