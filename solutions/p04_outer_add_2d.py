"""Puzzle 4 reference kernel: the outer sum z[i, j] = x[j] + y[i], one tile per program.

    x: [N] float32   y: [M] float32   z: [M, N] float32, contiguous (row i starts at z_ptr + i * N)

The checker launches a 2-D grid: axis 0 walks the row blocks, axis 1 the column blocks, and each
program (pid_m, pid_n) writes one BLOCK_M x BLOCK_N tile of z:

    outer_add_grid_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))](
        x, y, z, M, N, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
"""
import triton
import triton.language as tl


@triton.jit
def outer_add_grid_kernel(x_ptr, y_ptr, z_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """z[i, j] = x[j] + y[i] on this program's tile. Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))."""
    # Two grid axes, two program ids: axis 0 picks the block of rows, axis 1 the block of columns.
    # Each needs its own block size; mixing them up makes neighbouring tiles overlap or leave gaps.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    # The tiles of the last row of programs stick out past M, those of the last column past N:
    # each 1-D load needs its own mask, and the store needs both.
    row_ok = rows < M
    col_ok = cols < N
    # This program reads only its own pieces of x and y: BLOCK_N of x, BLOCK_M of y. The programs
    # of one grid column all read the same piece of x (the cache serves the repeats).
    x = tl.load(x_ptr + cols, mask=col_ok)
    y = tl.load(y_ptr + rows, mask=row_ok)
    z = y[:, None] + x[None, :]
    # rows and cols are absolute indices into z, so the offsets are the same formula as with one
    # program: row i starts i * N elements in, whichever program holds it.
    tl.store(z_ptr + rows[:, None] * N + cols[None, :], z, mask=row_ok[:, None] & col_ok[None, :])
