"""Puzzle 1 reference kernel: z = x + 10, computed by a single program.

    x, z: [N] float32, contiguous; N is a power of two and BLOCK == N

The checker launches it with one program: add_constant_kernel[(1,)](x, z, N, BLOCK=N).
"""
import triton
import triton.language as tl


@triton.jit
def add_constant_kernel(x_ptr, z_ptr, N, BLOCK: tl.constexpr):
    """z[i] = x[i] + 10 for i in [0, N). Grid: (1,), and BLOCK == N."""
    offsets = tl.arange(0, BLOCK)  # the lanes of this program: 0, 1, ..., BLOCK - 1
    x = tl.load(x_ptr + offsets)  # a block of pointers loads a block of values
    tl.store(z_ptr + offsets, x + 10.0)
