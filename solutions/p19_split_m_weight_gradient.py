"""Puzzle 19 reference kernel: a weight gradient dW = X^T dY split over the rows, added with atomics.

    x:  [M, K]   dy: [M, N]   float32 (or bfloat16 on a GPU), contiguous
    dw: [K, N]   float32, zeros before the launch (the checker zeroes it)

    dW = X^T dY = sum over row blocks b of X[b]^T dY[b]      (M is the reduction dimension)

One program per (row block, K block, N block): each computes its row block's share of one
[BLOCK_K, BLOCK_N] tile of dW with one tl.dot, and adds it into dW with tl.atomic_add:

    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(K, BLOCK_K), triton.cdiv(N, BLOCK_N))
    splitm_dw_kernel[grid](x, dy, dw, M, K, N, BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K, BLOCK_N=BLOCK_N)
"""
import triton
import triton.language as tl


@triton.jit
def splitm_dw_kernel(x_ptr, dy_ptr, dw_ptr, M, K, N,
                     BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    """dW[ks, ns] += X[rows, ks]^T @ dY[rows, ns] for this program's row block, K block and N block.

    Grid: (cdiv(M, BLOCK_M), cdiv(K, BLOCK_K), cdiv(N, BLOCK_N)).
    """
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    ns = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M  # the last row block sticks out past M ...
    k_ok = ks < K      # ... and the last tiles past K and N
    n_ok = ns < N
    # X^T's [BLOCK_K, BLOCK_M] tile, read straight from X's memory: element (k, m) of X^T is X[m, k]
    # at m * K + k. No transposed copy of X is ever made; the offsets do the transposing.
    # Padded rows load 0 in both operands, so they add nothing to the product (one zero operand
    # would do for the values, but both loads must stay inside their tensors).
    xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)
    dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)
    # The sum over this block's rows in one tl.dot; it accumulates in fp32 for fp32 and bf16
    # inputs alike (BLOCK_* >= 16: tl.dot's smallest tile on a GPU).
    share = tl.dot(xt, dy)  # [BLOCK_K, BLOCK_N]
    # Every row block adds into the same tile of dW: cdiv(M, BLOCK_M) programs, running at the
    # same time on a GPU. A plain store would keep one block's share; a load + add + store would
    # lose some. tl.atomic_add adds the whole tile, one indivisible add per element. Compared
    # with puzzle 16 (one program per tile walks all M rows), the work is spread over M / BLOCK_M
    # times more programs -- the win when K and N are small and M is large (a few tiles of dW,
    # millions of tokens) -- at the price of atomics and of a sum whose order changes per run.
    tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])
