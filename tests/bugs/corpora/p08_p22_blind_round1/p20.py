"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 20 (RMSNorm forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_P1_LOAD = "        x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)\n        acc += x * x\n"
_FWD_RSTD = "    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)\n"
_FWD_P1_LOOP = ("    acc = tl.zeros([BLOCK_H], dtype=tl.float32)  # fp32 whatever x's dtype: bf16 sums lose digits\n"
                "    for start in range(0, H, BLOCK_H):\n")
_BWD_DX = "        dx = rstd * (dy * gamma - x_hat * mean_gxhat)\n"
_BWD_DGAMMA = "        tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)\n"
_BWD_P1_X = ("        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
             "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
             "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n"
             "        sum_xx += x * x\n")

_FWD_WHILE = '''
@triton.jit
def rmsnorm_fwd_kernel(x_ptr, gamma_ptr, y_ptr, H, eps, BLOCK_H: tl.constexpr):
    """While loops, a scalar running sum per chunk, and tl.rsqrt for 1/sqrt."""
    row = tl.program_id(0)
    base = row * H
    total = 0.0
    start = 0
    while start < H:
        offs = start + tl.arange(0, BLOCK_H)
        v = tl.load(x_ptr + base + offs, mask=offs < H, other=0.0).to(tl.float32)
        total += tl.sum(v * v, axis=0)
        start += BLOCK_H
    rstd = tl.rsqrt(total / H + eps)
    start = 0
    while start < H:
        offs = start + tl.arange(0, BLOCK_H)
        ok = offs < H
        v = tl.load(x_ptr + base + offs, mask=ok, other=0.0).to(tl.float32)
        w = tl.load(gamma_ptr + offs, mask=ok, other=0.0).to(tl.float32)
        tl.store(y_ptr + base + offs, (v * rstd) * w, mask=ok)
        start += BLOCK_H
'''

_BWD_THREE = '''
@triton.jit
def rmsnorm_bwd_kernel(x_ptr, gamma_ptr, dy_ptr, dx_ptr, dgamma_ptr, H, eps, BLOCK_H: tl.constexpr):
    """Three sweeps: rstd first, then mean(g * x_hat) with x_hat formed explicitly, then dx and dgamma."""
    row = tl.program_id(0)
    x_row = x_ptr + row * H
    dy_row = dy_ptr + row * H
    ss = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)
        ss += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(ss, axis=0) / H + eps)
    dot = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x_hat = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) * rstd
        g = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32) * \\
            tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        dot += g * x_hat
    c = tl.sum(dot, axis=0) / H
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        mask = cols < H
        x_hat = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) * rstd
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        g = dy * tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row * H + cols, rstd * g - rstd * c * x_hat, mask=mask)
        tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)
'''

MEASURED = [
    # forward
    Bug("fwd_mean_over_block", "forward",
        ((_FWD_RSTD, "    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / BLOCK_H + eps)\n", 1),),
        "formula", "the mean of squares divided by BLOCK_H (the lanes) instead of H (the row's elements)"),
    Bug("fwd_sumsq_unmasked", "forward",
        ((_FWD_P1_LOAD, "        x = tl.load(x_row + cols).to(tl.float32)\n        acc += x * x\n", 1),),
        "mask", "the first sweep loads without a mask: the last chunk's lanes past H read the next row (or past x) into the sum of squares"),
    Bug("fwd_acc_overwritten", "forward",
        ((_FWD_P1_LOAD, "        x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)\n        acc = x * x\n", 1),),
        "accumulate", "acc = x * x in the loop: each chunk replaces the running squares, only the last chunk is in rstd"),
    Bug("fwd_floor_loop", "forward",
        ((_FWD_P1_LOOP, "    acc = tl.zeros([BLOCK_H], dtype=tl.float32)  # fp32 whatever x's dtype: bf16 sums lose digits\n"
                        "    for start in range(0, (H // BLOCK_H) * BLOCK_H, BLOCK_H):\n", 1),),
        "loop", "the sum of squares walks only whole chunks (H // BLOCK_H of them): the ragged tail of the row is left out of rstd"),
    Bug("fwd_h_hardcoded", "forward",
        ((_FWD_RSTD, "    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / 40 + eps)\n", 1),),
        "hardcoded", "the mean divides by the documented H = 40 instead of the H passed in"),
    Bug("fwd_eps_outside_sqrt", "forward",
        ((_FWD_RSTD, "    rstd = 1.0 / (tl.sqrt(tl.sum(acc, axis=0) / H) + eps)\n", 1),),
        "formula", "eps added after the square root instead of inside it"),
    # backward
    Bug("bwd_no_cross_term", "backward",
        ((_BWD_DX, "        dx = rstd * dy * gamma\n", 1),),
        "formula", "dx = rstd * g: the term x_hat * mean(g * x_hat) (every x moves rstd) dropped"),
    Bug("bwd_dgamma_uses_x", "backward",
        ((_BWD_DGAMMA, "        tl.atomic_add(dgamma_ptr + cols, dy * x, mask=mask)\n", 1),),
        "formula", "dgamma's share is dy * x instead of dy * x_hat: the normalisation left out"),
    Bug("bwd_dgamma_load_add_store", "backward",
        ((_BWD_DGAMMA, "        old = tl.load(dgamma_ptr + cols, mask=mask, other=0.0)\n"
                       "        tl.store(dgamma_ptr + cols, old + dy * x_hat, mask=mask)\n", 1),),
        "atomic", "dgamma updated with a load, an add and a store: rows that interleave lose each other's shares"),
    Bug("bwd_mean_missing_rstd", "backward",
        (("    mean_gxhat = rstd * tl.sum(sum_gx, axis=0) / H\n", "    mean_gxhat = tl.sum(sum_gx, axis=0) / H\n", 1),),
        "formula", "mean(g * x_hat) taken as mean(g * x): the factor rstd that turns x into x_hat is forgotten"),
    Bug("bwd_dx_no_row_offset", "backward",
        (("        tl.store(dx_ptr + row * H + cols, dx, mask=mask)\n", "        tl.store(dx_ptr + cols, dx, mask=mask)\n", 1),),
        "address", "dx stored without the row offset: every program writes row 0"),
    Bug("bwd_x_other_one", "backward",
        ((_BWD_P1_X, "        x = tl.load(x_row + cols, mask=mask, other=1.0).to(tl.float32)\n"
                     "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
                     "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n"
                     "        sum_xx += x * x\n", 1),),
        "fill", "x's padded lanes load 1.0 (to keep the norm away from 0): each padded lane adds 1 to the sum of squares"),
]

RIGHT = [
    Right("fwd_while_rsqrt", (Kernel("rmsnorm_fwd_kernel", _FWD_WHILE),),
          "while loops, a scalar running sum of each chunk's squares, tl.rsqrt: the same rstd and y"),
    Right("bwd_three_sweeps", (Kernel("rmsnorm_bwd_kernel", _BWD_THREE),),
          "rstd first, then mean(g * x_hat) from an explicit x_hat, then dx written as rstd*g - rstd*c*x_hat: three sweeps, same values"),
]
