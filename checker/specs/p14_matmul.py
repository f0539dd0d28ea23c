"""Puzzle 14: Tiled matmul with tl.dot."""
from checker.declare import case, part, puzzle, randn

PUZZLE = puzzle(
    14, "matmul", "Tiled matmul with tl.dot",
    skill="TODO: the skill this puzzle teaches, in one line",
    chapter="TODO: the book part",
    inputs={"x": randn("N")},
    reference=lambda x: {"z": x},
    parts=[part("forward", "Tiled matmul with tl.dot", ["matmul_kernel"], outputs=["z"],
                launch=lambda k, x, z, N, BLOCK: k.matmul_kernel[(triton_cdiv(N, BLOCK),)](x, z, N, BLOCK=BLOCK))],
    params={"BLOCK": 32},
    cases=[case(N=8, documented=True), case(N=1), case(N=100), case(N=1000)],
)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
