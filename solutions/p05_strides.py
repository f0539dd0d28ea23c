"""Puzzle 5 reference kernel: z = x + b, reading a non-contiguous x through its strides.

    x: [M, N] float32, any strides: x[m, n] is at x_ptr + m * stride_xm + n * stride_xn
       (the checker passes a transposed view, a.T of a contiguous [N, M] tensor a: strides (1, M))
    b: [N] float32, a bias per column
    z: [M, N] float32, contiguous: z[m, n] is at z_ptr + m * N + n

The checker launches one program per BLOCK_M x BLOCK_N tile, as in puzzle 4, and passes x's
strides in elements:

    strided_add_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))](
        x, b, z, M, N, x.stride(0), x.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
"""
import triton
import triton.language as tl


@triton.jit
def strided_add_kernel(x_ptr, b_ptr, z_ptr, M, N, stride_xm, stride_xn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """z[m, n] = x[m, n] + b[n] on this program's tile. Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    mask = row_ok[:, None] & col_ok[None, :]
    # A kernel receives a pointer to x's first element and nothing about its layout: the strides
    # say how far apart (in elements) neighbours along each dimension are. x.T moves no data, it
    # swaps the strides, so x[m, n] is at m * stride_xm + n * stride_xn, never assume m * N + n.
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask)
    b = tl.load(b_ptr + cols, mask=col_ok)
    # z is allocated contiguous, so its own offsets are the row-major m * N + n: the strides
    # belong to x only. (On a GPU this load is slower than a contiguous one: neighbouring lanes
    # along a row of the tile touch addresses stride_xn = M elements apart, so each reads its own
    # memory segment. The values are the same.)
    tl.store(z_ptr + rows[:, None] * N + cols[None, :], x + b[None, :], mask=mask)
