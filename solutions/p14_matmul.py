"""Puzzle 14 reference kernel: the tiled matrix product C = A B with tl.dot.

    A: [M, K], B: [K, N], C: [M, N]; all contiguous, float32 (or bfloat16 on a GPU)
    C[m, n] = sum_k A[m, k] * B[k, n]

The checker launches one program per [BLOCK_M, BLOCK_N] tile of C:

    tiled_matmul_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))](
        A, B, C, M, N, K, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)

Every block is at least 16 (tl.dot's minimum on a GPU); M, N and K need not be multiples of theirs.
"""
import triton
import triton.language as tl


@triton.jit
def tiled_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C[tile] = A[rows, :] @ B[:, cols] for this program's BLOCK_M x BLOCK_N tile of C.

    Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)).
    """
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # the tile's rows of C (and of A)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # the tile's columns of C (and of B)
    row_ok = rows < M  # the last tiles stick out past M and past N
    col_ok = cols < N
    # the tile of C stays in registers for the whole loop, in fp32 whatever the input dtype: the
    # matrix units multiply bf16 exactly and add in fp32, and a bf16 sum of K terms would not keep up
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < K  # the last step sticks out past K: those lanes must add exactly 0
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],
                    other=0.0)  # [BLOCK_M, BLOCK_K]: rows of A are K long
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=k_ok[:, None] & col_ok[None, :],
                    other=0.0)  # [BLOCK_K, BLOCK_N]: rows of B are N long
        # the product of the two tiles on the matrix units, added into the fp32 tile. For fp32
        # inputs tl.dot's precision is TRITON_F32_DEFAULT's (the checker sets "ieee": true fp32
        # products, not TF32's 10-bit mantissas)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])
