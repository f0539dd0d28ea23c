"""Puzzle 15: Linear forward, y = x W^T + b: W in PyTorch's [N, K] layout, read transposed through
its offsets; the bias added once, in the epilogue."""
from checker.puzzle import case, full, part, puzzle, randn, variant


def w_read_as_kn(x, w, b, K, N):  # W's memory taken for a row-major [K, N] matrix
    return {"y": x @ w.reshape(K, N) + b}


def bias_every_k_step(x, w, b, K, BLOCK_K):  # the bias added inside the loop over K
    return {"y": x @ w.T + -(-K // BLOCK_K) * b}


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   y: correct <= 0.186 (solution, bfloat16 M=1000, K=300, N=700: M not a power of two, M wider than BLOCK_M (64), K not a power of two, K wider than BLOCK_K (32), N not a power of two, N wider than BLOCK_N (64))
PUZZLE = puzzle(
    15, "linear_forward", "Linear forward",
    skill="a transposed operand read through its offsets (W is [N, K]); a bias added in the epilogue",
    chapter="Matrix multiply",
    inputs={"x": randn("M K"), "w": randn("N K"), "b": randn("N")},
    reference=lambda x, w, b: {"y": x @ w.T + b},
    parts=[part("forward", "y = x Wᵀ + b", ["linear_fwd_kernel"], outputs=["y"],
                launch=lambda k, x, w, b, y, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K:
                k.linear_fwd_kernel[(-(-M // BLOCK_M), -(-N // BLOCK_N))](
                    x, w, b, y, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K))],
    params={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16},  # tl.dot needs every block >= 16 on a GPU
    variants=[variant("w_read_as_kn", "address", "y matches W read transposed: W is [N, K] (PyTorch's Linear layout), so "
                      "W[n, k] is at w_ptr + n * K + k, and the tile of Wᵀ that tl.dot needs is "
                      "w_ptr + cols[None, :] * K + ks[:, None].", w_read_as_kn),
              variant("no_bias", "formula", "y matches x Wᵀ without the bias: add b[n] to column n, once.",
                      lambda x, w: {"y": x @ w.T}),
              variant("bias_every_k_step", "loop", "y matches the bias added once per step over K: add it once, after "
                      "the loop (the epilogue).", bias_every_k_step)],
    hints={"wide": ("only the cases larger than one block fail: does each program take its own tile of y (rows from "
                   "tl.program_id(0), columns from tl.program_id(1)), and does each program's loop walk all of K, adding "
                   "every step into one accumulator (acc += ...)?", ("address", "loop", "accumulate"))},
    cases=[case(M=20, N=24, K=40, documented=True), case(M=32, N=32, K=32), case(M=33, N=17, K=19),
           case(M=16, N=12, K=16), case(M=1, N=1, K=1), case(M=64, N=48, K=64, BLOCK_M=32, BLOCK_K=32),
           case(M=5, N=64, K=50, BLOCK_N=32),
           case(M=24, N=40, K=80, BLOCK_N=32, BLOCK_K=64),  # three block sizes, each stepped twice
           case("x = 0, so y is the bias alone:", M=24, N=40, K=36, inputs={"x": full("M K", 0.0)}),
           case(M=512, N=1024, K=768, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, gpu_only=True),
           case(M=1000, N=700, K=300, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, gpu_only=True),
           case(M=20, N=24, K=40, dtype="bfloat16", gpu_only=False),
           case(M=1000, N=700, K=300, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, dtype="bfloat16")],
)
