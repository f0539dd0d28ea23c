"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 09 (column sum): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_ATOMIC = "    tl.atomic_add(y_ptr + cols, partial, mask=col_ok)\n"

MEASURED = [
    Bug("plain_store_of_share", "forward",
        ((_ATOMIC, "    tl.store(y_ptr + cols, partial, mask=col_ok)\n", 1),),
        "atomic", "each program stores its row block's share with tl.store: the shares of the other row blocks are overwritten"),
    Bug("load_add_store", "forward",
        ((_ATOMIC, "    old = tl.load(y_ptr + cols, mask=col_ok, other=0.0)\n"
                   "    tl.store(y_ptr + cols, old + partial, mask=col_ok)\n", 1),),
        "atomic", "the shares are added with a load, an add and a store: two programs of one column block can read the same old total"),
    Bug("no_row_mask", "forward",
        (("    mask = (rows[:, None] < M) & col_ok[None, :]\n", "    mask = col_ok[None, :]\n", 1),),
        "mask", "the tile's mask checks only the columns: the last row block reads rows past M"),
    Bug("atomic_unmasked", "forward",
        ((_ATOMIC, "    tl.atomic_add(y_ptr + cols, partial)\n", 1),),
        "mask", "the atomic add has no mask: the last column block adds into y past its N elements"),
    Bug("program_ids_swapped", "forward",
        (("    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)\n    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)\n",
          "    rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)\n    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)\n", 1),),
        "address", "the row block is read from program_id(1) and the column block from program_id(0): the grid's axes are swapped"),
    Bug("row_stride_m", "forward",
        (("x_ptr + rows[:, None] * N + cols[None, :]", "x_ptr + rows[:, None] * M + cols[None, :]", 1),),
        "address", "rows of x are stepped by M instead of N: a row of x is N elements long"),
    Bug("rows_from_block_n", "forward",
        (("rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)", "rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_M)", 1),),
        "address", "the row block's first row is pm * BLOCK_N (copied from the column line) instead of pm * BLOCK_M"),
    Bug("y_index_without_column_block", "forward",
        ((_ATOMIC, "    tl.atomic_add(y_ptr + tl.arange(0, BLOCK_N), partial, mask=col_ok)\n", 1),),
        "address", "the atomic add targets y[0 : BLOCK_N] in every program: the column block's offset pn * BLOCK_N is left out of y's address"),
]

RIGHT = [
    Right("row_by_row_in_tile",
          (Kernel("column_sum_kernel", '''@triton.jit
def column_sum_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """The tile's rows added one at a time into a [BLOCK_N] fp32 running sum, then one atomic add."""
    pm = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(0, BLOCK_M):
        row = pm * BLOCK_M + r
        partial += tl.load(x_ptr + row * N + cols, mask=col_ok & (row < M), other=0.0).to(tl.float32)
    tl.atomic_add(y_ptr + cols, partial, mask=col_ok)
'''),),
          "the tile is walked one row at a time into a running fp32 sum per column; the shares still meet through one masked atomic add"),
    Right("atomic_per_element",
          (("    partial = tl.sum(x, axis=0)  # [BLOCK_N]: this row block's share of each column, in fp32\n", "", 1),
           (_ATOMIC, "    tl.atomic_add(y_ptr + rows[:, None] * 0 + cols[None, :], x, mask=mask)\n", 1)),
          "no in-program reduction: every element of the tile is atomically added into its column of y (more atomics, same sums)"),
]
