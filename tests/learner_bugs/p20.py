"""Learner bugs for puzzle 20 (RMSNorm forward and backward), and correct kernels written differently."""
from entries import Bug, Kernel, Right

RSTD_F = "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)"
Y_STORE = "tl.store(y_ptr + row * H + cols, x * rstd * gamma, mask=mask)"
SUMS = ("    sum_xx = tl.zeros([BLOCK_H], dtype=tl.float32)\n    sum_gx = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
        "    for start in range(0, H, BLOCK_H):\n")

BUGS = [
    Bug("rstd_without_the_root", "forward",
        ((RSTD_F, "rstd = 1.0 / (tl.sum(acc, axis=0) / H + eps)", 1),),
        "formula", "rstd = 1 / (mean(x²) + eps): the square root forgotten"),
    Bug("y_rows_block_apart", "forward",
        ((Y_STORE, Y_STORE.replace("row * H", "row * BLOCK_H"), 1),),
        "address", "y's row stored at row * BLOCK_H instead of row * H"),
    Bug("mean_over_the_documented_h", "forward",
        ((RSTD_F, "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / 40 + eps)", 1),),
        "hardcoded", "the mean of squares divided by 40, the documented H"),
    Bug("dgamma_share_times_gamma", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)", "tl.atomic_add(dgamma_ptr + cols, dy * gamma * x_hat, mask=mask)", 1),),
        "formula", "dgamma's share dy·γ·x̂ instead of dy·x̂"),
    Bug("cross_term_without_rstd", "backward",
        (("mean_gxhat = rstd * tl.sum(sum_gx, axis=0) / H", "mean_gxhat = tl.sum(sum_gx, axis=0) / H", 1),),
        "formula", "mean(g·x̂) taken as mean(g·x): the rstd factor dropped"),
    Bug("sums_restarted_per_chunk", "backward",
        ((SUMS, "    for start in range(0, H, BLOCK_H):\n        sum_xx = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
                "        sum_gx = tl.zeros([BLOCK_H], dtype=tl.float32)\n", 1),),
        "accumulate", "the backward's two sums started from zero inside the loop: only the last chunk counts"),
    Bug("dy_rows_block_apart", "backward",
        (("dy_row = dy_ptr + row * H", "dy_row = dy_ptr + row * BLOCK_H", 1),),
        "address", "dy's row read at row * BLOCK_H instead of row * H"),
    Bug("sum_of_squares_pads_with_one", "forward",
        (("x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)",
          "x = tl.load(x_row + cols, mask=cols < H, other=1.0).to(tl.float32)", 1),),
        "fill", "the sum of squares' padded lanes load 1.0: each adds 1 to mean(x²)"),
]

RIGHT = [
    Right("forward_rsqrt", ((RSTD_F, "rstd = tl.rsqrt(tl.sum(acc, axis=0) / H + eps)", 1),), "rstd with tl.rsqrt"),
    Right("backward_dx_factored", (("dx = rstd * (dy * gamma - x_hat * mean_gxhat)",
                                    "dx = rstd * dy * gamma - (rstd * mean_gxhat) * x_hat", 1),),
          "dx with rstd distributed over the two terms"),
]
