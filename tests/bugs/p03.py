"""Every known kernel of puzzle 3 (outer add): the bugs tests/test_contract.py pins (PINNED) and the
correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py measures
(MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right

PINNED = [
    Bug("row_length_is_the_block", "forward",
        (("offsets = rows[:, None] * N + cols[None, :]", "offsets = rows[:, None] * BLOCK_N + cols[None, :]", 1),),
        cause="address",
        reasons=(("past the end",), ("z_ptr",), ("stride",), ("not i * BLOCK_N",)),
        not_causes=("atomic",),
        notes="rows BLOCK_N apart instead of N: right when N is a power of two, else the last rows land past "
              "the end of z (the sanitizer's advice speaks of the mask; the summary names the row length)", code='fault.oob'),
    Bug("rows_not_masked", "forward",
        (("y = tl.load(y_ptr + rows, mask=rows < M)", "y = tl.load(y_ptr + rows)", 1),
         ("mask = (rows[:, None] < M) & (cols[None, :] < N)", "mask = cols[None, :] < N", 1)),
        cause="mask",
        reasons=(("past the end",), ("y_ptr",), ("rows < M",)),
        not_causes=("atomic",),
        notes="only the columns masked: the padding rows read y and write z past their ends", code='fault.oob'),
    Bug("mask_without_parentheses", "forward",
        (("mask = (rows[:, None] < M) & (cols[None, :] < N)", "mask = rows[:, None] < M & cols[None, :] < N", 1),),
        cause="mask",
        reasons=(("(rows[:, None] < M) & (cols[None, :] < N)",),),
        not_causes=("atomic",),
        notes="& binds tighter than <: Python reads a chained comparison rows < (M & cols) < N. The "
              "interpreter evaluates it to a wrong mask (a compile error on a GPU); the report shows the "
              "parenthesised form", code='fault.oob'),
    Bug("x_and_y_swapped", "forward",
        (("z = y[:, None] + x[None, :]", "z = x[:, None] + y[None, :]", 1),),
        cause="address",
        reasons=(("two blocks of different shapes meet", "incompatible dimensions"), ("transposed",)),
        not_causes=("atomic",), not_words=("past the end", "never written"),
        notes="a [BLOCK_N, BLOCK_M] block stored through [BLOCK_M, BLOCK_N] pointers: a shape error, and when "
              "M == N the transpose of z", code='values.transposed'),
    Bug("store_not_masked", "forward",
        (("tl.store(z_ptr + offsets, z, mask=mask)", "tl.store(z_ptr + offsets, z)", 1),),
        cause="mask",
        reasons=(("past the end",), ("z_ptr",), ("switch off the lanes",)),
        not_causes=("atomic",), code='fault.oob'),
]

PASSING = [
    Right("loads_already_2d", (
        ("    x = tl.load(x_ptr + cols, mask=cols < N)\n    y = tl.load(y_ptr + rows, mask=rows < M)\n",
         "    x = tl.load(x_ptr + cols[None, :], mask=cols[None, :] < N)  # [1, BLOCK_N]\n"
         "    y = tl.load(y_ptr + rows[:, None], mask=rows[:, None] < M)  # [BLOCK_M, 1]\n", 1),
        ("z = y[:, None] + x[None, :]", "z = y + x", 1)),
        notes="the vectors loaded as a column and a row directly"),
    Right("broadcast_explicitly_other_zero", (
        ("    x = tl.load(x_ptr + cols, mask=cols < N)\n    y = tl.load(y_ptr + rows, mask=rows < M)\n",
         "    x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)\n"
         "    y = tl.load(y_ptr + rows, mask=rows < M, other=0.0)\n", 1),
        ("z = y[:, None] + x[None, :]",
         "z = tl.broadcast_to(y[:, None], (BLOCK_M, BLOCK_N)) + tl.broadcast_to(x[None, :], (BLOCK_M, BLOCK_N))", 1)),
        notes="both operands broadcast to the block's shape by hand; padding lanes load 0"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
OFFSETS = "offsets = rows[:, None] * N + cols[None, :]"
MASK = "mask = (rows[:, None] < M) & (cols[None, :] < N)"

MEASURED = [
    Bug("row_stride_m", "forward",
        ((OFFSETS, "offsets = rows[:, None] * M + cols[None, :]", 1),),
        "address", "row i of z taken to start at i * M (the number of rows) instead of i * N"),
    Bug("stored_column_major", "forward",
        ((OFFSETS, "offsets = rows[:, None] + cols[None, :] * M", 1),),
        "address", "z stored column-major: element (i, j) at i + j * M"),
    Bug("x_masked_with_m", "forward",
        (("x = tl.load(x_ptr + cols, mask=cols < N)", "x = tl.load(x_ptr + cols, mask=cols < M)", 1),),
        "mask", "x's load masked with M, y's size"),
    Bug("mask_or", "forward",
        ((MASK, "mask = (rows[:, None] < M) | (cols[None, :] < N)", 1),),
        "mask", "the 2-D mask joins the row and column tests with | instead of &"),
    Bug("broadcast_axes_swapped", "forward",
        (("z = y[:, None] + x[None, :]", "z = y[None, :] + x[:, None]", 1),),
        "address", "y laid along the columns and x down the rows: z comes out transposed (or the shapes clash)",
        accept=("formula",)),
    Bug("row_length_hard_coded", "forward",
        ((OFFSETS, "offsets = rows[:, None] * 5 + cols[None, :]", 1),),
        "hardcoded", "the row length written as 5, the documented N"),
]

RIGHT = [
    Right("one_flat_block", (Kernel("outer_add_kernel", '''
        @triton.jit
        def outer_add_kernel(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            flat = tl.arange(0, BLOCK_M * BLOCK_N)
            i = flat // BLOCK_N
            j = flat % BLOCK_N
            ok = (i < M) & (j < N)
            x = tl.load(x_ptr + j, mask=ok, other=0.0)
            y = tl.load(y_ptr + i, mask=ok, other=0.0)
            tl.store(z_ptr + i * N + j, x + y, mask=ok)
        '''),), "one flat block of BLOCK_M * BLOCK_N lanes, (i, j) from // and %"),
    Right("a_row_at_a_time", (Kernel("outer_add_kernel", '''
        @triton.jit
        def outer_add_kernel(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            cols = tl.arange(0, BLOCK_N)
            x = tl.load(x_ptr + cols, mask=cols < N, other=0.0)
            for i in range(0, M):
                tl.store(z_ptr + i * N + cols, x + tl.load(y_ptr + i), mask=cols < N)
        '''),), "a loop over the rows, each row stored as y[i] + x"),
]
