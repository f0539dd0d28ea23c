"""Learner bugs for puzzle 23 (deterministic LayerNorm backward), and correct kernels written differently."""
from entries import Bug, Kernel, Right

ACCS = ("    dgamma_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n    dbeta_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n"
        "    for r in range(ROWS_PER_PROGRAM):\n")
PART_STORE = ("    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc, mask=col_ok)\n"
              "    tl.store(dbeta_part_ptr + pid * H + cols, dbeta_acc, mask=col_ok)")

BUGS = [
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
