"""Known-buggy kernels for puzzle 25 (LayerNorm backward at the roofline), and correct ones written
differently. A slow kernel is not a wrong one: --bench, not the catalog, judges speed."""
from catalog import Alternative, Bug

BUGS = [
    Bug("rows_past_m_not_masked", "backward",
        (("        row_ok = rows[:, None] < M\n", "        row_ok = rows[:, None] >= 0\n", 1),),
        reasons=(("out-of-bounds",), ("x_ptr",)),
        misleading=("atomic",),
        notes="the last step of ROWS rows can run past M"),
    Bug("persistent_loop_steps_by_one_block", "backward",
        (("    for first in tl.range(pid * ROWS, M, programs * ROWS, num_stages=STAGES):",
          "    for first in tl.range(pid * ROWS, M, ROWS, num_stages=STAGES):", 1),),
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
    Bug("tail_variance_counts_padded_lanes", "backward",
        (("            t_diff = tl.where(t_ok, t_x - mean[:, None], 0.0)  # padded lanes would add mean^2\n",
          "            t_diff = t_x - mean[:, None]\n", 1),),
        reasons=(("dx",),),
        misleading=("race", "atomic", "out-of-bounds"),
        notes="the tail block's padded lanes load 0, and 0 - mean squared joins the variance: only widths "
              "whose tail block is not full (100 = 64 + 36 of 64) go wrong"),
    Bug("partial_rows_added_into_an_uncleared_buffer", "backward",
        (("    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc)\n",
          "    tl.atomic_add(dgamma_part_ptr + pid * H + cols, dgamma_acc)\n", 1),),
        reasons=(("dgamma",), ("NaN",)),
        misleading=("race", "out-of-bounds", "lost"),
        notes="adds its share to what the buffer held: the partial rows are scratch (torch.empty's, poisoned by "
              "the checker), not zeros; before the poison this failed or passed by the luck of the allocator"),
    Bug("one_pass_variance", "backward",
        (("        sum_sq = tl.sum(diff * diff, axis=1)\n", "        sum_sq = tl.sum(x * x, axis=1)\n", 1),
         ("            sum_sq += tl.sum(t_diff * t_diff, axis=1)\n", "            sum_sq += tl.sum(t_x * t_x, axis=1)\n", 1),
         ("        rstd = 1.0 / tl.sqrt(sum_sq / H + eps)\n",
          "        rstd = 1.0 / tl.sqrt(sum_sq / H - mean * mean + eps)\n", 1)),
        reasons=(("mean near 1000",), ("dx",)),
        misleading=("race", "atomic", "out-of-bounds"),
        notes="E[x²] − E[x]² in fp32, head and tail: right for centred rows, digits cancel when the mean is 1000"),
]

ALTERNATIVES = [
    Alternative("rsqrt", (("rstd = 1.0 / tl.sqrt(sum_sq / H + eps)", "rstd = tl.rsqrt(sum_sq / H + eps)", 1),),
                notes="tl.rsqrt instead of 1 / sqrt: a different rounding, within the tolerance"),
]
