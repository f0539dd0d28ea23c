"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 21 (LayerNorm backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_DIFF = "        diff = tl.where(mask, x - mean, 0.0)\n"
_D2 = "        sum_d2 += diff * diff\n"
_RSTD = "    rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H + eps)  # biased variance, eps inside the root\n"
_DX = "        dx = rstd * (dz * gamma - mean_g - x_hat * mean_gxhat)\n"
_DBETA = "        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)\n"
_DGAMMA = "        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)\n"
_SWEEP2_HEAD = ("    sum_gd = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
                "    for start in range(0, H, BLOCK_H):\n"
                "        cols = start + tl.arange(0, BLOCK_H)\n")

_FOUR_SWEEPS = '''
@triton.jit
def layernorm_bwd_kernel(x_ptr, gamma_ptr, dz_ptr, dx_ptr, dgamma_ptr, dbeta_ptr, H, eps,
                         BLOCK_H: tl.constexpr):
    """Four sweeps: mean; variance; mean(g) and mean(g * x_hat) from an explicit x_hat; then dx and
    the shares. dx written as (g - mean(g) - x_hat * mean(g x_hat)) * rstd."""
    row = tl.program_id(0)
    off = row * H
    s = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        s += tl.load(x_ptr + off + cols, mask=cols < H, other=0.0).to(tl.float32)
    mean = tl.sum(s, axis=0) / H
    v = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        m = cols < H
        d = tl.load(x_ptr + off + cols, mask=m, other=0.0).to(tl.float32) - mean
        v += tl.where(m, d * d, 0.0)
    rstd = tl.rsqrt(tl.sum(v, axis=0) / H + eps)
    a = tl.zeros([BLOCK_H], dtype=tl.float32)
    b = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        m = cols < H
        xh = tl.where(m, (tl.load(x_ptr + off + cols, mask=m, other=0.0).to(tl.float32) - mean) * rstd, 0.0)
        g = tl.load(dz_ptr + off + cols, mask=m, other=0.0).to(tl.float32) * \\
            tl.load(gamma_ptr + cols, mask=m, other=0.0).to(tl.float32)
        a += g
        b += g * xh
    c1 = tl.sum(a, axis=0) / H
    c2 = tl.sum(b, axis=0) / H
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        m = cols < H
        xh = (tl.load(x_ptr + off + cols, mask=m, other=0.0).to(tl.float32) - mean) * rstd
        dz = tl.load(dz_ptr + off + cols, mask=m, other=0.0).to(tl.float32)
        g = dz * tl.load(gamma_ptr + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(dx_ptr + off + cols, (g - c1 - xh * c2) * rstd, mask=m)
        tl.atomic_add(dbeta_ptr + cols, dz, mask=m)
        tl.atomic_add(dgamma_ptr + cols, dz * xh, mask=m)
'''

_WHILE_SCALARS = '''
@triton.jit
def layernorm_bwd_kernel(x_ptr, gamma_ptr, dz_ptr, dx_ptr, dgamma_ptr, dbeta_ptr, H, eps,
                         BLOCK_H: tl.constexpr):
    """While loops with scalar running sums (each chunk reduced as it comes); the same three sweeps."""
    row = tl.program_id(0)
    xr = x_ptr + row * H
    dzr = dz_ptr + row * H
    sx = 0.0
    sg = 0.0
    start = 0
    while start < H:
        cols = start + tl.arange(0, BLOCK_H)
        ok = cols < H
        sx += tl.sum(tl.load(xr + cols, mask=ok, other=0.0).to(tl.float32), axis=0)
        sg += tl.sum(tl.load(dzr + cols, mask=ok, other=0.0).to(tl.float32)
                     * tl.load(gamma_ptr + cols, mask=ok, other=0.0).to(tl.float32), axis=0)
        start += BLOCK_H
    mean = sx / H
    sdd = 0.0
    sgd = 0.0
    start = 0
    while start < H:
        cols = start + tl.arange(0, BLOCK_H)
        ok = cols < H
        d = tl.where(ok, tl.load(xr + cols, mask=ok, other=0.0).to(tl.float32) - mean, 0.0)
        g = tl.load(dzr + cols, mask=ok, other=0.0).to(tl.float32) * tl.load(gamma_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        sdd += tl.sum(d * d, axis=0)
        sgd += tl.sum(g * d, axis=0)
        start += BLOCK_H
    rstd = 1.0 / tl.sqrt(sdd / H + eps)
    mg = sg / H
    mgx = sgd * rstd / H
    start = 0
    while start < H:
        cols = start + tl.arange(0, BLOCK_H)
        ok = cols < H
        xh = (tl.load(xr + cols, mask=ok, other=0.0).to(tl.float32) - mean) * rstd
        dz = tl.load(dzr + cols, mask=ok, other=0.0).to(tl.float32)
        gm = tl.load(gamma_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row * H + cols, rstd * (dz * gm - mg - xh * mgx), mask=ok)
        tl.atomic_add(dgamma_ptr + cols, dz * xh, mask=ok)
        tl.atomic_add(dbeta_ptr + cols, dz, mask=ok)
        start += BLOCK_H
'''

