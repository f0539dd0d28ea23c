"""Learner bugs for puzzle 14 (tiled matmul), and correct kernels written differently."""
from entries import Bug, Kernel, Right

A = "a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],"
B = "b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=k_ok[:, None] & col_ok[None, :],"
STORE = "tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])"

BUGS = [
    Bug("b_rows_k_long", "forward",
        ((B, B.replace("ks[:, None] * N", "ks[:, None] * K"), 1),),
        "address", "B's row k read at k * K instead of k * N"),
    Bug("a_rows_n_long", "forward",
        ((A, A.replace("rows[:, None] * K", "rows[:, None] * N"), 1),),
        "address", "A's row m read at m * N instead of m * K"),
    Bug("k_masked_with_n", "forward",
        (("k_ok = ks < K", "k_ok = ks < N", 1),),
        "mask", "the K mask compares with N"),
    Bug("k_loop_steps_by_block_m", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, K, BLOCK_M):", 1),),
        "loop", "the K loop steps by BLOCK_M while each step reads BLOCK_K columns"),
    Bug("k_hard_coded", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, 36, BLOCK_K):", 1),),
        "hardcoded", "the K loop bound written as 36, the documented K"),
    Bug("columns_from_program_0", "forward",
        (("cols = tl.program_id(1) * BLOCK_N", "cols = tl.program_id(0) * BLOCK_N", 1),),
        "address", "the column tile taken from program_id(0), the row axis"),
    Bug("padded_lanes_load_one", "forward",
        (("other=0.0)  # [BLOCK_M, BLOCK_K]", "other=1.0)  # [BLOCK_M, BLOCK_K]", 1),
         ("other=0.0)  # [BLOCK_K, BLOCK_N]", "other=1.0)  # [BLOCK_K, BLOCK_N]", 1)),
        "fill", "both tiles' padded lanes load 1.0: the K steps past K add 1 * 1 per lane"),
]

RIGHT = [
    Right("b_tile_loaded_transposed", ((B + "\n                    other=0.0)",
        "bt = tl.load(b_ptr + ks[None, :] * N + cols[:, None], mask=k_ok[None, :] & col_ok[:, None],\n"
        "                     other=0.0)  # [BLOCK_N, BLOCK_K]\n        b = tl.trans(bt)", 1),),
          "B's tile read as [BLOCK_N, BLOCK_K] and transposed with tl.trans"),
    Right("counted_k_steps_dot_accumulates", (Kernel("tiled_matmul_kernel", '''
        @triton.jit
        def tiled_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
            b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
            acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
            for step in range(0, tl.cdiv(K, BLOCK_K)):
                k_left = K - step * BLOCK_K
                a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
                b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * N
            tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
        '''),), "pointer tiles advanced per step, the K mask from what is left, tl.dot accumulating in place"),
]
