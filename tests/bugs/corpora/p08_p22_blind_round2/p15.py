"""Blind corpus (round 2 for p08-p22), puzzle 15 (linear forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

W_LOAD = "wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :],\n                     other=0.0)"
BIAS = "    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n    acc += bias.to(tl.float32)[None, :]\n"

MEASURED = [
    Bug("w_read_as_k_by_n", "forward",
        ((W_LOAD, W_LOAD.replace("w_ptr + cols[None, :] * K + ks[:, None]", "w_ptr + ks[:, None] * N + cols[None, :]"), 1),),
        "address", "W's memory is read as a [K, N] matrix (stride N down k) instead of W^T's strides over an [N, K] W",
        accept=("formula",)),
    Bug("bias_inside_k_loop", "forward",
        ((BIAS, "", 1),
         ("        acc += tl.dot(x, wt)\n",
          "        acc += tl.dot(x, wt)\n        bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n        acc += bias.to(tl.float32)[None, :]\n", 1)),
        "loop", "the bias is added inside the K loop: once per K step instead of once", accept=("formula",)),
    Bug("bias_forgotten", "forward",
        ((BIAS, "", 1),),
        "formula", "the epilogue's bias is never added"),
    Bug("bias_by_row", "forward",
        ((BIAS, "    bias = tl.load(b_ptr + rows, mask=row_ok, other=0.0)\n    acc += bias.to(tl.float32)[:, None]\n", 1),),
        "address", "the bias is indexed by the output row (m) instead of the output feature (n)"),
    Bug("w_mask_cols_only", "forward",
        ((W_LOAD, W_LOAD.replace("mask=k_ok[:, None] & col_ok[None, :]", "mask=col_ok[None, :]"), 1),),
        "mask", "W's tile is masked on n only: the last K step reads past each W row (and off the end of W)"),
    Bug("bias_load_unmasked", "forward",
        ((BIAS, BIAS.replace("tl.load(b_ptr + cols, mask=col_ok, other=0.0)", "tl.load(b_ptr + cols)"), 1),),
        "mask", "the bias is loaded without a mask: the last column tile reads past the end of b"),
    Bug("acc_assigned", "forward",
        (("acc += tl.dot(x, wt)", "acc = tl.dot(x, wt)", 1),),
        "accumulate", "each K step overwrites the tile instead of adding its product"),
    Bug("w_without_other", "forward",
        ((W_LOAD, W_LOAD.replace(",\n                     other=0.0)", ")"), 1),),
        "fill", "W's masked load has no other=0.0: padded lanes enter the products"),
    Bug("x_row_stride_n", "forward",
        (("x_ptr + rows[:, None] * K + ks[None, :]", "x_ptr + rows[:, None] * N + ks[None, :]", 1),),
        "address", "rows of x are stepped by N (the output width) instead of K"),
    Bug("k_step_block_n", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, K, BLOCK_N):", 1),),
        "loop", "the K loop steps by BLOCK_N instead of BLOCK_K"),
    Bug("dot_in_half", "forward",
        (("acc += tl.dot(x, wt)", "acc += tl.dot(x.to(tl.float16), wt.to(tl.float16))", 1),),
        "precision", "the fp32 tiles are cast to fp16 before tl.dot: the products lose most of their bits"),
]

RIGHT = [
    Right("w_tile_then_trans", (Kernel("linear_fwd_kernel", '''
@triton.jit
def linear_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
        acc += tl.dot(x, tl.trans(w))
    acc += tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)[None, :]
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))
'''),), "loads W's [BLOCK_N, BLOCK_K] tile in its own layout and transposes it with tl.trans"),
    Right("acc_starts_at_bias", (Kernel("linear_fwd_kernel", '''
@triton.jit
def linear_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < M
    col_ok = cols < N
    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32) + bias[None, :]
    ks = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + rows[:, None] * K + ks[None, :]
    w_ptrs = w_ptr + cols[None, :] * K + ks[:, None]
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + ks) < K
        x = tl.load(x_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        wt = tl.load(w_ptrs, mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        acc = tl.dot(x, wt, acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])
'''),), "the tile starts from the broadcast bias, pointers advanced by BLOCK_K, tl.dot accumulating into acc"),
]
