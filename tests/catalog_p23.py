"""Known-buggy kernels for puzzle 23 (deterministic LayerNorm backward), and correct ones written
differently."""
from catalog import Alternative, Bug

STORE_DGAMMA = "    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc, mask=col_ok)"

BUGS = [
    Bug("atomics_into_one_partial_row", "backward",
        ((STORE_DGAMMA, "    tl.atomic_add(dgamma_part_ptr + cols, dgamma_acc, mask=col_ok)", 1),),
        reasons=(("dgamma",),),
        interpreter_blind=True,
        gpu_reasons=(("not reproducible",),),
        notes="the right values (partial row 0 holds the whole sum), but atomics land in a different "
              "order every run: only the GPU's 20 launches show it"),
    Bug("plain_store_into_one_partial_row", "backward",
        ((STORE_DGAMMA, "    tl.store(dgamma_part_ptr + cols, dgamma_acc, mask=col_ok)", 1),),
        reasons=(("Data race on `dgamma_part_ptr`",), ("belongs to exactly one program",)),
        misleading=("atomic_add",),
        notes="every program writes row 0: the fix is the row offset, not atomics"),
    Bug("reduce_reads_only_the_first_partial_rows", "backward",
        (("    for start in range(0, P, BLOCK_P):", "    for start in range(0, BLOCK_P, BLOCK_P):", 1),),
        reasons=(("dgamma",), ("dbeta",)),
        misleading=("atomic", "lost"),
        notes="right while P <= BLOCK_P (few rows), wrong once more programs wrote partial rows"),
    Bug("dx_without_the_cross_terms", "backward",
        (("dx = rstd * (g - mean_g - x_hat * mean_g_xhat)", "dx = rstd * (g - mean_g)", 1),),
        reasons=(("dx",),),
        misleading=("atomic", "race")),
    Bug("short_last_group_not_skipped", "backward",
        (("        if row < M:  # the last group may be short\n", "        if row < M + ROWS_PER_PROGRAM:\n", 1),),
        reasons=(("out-of-bounds",), ("x_ptr",)),
        misleading=("atomic",)),
    Bug("one_pass_variance", "backward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)",
          "rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / H - mean * mean + eps)", 1),),
        reasons=(("mean near 1000",), ("dx",)),
        misleading=("atomic", "race", "lost"),
        notes="E[x²] − E[x]² in fp32: right for centred rows, digits cancel when the mean is 1000"),
]

ALTERNATIVES = [
    Alternative("strided_rows", (("        row = pid * ROWS_PER_PROGRAM + r\n",
                                  "        row = r * tl.num_programs(0) + pid\n", 1),),
                notes="program p takes rows p, p + P, p + 2P, ...: another fixed grouping, just as reproducible"),
]
