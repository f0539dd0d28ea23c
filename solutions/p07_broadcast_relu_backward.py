"""Puzzle 7 reference kernels: z = relu(x[None, :] * y[:, None]), forward and backward.

    x: [N]   y: [M]   z, dz: [M, N] (row i is y[i] times x, then ReLU), all contiguous
    dx[j] = sum over i of  g[i, j] * y[i]      g = dz where x[j] * y[i] > 0, else 0
    dy[i] = sum over j of  g[i, j] * x[j]

The checker launches one program per row of z, whose block holds the whole row (BLOCK_N >= N):
    bcast_relu_fwd_kernel[(M,)](x, y, z, N, BLOCK_N=BLOCK_N)
    bcast_relu_bwd_kernel[(M,)](x, y, dz, dx, dy, N, BLOCK_N=BLOCK_N)
dx is an fp32 buffer of zeros that every program adds into; dy has one writer per element.
"""
import triton
import triton.language as tl


@triton.jit
def bcast_relu_fwd_kernel(x_ptr, y_ptr, z_ptr, N, BLOCK_N: tl.constexpr):
    """z[i, j] = max(x[j] * y[i], 0); program i writes row i. Grid: (M,)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N  # BLOCK_N is the power of two at or above N
    x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)  # every program reads all of x
    y = tl.load(y_ptr + row).to(tl.float32)  # one scalar, broadcast over the row
    tl.store(z_ptr + row * N + cols, tl.maximum(x * y, 0.0), mask=mask)


@triton.jit
def bcast_relu_bwd_kernel(x_ptr, y_ptr, dz_ptr, dx_ptr, dy_ptr, N, BLOCK_N: tl.constexpr):
    """Program i: dy[i] = sum_j g[i, j] * x[j], and adds g[i, :] * y[i] into dx. Grid: (M,).

    g = dz where x[j] * y[i] > 0, else 0 (ReLU's gradient; 0 where its output is 0, as in PyTorch).
    """
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + row).to(tl.float32)
    dz = tl.load(dz_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    # recompute which elements ReLU let through instead of reading z back; masked lanes have x = 0,
    # so they fail the test and add nothing below
    g = tl.where(x * y > 0, dz, 0.0)
    # dy[i] sums along this program's own row: one writer, a plain store
    tl.store(dy_ptr + row, tl.sum(g * x, axis=0))
    # dx[j] sums down the column, over every row: all M programs add into the same N elements. A
    # plain store would keep one row's share; a load + add + store races (another program can
    # store between them). atomic_add makes each read-add-write indivisible. dx is fp32: the sum
    # of M shares keeps its digits even for bf16 inputs.
    tl.atomic_add(dx_ptr + cols, g * y, mask=mask)
