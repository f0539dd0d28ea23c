"""Every known kernel of puzzle 23 (deterministic LayerNorm backward): the bugs tests/test_contract.py
pins (PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right
from bugs.reasons import ZERO_PARTNER

STORE_DGAMMA = "    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc, mask=col_ok)"

PINNED = [
    Bug("atomics_into_one_partial_row", "backward",
        ((STORE_DGAMMA, "    tl.atomic_add(dgamma_part_ptr + cols, dgamma_acc, mask=col_ok)", 1),),
        cause="determinism", named="none",
        reasons=(("dgamma",),),
        interpreter_blind=True,
        gpu_reasons=(("not reproducible",),),
        notes="the right values (partial row 0 holds the whole sum), but atomics land in a different "
              "order every run: only the GPU's 20 launches show it"),
    Bug("plain_store_into_one_partial_row", "backward",
        ((STORE_DGAMMA, "    tl.store(dgamma_part_ptr + cols, dgamma_acc, mask=col_ok)", 1),),
        cause="address",
        reasons=(("Data race on `dgamma_part_ptr`",), ("belongs to exactly one program",)),
        not_causes=("atomic",),
        notes="every program writes row 0: the fix is the row offset, not atomics", code='fault.race'),
    Bug("reduce_reads_only_the_first_partial_rows", "backward",
        (("    for start in range(0, P, BLOCK_P):", "    for start in range(0, BLOCK_P, BLOCK_P):", 1),),
        cause="loop", named="candidates",
        reasons=(("dgamma",), ("dbeta",)),
        not_causes=("atomic",),
        notes="right while P <= BLOCK_P (few rows), wrong once more programs wrote partial rows", code='values.factor'),
    Bug("dx_without_the_cross_terms", "backward",
        (("dx = rstd * (g - mean_g - x_hat * mean_g_xhat)", "dx = rstd * (g - mean_g)", 1),),
        cause="formula", named="none",
        reasons=(("dx",),),
        not_causes=("atomic",), code='values.column_factor'),
    Bug("short_last_group_not_skipped", "backward",
        (("        if row < M:  # the last group may be short\n", "        if row < M + ROWS_PER_PROGRAM:\n", 1),),
        cause="mask", named="candidates",
        reasons=(("out-of-bounds",), ("x_ptr",)),
        not_causes=("atomic",), code='fault.oob'),
    Bug("one_pass_variance", "backward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)",
          "rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / H - mean * mean + eps)", 1),),
        cause="stability", named="none",
        reasons=(("mean near 1000",), ("dx",)),
        not_causes=("atomic",),
        notes="E[x²] − E[x]² in fp32: right for centred rows, digits cancel when the mean is 1000"),
]

PASSING = [
    Right("strided_rows", (("        row = pid * ROWS_PER_PROGRAM + r\n",
                                  "        row = r * tl.num_programs(0) + pid\n", 1),),
                notes="program p takes rows p, p + P, p + 2P, ...: another fixed grouping, just as reproducible"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
ACCS = ("    dgamma_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n    dbeta_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
        "    for r in range(ROWS_PER_PROGRAM):\n")
PART_STORE = ("    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc, mask=col_ok)\n"
              "    tl.store(dbeta_part_ptr + pid * H + cols, dbeta_acc, mask=col_ok)")

MEASURED = [
    Bug("partials_stored_at_the_last_row", "backward",
        ((PART_STORE, PART_STORE.replace("pid * H", "row * H"), 1),),
        "address", "the partial rows stored at the last row handled (row * H) instead of the program's row pid"),
    Bug("shares_restarted_per_row", "backward",
        ((ACCS, "    for r in range(ROWS_PER_PROGRAM):\n        dgamma_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
                "        dbeta_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n", 1),),
        "accumulate", "the program's sums started over for every row: only its last row's share is stored"),
    Bug("reduce_rows_p_apart", "backward",
        (("tile = rows[:, None] * H + cols[None, :]", "tile = rows[:, None] * P + cols[None, :]", 1),),
        "address", "the reduction reads partial row p at p * P instead of p * H"),
    Bug("reduce_rows_masked_with_h", "backward",
        (("ok = (rows[:, None] < P) & col_ok[None, :]", "ok = (rows[:, None] < H) & col_ok[None, :]", 1),),
        "mask", "the reduction's row mask compares with H instead of P"),
    Bug("variance_over_h_minus_1", "backward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)", "rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / (H - 1) + eps)", 1),),
        "formula", "the variance divided by H − 1"),
    Bug("reduce_steps_by_block_cols", "backward",
        (("for start in range(0, P, BLOCK_P):", "for start in range(0, P, BLOCK_COLS):", 1),),
        "loop", "the reduction's loop over partial rows steps by BLOCK_COLS while each step reads BLOCK_P rows"),
    Bug("mean_over_the_block", "backward",
        (("mean = tl.sum(x, axis=0) / H", "mean = tl.sum(x, axis=0) / BLOCK_H", 1),),
        "formula", "the mean divided by BLOCK_H instead of H"),
    Bug("variance_in_one_pass", "backward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)",
          "rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / H - mean * mean + eps)", 1),),
        "stability", "the variance as E[x²] − mean²: cancels when the mean is large against the spread"),
]

RIGHT = [
    Right("partials_added_atomically_into_own_row", ((PART_STORE,
        "    tl.atomic_add(dgamma_part_ptr + pid * H + cols, dgamma_acc, mask=col_ok)\n"
        "    tl.atomic_add(dbeta_part_ptr + pid * H + cols, dbeta_acc, mask=col_ok)", 1),),
          "each program adds into its own (zeroed) partial row: one adder per element, still deterministic"),
    Right("reduce_one_partial_row_at_a_time", (Kernel("ln_bwd_reduce_kernel", '''
        @triton.jit
        def ln_bwd_reduce_kernel(dgamma_part_ptr, dbeta_part_ptr, dgamma_ptr, dbeta_ptr, P, H,
                                 BLOCK_P: tl.constexpr, BLOCK_COLS: tl.constexpr):
            cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
            col_ok = cols < H
            dgamma = tl.zeros([BLOCK_COLS], dtype=tl.float32)
            dbeta = tl.zeros([BLOCK_COLS], dtype=tl.float32)
            for p in range(0, P):
                dgamma += tl.load(dgamma_part_ptr + p * H + cols, mask=col_ok, other=0.0)
                dbeta += tl.load(dbeta_part_ptr + p * H + cols, mask=col_ok, other=0.0)
            tl.store(dgamma_ptr + cols, dgamma, mask=col_ok)
            tl.store(dbeta_ptr + cols, dbeta, mask=col_ok)
        '''),), "the reduction adds the partial rows one at a time, in order"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:ln_bwd_partial_kernel:3e2b28c1:0": ZERO_PARTNER,
    "fill.other:ln_bwd_partial_kernel:553ad7d5:0": ZERO_PARTNER,
}
