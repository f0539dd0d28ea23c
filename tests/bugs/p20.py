"""Every known kernel of puzzle 20 (RMSNorm forward and backward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
from bugs.reasons import MASKED_OUT, ZERO_PARTNER

ATOMIC = "tl.atomic_add(dgamma_ptr + cols, dy * x_hat, mask=mask)"
FWD_SUM_LOAD = "x = tl.load(x_row + cols, mask=cols < H, other=0.0).to(tl.float32)\n        acc += x * x"
DX = "dx = rstd * (dy * gamma - x_hat * mean_gxhat)"

PINNED = [
    Bug("jacobian_diagonal_dx", "backward",
        ((DX, "dx = rstd * dy * gamma * (1.0 - x_hat * x_hat / H)", 1),),
        cause="formula",
        reasons=(("Jacobian's diagonal",), ("cross term",)),
        not_causes=("atomic", "mask"),
        notes="the element-wise derivative: drops the term through rstd that every x of the row shares", code='variant.jacobian_diagonal'),
    Bug("eps_outside_the_sqrt", "forward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)",
          "rstd = 1.0 / (tl.sqrt(tl.sum(acc, axis=0) / H) + eps)", 1),),
        cause="formula",
        reasons=(("eps belongs inside the square root",), ("tiny values",)),
        not_causes=("atomic", "mask"), not_words=("BLOCK_H",),
        notes="only the tiny-values case (mean(x^2) ~ eps) is off by more than rounding", code='variant.eps_outside_sqrt'),
    Bug("dgamma_stored_not_added", "backward",
        ((ATOMIC, "tl.store(dgamma_ptr + cols, dy * x_hat, mask=mask)", 1),),
        cause="atomic",
        reasons=(("data race",), ("dgamma_ptr",)),
        reasons_unsanitized=(("alone",), ("atomic_add",)),
        not_words=("Jacobian", "eps belongs"),
        notes="each program overwrites dgamma with its own share: the sanitizer reports the race; without "
              "it, dgamma holds the last row's share alone", code='fault.race'),
    Bug("dgamma_load_add_store", "backward",
        ((ATOMIC, "tl.store(dgamma_ptr + cols,\n                 tl.load(dgamma_ptr + cols, mask=mask) + dy * x_hat, mask=mask)", 1),),
        cause="atomic",
        reasons=(("data race",), ("dgamma_ptr",)),
        cpu_blind_without_sanitizer=True,
        not_words=("Jacobian", "eps belongs"),
        notes="right in the interpreter (programs run one after another), lost updates on a GPU", code='fault.race'),
    Bug("sum_of_squares_without_mask", "forward",
        ((FWD_SUM_LOAD, "x = tl.load(x_row + cols).to(tl.float32)\n        acc += x * x", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        not_causes=("atomic",),
        notes="the last chunk reads past the row: the next row's values enter the sum, and the last row "
              "reads past the end of x", code='fault.oob'),
    Bug("mean_over_the_block", "forward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)",
          "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / BLOCK_H + eps)", 1),),
        cause="formula",
        reasons=(("divided by BLOCK_H instead of H",),),
        not_causes=("atomic",), code='variant.mean_over_block'),
    Bug("dgamma_share_without_rstd", "backward",
        ((ATOMIC, "tl.atomic_add(dgamma_ptr + cols, dy * x, mask=mask)", 1),),
        cause="formula", named="none",
        reasons=(("dgamma",),),
        not_causes=("atomic",),
        notes="a wrong formula (x for x_hat), atomics right: no hint may blame lost or overwritten updates"),
    Bug("only_the_first_chunk", "backward",
        (("    for start in range(0, H, BLOCK_H):\n        cols = start + tl.arange(0, BLOCK_H)\n        mask = cols < H\n"
          "        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n        x_hat",
          "    for start in range(0, BLOCK_H, BLOCK_H):\n        cols = start + tl.arange(0, BLOCK_H)\n"
          "        mask = cols < H\n"
          "        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n        x_hat", 1),),
        cause="loop", named="candidates",
        reasons=(("never written",), ("wider than BLOCK_H",)),
        not_causes=("atomic",), code='values.unwritten'),
    Bug("eps_forgotten", "forward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)", "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H)", 1),),
        cause="formula", named="candidates",
        reasons=(("tiny values",), ("eps",)),
        not_causes=("atomic",), not_words=("BLOCK_H",),
        notes="1 / sqrt(mean(x²)): a row of zeros divides by zero; the tiny-values case shows it first", code='values.row_factor'),
]

PASSING = [
    Right("backward_three_passes_with_x_hat", (
        ("    mean_gxhat = rstd * tl.sum(sum_gx, axis=0) / H\n",
         "    # a second sweep for mean(g * x_hat), with x_hat itself: one more read of the row\n"
         "    sum_gxhat = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
         "    for start in range(0, H, BLOCK_H):\n"
         "        cols = start + tl.arange(0, BLOCK_H)\n"
         "        mask = cols < H\n"
         "        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
         "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
         "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n"
         "        sum_gxhat += dy * gamma * (x * rstd)\n"
         "    mean_gxhat = tl.sum(sum_gxhat, axis=0) / H\n", 1),),
        notes="mean(g x_hat) from x_hat itself, in a sweep of its own"),
    Right("dx_expanded", (
        (DX, "dx = rstd * dy * gamma - x * (rstd * rstd * rstd) * (tl.sum(sum_gx, axis=0) / H)", 1),),
        notes="dx = rstd g - x rstd^3 mean(g x), the cross term written with x instead of x_hat"),
    Right("forward_scales_gamma_first", (
        ("tl.store(y_ptr + row * H + cols, x * rstd * gamma, mask=mask)",
         "tl.store(y_ptr + row * H + cols, (gamma * rstd) * x, mask=mask)", 1),),
        notes="the same product in another order"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
RSTD_F = "rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / H + eps)"
Y_STORE = "tl.store(y_ptr + row * H + cols, x * rstd * gamma, mask=mask)"
SUMS = ("    sum_xx = tl.zeros([BLOCK_H], dtype=tl.float32)\n    sum_gx = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
        "    for start in range(0, H, BLOCK_H):\n")

MEASURED = [
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


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:rmsnorm_fwd_kernel:2c95eea7:0": MASKED_OUT,
    "fill.other:rmsnorm_fwd_kernel:3526e811:0": MASKED_OUT,
    "fill.other:rmsnorm_bwd_kernel:dd631e71:0": ZERO_PARTNER,
    "fill.other:rmsnorm_bwd_kernel:3526e811:0": ZERO_PARTNER,
    "fill.other:rmsnorm_bwd_kernel:2c95eea7:1": MASKED_OUT,
    "fill.other:rmsnorm_bwd_kernel:dd631e71:1": MASKED_OUT,
    "fill.other:rmsnorm_bwd_kernel:3526e811:1": MASKED_OUT,
}
