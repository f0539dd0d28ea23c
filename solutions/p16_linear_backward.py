"""Puzzle 16 reference kernels: a Linear layer's backward pass, without atomics.

Forward (puzzle 15): y = x W^T + b. Given the upstream gradient dy = dL/dy:

    dx = dy W        [M, K] = [M, N] @ [N, K]      W as stored: no transpose
    dW = dy^T x      [N, K] = [N, M] @ [M, K]      a sum over the M rows
    db = sum_m dy    [N]                           a sum over the M rows

    x: [M, K]   W: [N, K]   dy, y: [M, N]   all contiguous, float32 (or bfloat16 on a GPU);
    dW and db are float32 in every case.

Each output element is written by exactly one program, which does its whole sum itself:

    linear_bwd_dx_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(K, BLOCK_K))](
        dy, w, dx, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    linear_bwd_dw_kernel[(triton.cdiv(N, BLOCK_N), triton.cdiv(K, BLOCK_K))](
        dy, x, dw, db, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
"""
import triton
import triton.language as tl


@triton.jit
def linear_bwd_dx_kernel(dy_ptr, w_ptr, dx_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """dx[tile] = dy[rows, :] @ W[:, cols] for this program's BLOCK_M x BLOCK_K tile of dx.

    Grid: (cdiv(M, BLOCK_M), cdiv(K, BLOCK_K)). The sum runs over N, in steps of BLOCK_N.
    """
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    row_ok = rows < M
    k_ok = ks < K
    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        ns = n0 + tl.arange(0, BLOCK_N)
        n_ok = ns < N
        dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :],
                     other=0.0)  # [BLOCK_M, BLOCK_N]
        # dx = dy W multiplies by W itself: its [BLOCK_N, BLOCK_K] tile is read in W's own layout
        # (rows n, K long). The forward pass needed W^T; the backward pass does not.
        w = tl.load(w_ptr + ns[:, None] * K + ks[None, :], mask=n_ok[:, None] & k_ok[None, :], other=0.0)
        acc += tl.dot(dy, w)
    tl.store(dx_ptr + rows[:, None] * K + ks[None, :], acc, mask=row_ok[:, None] & k_ok[None, :])


@triton.jit
def linear_bwd_dw_kernel(dy_ptr, x_ptr, dw_ptr, db_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """dW[tile] = dy[:, outs]^T @ x[:, cols] for this program's BLOCK_N x BLOCK_K tile of dW, and
    db[outs] = the column sums of dy, stored by the programs of the first column of tiles.

    Grid: (cdiv(N, BLOCK_N), cdiv(K, BLOCK_K)). The sums run over all M rows, in steps of BLOCK_M.
    """
    pid_k = tl.program_id(1)
    outs = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)  # rows of dW = columns of dy
    ks = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)              # columns of dW = columns of x
    out_ok = outs < N
    k_ok = ks < K
    # this program owns its tile of dW outright: it walks all M rows itself and stores once, so no
    # other program ever touches these elements: no atomics, and the same bits on every run
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        ms = m0 + tl.arange(0, BLOCK_M)
        m_ok = ms < M  # the last step sticks out past M: those rows must add exactly 0
        # the [BLOCK_N, BLOCK_M] tile of dy^T, read from dy [M, N] with the strides swapped:
        # element (n, m) of dy^T is dy[m, n], at m * N + n
        dyt = tl.load(dy_ptr + ms[None, :] * N + outs[:, None], mask=out_ok[:, None] & m_ok[None, :],
                      other=0.0)
        x = tl.load(x_ptr + ms[:, None] * K + ks[None, :], mask=m_ok[:, None] & k_ok[None, :],
                    other=0.0)  # [BLOCK_M, BLOCK_K]
        acc += tl.dot(dyt, x)
        # db is the same sum over rows with x replaced by ones: the tile of dy is already here
        db += tl.sum(dyt.to(tl.float32), axis=1)
    tl.store(dw_ptr + outs[:, None] * K + ks[None, :], acc, mask=out_ok[:, None] & k_ok[None, :])
    # every program of a column of tiles computed the same db; exactly one of them stores it, so
    # each element of db has one writer (several plain stores to one element race)
    if pid_k == 0:
        tl.store(db_ptr + outs, db, mask=out_ok)
