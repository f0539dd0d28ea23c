"""Puzzle 3: outer add. 2-D offsets and masks from 1-D blocks with [:, None] and [None, :]."""
from checker.puzzle import case, next_pow2, part, puzzle, randn

# y near 100, x near 0: x and y swapped (the transpose when M == N) is glaring
APART = {"y": randn("M", mean=100.0), "x": randn("N")}

PUZZLE = puzzle(
    3, "outer_add", "Outer add",
    skill="2-D blocks by broadcasting: rows[:, None] and cols[None, :], offsets i * N + j, a 2-D mask",
    chapter="Programs, blocks and masks",
    inputs={"y": randn("M"), "x": randn("N")},
    reference=lambda x, y: {"z": y[:, None] + x[None, :]},
    parts=[part("forward", "z[i, j] = x[j] + y[i]", ["outer_add_kernel"], outputs=["z"],
                launch=lambda k, x, y, z, M, N, BLOCK_M, BLOCK_N: k.outer_add_kernel[(1,)](
                    x, y, z, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N))],
    params={"BLOCK_M": next_pow2("M"), "BLOCK_N": next_pow2("N")},  # one block holds the whole output
    formulas={"eq-p03-z": ("z", lambda x, y, M, N: x.repeat(M, 1) + y.repeat(N, 1).T)},  # z_ij = x_j + y_i
    # both ask about masks and offsets: the blocks stick out in exactly these cases, and either a missing
    # mask or offsets built from the block sizes shows there (beside an out-of-bounds error that asks both)
    hints={"non_pow2": ("only the cases whose sizes are not powers of two fail, where the blocks are wider than "
                       "the data: are the loads and the store masked with the sizes (rows < M, cols < N), and do "
                       "the offsets use the sizes, not the block sizes (row i of z starts at i * N, not i * BLOCK_N)?",
                       ("mask", "address")),
           "tail": ("in those cases the blocks stick out past M or N: are the loads and the store masked with the "
                   "sizes (rows < M, cols < N), and do the offsets use the sizes, not the block sizes (row i of z "
                   "starts at i * N, not i * BLOCK_N)?", ("mask", "address"))},
    cases=[case(M=3, N=5, documented=True), case(M=4, N=8), case(M=1, N=1), case(M=1, N=7), case(M=7, N=1),
           case(M=8, N=3), case(M=30, N=50), case(M=33, N=17), case(M=64, N=16),
           case("y near 100, x near 0, M == N", M=6, N=6, inputs=APART),
           case("y near 100, x near 0", M=5, N=12, inputs=APART),
           case(M=256, N=256, gpu_only=True), case(M=100, N=1000, gpu_only=True)],
)
