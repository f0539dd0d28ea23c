"""Every known kernel of puzzle 25 (LayerNorm backward at the roofline): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING), the learner bugs
and rewrites tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch
(EQUIVALENT). What each list means: tests/bugs/__init__.py. A slow kernel is not a wrong one:
--bench, not the tests, judges speed."""
from bugs import Bug, Kernel, Right
from bugs.reasons import ZERO_PARTNER

PINNED = [
    Bug("rows_past_m_not_masked", "backward",
        (("        row_ok = rows[:, None] < M\n", "        row_ok = rows[:, None] >= 0\n", 1),),
        cause="mask",
        reasons=(("out-of-bounds",), ("x_ptr",)),
        not_causes=("atomic",),
        notes="the last step of ROWS rows can run past M", code='fault.oob'),
    Bug("persistent_loop_steps_by_one_block", "backward",
        (("    for first in tl.range(pid * ROWS, M, programs * ROWS, num_stages=STAGES):",
          "    for first in tl.range(pid * ROWS, M, ROWS, num_stages=STAGES):", 1),),
        cause="loop", named="none",
        reasons=(("Data race on `dx_ptr`",), ("belongs to exactly one program",)),
        not_causes=("atomic",),
        notes="every program walks every later row block: programs overlap, dx is written twice"),
    Bug("programs_written_in", "backward",
        (("    programs = tl.num_programs(0)\n", "    programs = 3  # the interpreter's\n", 1),),
        cause="hardcoded", named="candidates",
        reasons=(("tl.num_programs(0)",), ("PROGRAMS = 2",)),
        not_causes=("atomic",),
        notes="the interpreter's 3 programs written in: right where the launch starts 3; with 2 row blocks go "
              "undone, with 5 two programs walk the same rows (a race on dx, shares counted twice)", code='values.unwritten'),
    Bug("partials_not_reduced", "backward",
        (("    for start in range(0, P, BLOCK_P):", "    for start in range(0, 1, BLOCK_P):", 1),),
        cause="loop", named="none",
        reasons=(("dgamma",), ("dbeta",)),
        not_causes=("atomic",),
        notes="only the first BLOCK_P partial rows are added up"),
    Bug("dx_without_the_mean_of_g", "backward",
        (("dx = rstd[:, None] * (g - mean_g[:, None] - x_hat * mean_g_xhat[:, None])",
          "dx = rstd[:, None] * (g - x_hat * mean_g_xhat[:, None])", 1),),
        cause="formula", named="none",
        reasons=(("dx",),),
        not_causes=("atomic",)),
    Bug("tail_variance_counts_padded_lanes", "backward",
        (("            t_diff = tl.where(t_ok, t_x - mean[:, None], 0.0)  # padded lanes would add mean^2\n",
          "            t_diff = t_x - mean[:, None]\n", 1),),
        cause="fill", named="none",
        reasons=(("dx",),),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="the tail block's padded lanes load 0, and 0 - mean squared joins the variance: only widths "
              "whose tail block is not full (100 = 64 + 36 of 64) go wrong"),
    Bug("partial_rows_added_into_an_uncleared_buffer", "backward",
        (("    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc)\n",
          "    tl.atomic_add(dgamma_part_ptr + pid * H + cols, dgamma_acc)\n", 1),),
        cause="accumulate", named="candidates",
        reasons=(("dgamma",), ("NaN",)),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="adds its share to what the buffer held: the partial rows are scratch (torch.empty's, poisoned by "
              "the checker), not zeros; before the poison this failed or passed by the luck of the allocator", code='values.nonfinite'),
    Bug("one_pass_variance", "backward",
        (("        sum_sq = tl.sum(diff * diff, axis=1)\n", "        sum_sq = tl.sum(x * x, axis=1)\n", 1),
         ("            sum_sq += tl.sum(t_diff * t_diff, axis=1)\n", "            sum_sq += tl.sum(t_x * t_x, axis=1)\n", 1),
         ("        rstd = 1.0 / tl.sqrt(sum_sq / H + eps)\n",
          "        rstd = 1.0 / tl.sqrt(sum_sq / H - mean * mean + eps)\n", 1)),
        cause="stability", named="none",
        reasons=(("mean near 1000",), ("dx",)),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="E[x²] − E[x]² in fp32, head and tail: right for centred rows, digits cancel when the mean is 1000"),
]

