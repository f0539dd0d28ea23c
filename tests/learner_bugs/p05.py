"""Learner bugs for puzzle 5 (strides), and correct kernels written differently."""
from entries import Bug, Right

X_LOAD = "x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask)"
STORE = "tl.store(z_ptr + rows[:, None] * N + cols[None, :], x + b[None, :], mask=mask)"

BUGS = [
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
