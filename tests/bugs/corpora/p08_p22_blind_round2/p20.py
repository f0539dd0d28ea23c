"""Blind corpus (round 2 for p08-p22), puzzle 20 (RMSNorm): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

FWD_RSTD = "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)"

MEASURED = [
    Bug("fwd_mean_over_block", "forward",
        ((FWD_RSTD, "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / BLOCK_H + eps)", 1),),
        "formula", "divides the sum of squares by BLOCK_H (the lanes) instead of H (the row's elements)"),
    Bug("fwd_eps_outside_sqrt", "forward",
        ((FWD_RSTD, "rstd = 1.0 / (tl.sqrt(tl.sum(acc, axis=0) / H) + eps)", 1),),
        "formula", "adds eps after the square root instead of inside it"),
    Bug("fwd_sumsq_overwritten", "forward",
        (("acc += x * x", "acc = x * x", 1),),
        "accumulate", "assigns each chunk's squares instead of adding them: only the last chunk of the row counts"),
    Bug("fwd_pad_other_one", "forward",
        (("x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)",
          "x = tl.load(x_row + cols, mask=cols < H, other=1.0).to(tl.float32)", 1),),
        "fill", "pads the sum-of-squares load with 1.0: padded lanes add 1 each to the sum"),
    Bug("fwd_eps_hardcoded_1e5", "forward",
        ((FWD_RSTD, "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + 1e-5)", 1),),
        "hardcoded", "writes LayerNorm's usual eps = 1e-5 into the kernel instead of the eps argument (1e-6)"),
    Bug("fwd_store_unmasked", "forward",
        (("tl.store(y_ptr + row * H + cols, x * rstd * gamma, mask=mask)", "tl.store(y_ptr + row * H + cols, x * rstd * gamma)", 1),),
        "mask", "stores y without the mask: the last chunk writes into the next row and past the end of y"),
    Bug("fwd_store_row_stride_block", "forward",
        (("tl.store(y_ptr + row * H + cols", "tl.store(y_ptr + row * BLOCK_H + cols", 1),),
        "address", "offsets the output row by BLOCK_H instead of the row length H"),
    Bug("bwd_cross_term_dropped", "backward",
        (("dx = rstd * (dy * gamma - x_hat * mean_gxhat)", "dx = rstd * dy * gamma", 1),),
        "formula", "drops the cross term x_hat * mean(g * x_hat): treats rstd as a constant of x"),
    Bug("bwd_mean_missing_rstd", "backward",
        (("mean_gxhat = rstd * tl.sum(sum_gx, axis=0) / H", "mean_gxhat = tl.sum(sum_gx, axis=0) / H", 1),),
        "formula", "uses mean(g * x) for mean(g * x_hat): the factor rstd is missing"),
    Bug("bwd_dgamma_load_add_store", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)",
          "old = tl.load(dgamma_ptr + cols, mask=mask, other=0.0)\n        tl.store(dgamma_ptr + cols, old + dy * x_hat, mask=mask)", 1),),
        "atomic", "adds the row's share into dgamma with a plain load, add and store: the M programs race"),
    Bug("bwd_dgamma_uses_x", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)", "tl.atomic_add(dgamma_ptr + cols, dy * x, mask=mask)", 1),),
        "formula", "adds dy * x into dgamma instead of dy * x_hat"),
    Bug("bwd_sum_gx_overwritten", "backward",
        (("sum_gx += dy * gamma * x", "sum_gx = dy * gamma * x", 1),),
        "accumulate", "overwrites the running sum of g * x each chunk: the cross term sees only the last chunk"),
]

RIGHT = [
    Right("fwd_scalar_accumulator_while",
          (Kernel("rmsnorm_fwd_kernel", '''@triton.jit
def rmsnorm_fwd_kernel(x_ptr, gamma_ptr, y_ptr, H, eps, BLOCK_H: tl.constexpr):
    row = tl.program_id(0)
    base = row * H
    total = 0.0
    start = 0
    while start < H:
        cols = start + tl.arange(0, BLOCK_H)
        x = tl.load(x_ptr + base + cols, mask=cols < H, other=0.0).to(tl.float32)
        total += tl.sum(x * x, axis=0)
        start += BLOCK_H
    ms = total / H
    rstd = tl.rsqrt(ms + eps)
    for start2 in range(0, H, BLOCK_H):
        cols = start2 + tl.arange(0, BLOCK_H)
        mask = cols < H
        x = tl.load(x_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + cols, (x * gamma) * rstd, mask=mask)
'''),),
          "reduces each chunk to a scalar running sum in a while loop and uses tl.rsqrt: same rstd"),
    Right("bwd_xhat_form",
          (Kernel("rmsnorm_bwd_kernel", '''@triton.jit
def rmsnorm_bwd_kernel(x_ptr, gamma_ptr, dy_ptr, dx_ptr, dgamma_ptr, H, eps, BLOCK_H: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    dy_row = dy_ptr + row * H
    sum_xx = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)
        sum_xx += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(sum_xx, axis=0) / H + eps)
    # second sweep: mean(g * x_hat) directly from x_hat, now that rstd is known
    sum_gxhat = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x_hat = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) * rstd
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        sum_gxhat += dy * gamma * x_hat
        tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)
    c = tl.sum(sum_gxhat, axis=0) / H
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x_hat = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) * rstd
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row * H + cols, rstd * dy * gamma - rstd * c * x_hat, mask=mask)
'''),),
          "three sweeps: rstd first, then mean(g * x_hat) and dgamma from x_hat itself, then dx; same gradients"),
]
