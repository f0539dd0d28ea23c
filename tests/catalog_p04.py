"""Known-buggy kernels for puzzle 4 (2-D blocks), each the reference solution with one bug patched in
(tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

BUGS = [
    Bug("program_axes_swapped", "forward",
        (("pid_m = tl.program_id(0)\n    pid_n = tl.program_id(1)", "pid_m = tl.program_id(1)\n    pid_n = tl.program_id(0)", 1),),
        reasons=(("never written",), ("axes swapped",)),
        misleading=("atomic", "data race", "past the end"),
        notes="right whenever the grid is square; otherwise some tiles are never written (and others are "
              "wholly masked)"),
    Bug("column_program_id_forgotten", "forward",
        (("cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)", "cols = tl.arange(0, BLOCK_N)", 1),),
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",), ("tl.program_id(1) * BLOCK_N",)),
        misleading=("atomic",),
        notes="every program of a grid row writes the first column block: a race on z"),
    Bug("columns_stepped_by_block_m", "forward",
        (("cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)", "cols = pid_n * BLOCK_M + tl.arange(0, BLOCK_N)", 1),),
        reasons=(("data race",), ("blocks overlap",)),
        misleading=("atomic",),
        notes="column blocks BLOCK_M apart but BLOCK_N wide: neighbouring tiles overlap"),
    Bug("columns_not_masked", "forward",
        (("x = tl.load(x_ptr + cols, mask=col_ok)", "x = tl.load(x_ptr + cols)", 1),
         ("mask=row_ok[:, None] & col_ok[None, :])", "mask=row_ok[:, None])", 1)),
        reasons=(("past the end",), ("x_ptr",)),
        misleading=("atomic", "data race"),
        notes="the last column of programs reads x past its end"),
    Bug("row_length_is_the_block", "forward",
        (("tl.store(z_ptr + rows[:, None] * N + cols[None, :]", "tl.store(z_ptr + rows[:, None] * BLOCK_N + cols[None, :]", 1),),
        reasons=(("data race", "past the end"), ("z_ptr",)),
        misleading=("atomic",),
        notes="rows BLOCK_N apart instead of N: tiles of different programs overlap (a race) or run past z"),
]

ALTERNATIVES = [
    Alternative("pointer_tile_first", (
        ("    tl.store(z_ptr + rows[:, None] * N + cols[None, :], z, mask=row_ok[:, None] & col_ok[None, :])",
         "    z_tile = z_ptr + rows[:, None] * N + cols[None, :]  # [BLOCK_M, BLOCK_N] pointers\n"
         "    tile_ok = row_ok[:, None] & col_ok[None, :]\n"
         "    tl.store(z_tile, z, mask=tile_ok)", 1),),
        notes="the pointer block and its mask named first"),
    Alternative("tile_start_then_offsets", (
        ("    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)\n",
         "    # the tile's corner, then pointers relative to it\n"
         "    rows = tl.arange(0, BLOCK_M) + pid_m * BLOCK_M\n"
         "    cols = tl.arange(0, BLOCK_N) + pid_n * BLOCK_N\n", 1),
        ("    x = tl.load(x_ptr + cols, mask=col_ok)\n    y = tl.load(y_ptr + rows, mask=row_ok)\n",
         "    x = tl.load(x_ptr + pid_n * BLOCK_N + tl.arange(0, BLOCK_N), mask=col_ok, other=0.0)\n"
         "    y = tl.load(y_ptr + pid_m * BLOCK_M + tl.arange(0, BLOCK_M), mask=row_ok, other=0.0)\n", 1)),
        notes="the vectors' pieces addressed from the tile corner, padding lanes loading 0"),
]
