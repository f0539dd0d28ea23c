"""Blind corpus (round 2 for p08-p22), puzzle 09 (column sum): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("plain_store_of_share", "forward",
        (("tl.atomic_add(y_ptr + cols, partial, mask=col_ok)", "tl.store(y_ptr + cols, partial, mask=col_ok)", 1),),
        "atomic", "each row block stores its share with a plain store: only one row block's share is kept"),
    Bug("atomic_without_mask", "forward",
        (("tl.atomic_add(y_ptr + cols, partial, mask=col_ok)", "tl.atomic_add(y_ptr + cols, partial)", 1),),
        "mask", "the atomic add has no mask: the last column block adds past the end of y"),
    Bug("row_mask_dropped", "forward",
        (("mask = (rows[:, None] < M) & col_ok[None, :]", "mask = col_ok[None, :]", 1),),
        "mask", "only the columns are masked: the last row block reads rows past M"),
    Bug("row_mask_against_n", "forward",
        (("mask = (rows[:, None] < M) & col_ok[None, :]", "mask = (rows[:, None] < N) & col_ok[None, :]", 1),),
        "mask", "the row bound is compared with N instead of M"),
    Bug("row_stride_m", "forward",
        (("x_ptr + rows[:, None] * N + cols[None, :]", "x_ptr + rows[:, None] * M + cols[None, :]", 1),),
        "address", "rows are stepped by M instead of the row length N"),
    Bug("program_ids_swapped", "forward",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(1) * BLOCK_M", 1),
         ("cols = tl.program_id(1) * BLOCK_N", "cols = tl.program_id(0) * BLOCK_N", 1)),
        "address", "the grid's axes are swapped: axis 0 taken for the column block and axis 1 for the row block"),
    Bug("col_block_offset_missing", "forward",
        (("cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)", "cols = tl.program_id(1) + tl.arange(0, BLOCK_N)", 1),),
        "address", "the column block's program id is not multiplied by BLOCK_N: the blocks overlap"),
    Bug("no_other_on_tile", "forward",
        (("mask=mask, other=0.0)", "mask=mask)", 1),),
        "fill", "the tile load has no other=0.0: the masked lanes' values are summed into the columns"),
    Bug("row_block_uses_block_n", "forward",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(0) * BLOCK_N", 1),),
        "address", "the row block's start uses BLOCK_N: row blocks overlap or leave gaps when the blocks differ"),
    Bug("share_divided_by_m", "forward",
        (("partial = tl.sum(x, axis=0)", "partial = tl.sum(x, axis=0) / M", 1),),
        "formula", "the column share is divided by M, as if a column mean were asked for"),
]

RIGHT = [
    Right("rows_one_at_a_time", (Kernel("column_sum_kernel", '''
@triton.jit
def column_sum_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    r0 = tl.program_id(0) * BLOCK_M
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    partial = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(0, BLOCK_M):
        row = r0 + r
        v = tl.load(x_ptr + row * N + cols, mask=col_ok & (row < M), other=0.0)
        partial += v.to(tl.float32)
    tl.atomic_add(y_ptr + cols, partial, mask=col_ok)
'''),), "walks its row block one row at a time, a [BLOCK_N] running sum, then one atomic add"),
    Right("where_then_sum", (Kernel("column_sum_kernel", '''
@triton.jit
def column_sum_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    cols = pn * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    ok = (rows < M) & (cols < N)
    x = tl.load(x_ptr + rows * N + cols, mask=ok)
    x = tl.where(ok, x.to(tl.float32), 0.0)
    ccols = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.atomic_add(y_ptr + ccols, tl.sum(x, axis=0), mask=ccols < N)
'''),), "2-D index tensors built up front, padded lanes zeroed with tl.where instead of other="),
]
