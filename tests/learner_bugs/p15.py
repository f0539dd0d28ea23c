"""Learner bugs for puzzle 15 (Linear forward), and correct kernels written differently."""
from entries import Bug, Kernel, Right

WT = "wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :],"
STORE = "tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])"
BIAS = "bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n    acc += bias.to(tl.float32)[None, :]"

BUGS = [
    Bug("w_rows_n_long", "forward",
        ((WT, WT.replace("cols[None, :] * K", "cols[None, :] * N"), 1),),
        "address", "W's row n read at n * N instead of n * K"),
    Bug("bias_per_row", "forward",
        ((BIAS, "bias = tl.load(b_ptr + rows, mask=row_ok, other=0.0)\n    acc += bias.to(tl.float32)[:, None]", 1),),
        "address", "the bias indexed by the row (b[m]) instead of the output column (b[n])"),
    Bug("bias_subtracted", "forward",
        (("acc += bias.to(tl.float32)[None, :]", "acc -= bias.to(tl.float32)[None, :]", 1),),
        "formula", "the bias subtracted"),
    Bug("k_masked_with_n", "forward",
        (("k_ok = ks < K", "k_ok = ks < N", 1),),
        "mask", "the K mask compares with N"),
    Bug("k_hard_coded", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, 40, BLOCK_K):", 1),),
        "hardcoded", "the K loop bound written as 40, the documented K"),
    Bug("x_tile_without_the_k_offset", "forward",
        (("x = tl.load(x_ptr + rows[:, None] * K + ks[None, :]", "x = tl.load(x_ptr + rows[:, None] * K + tl.arange(0, BLOCK_K)[None, :]", 1),),
        "address", "x's tile always read at the first K step's columns: the loop moves W, not x"),
]

RIGHT = [
    Right("x_tile_loaded_transposed", (
        ("x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],\n"
         "                    other=0.0)  # [BLOCK_M, BLOCK_K]",
         "xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=row_ok[None, :] & k_ok[:, None],\n"
         "                     other=0.0)  # [BLOCK_K, BLOCK_M]\n        x = tl.trans(xt)", 1),),
          "x's tile read as [BLOCK_K, BLOCK_M] and transposed with tl.trans"),
    Right("y_transposed_tile", (Kernel("linear_fwd_kernel", '''
        @triton.jit
        def linear_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
            # the tile of y^T = W x^T: W's tile as stored, x's tile transposed
            acc = tl.zeros([BLOCK_N, BLOCK_M], dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                ks = k0 + tl.arange(0, BLOCK_K)
                w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
                xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=(rows[None, :] < M) & (ks[:, None] < K), other=0.0)
                acc += tl.dot(w, xt)
            acc += tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)[:, None]
            tl.store(y_ptr + rows[None, :] * N + cols[:, None], acc, mask=(rows[None, :] < M) & (cols[:, None] < N))
        '''),), "the tile of yᵀ = W xᵀ computed and stored transposed"),
]
