"""Puzzle 12 reference kernel: the softmax backward, from the forward's output y.

    y, dy: [M, N], contiguous (row i starts at i * N)     dx: [M, N], like y
    dx[i, j] = y[i, j] * (dy[i, j] - s_i),    s_i = sum_k dy[i, k] * y[i, k]

The checker launches one program per row, with a block that does not depend on N:
    softmax_bwd_kernel[(M,)](y, dy, dx, N, BLOCK_N=BLOCK_N)      # BLOCK_N = 32 unless a case says otherwise
"""
import triton
import triton.language as tl


@triton.jit
def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, N, BLOCK_N: tl.constexpr):
    """dx[i, :] = y ⊙ (dy − Σ dy·y) for row i, BLOCK_N at a time. Grid: (M,)."""
    row = tl.program_id(0)
    y_row = y_ptr + row * N
    dy_row = dy_ptr + row * N

    # pass 1: the cross term s = Σ_k dy_k y_k. Every x_j moves every y_k (through the softmax's
    # denominator), so every dx_j needs this one number of the whole row; a per-element formula
    # such as dy * y * (1 - y) is only the Jacobian's diagonal. Padded lanes load 0 for both
    # factors, so they add 0 * 0 to the sum.
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        acc += dy * y
    s = tl.sum(acc, axis=0)

    # pass 2: each element from its own y and dy, and the row's s
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)
