"""Puzzle 9 reference kernel: the sum of each column, with the rows split between programs.

    x: [M, N], contiguous    y: [N], float32, zeros when the kernel starts

The checker launches a 2-D grid of BLOCK_M x BLOCK_N tiles:
    column_sum_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))](x, y, M, N,
                                                                          BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
Program (pm, pn) sums its tile down the rows into BLOCK_N partial column sums. Every program of
column block pn holds a partial sum of the same columns: y[j] is the sum of cdiv(M, BLOCK_M)
shares, one from each row block, added with tl.atomic_add. This is how a LayerNorm or Linear
backward adds the rows' shares into dbeta or db.
"""
import triton
import triton.language as tl


@triton.jit
def column_sum_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Adds the column sums of tile (pm, pn) of x into y. Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    # the last row block and the last column block stick out: masked lanes load 0, which adds nothing
    mask = (rows[:, None] < M) & col_ok[None, :]
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    partial = tl.sum(x, axis=0)  # [BLOCK_N]: this row block's share of each column, in fp32
    # the other row blocks' programs add into the same y[cols], at the same time on a GPU: a plain
    # store would keep one share, a load + add + store can lose some. An atomic add cannot.
    tl.atomic_add(y_ptr + cols, partial, mask=col_ok)
