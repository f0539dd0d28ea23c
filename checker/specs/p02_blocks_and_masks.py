"""Puzzle 2: blocks and masks. A grid of cdiv(N, BLOCK) programs; the last block sticks out."""
from checker.puzzle import case, part, puzzle, randn, variant

PUZZLE = puzzle(
    2, "blocks_and_masks", "Blocks and masks",
    skill="a grid of programs: tl.program_id picks the block, a mask (offsets < N) guards the last one",
    chapter="Programs, blocks and masks",
    inputs={"x": randn("N"), "y": randn("N")},
    reference=lambda x, y: {"z": x + y},
    parts=[part("forward", "z = x + y", ["add_vectors_kernel"], outputs=["z"],
                launch=lambda k, x, y, z, N, BLOCK: k.add_vectors_kernel[(-(-N // BLOCK),)](x, y, z, N, BLOCK=BLOCK))],
    params={"BLOCK": 32},
    variants=[variant("x_twice", "address", "z matches x + x: the second load reads x_ptr again; load y through y_ptr.",
                      lambda x: {"z": x + x})],
    hints={"wide": ("only the cases larger than one block fail: does each program take its own block from "
                   "tl.program_id(0), offsets = pid * BLOCK + tl.arange(0, BLOCK)?", ("address",))},
    cases=[case(N=10, BLOCK=4, documented=True), case(N=1), case(N=7, BLOCK=8), case(N=33), case(N=64),
           case(N=100), case(N=1000, BLOCK=128),
           case("N=1000, BLOCK=1024: a single program, 24 lanes to spare", N=1000, BLOCK=1024),
           # y far from 0, x near it: z = x + x (a copied load line) is then far from x + y
           case("y far from 0 (mean 100)", N=50, BLOCK=16, inputs={"y": randn("N", mean=100.0)}),
           case(N=100_000, BLOCK=1024, gpu_only=True), case(N=1 << 20, BLOCK=1024, gpu_only=True)],
)
