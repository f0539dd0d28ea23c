"""Puzzle 16: Linear backward, dx = dy W, dW = dy^T x, db = sum_rows dy. Each program owns a tile of
its output and does the whole sum over rows itself: no atomics (compare puzzle 19's split-M)."""
from checker.puzzle import SummaryPattern, Tolerance, case, out, part, puzzle, randn, variant

GRID = {"dx": lambda M, K, BLOCK_M, BLOCK_K: (-(-M // BLOCK_M), -(-K // BLOCK_K)),
        "dw": lambda N, K, BLOCK_N, BLOCK_K: (-(-N // BLOCK_N), -(-K // BLOCK_K))}
# dW and db are fp32 even for bf16 inputs: bf16 products are exact in fp32 and summed in fp32,
# so they stay within a few fp32 roundings; a bf16 intermediate (2**-9) fails this
FP32_SUMS = {"bfloat16": Tolerance(atol=1e-4, rtol=1e-4)}


def dx_w_read_transposed(dy, w, K, N):  # the forward's W^T tile reused: W's memory read as [K, N]
    return {"dx": dy @ w.reshape(K, N).T}


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   db: correct <= 0.000672 (solution, bf16, 4096 rows summed into dW and db:)
#   dw: correct <= 0.0806 (solution, bf16, 4096 rows summed into dW and db:)
#   dx: correct <= 0.188 (solution, bf16, 4096 rows summed into dW and db:)
#   db_summed_in_bf16: 277 (db, bfloat16 M=1000, K=300, N=700: M not a power of two, M wider than BLOCK_M (64), K not a power of two, K wider than BLOCK_K (32), N not a power of two, N wider than BLOCK_N (64))
PUZZLE = puzzle(
    16, "linear_backward", "Linear backward",
    skill="backward of a matmul: dx = dy W and dW = dyᵀ x with tl.dot on transposed tiles, one owner per "
          "tile of dW (no atomics), db alongside",
    chapter="Matrix multiply",
    inputs={"x": randn("M K"), "w": randn("N K"), "b": randn("N"), "dy": randn("like y")},
    reference=lambda x, w, b: {"y": x @ w.T + b},
    parts=[part("dx", "dx = dy W", ["linear_bwd_dx_kernel"], outputs=["dx"], grads={"dx": "x"},
                upstream={"y": "dy"},
                launch=lambda k, dy, w, dx, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K:
                k.linear_bwd_dx_kernel[GRID["dx"](M, K, BLOCK_M, BLOCK_K)](
                    dy, w, dx, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)),
           part("dw", "dW = dyᵀ x and db = Σ dy", ["linear_bwd_dw_kernel"],
                outputs=[out(g, dtype="float32", tolerance=FP32_SUMS) for g in ("dw", "db")],
                grads={"dw": "w", "db": "b"}, upstream={"y": "dy"},
                launch=lambda k, dy, x, dw, db, M, N, K, BLOCK_M, BLOCK_N, BLOCK_K:
                k.linear_bwd_dw_kernel[GRID["dw"](N, K, BLOCK_N, BLOCK_K)](
                    dy, x, dw, db, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K))],
    params={"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16},  # tl.dot needs every block >= 16 on a GPU
    formulas={"eq-p16-dx": ("dx", lambda dy, w: dy @ w), "eq-p16-dw": ("dw", lambda dy, x: dy.T @ x),
              "eq-p16-db": ("db", lambda dy: dy.sum(0))},
    variants=[variant("dx_w_read_transposed", "address", "dx matches W read transposed: dx = dy W uses W as stored, [N, K], "
                      "so its [BLOCK_N, BLOCK_K] tile is w_ptr + ns[:, None] * K + ks[None, :] (no transpose, "
                      "unlike the forward pass).", dx_w_read_transposed)],
    summaries=[SummaryPattern("only the cases with more rows than one BLOCK_M fail: each program must walk all "
                              "M rows (range(0, M, BLOCK_M)), adding every step into its tile.",
                              lambda c: c.sizes["M"] > c.params["BLOCK_M"], candidates=("loop", "accumulate", "hardcoded")),
               SummaryPattern("only the cases with more than one tile along K fail: do the K offsets come from "
                              "tl.program_id(1), and is each element stored by exactly one program (db by the "
                              "programs with tl.program_id(1) == 0 alone)?",
                              lambda c: c.sizes["K"] > c.params["BLOCK_K"], candidates=("address", "atomic"))],
    hints={"wide": ("only the cases larger than one block fail: does each program take its tile from "
                   "tl.program_id(0) and tl.program_id(1), and does its loop walk the whole sum (all of N for "
                   "dx, all of M for dW and db), adding every step into one accumulator (acc += ...)?",
                   ("address", "loop", "accumulate"))},
    cases=[case(M=40, N=24, K=20, documented=True), case(M=32, N=32, K=32), case(M=33, N=17, K=19),
           case(M=16, N=16, K=12), case(M=40, N=20, K=16), case(M=1, N=1, K=1),
           case(M=64, N=48, K=64, BLOCK_M=32, BLOCK_K=32), case(M=60, N=5, K=40, BLOCK_M=32), case(M=1, N=40, K=24),
           case(M=2048, N=512, K=768, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, gpu_only=True),
           case(M=1000, N=700, K=300, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, gpu_only=True),
           case(M=40, N=24, K=20, dtype="bfloat16", gpu_only=False),
           case(M=1000, N=700, K=300, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, dtype="bfloat16"),
           case("bf16, 4096 rows summed into dW and db:", M=4096, N=64, K=64, BLOCK_M=64, dtype="bfloat16")],
)
