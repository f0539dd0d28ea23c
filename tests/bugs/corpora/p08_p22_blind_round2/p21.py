"""Blind corpus (round 2 for p08-p22), puzzle 21 (LayerNorm backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

RSTD = "rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H + eps)"
DX = "dx = rstd * (dz * gamma - mean_g - x_hat * mean_gxhat)"

MEASURED = [
    Bug("one_pass_variance", "backward",
        (("sum_d2 += diff * diff", "sum_d2 += x * x", 1),
         (RSTD, "rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H - mean * mean + eps)", 1)),
        "stability", "computes the variance as E[x^2] - mean^2, which cancels when the mean is large"),
    Bug("diff_not_masked", "backward",
        (("diff = tl.where(mask, x - mean, 0.0)", "diff = x - mean", 1),),
        "mask", "lets padded lanes into the variance: they loaded 0 and contribute (0 - mean)^2", ("fill",)),
    Bug("dx_mean_g_dropped", "backward",
        ((DX, "dx = rstd * (dz * gamma - x_hat * mean_gxhat)", 1),),
        "formula", "leaves out the - mean(g) term of dx"),
    Bug("dbeta_plain_store", "backward",
        (("tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)", "tl.store(dbeta_ptr + cols, dz, mask=mask)", 1),),
        "atomic", "stores the row's dz into dbeta instead of adding it atomically: the rows overwrite each other"),
    Bug("dgamma_uses_g", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)", "tl.atomic_add(dgamma_ptr + cols, dz * gamma * x_hat, mask=mask)", 1),),
        "formula", "adds g * x_hat (with gamma) into dgamma instead of dz * x_hat"),
    Bug("mean_over_block", "backward",
        (("mean = tl.sum(sum_x, axis=0) / H", "mean = tl.sum(sum_x, axis=0) / BLOCK_H", 1),),
        "formula", "divides the row sum by BLOCK_H instead of H for the mean"),
    Bug("sum_x_overwritten", "backward",
        (("sum_x += x", "sum_x = x", 1),),
        "accumulate", "assigns each chunk to the running sum of x instead of adding: the mean sees only the last chunk"),
    Bug("dx_sweep_floor_chunks", "backward",
        (("    # sweep 3: dx element by element (every element needs both row means: the cross terms), and\n"
          "    # this row's shares of the parameter gradients\n"
          "    for start in range(0, H, BLOCK_H):",
          "    # sweep 3: dx element by element (every element needs both row means: the cross terms), and\n"
          "    # this row's shares of the parameter gradients\n"
          "    for start in range(0, H // BLOCK_H * BLOCK_H, BLOCK_H):", 1),),
        "loop", "the last sweep runs over whole chunks only: the ragged tail of the row gets no dx and no shares"),
    Bug("dz_row_no_stride", "backward",
        (("dz_row = dz_ptr + row * H", "dz_row = dz_ptr + row", 1),),
        "address", "offsets dz's row by the row index instead of row * H"),
    Bug("dgamma_atomic_unmasked", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)", "tl.atomic_add(dgamma_ptr + cols, dz * x_hat)", 1),),
        "mask", "adds into dgamma without the mask: the last chunk adds past the end of dgamma"),
    Bug("H_hardcoded_in_means", "backward",
        (("mean_g = tl.sum(sum_g, axis=0) / H", "mean_g = tl.sum(sum_g, axis=0) / 40", 1),
         ("mean_gxhat = rstd * tl.sum(sum_gd, axis=0) / H", "mean_gxhat = rstd * tl.sum(sum_gd, axis=0) / 40", 1)),
        "hardcoded", "divides the gradient means by the documented H = 40 instead of the argument H"),
]

RIGHT = [
    Right("four_sweeps_xhat_sums",
          (Kernel("layernorm_bwd_kernel", '''@triton.jit
def layernorm_bwd_kernel(x_ptr, gamma_ptr, dz_ptr, dx_ptr, dgamma_ptr, dbeta_ptr, H, eps,
                         BLOCK_H: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    dz_row = dz_ptr + row * H
    s = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        s += tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)
    mean = tl.sum(s, axis=0) / H
    v = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        x = tl.load(x_row + cols, mask=cols < H, other=mean).to(tl.float32)
        v += (x - mean) * (x - mean)
    rstd = tl.rsqrt(tl.sum(v, axis=0) / H + eps)
    # sweep 3: the two gradient sums from x_hat itself, and the parameter shares
    sg = tl.zeros([BLOCK_H], dtype=tl.float32)
    sgx = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dz = tl.load(dz_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = tl.where(mask, (x - mean) * rstd, 0.0)
        g = dz * gamma
        sg += g
        sgx += g * x_hat
        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)
        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)
    a = tl.sum(sg, axis=0) / H
    b = tl.sum(sgx, axis=0) / H
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        dz = tl.load(dz_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        x_hat = (x - mean) * rstd
        tl.store(dx_ptr + row * H + cols, rstd * (dz * gamma - a - x_hat * b), mask=mask)
'''),),
          "four sweeps (mean, variance with padding loaded as the mean, sums and shares from x_hat, dx): same gradients"),
    Right("dbeta_in_first_sweep",
          (("        sum_x += x\n        sum_g += dz * gamma\n",
            "        sum_x += x\n        sum_g += dz * gamma\n        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)\n", 1),
           ("        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)\n        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)",
            "        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)", 1)),
          "adds dz into dbeta during the first sweep (it needs no statistics) instead of the last"),
]
