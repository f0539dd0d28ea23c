"""Every known kernel of puzzle 22 (LayerNorm + Linear): the bugs tests/test_contract.py pins (PINNED)
and the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What each list means:
tests/bugs/__init__.py."""
from __future__ import annotations

from bugs import Bug, Right
from bugs.reasons import MASKED_OUT, ZERO_PARTNER, WHERE_ZEROES

PINNED = [
    Bug("overwrite_instead_of_accumulate", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)",
          "tl.store(dgamma_ptr + cols, dz * x_hat, mask=col_ok)", 1),),
        cause="atomic",
        reasons=(("race",),),
        reasons_unsanitized=(("share of row",),), code='fault.race'),
    Bug("non_atomic_read_modify_write", "backward",
        (("tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)",
          "tl.store(dbias_ptr + outs, tl.load(dbias_ptr + outs, mask=outs < N) + dy, mask=outs < N)", 1),),
        cause="atomic",
        reasons=(("race",),),
        cpu_blind_without_sanitizer=True,
        notes="right in the interpreter, which runs programs one at a time; lost updates on a GPU", code='fault.race'),
    Bug("variance_without_mask", "unfused",
        (("diff = tl.where(cols < H, x - mean, 0.0)", "diff = x - mean", 1),),
        cause="fill",
        reasons=(("padded lanes",),),
        not_causes=("hardcoded",), code='variant.padded_lanes_8'),
    Bug("mask_only_for_power_of_two_widths", "unfused",
        # no masks at all: right only when H is a multiple of BLOCK_H (BLOCK_H = next power of 2)
        (("acc += tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)",
          "acc += tl.load(x_row + cols).to(tl.float32)", 1),
         ("x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)\n        # padded",
          "x = tl.load(x_row + cols).to(tl.float32)\n        # padded", 1),
         ("diff = tl.where(cols < H, x - mean, 0.0)", "diff = x - mean", 1),
         ("        mask = cols < H\n        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        beta = tl.load(beta_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n",
          "        mask = None\n        x = tl.load(x_row + cols).to(tl.float32)\n"
          "        gamma = tl.load(gamma_ptr + cols).to(tl.float32)\n"
          "        beta = tl.load(beta_ptr + cols).to(tl.float32)\n", 1)),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),),
        reasons_unsanitized=(("not a power of two",),), code='fault.oob'),
    Bug("first_block_only", "unfused",
        (("for start in range(0, H, BLOCK_H):  # rows wider than one block",
          "for start in range(0, BLOCK_H, BLOCK_H):  # rows wider than one block", 1),),
        cause="loop", named="candidates",
        reasons=(("never written",), ("walk all of H",)), code='values.unwritten'),
    Bug("first_block_only_in_backward", "backward",
        (("    sum_g_xhat = tl.zeros([BLOCK_H], dtype=tl.float32)\n    for start in range(0, H, BLOCK_H):",
          "    sum_g_xhat = tl.zeros([BLOCK_H], dtype=tl.float32)\n    for start in range(0, BLOCK_H, BLOCK_H):", 1),),
        cause="loop", named="candidates",
        reasons=(("every element from column 128 on received nothing",), ("walk all of H",)),
        not_causes=("hardcoded",), not_words=("elements received nothing",), code='values.nothing_added'),
    Bug("jacobian_diagonal_dx", "backward",
        (("dx = rstd * (dz * gamma - mean_g - x_hat * mean_g_xhat)",
          "dx = dz * gamma * rstd * (1 - 1 / H - x_hat * x_hat / H)", 1),),
        cause="formula",
        reasons=(("Jacobian diagonal",), ("cross terms",)), code='variant.jacobian_diagonal'),
    Bug("unbiased_variance", "unfused",
        (("var = tl.sum(acc, axis=0) / H  #", "var = tl.sum(acc, axis=0) / (H - 1)  #", 1),),
        cause="formula",
        reasons=(("unbiased variance",),), code='variant.unbiased_variance'),
    Bug("eps_outside_sqrt", "unfused",
        (("rstd = 1.0 / tl.sqrt(var + eps)", "rstd = 1.0 / (tl.sqrt(var) + eps)", 1),),
        cause="formula",
        reasons=(("eps belongs inside",),), code='variant.eps_outside_sqrt'),
    Bug("w_transposed", "fused",
        (("w = tl.load(w_ptr + outs[None, :] * H + cols[:, None], mask=col_ok[:, None] & out_ok[None, :], other=0.0)",
          "w = tl.load(w_ptr + cols[:, None] * N + outs[None, :], mask=col_ok[:, None] & out_ok[None, :], other=0.0)",
          1),),
        cause="address",
        reasons=(("W read transposed",),), code='addr.step'),
    Bug("bias_gradient_from_one_row", "backward",
        (("        tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)",
          "        if row == 0:\n            tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)", 1),),
        cause="formula", named="candidates",
        reasons=(("share of row 0 alone",),), code='values.one_share'),
    Bug("hidden_size_hard_coded_8", "unfused",
        (('    row = tl.program_id(0)\n    x_row = x_ptr + row * H\n    mean, rstd = row_statistics',
          '    H = 8  # "the example has 8 features"\n    row = tl.program_id(0)\n    x_row = x_ptr + row * H\n'
          '    mean, rstd = row_statistics', 1),),
        cause="hardcoded", named="candidates",
        reasons=(("hard-coded",),),
        notes="unsanitized it reads and writes past the tensors: the worker may die of heap corruption", code='fault.oob'),
    Bug("one_pass_variance", "unfused",
        (("        diff = tl.where(cols < H, x - mean, 0.0)\n        acc += diff * diff\n"
          "    var = tl.sum(acc, axis=0) / H",
          "        acc += x * x\n    var = tl.sum(acc, axis=0) / H - mean * mean", 1),),
        cause="stability",
        reasons=(("cancels catastrophically",),)),
    Bug("row_block_not_masked_on_store", "fused",
        (("tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=row_ok[:, None] & out_ok[None, :])",
          "tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=out_ok[None, :])", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        notes="writes past the end of y when BLOCK_M does not divide M: memory corruption unsanitized", code='fault.oob'),
    Bug("dgamma_from_x_instead_of_x_hat", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)",
          "tl.atomic_add(dgamma_ptr + cols, dz * x, mask=col_ok)", 1),),
        cause="formula", named="none",
        reasons=(("dgamma",),),
        not_causes=("atomic",),
        notes="a wrong formula with atomics everywhere: no hint may blame lost updates"),
    Bug("dw_from_x_hat_instead_of_z", "backward",
        (("tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=tile_ok)",
          "tl.atomic_add(dw_ptr + tile, dy[:, None] * x_hat[None, :], mask=tile_ok)", 1),),
        cause="formula", named="none",
        reasons=(("dw",),),
        not_causes=("atomic",), code='operand.zeroed'),
    Bug("dx_store_without_mask", "backward",
        (("tl.store(dx_ptr + row * H + cols, dx, mask=col_ok)", "tl.store(dx_ptr + row * H + cols, dx)", 1),),
        cause="mask", named="candidates",
        reasons=(("dx_ptr",), ("mask",)),
        not_causes=("atomic",),
        notes="lanes past H land in the next row: a race between neighbours, fixed by the mask, not atomics", code='fault.race'),
    Bug("output_tiles_placed_by_block_m", "fused",
        (("    outs = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)",
          "    outs = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_N)", 1),),
        cause="address",
        reasons=(("Data race on `y_ptr`",), ("37 rows",)),
        not_causes=("atomic",),
        gpu_blind=True,
        notes="right while BLOCK_M = BLOCK_N (16 in most cases): the case with 32-wide output tiles overlaps "
              "them, and the overlapping programs store the same values, so a GPU shows nothing", code='fault.race'),
]

