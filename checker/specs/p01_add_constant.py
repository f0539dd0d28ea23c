"""Puzzle 1: add a constant. One program, one block: tl.arange, tl.load, tl.store."""
from checker.puzzle import case, part, puzzle, randn

PUZZLE = puzzle(
    1, "add_constant", "Add a constant",
    skill="one program, one block: tl.arange, tl.load, tl.store",
    chapter="Programs, blocks and masks",
    inputs={"x": randn("N")},
    reference=lambda x: {"z": x + 10},
    parts=[part("forward", "Add 10", ["add_constant_kernel"], outputs=["z"],
                launch=lambda k, x, z, N, BLOCK: k.add_constant_kernel[(1,)](x, z, N, BLOCK=BLOCK))],
    params={"BLOCK": lambda N: N},  # one program holds the whole vector: N is a power of two here
    cases=[case(N=8, documented=True), case(N=1), case(N=32), case(N=128), case(N=1024),
           case("values far from 0 (mean 1000)", N=64, inputs={"x": randn("N", mean=1000.0)})],
)
