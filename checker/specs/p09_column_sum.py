"""Puzzle 9: the sum of each column of x [M, N], over a grid of row blocks × column blocks: every row
block's program adds its partial column sums into the result with tl.atomic_add (the dβ / db pattern)."""
from checker.puzzle import SummaryPattern, case, cdiv, identical_rows, out, part, puzzle, randn


def block_shares(x, M, BLOCK_M):  # one share per row block: what its programs add into each column
    import torch
    return torch.stack([x[p:p + BLOCK_M].sum(0) for p in range(0, M, BLOCK_M)])


PUZZLE = puzzle(
    9, "column_sum", "Column sum across programs",
    skill="a reduction across programs: each row block's partial column sums added into the result with "
          "tl.atomic_add",
    chapter="Reductions",
    inputs={"x": randn("M N")},
    reference=lambda x: {"y": x.sum(0)},
    parts=[part("forward", "y = x.sum(0)", ["column_sum_kernel"],
                outputs=[out("y", accumulated=True, shares=block_shares, share_unit="row block")],
                launch=lambda k, x, y, M, N, BLOCK_M, BLOCK_N: k.column_sum_kernel[
                    (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))](x, y, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N))],
    params={"BLOCK_M": 16, "BLOCK_N": 32},
    hints={"wide": ("only the cases larger than one block fail: each program takes its rows from tl.program_id(0) "
                   "and its columns from tl.program_id(1), and the programs of one column block all add into the "
                   "same elements of y.", ("address", "atomic"))},
    summaries=[SummaryPattern("only the cases with more than one block of rows fail: there, several programs add "
                              "into each element of y. Does each add its partial sums with tl.atomic_add?",
                              lambda c: c.sizes["M"] > c.params["BLOCK_M"], candidates=("atomic",))],
    cases=[case(M=10, N=6, BLOCK_M=4, BLOCK_N=8, documented=True), case(M=1, N=1), case(M=100, N=20),
           case(M=64, N=64), case(M=37, N=50), case(M=200, N=3), case(M=5, N=300), case(M=48, N=40, BLOCK_M=1),
           case("M=12, N=20: one partly filled block", M=12, N=20),
           case("identical rows: every row block adds an identical share", M=64, N=24,
                inputs={"x": identical_rows("M N")}),
           case(M=8192, N=1024, BLOCK_M=64, BLOCK_N=128, gpu_only=True),
           case("16384 identical rows: 256 programs add at once", M=16384, N=256, BLOCK_M=64, gpu_only=True,
                inputs={"x": identical_rows("M N")}),
           case(M=4096, N=1000, BLOCK_M=64, BLOCK_N=128, dtype="bfloat16"),
           # the interpreter's bf16 case (its bf16 rounds as a GPU's does: checker/interpreter/bf16.py): a tile
           # summed in bf16, without .to(tl.float32), fails here as on the GPU's large case
           case(M=512, N=40, BLOCK_M=64, BLOCK_N=32, dtype="bfloat16", gpu_only=False)],
)
