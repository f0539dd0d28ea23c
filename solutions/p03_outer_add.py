"""Puzzle 3 reference kernel: the outer sum z[i, j] = x[j] + y[i], in one program.

    x: [N] float32   y: [M] float32   z: [M, N] float32, contiguous (row i starts at z_ptr + i * N)

The checker launches a single program whose BLOCK_M x BLOCK_N block covers the whole output;
the blocks are the powers of two at or above M and N (tl.arange needs a power of two):

    outer_add_kernel[(1,)](x, y, z, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
"""
import triton
import triton.language as tl


@triton.jit
def outer_add_kernel(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """z[i, j] = x[j] + y[i] for i in [0, M), j in [0, N). Grid: (1,); BLOCK_M >= M, BLOCK_N >= N."""
    rows = tl.arange(0, BLOCK_M)  # i: down the output, indexes y
    cols = tl.arange(0, BLOCK_N)  # j: across the output, indexes x
    # Each vector is read once, as a 1-D block; the padding lanes past M or N must not read.
    x = tl.load(x_ptr + cols, mask=cols < N)
    y = tl.load(y_ptr + rows, mask=rows < M)
    # Broadcasting: y[:, None] is a [BLOCK_M, 1] column and x[None, :] a [1, BLOCK_N] row; their
    # sum is [BLOCK_M, BLOCK_N], every y[i] meeting every x[j]. No value is loaded twice.
    z = y[:, None] + x[None, :]
    # z is row-major: element (i, j) sits i * N + j elements in. The row length is N, the size,
    # not BLOCK_N: the block is padded to a power of two, the tensor is not.
    offsets = rows[:, None] * N + cols[None, :]
    # Both edges can stick out; the parentheses matter, as & binds tighter than < in Python.
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(z_ptr + offsets, z, mask=mask)