PASSING = [
    Right("rsqrt", (("rstd = 1.0 / tl.sqrt(sum_sq / H + eps)", "rstd = tl.rsqrt(sum_sq / H + eps)", 1),),
                notes="tl.rsqrt instead of 1 / sqrt: a different rounding, within the tolerance"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
PARTS = ("    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc)\n"
         "    tl.store(dbeta_part_ptr + pid * H + cols, dbeta_acc)")

MEASURED = [
    Bug("persistent_loop_starts_at_pid", "backward",
        (("for first in tl.range(pid * ROWS, M, programs * ROWS, num_stages=STAGES):",
          "for first in tl.range(pid, M, programs * ROWS, num_stages=STAGES):", 1),),
        "address", "program pid starts at row pid instead of pid * ROWS: programs' row blocks overlap and leave gaps",
        accept=("loop",)),
    Bug("tail_columns_from_zero", "backward",
        (("t_cols = BLOCK_H + tl.arange(0, TAIL)", "t_cols = tl.arange(0, TAIL)", 1),),
        "address", "the tail block's columns start at 0 instead of after the head (BLOCK_H)"),
    Bug("partial_rows_block_apart", "backward",
        ((PARTS, PARTS.replace("pid * H", "pid * BLOCK_H"), 1),),
        "address", "partial row pid stored at pid * BLOCK_H instead of pid * H"),
    Bug("mean_over_the_head", "backward",
        (("mean = sum_x / H", "mean = sum_x / BLOCK_H", 1),),
        "formula", "the mean divided by the head's width BLOCK_H instead of H"),
    Bug("tail_mask_rows_only", "backward",
        (("t_ok = row_ok & t_col_ok[None, :]", "t_ok = row_ok", 1),),
        "mask", "the tail block masked by rows only: its padded columns read and write past the row"),
    Bug("shares_overwritten_each_step", "backward",
        (("        dgamma_acc += tl.sum(dz * x_hat, axis=0)\n        dbeta_acc += tl.sum(dz, axis=0)\n",
          "        dgamma_acc = tl.sum(dz * x_hat, axis=0)\n        dbeta_acc = tl.sum(dz, axis=0)\n", 1),),
        "accumulate", "the head's shares assigned (=) instead of added (+=): each step overwrites the last"),
    # passes every case, on an H100 too (no case with a mean far from 0): a hole in the cases
    Bug("variance_in_one_pass", "backward",
        (("sum_sq = tl.sum(diff * diff, axis=1)", "sum_sq = tl.sum(x * x, axis=1)", 1),
         ("sum_sq += tl.sum(t_diff * t_diff, axis=1)", "sum_sq += tl.sum(t_x * t_x, axis=1)", 1),
         ("rstd = 1.0 / tl.sqrt(sum_sq / H + eps)", "rstd = 1.0 / tl.sqrt(sum_sq / H - mean * mean + eps)", 1)),
        "stability", "the variance as E[x²] − mean² (head and tail): cancels when the mean is large against the spread"),
    Bug("dgamma_partials_through_bf16", "backward",
        (("tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc)",
          "tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc.to(tl.bfloat16))", 1),),
        "precision", "the head's dgamma partial rounded to bf16 on its way into the fp32 buffer"),
]

RIGHT = [
    Right("head_shares_summed_once_at_the_end", (
        ("    dgamma_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n    dbeta_acc = tl.zeros([BLOCK_H], dtype=tl.float32)\n",
         "    dgamma_acc = tl.zeros([ROWS, BLOCK_H], dtype=tl.float32)\n    dbeta_acc = tl.zeros([ROWS, BLOCK_H], dtype=tl.float32)\n", 1),
        ("        dgamma_acc += tl.sum(dz * x_hat, axis=0)\n        dbeta_acc += tl.sum(dz, axis=0)\n",
         "        dgamma_acc += dz * x_hat\n        dbeta_acc += dz\n", 1),
        (PARTS, "    tl.store(dgamma_part_ptr + pid * H + cols, tl.sum(dgamma_acc, axis=0))\n"
                "    tl.store(dbeta_part_ptr + pid * H + cols, tl.sum(dbeta_acc, axis=0))", 1)),
          "the head's shares kept per row in [ROWS, BLOCK_H] accumulators and summed over the rows once, "
          "at the store"),
    Right("reduce_one_partial_row_at_a_time", (Kernel("ln_bwd_partials_reduce_kernel", '''
        @triton.jit
        def ln_bwd_partials_reduce_kernel(dgamma_part_ptr, dbeta_part_ptr, dgamma_ptr, dbeta_ptr, P, H,
                                          BLOCK_P: tl.constexpr, BLOCK_COLS: tl.constexpr):
            cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
            ok = cols < H
            g = tl.zeros([BLOCK_COLS], dtype=tl.float32)
            b = tl.zeros([BLOCK_COLS], dtype=tl.float32)
            for p in range(0, P):
                g += tl.load(dgamma_part_ptr + p * H + cols, mask=ok, other=0.0)
                b += tl.load(dbeta_part_ptr + p * H + cols, mask=ok, other=0.0)
            tl.store(dgamma_ptr + cols, g, mask=ok)
            tl.store(dbeta_ptr + cols, b, mask=ok)
        '''),), "the reduction adds the partial rows one at a time, in order"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:ln_bwd_roofline_kernel:d46da991:0": ZERO_PARTNER,
    "fill.other:ln_bwd_roofline_kernel:9d681622:0": "the rows past M load dz = 0, so they add nothing to dgamma "
                                                    "and dbeta whatever x holds, and their dx is not stored",
}