MEASURED = [
    Bug("one_pass_variance", "backward",
        ((_D2, "        sum_d2 += x * x\n", 1),
         (_RSTD, "    rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H - mean * mean + eps)\n", 1)),
        "stability", "the variance as E[x^2] - mean^2: catastrophic cancellation when the mean is large (mean near 1000)"),
    Bug("padded_lanes_in_variance", "backward",
        ((_DIFF, "        diff = x - mean\n", 1),),
        "mask", "diff = x - mean on every lane: the padded lanes load 0 and add mean^2 to the variance (and -mean * g terms)",
        accept=("fill",)),
    Bug("dx_drops_mean_g", "backward",
        ((_DX, "        dx = rstd * (dz * gamma - x_hat * mean_gxhat)\n", 1),),
        "formula", "dx without the - mean(g) term (puzzle 20's RMSNorm formula reused: LayerNorm's mean also moves with x)"),
    Bug("mean_gxhat_missing_rstd", "backward",
        (("    mean_gxhat = rstd * tl.sum(sum_gd, axis=0) / H\n", "    mean_gxhat = tl.sum(sum_gd, axis=0) / H\n", 1),),
        "formula", "mean(g * x_hat) taken as mean(g * (x - mean)): the factor rstd forgotten"),
    Bug("unbiased_variance", "backward",
        ((_RSTD, "    rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / (H - 1) + eps)\n", 1),),
        "formula", "the variance divided by H - 1 (unbiased): LayerNorm uses the biased variance, divided by H"),
    Bug("dbeta_load_add_store", "backward",
        ((_DBETA, "        acc = tl.load(dbeta_ptr + cols, mask=mask, other=0.0)\n"
                  "        tl.store(dbeta_ptr + cols, acc + dz, mask=mask)\n", 1),),
        "atomic", "dbeta updated with a load, an add and a store: programs that interleave lose each other's rows"),
    Bug("dbeta_adds_g", "backward",
        ((_DBETA, "        tl.atomic_add(dbeta_ptr + cols, dz * gamma, mask=mask)\n", 1),),
        "formula", "dbeta's share is dz * gamma (g) instead of dz: beta is added after the scale, its gradient is dz alone"),
    Bug("sweep2_loop_counts_blocks", "backward",
        ((_SWEEP2_HEAD, "    sum_gd = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
                        "    for start in range(0, tl.cdiv(H, BLOCK_H)):\n"
                        "        cols = start + tl.arange(0, BLOCK_H)\n", 1),),
        "loop", "the variance sweep counts chunks (0, 1, 2) but uses the counter as the column offset: overlapping chunks, the end of the row never reached"),
    Bug("sum_g_overwritten", "backward",
        (("        sum_g += dz * gamma\n", "        sum_g = dz * gamma\n", 1),),
        "accumulate", "sum_g = dz * gamma inside the loop: only the last chunk of g is in mean(g)"),
    Bug("dgamma_per_row_offset", "backward",
        ((_DGAMMA, "        tl.atomic_add(dgamma_ptr + row * H + cols, dz * x_hat, mask=mask)\n", 1),),
        "address", "dgamma indexed like an [M, H] tensor (row * H + cols): it is one [H] vector every row adds into"),
    Bug("mean_h_hardcoded", "backward",
        (("    mean = tl.sum(sum_x, axis=0) / H\n", "    mean = tl.sum(sum_x, axis=0) / 40\n", 1),),
        "hardcoded", "the mean divides by the documented H = 40"),
]

RIGHT = [
    Right("four_sweeps", (Kernel("layernorm_bwd_kernel", _FOUR_SWEEPS),),
          "mean and variance in their own sweeps, the two row means from an explicit x_hat in a third, dx and the shares in a fourth; rsqrt"),
    Right("while_scalar_sums", (Kernel("layernorm_bwd_kernel", _WHILE_SCALARS),),
          "while loops and scalar running sums (each chunk reduced on arrival) instead of [BLOCK_H] accumulators"),
]
