"""Puzzle 19: Split-M weight gradient, dW = X^T dY: a tl.dot per row block, added into dW with atomics."""
from checker.puzzle import SummaryPattern, case, full, identical_rows, out, part, puzzle, randn, variant


def row_block_shares(x, dy, BLOCK_M):  # eq-p19-split: one share of dW per row block
    import torch
    return torch.stack([x[i:i + BLOCK_M].T @ dy[i:i + BLOCK_M] for i in range(0, x.shape[0], BLOCK_M)])


def x_not_transposed(x, dy, M, K, BLOCK_M, BLOCK_K):  # X's [BLOCK_M, BLOCK_K] tile used as stored
    import torch
    import torch.nn.functional as F
    if BLOCK_M != BLOCK_K:  # then tl.dot would not even compile
        return {}
    B, mp, kp = BLOCK_M, -(-M // BLOCK_M) * BLOCK_M, -(-K // BLOCK_K) * BLOCK_K
    xp, dyp = F.pad(x, (0, kp - K, 0, mp - M)), F.pad(dy, (0, 0, 0, mp - M))  # padded lanes load 0
    tiles = [sum(xp[i:i + B, k:k + B] @ dyp[i:i + B] for i in range(0, mp, B)) for k in range(0, kp, B)]
    return {"dw": torch.cat(tiles)[:K]}


GRID = lambda M, K, N, BLOCK_M, BLOCK_K, BLOCK_N: (-(-M // BLOCK_M), -(-K // BLOCK_K), -(-N // BLOCK_N))  # noqa

PUZZLE = puzzle(
    19, "split_m_weight_gradient", "Split-M weight gradient",
    skill="a reduction over M split across programs: a tl.dot per row block, tiles added into dW with tl.atomic_add",
    chapter="Atomics and parameter gradients",
    inputs={"x": randn("M K"), "w": randn("K N"), "dy": randn("like y")},
    reference=lambda x, w: {"y": x @ w},
    parts=[part("dw", "dW = Xᵀ dY, split over the rows", ["splitm_dw_kernel"],
                outputs=[out("dw", accumulated=True, share_unit="row block", shares=row_block_shares)],
                grads={"dw": "w"}, upstream={"y": "dy"},
                launch=lambda k, x, dy, dw, M, K, N, BLOCK_M, BLOCK_K, BLOCK_N:
                k.splitm_dw_kernel[GRID(M, K, N, BLOCK_M, BLOCK_K, BLOCK_N)](
                    x, dy, dw, M, K, N, BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, BLOCK_N=BLOCK_N))],
    params={"BLOCK_M": 16, "BLOCK_K": 16, "BLOCK_N": 16},  # tl.dot needs every block >= 16 on a GPU
    formulas={"eq-p19-dw": ("dw", lambda x, dy: x.T @ dy),
              "eq-p19-split": ("dw", lambda x, dy, BLOCK_M: row_block_shares(x, dy, BLOCK_M).sum(0))},
    variants=[variant("x_not_transposed", "address", "dW matches X's tile used as stored, [BLOCK_M, BLOCK_K], in place of "
                      "Xᵀ's [BLOCK_K, BLOCK_M]: element (k, m) of Xᵀ is X[m, k], at x_ptr + rows[None, :] * K "
                      "+ ks[:, None].", x_not_transposed)],
    summaries=[SummaryPattern(f"only the cases with more than one {what} fail: {why}",
                              lambda c, d=d: c.sizes[d] > c.params[f"BLOCK_{d}"], candidates=("address", "atomic")) for d, what, why in (
        ("M", "row block", "that is where several programs meet on each tile of dW. Does every program take its "
                           "rows from tl.program_id(0), and add its share into dW rather than store it?"),
        ("K", "block along K", "do the K offsets come from tl.program_id(1), in the load of Xᵀ and in the add?"),
        ("N", "block along N", "do the N offsets come from tl.program_id(2), in the load of dY and in the add?"))],
    hints={"wide": ("only the cases larger than one block fail: check each program's offsets (rows from "
                    "tl.program_id(0), K from (1), N from (2)), the masks of the blocks that stick out, and how the "
                    "shares of the row blocks meet in dW.", ("address", "mask", "atomic"))},
    cases=[case(M=40, K=20, N=24, documented=True),
           case("M=64, K=N=32: whole blocks", M=64, K=32, N=32),
           case("M=33, K=17, N=19: a ragged last block in every dimension", M=33, K=17, N=19),
           case("one row; three tiles of dW along K", M=1, K=40, N=16), case("one program", M=16, K=16, N=16),
           case("M=10, K=12, N=14: one partly filled block in every dimension", M=10, K=12, N=14),
           case("one row block, three tiles of dW along N", M=16, K=16, N=40),
           case("M=64, K=48, N=16, BLOCK_M=32", M=64, K=48, N=16, BLOCK_M=32),
           case("100 rows into a 5 x 3 dW", M=100, K=5, N=3),
           case("three block sizes, two tiles along each", M=24, K=40, N=72, BLOCK_K=32, BLOCK_N=64),
           case("identical rows, dy = 1.3: equal shares", M=64, K=24, N=20,
                inputs={"x": identical_rows("M K", offset=-0.4), "dy": full("like y", 1.3)}),
           case("8192 rows into a 64 x 64 dW: 128 adds per tile", M=8192, K=64, N=64, BLOCK_M=64, gpu_only=True),
           case("M=2000, K=300, N=200, blocks of 64", M=2000, K=300, N=200, BLOCK_M=64, BLOCK_K=64, BLOCK_N=64,
                gpu_only=True),
           case("bf16: the documented configuration", M=40, K=20, N=24, dtype="bfloat16", gpu_only=False),
           case("bf16: 4096 rows into a 128 x 96 dW", M=4096, K=128, N=96, BLOCK_M=64, BLOCK_K=32, BLOCK_N=32,
                dtype="bfloat16")],
)
