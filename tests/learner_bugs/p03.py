"""Learner bugs for puzzle 3 (outer add, one program), and correct kernels written differently."""
from entries import Bug, Kernel, Right

OFFSETS = "offsets = rows[:, None] * N + cols[None, :]"
MASK = "mask = (rows[:, None] < M) & (cols[None, :] < N)"

BUGS = [
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
