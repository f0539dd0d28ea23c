"""Every known kernel of puzzle 9 (column sum across programs): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right, summed_without_other

ATOMIC = "    tl.atomic_add(y_ptr + cols, partial, mask=col_ok)\n"
LOAD = "    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)\n"

PINNED = [
    Bug("plain_store", "forward",
        ((ATOMIC, "    tl.store(y_ptr + cols, partial, mask=col_ok)\n", 1),),
        cause="atomic",
        reasons=(("data race",), ("y_ptr",)),
        reasons_unsanitized=(("overwr",),),
        not_words=("offsets overlap", "were lost"),
        notes="every row block stores its own partial sum: the last store wins. Sanitized: a race on y; "
              "unsanitized (programs in order), y holds the last row block's share", code='fault.race'),
    Bug("load_add_store", "forward",
        ((ATOMIC, "    total = tl.load(y_ptr + cols, mask=col_ok)\n"
                  "    tl.store(y_ptr + cols, total + partial, mask=col_ok)\n", 1),),
        cause="atomic",
        reasons=(("data race",), ("y_ptr",)),
        not_words=("offsets overlap",),
        cpu_blind_without_sanitizer=True,
        notes="right in the interpreter, where programs run one after another; on a GPU two programs "
              "load the same total and one partial sum is lost", code='fault.race'),
    Bug("whole_tile_summed", "forward",
        (("    partial = tl.sum(x, axis=0)", "    partial = tl.sum(tl.sum(x, axis=0), axis=0) + tl.zeros([BLOCK_N], "
          "dtype=tl.float32)", 1),),
        cause="formula", named="none",
        reasons=(("elements off",),),
        not_causes=("atomic",),
        notes="a wrong formula (the tile's total added to each of its columns): on the identical-rows case "
              "no total is a whole number of shares, so no hint may blame lost or overwritten updates", code='values.constant'),
    Bug("column_blocks_ignore_program_id_1", "forward",
        (("    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)\n",
          "    cols = tl.arange(0, BLOCK_N)\n", 1),),
        cause="address",
        reasons=(("received nothing",),),
        not_causes=("atomic",),
        notes="every column block adds into columns 0 .. BLOCK_N - 1: they get their sum several times, "
              "the columns past BLOCK_N get nothing", code='addr.program_id_unused'),
    Bug("rows_not_masked", "forward",
        (("    mask = (rows[:, None] < M) & col_ok[None, :]\n", "    mask = col_ok[None, :]\n", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        not_causes=("atomic",),
        notes="the last row block reads rows past M: past the end of x", code='fault.oob'),
    summed_without_other("forward", LOAD),
    Bug("atomic_without_mask", "forward",
        ((ATOMIC, "    tl.atomic_add(y_ptr + cols, partial)\n", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        not_causes=("atomic",),
        gpu_reasons=(("past the end of `y`",), ("mask",)),
        notes="the last column block adds 0 past the end of y: y's own values are right, but the atomic "
              "changes the band of known bits after y (seen on an H100)", code='fault.oob'),
]

PASSING = [
    Right("one_atomic_per_row", (
        (LOAD + "    partial = tl.sum(x, axis=0)  # [BLOCK_N]: this row block's share of each column, in fp32\n",
         "    first = tl.program_id(0) * BLOCK_M\n"
         "    for row in range(first, tl.minimum(first + BLOCK_M, M)):  # my rows, none past M\n"
         "        partial = tl.load(x_ptr + row * N + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
         "        tl.atomic_add(y_ptr + cols, partial, mask=col_ok)  # BLOCK_M atomics per element\n", 1),
        (ATOMIC, "", 1)),
        notes="correct, but with BLOCK_M atomic adds per element instead of one: more contention on a GPU"),
    Right("loop_over_the_rows_of_the_tile", (
        (LOAD + "    partial = tl.sum(x, axis=0)",
         "    partial = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
         "    first = tl.program_id(0) * BLOCK_M\n"
         "    for row in range(first, tl.minimum(first + BLOCK_M, M)):\n"
         "        partial += tl.load(x_ptr + row * N + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
         "    partial = partial", 1),),
        notes="the tile summed one row at a time into a register block, one atomic at the end"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
X = "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)"
MASK = "mask = (rows[:, None] < M) & col_ok[None, :]"

MEASURED = [
    Bug("row_stride_m", "forward",
        ((X, X.replace("rows[:, None] * N", "rows[:, None] * M"), 1),),
        "address", "x's row i read at i * M instead of i * N"),
    Bug("program_axes_swapped", "forward",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(1) * BLOCK_M", 1),
         ("cols = tl.program_id(1) * BLOCK_N", "cols = tl.program_id(0) * BLOCK_N", 1)),
        "address", "row blocks from program_id(1), column blocks from program_id(0)"),
    Bug("rows_masked_with_n", "forward",
        ((MASK, "mask = (rows[:, None] < N) & col_ok[None, :]", 1),),
        "mask", "the row test of the mask compares with N"),
    Bug("column_max", "forward",
        (("partial = tl.sum(x, axis=0)", "partial = tl.max(x, axis=0)", 1),),
        "formula", "each tile reduced with tl.max instead of tl.sum"),
    Bug("partial_mean_over_the_block", "forward",
        (("partial = tl.sum(x, axis=0)", "partial = tl.sum(x, axis=0) / BLOCK_M", 1),),
        "formula", "each tile's column sums divided by BLOCK_M (a mean, not a sum)"),
    Bug("row_count_hard_coded", "forward",
        ((MASK, "mask = (rows[:, None] < 10) & col_ok[None, :]", 1),),
        "hardcoded", "the row test written with 10, the documented M"),
    Bug("summed_along_the_rows", "forward",
        (("partial = tl.sum(x, axis=0)", "partial = tl.sum(x, axis=1)", 1),),
        "formula", "the tile summed along axis 1 (row sums) instead of axis 0", accept=("address",)),
    Bug("padded_lanes_load_one", "forward",
        ((X, X.replace("other=0.0", "other=1.0"), 1),),
        "fill", "padded lanes load 1.0: the rows past M add 1 to every column's sum"),
    # written as a correct rewrite, and measured on an H100 (tests/bf16_margins.py, 2026-12-07): 14.5 times
    # the bf16 tolerance on "M=4096, N=1000 bfloat16". The .to(tl.float32) went with other=0.0, so each
    # tile is summed in bf16. The interpreter passed it, having no bf16 case: "M=512, N=40 bfloat16" is one
    Bug("padded_lanes_kept_out_with_where_summed_in_bf16", "forward",
        ((X, "x = tl.where(mask, tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask), 0.0)", 1),),
        "precision", "padded lanes zeroed with tl.where, and the tile's .to(tl.float32) dropped with other=0.0: "
        "each tile of bf16 values summed in bf16"),
]

RIGHT = [
    Right("padded_lanes_kept_out_with_where",
          ((X, "x = tl.where(mask, tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask), 0.0).to(tl.float32)", 1),),
          "padded lanes zeroed with tl.where instead of other=0.0"),
    Right("every_element_added_atomically", (
        ("    partial = tl.sum(x, axis=0)", "", 1),
        ("tl.atomic_add(y_ptr + cols, partial, mask=col_ok)",
         "tl.atomic_add(y_ptr + cols[None, :] + 0 * rows[:, None], x, mask=mask)", 1)),
          "no partial sums: every element of the tile added into y with its own atomic"),
]
