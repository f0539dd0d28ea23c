"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 14 (tiled matmul): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_A = ("        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],\n"
      "                    other=0.0)  # [BLOCK_M, BLOCK_K]: rows of A are K long\n")
_B = ("        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=k_ok[:, None] & col_ok[None, :],\n"
      "                    other=0.0)  # [BLOCK_K, BLOCK_N]: rows of B are N long\n")
_STORE = "    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])"
_PIDS = ("    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # the tile's rows of C (and of A)\n"
         "    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # the tile's columns of C (and of B)\n")

MEASURED = [
    Bug("a_mask_rows_only", "forward",
        ((_A, _A.replace("mask=row_ok[:, None] & k_ok[None, :]", "mask=row_ok[:, None]"), 1),),
        "mask", "A's tile is masked on the rows only: the last K step reads past each row of A (and past A itself on the last row)"),
    Bug("b_mask_cols_only", "forward",
        ((_B, _B.replace("mask=k_ok[:, None] & col_ok[None, :]", "mask=col_ok[None, :]"), 1),),
        "mask", "B's tile is masked on the columns only: the last K step reads rows of B past K, beyond the end of B"),
    Bug("c_store_unmasked", "forward",
        ((_STORE, "    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)", 1),),
        "mask", "the store of C has no mask: the edge tiles write past N into the next row and past the end of C"),
    Bug("b_row_stride_k", "forward",
        ((_B, _B.replace("ks[:, None] * N", "ks[:, None] * K"), 1),),
        "address", "rows of B are stepped by K (like A's) instead of N: B is [K, N], its rows are N long"),
    Bug("program_ids_swapped", "forward",
        ((_PIDS, _PIDS.replace("tl.program_id(0)", "tl.program_id(@)").replace("tl.program_id(1)", "tl.program_id(0)").replace("tl.program_id(@)", "tl.program_id(1)"), 1),),
        "address", "the tile's rows come from program_id(1) and its columns from program_id(0): the grid's axes are swapped"),
    Bug("c_row_stride_k", "forward",
        ((_STORE, _STORE.replace("c_ptr + rows[:, None] * N", "c_ptr + rows[:, None] * K"), 1),),
        "address", "C is stored with row stride K (copied from A's load) instead of N"),
    Bug("acc_overwritten_by_dot", "forward",
        (("        acc += tl.dot(a, b)\n", "        acc = tl.dot(a, b)\n", 1),),
        "accumulate", "acc = tl.dot(a, b): each K step replaces the tile instead of adding to it; C keeps the last step's product"),
    Bug("k_loop_steps_by_block_n", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, K, BLOCK_N):", 1),),
        "loop", "the K loop steps by BLOCK_N while each step covers BLOCK_K: parts of K are skipped or added twice"),
    Bug("k_loop_whole_blocks_only", "forward",
        (("    for k0 in range(0, K, BLOCK_K):\n        ks = k0 + tl.arange(0, BLOCK_K)\n",
          "    for kb in range(0, K // BLOCK_K):\n        ks = kb * BLOCK_K + tl.arange(0, BLOCK_K)\n", 1),),
        "loop", "the K loop counts whole blocks only (K // BLOCK_K): the partial block at the end of K is never multiplied in"),
]

RIGHT = [
    Right("pointer_advance_cdiv",
          (Kernel("tiled_matmul_kernel", '''@triton.jit
def tiled_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Pointer blocks advanced along K each step (A by BLOCK_K columns, B by BLOCK_K rows)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for i in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - i * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=c_mask)
'''),),
          "pointers advanced by BLOCK_K along A's rows and BLOCK_K rows down B, a cdiv step count, and tl.dot's acc argument"),
    Right("full_blocks_then_tail",
          (Kernel("tiled_matmul_kernel", '''@triton.jit
def tiled_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """The whole K blocks first with no K mask, then one masked tail step if K is not a multiple."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    kk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    k_full = (K // BLOCK_K) * BLOCK_K
    for k0 in range(0, k_full, BLOCK_K):
        ks = k0 + kk
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None], other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=col_ok[None, :], other=0.0)
        acc += tl.dot(a, b)
    if k_full < K:
        ks = k_full + kk
        k_ok = ks < K
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])
'''),),
          "the whole BLOCK_K steps without a K mask (they cannot stick out), then one masked step for the remainder"),
]
