"""Known-buggy kernels for puzzle 25 (LayerNorm backward at the roofline), and correct ones written
differently. A slow kernel is not a wrong one: --bench, not the catalog, judges speed."""
from catalog import Alternative, Bug

BUGS = [
    Bug("rows_past_m_not_masked", "backward",
        (("        ok = (rows[:, None] < M) & col_ok[None, :]\n", "        ok = col_ok[None, :] & (rows[:, None] >= 0)\n", 1),),
        reasons=(("out-of-bounds",), ("x_ptr",)),
        misleading=("atomic",),
        notes="the last step of ROWS rows can run past M"),
    Bug("persistent_loop_steps_by_one_block", "backward",
        (("    for first in range(pid * ROWS, M, programs * ROWS):", "    for first in range(pid * ROWS, M, ROWS):", 1),),
        reasons=(("Data race on `dx_ptr`",), ("belongs to exactly one program",)),
        misleading=("atomic_add",),
        notes="every program walks every later row block: programs overlap, dx is written twice"),
    Bug("partials_not_reduced", "backward",
        (("    for start in range(0, P, BLOCK_P):", "    for start in range(0, 1, BLOCK_P):", 1),),
        reasons=(("dgamma",), ("dbeta",)),
        misleading=("race", "atomic"),
        notes="only the first BLOCK_P partial rows are added up"),
    Bug("dx_without_the_mean_of_g", "backward",
        (("dx = rstd[:, None] * (g - mean_g[:, None] - x_hat * mean_g_xhat[:, None])",
          "dx = rstd[:, None] * (g - x_hat * mean_g_xhat[:, None])", 1),),
        reasons=(("dx",),),
        misleading=("race", "atomic")),
]

ALTERNATIVES = [
    Alternative("rsqrt", (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=1) / H + eps)",
                           "rstd = tl.rsqrt(tl.sum(diff * diff, axis=1) / H + eps)", 1),),
                notes="tl.rsqrt instead of 1 / sqrt: a different rounding, within the tolerance"),
]
