"""Every known kernel of puzzle 21 (LayerNorm backward): the bugs tests/test_contract.py pins (PINNED)
and the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What each list means:
tests/bugs/__init__.py."""
from bugs import Bug, Right
from bugs.reasons import MASKED_OUT, ZERO_PARTNER, WHERE_ZEROES

DGAMMA = "tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)"
DBETA = "tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)"
DX = "dx = rstd * (dz * gamma - mean_g - x_hat * mean_gxhat)"
SUM_D2 = "diff = tl.where(mask, x - mean, 0.0)\n        sum_d2 += diff * diff"
RSTD = "rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H + eps)"
NOT_SHARING = ("atomic", "lost", "overwr", "race", "equal shares:")  # a formula bug, not a sharing bug

PINNED = [
    Bug("jacobian_diagonal_dx", "backward",
        ((DX, "dx = rstd * dz * gamma * (1.0 - 1.0 / H - x_hat * x_hat / H)", 1),),
        cause="formula",
        reasons=(("Jacobian's diagonal",), ("cross terms are missing",)),
        not_causes=("atomic", "mask"), not_words=("equal shares:",),
        notes="chapter 5's trap: the element-wise derivative, without the terms through mean and rstd", code='variant.jacobian_diagonal'),
    Bug("dgamma_stored_not_added", "backward",
        ((DGAMMA, "tl.store(dgamma_ptr + cols, dz * x_hat, mask=mask)", 1),),
        cause="atomic",
        reasons=(("data race",), ("dgamma_ptr",), ("atomic_add",)),
        reasons_unsanitized=(("alone",), ("atomic_add",)),
        not_words=("Jacobian", "eps belongs", "padded"),
        notes="each program overwrites dgamma with its own share: a race in the sanitizer; without it, "
              "dgamma holds the last row's share alone", code='fault.race'),
    Bug("dbeta_load_add_store", "backward",
        ((DBETA, "tl.store(dbeta_ptr + cols, tl.load(dbeta_ptr + cols, mask=mask) + dz, mask=mask)", 1),),
        cause="atomic",
        reasons=(("data race",), ("dbeta_ptr",)),
        cpu_blind_without_sanitizer=True,
        not_words=("Jacobian", "eps belongs", "padded"),
        notes="right in the interpreter (programs run one after another); updates lost on a GPU", code='fault.race'),
    Bug("dbeta_adds_g_not_dz", "backward",
        ((DBETA, "tl.atomic_add(dbeta_ptr + cols, dz * gamma, mask=mask)", 1),),
        cause="formula", named="none",
        reasons=(("dbeta",),),
        not_causes=("atomic",), not_words=("equal shares:",),
        notes="a wrong formula with correct atomics: on the identical-rows case dbeta is M * 1.3 * gamma, "
              "not a whole number of shares, so no hint may blame lost or overwritten updates", code='operand.factor'),
    Bug("dgamma_share_without_rstd", "backward",
        ((DGAMMA, "tl.atomic_add(dgamma_ptr + cols, dz * (x - mean), mask=mask)", 1),),
        cause="formula", named="none",
        reasons=(("dgamma",),),
        not_causes=("atomic",), not_words=("equal shares:",),
        notes="x - mean for x_hat: another wrong formula that must not be read as lost updates"),
    Bug("padded_lanes_in_the_variance", "backward",
        ((SUM_D2, "diff = x - mean\n        sum_d2 += diff * diff", 1),),
        cause="fill",
        reasons=(("padded lanes leaked into the variance",),),
        not_causes=("atomic",), code='variant.padded_lanes'),
    Bug("one_pass_variance", "backward",
        ((SUM_D2, "diff = tl.where(mask, x - mean, 0.0)\n        sum_d2 += x * x", 1),
         (RSTD, "rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H - mean * mean + eps)", 1)),
        cause="stability",
        reasons=(("cancels catastrophically",),),
        not_causes=("atomic",), not_words=("padded",)),
    Bug("eps_outside_the_sqrt", "backward",
        ((RSTD, "rstd = 1.0 / (tl.sqrt(tl.sum(sum_d2, axis=0) / H) + eps)", 1),),
        cause="formula",
        reasons=(("eps belongs inside the square root",),),
        not_causes=("atomic",), not_words=("padded",), code='variant.eps_outside_sqrt'),
    Bug("dbeta_atomic_without_mask", "backward",
        ((DBETA, "tl.atomic_add(dbeta_ptr + cols, dz)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("dbeta_ptr",)),
        not_causes=("atomic",),
        gpu_reasons=(("past the end of `dbeta`",), ("mask",)),
        notes="the padded lanes of the last chunk add 0 (masked loads gave dz = 0) past the end of dbeta: "
              "dbeta's own values are right; on a GPU the atomic changes the band of known bits after it "
              "(seen on an H100)", code='fault.oob'),
]

PASSING = [
    Right("dbeta_in_the_first_sweep", (
        ("        " + DBETA + "\n", "", 1),
        ("        sum_g += dz * gamma\n",
         "        sum_g += dz * gamma\n"
         "        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)  # dbeta needs no statistics\n", 1)),
        notes="dbeta's share added as soon as dz is read, in the first sweep"),
    Right("dx_regrouped", (
        (DX, "dx = rstd * (dz * gamma - mean_g) - x_hat * (rstd * mean_gxhat)", 1),),
        notes="the same dx with its terms grouped differently"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
SWEEP3 = ("    for start in range(0, H, BLOCK_H):\n        cols = start + tl.arange(0, BLOCK_H)\n        mask = cols < H\n"
          "        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        dz = tl.load(dz_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n        x_hat")

MEASURED = [
    Bug("dx_without_the_mean_of_g", "backward",
        ((DX, "dx = rstd * (dz * gamma - x_hat * mean_gxhat)", 1),),
        "formula", "dx drops the − mean(g) term"),
    Bug("mean_over_the_block", "backward",
        (("mean = tl.sum(sum_x, axis=0) / H", "mean = tl.sum(sum_x, axis=0) / BLOCK_H", 1),),
        "formula", "the mean divided by BLOCK_H instead of H"),
    Bug("dz_rows_block_apart", "backward",
        (("dz_row = dz_ptr + row * H", "dz_row = dz_ptr + row * BLOCK_H", 1),),
        "address", "dz's row read at row * BLOCK_H instead of row * H"),
    Bug("dgamma_indexed_like_x", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)", "tl.atomic_add(dgamma_ptr + row * H + cols, dz * x_hat, mask=mask)", 1),),
        "address", "dgamma addressed like a row of x (row * H + cols): it is one [H] vector"),
    Bug("sum_gd_starts_from_sum_g", "backward",
        (("sum_gd = tl.zeros([BLOCK_H], dtype=tl.float32)", "sum_gd = sum_g", 1),),
        "accumulate", "sweep 2's sum of g·(x − mean) started from sweep 1's sum of g instead of zero"),
    Bug("sweep3_mask_le", "backward",
        ((SWEEP3, SWEEP3.replace("mask = cols < H", "mask = cols <= H"), 1),),
        "mask", "the last sweep's mask is cols <= H"),
    Bug("sweep3_first_chunk_only", "backward",
        ((SWEEP3, SWEEP3.replace("range(0, H, BLOCK_H)", "range(0, BLOCK_H, BLOCK_H)"), 1),),
        "loop", "the last sweep (dx and the parameter shares) covers only the first chunk"),
    Bug("x_hat_in_bf16", "backward",
        (("        x_hat = (x - mean) * rstd\n", "        x_hat = ((x - mean) * rstd).to(tl.bfloat16)\n", 1),),
        "precision", "x̂ kept in bf16 for the last sweep (dx and dgamma's shares lose 16 bits)"),
    Bug("dx_written_into_dz", "backward",
        (("tl.store(dx_ptr + row * H + cols, dx, mask=mask)", "tl.store(dz_row + cols, dx, mask=mask)", 1),),
        "inplace", "dx stored into dz's row (the upstream gradient, an input); dx never written",
        accept=("address",)),
]

RIGHT = [
    Right("rsqrt_and_dx_distributed", (
        ("rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H + eps)", "rstd = tl.rsqrt(tl.sum(sum_d2, axis=0) / H + eps)", 1),
        (DX, "dx = rstd * (dz * gamma - mean_g) - rstd * x_hat * mean_gxhat", 1)),
          "rstd with tl.rsqrt, dx with rstd distributed"),
    Right("dbeta_before_dgamma_with_relaxed_atomics", (
        ("        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)\n        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)",
         "        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask, sem=\"relaxed\")\n"
         "        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask, sem=\"relaxed\")", 1),),
          "the two parameter shares added in the other order, with relaxed atomics"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:layernorm_bwd_kernel:dc840dae:0": ZERO_PARTNER,
    "fill.other:layernorm_bwd_kernel:3526e811:0": ZERO_PARTNER,
    "fill.other:layernorm_bwd_kernel:2c95eea7:1": WHERE_ZEROES,
    "fill.other:layernorm_bwd_kernel:dc840dae:1": ZERO_PARTNER,
    "fill.other:layernorm_bwd_kernel:3526e811:1": ZERO_PARTNER,
    "fill.other:layernorm_bwd_kernel:2c95eea7:2": MASKED_OUT,
    "fill.other:layernorm_bwd_kernel:dc840dae:2": MASKED_OUT,
    "fill.other:layernorm_bwd_kernel:3526e811:2": MASKED_OUT,
}
