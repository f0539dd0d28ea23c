"""Every known kernel of puzzle 4 (2-D blocks): the bugs tests/test_contract.py pins (PINNED) and the
correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py measures
(MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right

PINNED = [
    Bug("program_axes_swapped", "forward",
        (("pid_m = tl.program_id(0)\n    pid_n = tl.program_id(1)", "pid_m = tl.program_id(1)\n    pid_n = tl.program_id(0)", 1),),
        cause="address", named="candidates",
        reasons=(("never written",), ("axes swapped",)),
        not_causes=("atomic",), not_words=("past the end",),
        notes="right whenever the grid is square; otherwise some tiles are never written (and others are "
              "wholly masked)", code='values.unwritten'),
    Bug("column_program_id_forgotten", "forward",
        (("cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)", "cols = tl.arange(0, BLOCK_N)", 1),),
        cause="address",
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",), ("tl.program_id(1) * BLOCK_N",)),
        not_causes=("atomic",),
        notes="every program of a grid row writes the first column block: a race on z", code='fault.race'),
    Bug("columns_stepped_by_block_m", "forward",
        (("cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)", "cols = pid_n * BLOCK_M + tl.arange(0, BLOCK_N)", 1),),
        cause="address",
        reasons=(("data race",), ("blocks overlap",)),
        not_causes=("atomic",),
        notes="column blocks BLOCK_M apart but BLOCK_N wide: neighbouring tiles overlap", code='fault.race'),
    Bug("columns_not_masked", "forward",
        (("x = tl.load(x_ptr + cols, mask=col_ok)", "x = tl.load(x_ptr + cols)", 1),
         ("mask=row_ok[:, None] & col_ok[None, :])", "mask=row_ok[:, None])", 1)),
        cause="mask",
        reasons=(("past the end",), ("x_ptr",)),
        not_causes=("atomic",),
        notes="the last column of programs reads x past its end", code='fault.oob'),
    Bug("row_length_is_the_block", "forward",
        (("tl.store(z_ptr + rows[:, None] * N + cols[None, :]", "tl.store(z_ptr + rows[:, None] * BLOCK_N + cols[None, :]", 1),),
        cause="address",
        reasons=(("data race", "past the end"), ("z_ptr",)),
        not_causes=("atomic",),
        notes="rows BLOCK_N apart instead of N: tiles of different programs overlap (a race) or run past z", code='fault.race'),
]

PASSING = [
    Right("pointer_tile_first", (
        ("    tl.store(z_ptr + rows[:, None] * N + cols[None, :], z, mask=row_ok[:, None] & col_ok[None, :])",
         "    z_tile = z_ptr + rows[:, None] * N + cols[None, :]  # [BLOCK_M, BLOCK_N] pointers\n"
         "    tile_ok = row_ok[:, None] & col_ok[None, :]\n"
         "    tl.store(z_tile, z, mask=tile_ok)", 1),),
        notes="the pointer block and its mask named first"),
    Right("tile_start_then_offsets", (
        ("    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n",
         "    # the tile's corner, then pointers relative to it\n"
         "    rows = tl.arange(0, BLOCK_M) + pid_m * BLOCK_M\n"
         "    cols = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N\n", 1),
        ("    x = tl.load(x_ptr + cols, mask=col_ok)\n    y = tl.load(y_ptr + rows, mask=row_ok)\n",
         "    x = tl.load(x_ptr + pid_n * BLOCK_N + tl.arange(0, BLOCK_N), mask=col_ok, other=0.0)\n"
         "    y = tl.load(y_ptr + pid_m * BLOCK_M + tl.arange(0, BLOCK_M), mask=row_ok, other=0.0)\n", 1)),
        notes="the vectors' pieces addressed from the tile corner, padding lanes loading 0"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
STORE = "tl.store(z_ptr + rows[:, None] * N + cols[None, :], z, mask=row_ok[:, None] & col_ok[None, :])"

MEASURED = [
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
