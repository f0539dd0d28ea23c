"""Puzzle 15 reference kernel: a Linear layer's forward pass, y = x W^T + b.

    x: [M, K]   (M rows of K input features)
    W: [N, K]   PyTorch's nn.Linear layout: out features x in features; W[n, k] is n * K + k elements in
    b: [N]
    y: [M, N]   y[m, n] = sum_k x[m, k] * W[n, k] + b[n]
    all contiguous, float32 (or bfloat16 on a GPU)

The checker launches one program per [BLOCK_M, BLOCK_N] tile of y:

    linear_fwd_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))](
        x, W, b, y, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
"""
import triton
import triton.language as tl


@triton.jit
def linear_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """y[tile] = x[rows, :] @ W[cols, :]^T + b[cols] for this program's BLOCK_M x BLOCK_N tile of y.

    Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)).
    """
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # rows of y and of x
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # columns of y = rows of W
    row_ok = rows < M
    col_ok = cols < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)  # fp32 whatever the input dtype
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < K
        x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],
                    other=0.0)  # [BLOCK_M, BLOCK_K]
        # tl.dot wants the [BLOCK_K, BLOCK_N] tile of W^T. W^T is never built: its element (k, n) is
        # W[n, k], at n * K + k. So the offsets put k down the tile (ks[:, None]) with stride 1 and
        # n across it (cols[None, :]) with stride K: the same memory as W, read with the strides swapped.
        wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :],
                     other=0.0)
        acc += tl.dot(x, wt)
    # the epilogue: the bias is added once, after the whole sum over K, to every row of the tile
    # (b[None, :] broadcasts the tile's BLOCK_N biases down its rows)
    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)
    acc += bias.to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])
