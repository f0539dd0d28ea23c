"""Puzzle 4: 2-D blocks. The outer add over a 2-D grid of tiles, tails in both directions."""
from checker.puzzle import SummaryPattern, case, part, puzzle, randn


def grid(c):  # the launch grid of a case
    return -(-c.sizes["M"] // c.params["BLOCK_M"]), -(-c.sizes["N"] // c.params["BLOCK_N"])


PUZZLE = puzzle(
    4, "outer_add_2d", "2-D blocks",
    skill="a 2-D grid: tl.program_id(0) and (1) pick a tile; a mask on each edge for the tails",
    chapter="Programs, blocks and masks",
    inputs={"y": randn("M"), "x": randn("N")},
    reference=lambda x, y: {"z": y[:, None] + x[None, :]},
    parts=[part("forward", "z[i, j] = x[j] + y[i], tile by tile", ["outer_add_grid_kernel"], outputs=["z"],
                launch=lambda k, x, y, z, M, N, BLOCK_M, BLOCK_N: k.outer_add_grid_kernel[
                    (-(-M // BLOCK_M), -(-N // BLOCK_N))](x, y, z, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N))],
    params={"BLOCK_M": 8, "BLOCK_N": 16},
    summaries=[SummaryPattern("only the cases whose grid has more programs on one axis than on the other fail: "
                              "are the axes swapped? tl.program_id(0) picks the block of rows (M), "
                              "tl.program_id(1) the block of columns (N).", lambda c: len(set(grid(c))) > 1, candidates=("address",))],
    hints={"wide": ("only the cases with more than one tile fail: does each program take its rows from "
                   "tl.program_id(0) * BLOCK_M and its columns from tl.program_id(1) * BLOCK_N?", ("address",))},
    cases=[case(M=10, N=13, BLOCK_M=4, BLOCK_N=8, documented=True),
           case("one tile covers it all", M=3, N=5, BLOCK_M=4, BLOCK_N=8), case(M=1, N=1),
           case(M=16, N=32, BLOCK_M=4, BLOCK_N=8), case(M=8, N=64, BLOCK_M=4, BLOCK_N=8),
           case(M=20, N=20, BLOCK_M=8, BLOCK_N=8),
           case(M=33, N=70, BLOCK_M=16, BLOCK_N=32), case(M=5, N=100), case(M=100, N=5), case(M=37, N=1),
           case("y near 100, x near 0", M=12, N=12, BLOCK_M=4, BLOCK_N=4,
                inputs={"y": randn("M", mean=100.0), "x": randn("N")}),
           case(M=1000, N=3000, BLOCK_M=32, BLOCK_N=64, gpu_only=True),
           case(M=4096, N=4096, BLOCK_M=64, BLOCK_N=64, gpu_only=True)],
)
