"""Learner bugs for puzzle 4 (2-D blocks), and correct kernels written differently."""
from entries import Bug, Kernel, Right

STORE = "tl.store(z_ptr + rows[:, None] * N + cols[None, :], z, mask=row_ok[:, None] & col_ok[None, :])"

BUGS = [
    Bug("both_ids_from_axis_0", "forward",
        (("pid_n = tl.program_id(1)", "pid_n = tl.program_id(0)", 1),),
        "address", "the column block taken from program_id(0) as well: the row programs also pick the columns"),
    Bug("row_stride_m", "forward",
        ((STORE, STORE.replace("rows[:, None] * N", "rows[:, None] * M"), 1),),
        "address", "row i of z at i * M instead of i * N"),
    Bug("stored_transposed", "forward",
        ((STORE, STORE.replace("rows[:, None] * N + cols[None, :]", "rows[:, None] + cols[None, :] * M"), 1),),
        "address", "z written column-major (i + j * M)"),
    Bug("columns_masked_with_m", "forward",
        (("col_ok = cols < N", "col_ok = cols < M", 1),),
        "mask", "the column mask compares with M"),
    Bug("rows_stepped_by_block_n", "forward",
        (("rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)", "rows = pid_m * BLOCK_N + tl.arange(0, BLOCK_M)", 1),),
        "address", "row blocks start at pid_m * BLOCK_N: tiles overlap or leave gaps"),
    Bug("tile_height_hard_coded", "forward",
        (("rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)", "rows = pid_m * 4 + tl.arange(0, BLOCK_M)", 1),),
        "hardcoded", "the row block's start written with 4, the documented BLOCK_M"),
]

RIGHT = [
    Right("row_by_row_inside_the_tile", ((
        "    z = y[:, None] + x[None, :]\n    # rows and cols",
        "    for i in range(BLOCK_M):\n        r = pid_m * BLOCK_M + i\n        if r < M:\n"
        "            tl.store(z_ptr + r * N + cols, tl.load(y_ptr + r) + x, mask=col_ok)\n    # rows and cols", 1),
        (STORE, "", 1)), "the tile written one row at a time, each row guarded by an if"),
    Right("loads_broadcast_to_the_tile", (Kernel("outer_add_grid_kernel", '''
        @triton.jit
        def outer_add_grid_kernel(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
            r = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
            c = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
            ok = (r < M) & (c < N)
            x = tl.load(x_ptr + c + 0 * r, mask=ok, other=0.0)
            y = tl.load(y_ptr + r + 0 * c, mask=ok, other=0.0)
            tl.store(z_ptr + r * N + c, x + y, mask=ok)
        '''),), "x and y loaded straight into [BLOCK_M, BLOCK_N] tiles (each element read many times)"),
]
