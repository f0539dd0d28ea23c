"""Puzzle 13 reference kernel: the matrix–vector product y = A x.

    A: [M, K] float32, contiguous (row m starts at a_ptr + m * K)
    x: [K]    float32
    y: [M]    float32: y[m] = sum_k A[m, k] * x[k]

The checker launches one program per block of BLOCK_M rows:

    matvec_kernel[(triton.cdiv(M, BLOCK_M),)](A, x, y, M, K, BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K)

Neither M nor K need be a multiple of its block: the last row block and the last K step stick out.
"""
import triton
import triton.language as tl


@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """y[m] = sum_k A[m, k] * x[k] for this program's BLOCK_M rows. Grid: (cdiv(M, BLOCK_M),)."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M  # the last program's rows may stick out past M
    # one running sum per row, in fp32 whatever the input dtype: K additions in bf16 would keep
    # only 8 significant bits of a sum that grows with K
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    # a row of K elements does not fit in one block in general: walk it in BLOCK_K steps, all rows
    # of the program at once, so each step reads a [BLOCK_M, BLOCK_K] tile of A and BLOCK_K of x
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        col_ok = cols < K  # the last step sticks out past K
        # a 2-D block of pointers: rows down, columns across; A[m, k] sits m * K + k elements in
        tile = tl.load(a_ptr + rows[:, None] * K + cols[None, :], mask=row_ok[:, None] & col_ok[None, :],
                       other=0.0)
        # x is shared by every row: one load per step, broadcast over the rows with [None, :].
        # Masked lanes load 0, so the columns past K add 0 * 0 to the sums.
        x = tl.load(x_ptr + cols, mask=col_ok, other=0.0)
        acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    tl.store(y_ptr + rows, acc, mask=row_ok)  # converted to y's dtype on the way out
