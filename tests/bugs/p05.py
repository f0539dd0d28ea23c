"""Every known kernel of puzzle 5 (strides): the bugs tests/test_contract.py pins (PINNED) and the
correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py measures
(MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right

X_LOAD = "x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask)"

PINNED = [
    Bug("columns_not_masked", "forward",
        (("mask = row_ok[:, None] & col_ok[None, :]", "mask = row_ok[:, None]", 1),),
        cause="mask",
        reasons=(("switches off none of this block's columns",), ("cols[None, :] < N",)),
        not_causes=("address", "atomic"),
        notes="the rows masked, the columns not: the report once never said that the column lanes past N get "
              "through (issue 35, item 5)", code='fault.oob'),
    Bug("assumed_contiguous", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)", 1),),
        cause="address",
        reasons=(("as if it were contiguous",), ("stride_xm",), ("x is not contiguous",)),
        not_causes=("atomic",), not_words=("transposed)", "never written"),
        notes="the classic: x[m, n] at m * N + n. Right for the contiguous case only; the values of a "
              "transposed x come out shuffled", code='addr.step'),
    Bug("strides_swapped", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + rows[:, None] * stride_xn + cols[None, :] * stride_xm, mask=mask)", 1),),
        cause="address",
        reasons=(("strides swapped", "past the end"),),
        not_causes=("atomic",), not_words=("column stride of 1",),
        notes="stride_xm goes with the rows; swapped, a transposed x is read as if contiguous-with-M-columns "
              "(past its end when M > N)", code='variant.strides_swapped'),
    Bug("column_stride_one", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask)", 1),),
        cause="address",
        reasons=(("column stride of 1",), ("x is not contiguous",)),
        not_causes=("atomic",), not_words=("as if it were contiguous",),
        notes="only the row stride used: the usual contiguous habit of a unit column step", code='variant.column_stride_one'),
    Bug("z_written_with_the_strides_of_x", "forward",
        (("tl.store(z_ptr + rows[:, None] * N + cols[None, :], x + b[None, :], mask=mask)",
          "tl.store(z_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, x + b[None, :], mask=mask)", 1),),
        cause="address",
        reasons=(("transposed",),),
        not_causes=("atomic",), not_words=("as if it were contiguous",),
        notes="z is a new contiguous tensor: x's strides store it transposed", code='addr.step'),
    Bug("bias_not_masked", "forward",
        (("b = tl.load(b_ptr + cols, mask=col_ok)", "b = tl.load(b_ptr + cols)", 1),),
        cause="mask",
        reasons=(("past the end",), ("b_ptr",)),
        gpu_blind=True,
        not_causes=("atomic",), not_words=("stride_x",),
        notes="the stray values of b land only in lanes whose store is masked: right on a GPU (seen on an H100)", code='fault.oob'),
]

PASSING = [
    Right("pointer_tile_built_in_two_steps", (
        ((X_LOAD,
          "x_rows = x_ptr + rows * stride_xm  # the start of each row of the tile\n"
          "    x = tl.load(x_rows[:, None] + cols[None, :] * stride_xn, mask=mask)", 1),)),
        notes="the row pointers first, then the column steps"),
    Right("add_in_fp32_other_zero", (
        (X_LOAD, X_LOAD.replace("mask=mask)", "mask=mask, other=0.0).to(tl.float32)"), 1),
        ("b = tl.load(b_ptr + cols, mask=col_ok)", "b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)", 1)),
        notes="padding lanes load 0; the sum in fp32 (a no-op for fp32 inputs)"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
STORE = "tl.store(z_ptr + rows[:, None] * N + cols[None, :], x + b[None, :], mask=mask)"

MEASURED = [
    Bug("strides_in_bytes", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + (rows[:, None] * stride_xm + cols[None, :] * stride_xn) * 4, mask=mask)", 1),),
        "address", "the offsets multiplied by 4 as if the strides were torch's element strides in bytes"),
    Bug("program_axes_swapped", "forward",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(1) * BLOCK_M", 1),
         ("cols = tl.program_id(1) * BLOCK_N", "cols = tl.program_id(0) * BLOCK_N", 1)),
        "address", "rows from program_id(1), columns from program_id(0): the grid's axes are the other way"),
    Bug("rows_masked_with_n", "forward",
        (("row_ok = rows < M", "row_ok = rows < N", 1),),
        "mask", "the row mask compares with N"),
    Bug("z_row_stride_m", "forward",
        ((STORE, STORE.replace("rows[:, None] * N", "rows[:, None] * M"), 1),),
        "address", "z's row i at i * M (z is [M, N]: rows are N long)"),
    Bug("transposed_layout_hard_coded", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + rows[:, None] + cols[None, :] * M, mask=mask)", 1),),
        "hardcoded", "x's layout written for the transposed view the checker usually passes (strides 1, M), "
        "ignoring the strides it is given", accept=("address",)),
    Bug("bias_indexed_by_row", "forward",
        (("b = tl.load(b_ptr + cols, mask=col_ok)", "b = tl.load(b_ptr + rows, mask=row_ok)", 1),),
        "address", "the bias loaded by row index: b has one value per column"),
]

RIGHT = [
    Right("tile_loaded_transposed", ((X_LOAD,
        "xt = tl.load(x_ptr + cols[:, None] * stride_xn + rows[None, :] * stride_xm,\n"
        "                 mask=col_ok[:, None] & row_ok[None, :])  # [BLOCK_N, BLOCK_M]\n"
        "    x = tl.trans(xt)", 1),), "the tile read as its transpose (columns down), then tl.trans"),
    Right("offsets_in_int64", ((X_LOAD,
        "x = tl.load(x_ptr + rows.to(tl.int64)[:, None] * stride_xm + cols.to(tl.int64)[None, :] * stride_xn, "
        "mask=mask)", 1),), "the offsets in int64 (safe for tensors past 2**31 elements)"),
]
