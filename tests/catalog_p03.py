"""Known-buggy kernels for puzzle 3 (outer add), each the reference solution with one bug patched in
(tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

BUGS = [
    Bug("row_length_is_the_block", "forward",
        (("offsets = rows[:, None] * N + cols[None, :]", "offsets = rows[:, None] * BLOCK_N + cols[None, :]", 1),),
        reasons=(("past the end",), ("z_ptr",), ("stride",), ("not i * BLOCK_N",)),
        misleading=("atomic", "data race"),
        notes="rows BLOCK_N apart instead of N: right when N is a power of two, else the last rows land past "
              "the end of z (the sanitizer's advice speaks of the mask; the summary names the row length)"),
    Bug("rows_not_masked", "forward",
        (("y = tl.load(y_ptr + rows, mask=rows < M)", "y = tl.load(y_ptr + rows)", 1),
         ("mask = (rows[:, None] < M) & (cols[None, :] < N)", "mask = cols[None, :] < N", 1)),
        reasons=(("past the end",), ("y_ptr",), ("rows < M",)),
        misleading=("atomic", "data race"),
        notes="only the columns masked: the padding rows read y and write z past their ends"),
    Bug("mask_without_parentheses", "forward",
        (("mask = (rows[:, None] < M) & (cols[None, :] < N)", "mask = rows[:, None] < M & cols[None, :] < N", 1),),
        reasons=(("(rows[:, None] < n_rows) & (cols[None, :] < n_cols)",),),
        misleading=("atomic", "data race"),
        notes="& binds tighter than <: Python reads a chained comparison rows < (M & cols) < N. The "
              "interpreter evaluates it to a wrong mask (a compile error on a GPU); the report shows the "
              "parenthesised form"),
    Bug("x_and_y_swapped", "forward",
        (("z = y[:, None] + x[None, :]", "z = x[:, None] + y[None, :]", 1),),
        reasons=(("two blocks of different shapes meet", "incompatible dimensions"), ("transposed",)),
        misleading=("atomic", "data race", "past the end", "never written"),
        notes="a [BLOCK_N, BLOCK_M] block stored through [BLOCK_M, BLOCK_N] pointers: a shape error, and when "
              "M == N the transpose of z"),
    Bug("store_not_masked", "forward",
        (("tl.store(z_ptr + offsets, z, mask=mask)", "tl.store(z_ptr + offsets, z)", 1),),
        reasons=(("past the end",), ("z_ptr",), ("switch off the lanes",)),
        misleading=("atomic", "data race")),
]

ALTERNATIVES = [
    Alternative("loads_already_2d", (
        ("    x = tl.load(x_ptr + cols, mask=cols < N)\n    y = tl.load(y_ptr + rows, mask=rows < M)\n",
         "    x = tl.load(x_ptr + cols[None, :], mask=cols[None, :] < N)  # [1, BLOCK_N]\n"
         "    y = tl.load(y_ptr + rows[:, None], mask=rows[:, None] < M)  # [BLOCK_M, 1]\n", 1),
        ("z = y[:, None] + x[None, :]", "z = y + x", 1)),
        notes="the vectors loaded as a column and a row directly"),
    Alternative("broadcast_explicitly_other_zero", (
        ("    x = tl.load(x_ptr + cols, mask=cols < N)\n    y = tl.load(y_ptr + rows, mask=rows < M)\n",
         "    x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)\n"
         "    y = tl.load(y_ptr + rows, mask=rows < M, other=0.0)\n", 1),
        ("z = y[:, None] + x[None, :]",
         "z = tl.broadcast_to(y[:, None], (BLOCK_M, BLOCK_N)) + tl.broadcast_to(x[None, :], (BLOCK_M, BLOCK_N))", 1)),
        notes="both operands broadcast to the block's shape by hand; padding lanes load 0"),
]
