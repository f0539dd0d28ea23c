"""Puzzle 14: tiled matmul with tl.dot. BLOCK_M/N/K tiles, tails in M, N and K, fp32 accumulation."""
from checker.puzzle import SummaryPattern, Tolerance, case, out, part, puzzle, randn, uniform, variant
from checker.specs.families.matmul import last_k_step, read_with_row_stride


def last_k_step_only(A, B, K, BLOCK_K):  # what a kernel computes with acc reset inside the K loop
    C = last_k_step(A, B, K, BLOCK_K)
    return {} if C is None else {"C": C}


def b_rows_k_long(A, B, K, N):  # B[k, n] read at k * K + n
    return {"C": A @ read_with_row_stride(B, K, N, K)}


def tf32_product(rounding):  # input_precision="tf32": inputs cut (an H100 truncates) to 10 mantissa bits
    def cut(t):
        import torch
        return torch.ldexp(rounding(torch.frexp(t)[0] * 2 ** 11) / 2 ** 11, torch.frexp(t)[1])
    return lambda A, B: {"C": cut(A) @ cut(B)}


TF32_HINT = ("C matches a product of inputs cut to TF32's 10-bit mantissas: this puzzle expects fp32 products. "
             "Leave tl.dot's input_precision alone (the checker makes 'ieee' the default) or pass "
             "input_precision=\"ieee\".")


# The precision this puzzle expects: fp32 products (tl.dot with input_precision="ieee", which the
# checker's GPU run makes the default). |error| <= 1e-5 * RMS(C) + 1e-5 * |C|: TF32's 10-bit inputs
# miss it 30-130 times over (measured on an H100). bf16: 8-bit inputs multiplied exactly and summed
# in fp32, C rounded to bf16.
PRECISION = {"float32": Tolerance(atol=1e-5, rtol=1e-5), "bfloat16": Tolerance(atol=1.6e-2, rtol=1.6e-2)}
POSITIVE = {"A": uniform("M K", 0.5, 1.5), "B": uniform("K N", 0.5, 1.5)}  # C grows like K

# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   C: correct <= 0.19 (solution, bfloat16 M=1000, K=300, N=700: M not a power of two, M wider than BLOCK_M (64), K not a power of two, K wider than BLOCK_K (32), N not a power of two, N wider than BLOCK_N (64))
PUZZLE = puzzle(
    14, "matmul", "Tiled matmul with tl.dot",
    skill="a 2-D grid of output tiles, a loop over K with tl.dot into an fp32 tile; masks in M, N and K",
    chapter="Matrix multiply",
    inputs={"A": randn("M K"), "B": randn("K N")},
    reference=lambda A, B: {"C": A @ B},
    parts=[part("forward", "C = A B", ["tiled_matmul_kernel"], outputs=[out("C", tolerance=PRECISION)],
                launch=lambda k, A, B, C, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K:
                k.tiled_matmul_kernel[(-(-M // BLOCK_M), -(-N // BLOCK_N))](
                    A, B, C, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K))],
    params={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16},  # tl.dot needs every block >= 16 on a GPU
    variants=[variant("last_k_step_only", "accumulate", "C matches the product over the last K step alone: the accumulator "
                      "is reset inside the loop over K. Create it once, before the loop.", last_k_step_only),
              variant("b_rows_k_long", "address", "C matches B read with rows K elements apart: B is [K, N], "
                      "row-major, so B[k, n] is k * N + n elements after b_ptr.", b_rows_k_long),
              variant("tf32", "precision", TF32_HINT, tf32_product(lambda t: t.trunc())),  # tensor cores drop the bits
              variant("tf32_rounded", "precision", TF32_HINT, tf32_product(lambda t: t.round()))],
    summaries=[SummaryPattern("only the cases whose grid is not square fail: the launch's grid is (cdiv(M, "
                              "BLOCK_M), cdiv(N, BLOCK_N)), so rows come from tl.program_id(0), columns from "
                              "tl.program_id(1).", lambda c: -(-c.sizes["M"] // c.params["BLOCK_M"])
                              != -(-c.sizes["N"] // c.params["BLOCK_N"]), candidates=("address",)),
               SummaryPattern("only the cases whose K takes more than one BLOCK_K step fail: does the loop "
                              "walk all of K, does each step load its own tiles (offsets k0 + tl.arange(0, "
                              "BLOCK_K)), and is each step's tl.dot added into one accumulator created before "
                              "the loop?", lambda c: c.sizes["K"] > c.params["BLOCK_K"],
                              candidates=("loop", "address", "accumulate", "hardcoded"))],
    hints={"wide": ("only the cases larger than one block fail: does each program take its own tile of C (rows from "
                   "tl.program_id(0), columns from tl.program_id(1)), and does each program's loop walk all of K?", ("address", "loop"))},
    cases=[case(M=20, N=40, K=36, documented=True), case(M=32, N=32, K=32), case(M=32, N=64, K=16),
           case(M=33, N=17, K=19), case(M=16, N=16, K=12), case(M=1, N=1, K=1), case(M=16, N=64, K=5),
           case(M=64, N=48, K=64, BLOCK_M=32, BLOCK_K=32), case(M=50, N=3, K=64, BLOCK_K=64),
           case(M=24, N=40, K=80, BLOCK_N=32, BLOCK_K=64),  # three block sizes, each stepped twice
           case("positive products (A, B in [0.5, 1.5)):", M=24, N=20, K=60, inputs=POSITIVE),
           case(M=512, N=512, K=512, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, gpu_only=True),
           case(M=1000, N=700, K=300, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, gpu_only=True),
           case(M=20, N=40, K=36, dtype="bfloat16", gpu_only=False),
           case(M=1000, N=700, K=300, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, dtype="bfloat16"),
           case("bf16, positive products, K = 4096:", M=64, N=64, K=4096, dtype="bfloat16", inputs=POSITIVE)],
)
