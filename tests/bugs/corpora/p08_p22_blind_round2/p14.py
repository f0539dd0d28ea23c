"""Blind corpus (round 2 for p08-p22), puzzle 14 (tiled matmul): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

A_MASK = "mask=row_ok[:, None] & k_ok[None, :],\n                    other=0.0)  # [BLOCK_M, BLOCK_K]"
B_MASK = "mask=k_ok[:, None] & col_ok[None, :],\n                    other=0.0)  # [BLOCK_K, BLOCK_N]"
C_STORE = "tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])"

MEASURED = [
    Bug("a_mask_rows_only", "forward",
        ((A_MASK, A_MASK.replace("row_ok[:, None] & k_ok[None, :]", "row_ok[:, None]"), 1),),
        "mask", "A's tile is masked on its rows only: the last K step reads columns past K, off the end of A in the last row"),
    Bug("b_mask_k_only", "forward",
        ((B_MASK, B_MASK.replace("k_ok[:, None] & col_ok[None, :]", "k_ok[:, None]"), 1),),
        "mask", "B's tile is masked on k only: the last column tile reads columns past N, off the end of B in its last row"),
    Bug("store_unmasked", "forward",
        ((C_STORE, "tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)", 1),),
        "mask", "C's tile is stored without a mask: edge tiles write outside C"),
    Bug("b_row_stride_k", "forward",
        (("b_ptr + ks[:, None] * N + cols[None, :]", "b_ptr + ks[:, None] * K + cols[None, :]", 1),),
        "address", "rows of B are stepped by K instead of B's row length N"),
    Bug("a_row_stride_n", "forward",
        (("a_ptr + rows[:, None] * K + ks[None, :]", "a_ptr + rows[:, None] * N + ks[None, :]", 1),),
        "address", "rows of A are stepped by N instead of A's row length K"),
    Bug("cols_from_axis_zero", "forward",
        (("cols = tl.program_id(1) * BLOCK_N", "cols = tl.program_id(0) * BLOCK_N", 1),),
        "address", "the column tile is taken from program id axis 0, the same as the row tile"),
    Bug("acc_assigned", "forward",
        (("acc += tl.dot(a, b)", "acc = tl.dot(a, b)", 1),),
        "accumulate", "each K step overwrites the tile instead of adding its product"),
    Bug("k_step_block_m", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, K, BLOCK_M):", 1),),
        "loop", "the K loop steps by BLOCK_M instead of BLOCK_K: parts of K are skipped or read twice"),
    Bug("a_without_other", "forward",
        ((A_MASK, A_MASK.replace(",\n                    other=0.0)", ")"), 1),),
        "fill", "A's masked load has no other=0.0: padded lanes enter the products"),
    Bug("dot_in_half", "forward",
        (("acc += tl.dot(a, b)", "acc += tl.dot(a.to(tl.float16), b.to(tl.float16))", 1),),
        "precision", "the fp32 tiles are cast to fp16 before tl.dot: the products lose most of their bits"),
]

RIGHT = [
    Right("pointer_increments", (Kernel("tiled_matmul_kernel", '''
@triton.jit
def tiled_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
'''),), "pointer blocks advanced each step, masks against the K left, tl.dot accumulating through its acc argument"),
    Right("where_zeroed_tiles", (Kernel("tiled_matmul_kernel", '''
@triton.jit
def tiled_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    k0 = 0
    while k0 < K:
        ks = k0 + tl.arange(0, BLOCK_K)
        am = (rows[:, None] < M) & (ks[None, :] < K)
        bm = (ks[:, None] < K) & (cols[None, :] < N)
        a = tl.where(am, tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=am), 0.0)
        b = tl.where(bm, tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=bm), 0.0)
        acc += tl.dot(a, b)
        k0 += BLOCK_K
    out = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=out)
'''),), "a while loop over K, padded lanes zeroed with tl.where instead of other="),
]
