"""Puzzle 13: matrix–vector product. A loop over K; rows and K not multiples of their blocks."""
from checker.puzzle import SummaryPattern, case, part, puzzle, randn, uniform, variant
from checker.specs.families.matmul import last_k_step, read_with_row_stride


def last_k_step_only(A, x, K, BLOCK_K):  # what a kernel computes with acc reset inside the K loop
    y = last_k_step(A, x, K, BLOCK_K)
    return {} if y is None else {"y": y}


def row_stride_m(A, x, M, K):  # A[m, k] read at m * M + k
    return {"y": read_with_row_stride(A, M, K, M) @ x}


# every product A[m, k] x[k] > 0: y grows like 3 K (24576 at K = 8192), and a bf16 running sum stops
# growing once half its rounding step (8 significant bits: 128 past 16384) passes what a K step adds (~48)
POSITIVE = {"A": randn("M K", mean=3.0, std=0.1), "x": uniform("K", 0.5, 1.5)}

# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   y: correct <= 0.156 (solution, bfloat16 M=1000, K=3000: M not a power of two, M wider than BLOCK_M (32), K not a power of two, K wider than BLOCK_K (128))
#   sums_in_the_input_dtype: 10.5 (y, bf16, positive products, 512 K steps:)
PUZZLE = puzzle(
    13, "matvec", "Matrix–vector product",
    skill="a loop over K with one fp32 running sum per row; masks on the last row block and K step",
    chapter="Matrix multiply",
    inputs={"A": randn("M K"), "x": randn("K")},
    reference=lambda A, x: {"y": A @ x},
    parts=[part("forward", "y = A x", ["matvec_kernel"], outputs=["y"],
                launch=lambda k, A, x, y, M, K, BLOCK_M, BLOCK_K: k.matvec_kernel[(-(-M // BLOCK_M),)](
                    A, x, y, M, K, BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K))],
    params={"BLOCK_M": 16, "BLOCK_K": 16},
    variants=[variant("last_k_step_only", "accumulate", "y matches the sum over the last K step alone: the accumulator "
                      "is reset inside the loop over K. Create it once, before the loop.", last_k_step_only),
              variant("row_stride_m", "address", "y matches A read with rows M elements apart: A is [M, K], row-major, "
                      "so A[m, k] is m * K + k elements after a_ptr.", row_stride_m)],
    summaries=[SummaryPattern("only the cases whose K takes more than one BLOCK_K step fail: does the loop "
                              "walk all of K (range(0, K, BLOCK_K)), does each step load its own chunk of A and "
                              "x (offsets k0 + tl.arange(0, BLOCK_K)), and is each step added into one "
                              "accumulator created before the loop?", lambda c: c.sizes["K"] > c.params["BLOCK_K"],
                              # a loop, a step's offsets or an accumulator that loses K steps fails every such case
                              coverage=1.0, candidates=("loop", "address", "accumulate", "hardcoded"))],
    hints={"wide": ("only the cases larger than one block fail: does each program take its BLOCK_M rows from "
                   "tl.program_id(0), and does its loop walk all of K?", ("address", "loop"))},
    cases=[case(M=6, K=20, BLOCK_M=4, BLOCK_K=8, documented=True), case(M=8, K=16, BLOCK_M=4, BLOCK_K=8),
           case(M=37, K=50), case(M=12, K=10), case(M=1, K=1), case(M=1, K=200, BLOCK_K=32), case(M=100, K=3),
           case(M=64, K=64, BLOCK_M=64, BLOCK_K=64),
           case("positive products (A near 3, x in [0.5, 1.5)):", M=20, K=45, inputs=POSITIVE),
           case(M=1000, K=3000, BLOCK_M=32, BLOCK_K=128, gpu_only=True),
           case(M=4096, K=4096, BLOCK_M=64, BLOCK_K=128, gpu_only=True),
           case(M=6, K=20, BLOCK_M=4, BLOCK_K=8, dtype="bfloat16", gpu_only=False), case(M=37, K=50, dtype="bfloat16"),
           case(M=1000, K=3000, BLOCK_M=32, BLOCK_K=128, dtype="bfloat16"),
           case("bf16, positive products, 512 K steps:", M=64, K=8192, dtype="bfloat16", inputs=POSITIVE)],
)
