"""Known-buggy puzzle-22 kernels: each is the reference solution with one bug patched in.

Every entry says which part shows the bug and what the report must say about it (the "right
reason"). Patches are exact text replacements that must each apply exactly `count` times, so a
change to the solution that makes a patch stale fails loudly instead of testing nothing.
"""
from __future__ import annotations

from catalog import Alternative, Bug

BUGS = [
    Bug("overwrite_instead_of_accumulate", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)",
          "tl.store(dgamma_ptr + cols, dz * x_hat, mask=col_ok)", 1),),
        reasons=(("race",), ("atomic",)),
        reasons_unsanitized=(("share of row",),)),
    Bug("non_atomic_read_modify_write", "backward",
        (("tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)",
          "tl.store(dbias_ptr + outs, tl.load(dbias_ptr + outs, mask=outs < N) + dy, mask=outs < N)", 1),),
        reasons=(("race",), ("atomic",)),
        cpu_blind_without_sanitizer=True,
        notes="right in the interpreter, which runs programs one at a time; lost updates on a GPU"),
    Bug("variance_without_mask", "unfused",
        (("diff = tl.where(cols < H, x - mean, 0.0)", "diff = x - mean", 1),),
        reasons=(("padded lanes",),),
        misleading=("hard-coded",)),
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
        reasons=(("out of bounds", "out-of-bounds"), ("mask",)),
        reasons_unsanitized=(("not a power of two",),)),
    Bug("first_block_only", "unfused",
        (("for start in range(0, H, BLOCK_H):  # rows wider than one block",
          "for start in range(0, BLOCK_H, BLOCK_H):  # rows wider than one block", 1),),
        reasons=(("never written",), ("loop over the row",))),
    Bug("first_block_only_in_backward", "backward",
        (("    sum_g_xhat = tl.zeros([BLOCK_H], dtype=tl.float32)\n    for start in range(0, H, BLOCK_H):",
          "    sum_g_xhat = tl.zeros([BLOCK_H], dtype=tl.float32)\n    for start in range(0, BLOCK_H, BLOCK_H):", 1),),
        reasons=(("every element from column 128 on received nothing",), ("loop over the row",)),
        misleading=("elements received nothing", "hard-coded")),
    Bug("jacobian_diagonal_dx", "backward",
        (("dx = rstd * (dz * gamma - mean_g - x_hat * mean_g_xhat)",
          "dx = dz * gamma * rstd * (1 - 1 / H - x_hat * x_hat / H)", 1),),
        reasons=(("Jacobian diagonal",), ("cross terms",))),
    Bug("unbiased_variance", "unfused",
        (("var = tl.sum(acc, axis=0) / H  #", "var = tl.sum(acc, axis=0) / (H - 1)  #", 1),),
        reasons=(("unbiased variance",),)),
    Bug("eps_outside_sqrt", "unfused",
        (("rstd = 1.0 / tl.sqrt(var + eps)", "rstd = 1.0 / (tl.sqrt(var) + eps)", 1),),
        reasons=(("eps belongs inside",),)),
    Bug("w_transposed", "fused",
        (("w = tl.load(w_ptr + outs[None, :] * H + cols[:, None], mask=col_ok[:, None] & out_ok[None, :], other=0.0)",
          "w = tl.load(w_ptr + cols[:, None] * N + outs[None, :], mask=col_ok[:, None] & out_ok[None, :], other=0.0)",
          1),),
        reasons=(("W read transposed",),)),
    Bug("bias_gradient_from_one_row", "backward",
        (("        tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)",
          "        if row == 0:\n            tl.atomic_add(dbias_ptr + outs, dy, mask=outs < N)", 1),),
        reasons=(("share of row 0 alone",),)),
    Bug("hidden_size_hard_coded_8", "unfused",
        (('    row = tl.program_id(0)\n    x_row = x_ptr + row * H\n    mean, rstd = row_statistics',
          '    H = 8  # "the example has 8 features"\n    row = tl.program_id(0)\n    x_row = x_ptr + row * H\n'
          '    mean, rstd = row_statistics', 1),),
        reasons=(("hard-coded",),),
        notes="unsanitized it reads and writes past the tensors: the worker may die of heap corruption"),
    Bug("one_pass_variance", "unfused",
        (("        diff = tl.where(cols < H, x - mean, 0.0)\n        acc += diff * diff\n"
          "    var = tl.sum(acc, axis=0) / H",
          "        acc += x * x\n    var = tl.sum(acc, axis=0) / H - mean * mean", 1),),
        reasons=(("cancels catastrophically",),)),
    Bug("row_block_not_masked_on_store", "fused",
        (("tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=row_ok[:, None] & out_ok[None, :])",
          "tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=out_ok[None, :])", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        notes="writes past the end of y when BLOCK_M does not divide M: memory corruption unsanitized"),
    Bug("dgamma_from_x_instead_of_x_hat", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=col_ok)",
          "tl.atomic_add(dgamma_ptr + cols, dz * x, mask=col_ok)", 1),),
        reasons=(("grad_ln_weight",),),
        misleading=("lost", "tl.atomic_add", "overwr"),
        notes="a wrong formula with atomics everywhere: no hint may blame lost updates"),
    Bug("dw_from_x_hat_instead_of_z", "backward",
        (("tl.atomic_add(dw_ptr + tile, dy[:, None] * z[None, :], mask=tile_ok)",
          "tl.atomic_add(dw_ptr + tile, dy[:, None] * x_hat[None, :], mask=tile_ok)", 1),),
        reasons=(("grad_linear_weight",),),
        misleading=("lost", "tl.atomic_add", "overwr")),
    Bug("dx_store_without_mask", "backward",
        (("tl.store(dx_ptr + row * H + cols, dx, mask=col_ok)", "tl.store(dx_ptr + row * H + cols, dx)", 1),),
        reasons=(("dx_ptr",), ("mask",)),
        misleading=("atomic",),
        notes="lanes past H land in the next row: a race between neighbours, fixed by the mask, not atomics"),
    Bug("output_tiles_placed_by_block_m", "fused",
        (("    outs = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)",
          "    outs = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_N)", 1),),
        reasons=(("Data race on `y_ptr`",), ("37 rows",)),
        misleading=("atomic_add",),
        gpu_blind=True,
        notes="right while BLOCK_M = BLOCK_N (16 in most cases): the case with 32-wide output tiles overlaps "
              "them, and the overlapping programs store the same values, so a GPU shows nothing"),
]

ALTERNATIVES = [
    Alternative("dx_expanded", (("dx = rstd * (dz * gamma - mean_g - x_hat * mean_g_xhat)",
                                 "dx = rstd * dz * gamma - rstd * mean_g - rstd * x_hat * mean_g_xhat", 1),),
                notes="the same dx, the product expanded"),
    Alternative("normalise_with_scale", (("z = (x - mean) * rstd * gamma + beta",
                                          "scale = rstd * gamma\n        z = x * scale + (beta - mean * scale)", 1),),
                notes="LayerNorm forward folded into one multiply-add per element"),
]
