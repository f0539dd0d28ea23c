"""Puzzle 8 reference kernel: the sum of each row, for rows wider than one block.

    x: [M, N], contiguous (row i starts at x + i * N)    y: [M], float32 whatever x's dtype

The checker launches one program per row:
    long_row_sum_kernel[(M,)](x, y, N, BLOCK_N=BLOCK_N)
BLOCK_N is fixed (128 by default) while N is anything from 1 to 100 000: a program cannot hold its
whole row in one block, so it walks the row in chunks of BLOCK_N.
"""
import triton
import triton.language as tl


@triton.jit
def long_row_sum_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    """y[i] = x[i, 0] + ... + x[i, N - 1]; program i sums row i, BLOCK_N at a time. Grid: (M,)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    # one partial sum per lane, kept across the whole loop: created once, before it. fp32 whatever
    # x's dtype: a bf16 running sum keeps 8 bits, and once it is large every small term rounds away
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        # the last chunk sticks out past N: its extra lanes load 0, the identity of a sum
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    # the lanes' partial sums reduced once, after the loop (a tree of additions inside the program)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))