PASSING = [
    Right("dx_expanded", (("dx = rstd * (dz * gamma - mean_g - x_hat * mean_g_xhat)",
                                 "dx = rstd * dz * gamma - rstd * mean_g - rstd * x_hat * mean_g_xhat", 1),),
                notes="the same dx, the product expanded"),
    Right("normalise_with_scale", (("z = (x - mean) * rstd * gamma + beta",
                                          "scale = rstd * gamma\n        z = x * scale + (beta - mean * scale)", 1),),
                notes="LayerNorm forward folded into one multiply-add per element"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
Z_STORE = "tl.store(z_ptr + row * H + cols, z, mask=mask)  # cast to z's dtype on store"
W_FUSED = "w = tl.load(w_ptr + outs[None, :] * H + cols[:, None], mask=col_ok[:, None] & out_ok[None, :], other=0.0)"
BIAS_FUSED = "y += tl.load(bias_ptr + outs, mask=out_ok, other=0.0).to(tl.float32)[None, :]"
DW_ADD = "tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=tile_ok)"
PASS1 = ("        z = x_hat * gamma + beta\n        dz = tl.zeros([BLOCK_H], dtype=tl.float32)\n")

MEASURED = [
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


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:layernorm_fwd_kernel:b0a72f3a:0": MASKED_OUT,
    "fill.other:ln_linear_fwd_kernel:3b1824ea:1": WHERE_ZEROES,
    "fill.other:ln_linear_fwd_kernel:3e2b28c1:0": WHERE_ZEROES,
    "fill.other:ln_linear_fwd_kernel:ddae9c27:0": MASKED_OUT,
    "fill.other:ln_linear_bwd_kernel:4e80eb13:0": ZERO_PARTNER,
    "fill.other:row_statistics:d9ef0235:0": WHERE_ZEROES,
    "fill.other:layernorm_fwd_kernel:2c95eea7:0": MASKED_OUT,
    "fill.other:layernorm_fwd_kernel:3526e811:0": MASKED_OUT,
    "fill.other:ln_linear_fwd_kernel:3b1824ea:0": WHERE_ZEROES,
    "fill.other:ln_linear_fwd_kernel:a888557a:0": WHERE_ZEROES,
    "fill.where:ln_linear_fwd_kernel:29ac44ef:0": "z's padded columns meet the W tile's padded 0 in tl.dot, and its "
                                                  "padded rows end in rows of y the masked store leaves out",
    "fill.other:ln_linear_fwd_kernel:644b3074:0": "the W tile's padded rows (past H) meet z's 0 from the tl.where in "
                                                  "tl.dot, and its padded columns (past N) end in columns of y the "
                                                  "masked store leaves out",
    "fill.other:ln_linear_bwd_kernel:43cbc4f9:0": MASKED_OUT,
    "fill.other:ln_linear_bwd_kernel:10d21757:0": WHERE_ZEROES,
    "fill.where:ln_linear_bwd_kernel:a6c8a2d6:0": "x_hat's padded lanes meet gamma's and beta's padded 0 in z, and "
                                                  "g = dz * gamma, 0 there, in g * x_hat; dz * x_hat goes to a masked "
                                                  "atomic",
    "fill.other:ln_linear_bwd_kernel:3e2b28c1:0": "gamma's padded lanes meet x_hat's 0 (the tl.where) in z, and dz's "
                                                  "padded 0 (W loads 0 past H) in g = dz * gamma",
    "fill.other:ln_linear_bwd_kernel:a888557a:0": MASKED_OUT,
    "fill.other:ln_linear_bwd_kernel:33b8e143:0": "W's padded output rows meet dy's padded 0; its padded columns "
                                                  "give dz there, which reaches only masked atomics and "
                                                  "g = dz * gamma, where gamma's padded 0 cancels it",
    "fill.other:ln_linear_bwd_kernel:10d21757:1": MASKED_OUT,
    "fill.other:ln_linear_bwd_kernel:3e2b28c1:1": MASKED_OUT,
    "fill.other:ln_linear_bwd_kernel:4e80eb13:1": ZERO_PARTNER,
    "fill.other:ln_linear_bwd_kernel:03396199:0": ZERO_PARTNER,
}
