"""Puzzle 2 reference kernel: z = x + y over a grid of programs, one block each.

    x, y, z: [N] float32, contiguous; N is any size, not a multiple of BLOCK in general

The checker launches one program per block of BLOCK elements, rounding up so that the last,
partly filled block has a program too:

    add_vectors_kernel[(triton.cdiv(N, BLOCK),)](x, y, z, N, BLOCK=BLOCK)
"""
import triton
import triton.language as tl


@triton.jit
def add_vectors_kernel(x_ptr, y_ptr, z_ptr, N, BLOCK: tl.constexpr):
    """z[i] = x[i] + y[i] for i in [0, N). Grid: (cdiv(N, BLOCK),)."""
    # Every program runs this same code; tl.program_id(0) is the only thing that tells them apart.
    # Program p owns elements p * BLOCK ... p * BLOCK + BLOCK - 1: without the p * BLOCK every
    # program would handle block 0, and the programs would all write the same elements.
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    # The last program's block sticks out past N when N is not a multiple of BLOCK. Its lanes at
    # or past N must neither read nor write: `<`, not `<=`, because offset N is already outside.
    mask = offsets < N
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    # Masked-off lanes hold garbage (their load did nothing); the masked store drops them.
    tl.store(z_ptr + offsets, x + y, mask=mask)
