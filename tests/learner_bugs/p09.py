"""Learner bugs for puzzle 9 (column sum across programs), and correct kernels written differently."""
from entries import Bug, Right

X = "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)"
MASK = "mask = (rows[:, None] < M) & col_ok[None, :]"

BUGS = [
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
]

RIGHT = [
    Right("padded_lanes_kept_out_with_where", ((X, "x = tl.where(mask, tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask), 0.0)", 1),),
          "padded lanes zeroed with tl.where instead of other=0.0"),
    Right("every_element_added_atomically", (
        ("    partial = tl.sum(x, axis=0)", "", 1),
        ("tl.atomic_add(y_ptr + cols, partial, mask=col_ok)",
         "tl.atomic_add(y_ptr + cols[None, :] + 0 * rows[:, None], x, mask=mask)", 1)),
          "no partial sums: every element of the tile added into y with its own atomic"),
]
