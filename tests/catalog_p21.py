"""Known-buggy kernels for puzzle 21 (LayerNorm backward), each the reference solution with one bug
patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

DGAMMA = "tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)"
DBETA = "tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)"
DX = "dx = rstd * (dz * gamma - mean_g - x_hat * mean_gxhat)"
SUM_D2 = "diff = tl.where(mask, x - mean, 0.0)\n        sum_d2 += diff * diff"
RSTD = "rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H + eps)"
NOT_SHARING = ("atomic", "lost", "overwr", "race", "equal shares:")  # a formula bug, not a sharing bug

BUGS = [
    Bug("jacobian_diagonal_dx", "backward",
        ((DX, "dx = rstd * dz * gamma * (1.0 - 1.0 / H - x_hat * x_hat / H)", 1),),
        reasons=(("Jacobian's diagonal",), ("cross terms are missing",)),
        misleading=NOT_SHARING + ("mask",),
        notes="chapter 5's trap: the element-wise derivative, without the terms through mean and rstd"),
    Bug("dgamma_stored_not_added", "backward",
        ((DGAMMA, "tl.store(dgamma_ptr + cols, dz * x_hat, mask=mask)", 1),),
        reasons=(("data race",), ("dgamma_ptr",), ("atomic_add",)),
        reasons_unsanitized=(("alone",), ("atomic_add",)),
        misleading=("Jacobian", "eps belongs", "padded"),
        notes="each program overwrites dgamma with its own share: a race in the sanitizer; without it, "
              "dgamma holds the last row's share alone"),
    Bug("dbeta_load_add_store", "backward",
        ((DBETA, "tl.store(dbeta_ptr + cols, tl.load(dbeta_ptr + cols, mask=mask) + dz, mask=mask)", 1),),
        reasons=(("data race",), ("dbeta_ptr",)),
        cpu_blind_without_sanitizer=True,
        misleading=("Jacobian", "eps belongs", "padded"),
        notes="right in the interpreter (programs run one after another); updates lost on a GPU"),
    Bug("dbeta_adds_g_not_dz", "backward",
        ((DBETA, "tl.atomic_add(dbeta_ptr + cols, dz * gamma, mask=mask)", 1),),
        reasons=(("dbeta",),),
        misleading=NOT_SHARING,
        notes="a wrong formula with correct atomics: on the identical-rows case dbeta is M * 1.3 * gamma, "
              "not a whole number of shares, so no hint may blame lost or overwritten updates"),
    Bug("dgamma_share_without_rstd", "backward",
        ((DGAMMA, "tl.atomic_add(dgamma_ptr + cols, dz * (x - mean), mask=mask)", 1),),
        reasons=(("dgamma",),),
        misleading=NOT_SHARING,
        notes="x - mean for x_hat: another wrong formula that must not be read as lost updates"),
    Bug("padded_lanes_in_the_variance", "backward",
        ((SUM_D2, "diff = x - mean\n        sum_d2 += diff * diff", 1),),
        reasons=(("padded lanes leaked into the variance",),),
        misleading=("atomic", "lost", "race")),
    Bug("one_pass_variance", "backward",
        ((SUM_D2, "diff = tl.where(mask, x - mean, 0.0)\n        sum_d2 += x * x", 1),
         (RSTD, "rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H - mean * mean + eps)", 1)),
        reasons=(("cancels catastrophically",),),
        misleading=("atomic", "lost", "race", "padded")),
    Bug("eps_outside_the_sqrt", "backward",
        ((RSTD, "rstd = 1.0 / (tl.sqrt(tl.sum(sum_d2, axis=0) / H) + eps)", 1),),
        reasons=(("eps belongs inside the square root",),),
        misleading=("atomic", "lost", "padded")),
    Bug("dbeta_atomic_without_mask", "backward",
        ((DBETA, "tl.atomic_add(dbeta_ptr + cols, dz)", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("dbeta_ptr",)),
        misleading=("race", "lost"),
        gpu_reasons=(("past the end of `dbeta`",), ("mask",)),
        notes="the padded lanes of the last chunk add 0 (masked loads gave dz = 0) past the end of dbeta: "
              "dbeta's own values are right; on a GPU the atomic changes the band of known bits after it "
              "(seen on an H100)"),
]

ALTERNATIVES = [
    Alternative("dbeta_in_the_first_sweep", (
        ("        " + DBETA + "\n", "", 1),
        ("        sum_g += dz * gamma\n",
         "        sum_g += dz * gamma\n"
         "        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)  # dbeta needs no statistics\n", 1)),
        notes="dbeta's share added as soon as dz is read, in the first sweep"),
    Alternative("dx_regrouped", (
        (DX, "dx = rstd * (dz * gamma - mean_g) - x_hat * (rstd * mean_gxhat)", 1),),
        notes="the same dx with its terms grouped differently"),
]
