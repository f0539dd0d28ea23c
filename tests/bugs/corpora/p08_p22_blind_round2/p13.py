"""Blind corpus (round 2 for p08-p22), puzzle 13 (matvec): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("tile_mask_cols_only", "forward",
        (("mask=row_ok[:, None] & col_ok[None, :],\n                       other=0.0)", "mask=col_ok[None, :],\n                       other=0.0)", 1),),
        "mask", "the tile of A is masked on k only: the last row block reads rows past M"),
    Bug("x_load_unmasked", "forward",
        (("x = tl.load(x_ptr + cols, mask=col_ok, other=0.0)", "x = tl.load(x_ptr + cols)", 1),),
        "mask", "x is loaded without a mask: the last K step reads past the end of x"),
    Bug("store_unmasked", "forward",
        (("tl.store(y_ptr + rows, acc, mask=row_ok)", "tl.store(y_ptr + rows, acc)", 1),),
        "mask", "the store of y has no mask: the last row block writes past M"),
    Bug("row_stride_m", "forward",
        (("a_ptr + rows[:, None] * K + cols[None, :]", "a_ptr + rows[:, None] * M + cols[None, :]", 1),),
        "address", "rows of A are stepped by M instead of K"),
    Bug("row_block_uses_block_k", "forward",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(0) * BLOCK_K", 1),),
        "address", "the program's first row is its id times BLOCK_K instead of BLOCK_M"),
    Bug("acc_assigned", "forward",
        (("acc += tl.sum(", "acc = tl.sum(", 1),),
        "accumulate", "each K step overwrites the row sums: only the last step is kept"),
    Bug("k_loop_counts_steps", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, tl.cdiv(K, BLOCK_K)):", 1),),
        "loop", "the loop counts steps but uses the count as a column offset: k0 advances by 1, not BLOCK_K"),
    Bug("tile_without_other", "forward",
        (("mask=row_ok[:, None] & col_ok[None, :],\n                       other=0.0)", "mask=row_ok[:, None] & col_ok[None, :])", 1),),
        "fill", "A's tile load has no other=0.0: padded lanes are multiplied into the sums"),
    Bug("product_of_sums", "forward",
        (("acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
          "acc += tl.sum(tile.to(tl.float32), axis=1) * tl.sum(x.to(tl.float32), axis=0)", 1),),
        "formula", "the row sum of A times the sum of x instead of the sum of the products"),
    Bug("k_loop_hardcoded", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, 128, BLOCK_K):", 1),),
        "hardcoded", "the K loop runs to a fixed 128 instead of the argument K"),
    Bug("products_in_half", "forward",
        (("tile.to(tl.float32) * x.to(tl.float32)[None, :]", "tile.to(tl.float16) * x.to(tl.float16)[None, :]", 1),),
        "precision", "A and x are cast to fp16 before the products and the row sums"),
]

RIGHT = [
    Right("tile_transposed", (Kernel("matvec_kernel", '''
@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    acc2 = tl.zeros([BLOCK_K, BLOCK_M], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_ok = ks < K
        at = tl.load(a_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)
        x = tl.load(x_ptr + ks, mask=k_ok, other=0.0)
        acc2 += at.to(tl.float32) * x.to(tl.float32)[:, None]
    tl.store(y_ptr + rows, tl.sum(acc2, axis=0), mask=row_ok)
'''),), "reads A's tile transposed ([BLOCK_K, BLOCK_M]) and keeps a 2-D running product, reduced once after the loop"),
    Right("pointer_increments", (Kernel("matvec_kernel", '''
@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
    x_ptrs = x_ptr + ks
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (k0 + ks) < K
        a = tl.load(a_ptrs, mask=(rows[:, None] < M) & k_ok[None, :], other=0.0)
        x = tl.load(x_ptrs, mask=k_ok, other=0.0)
        acc += tl.sum(a * x[None, :], axis=1)
        a_ptrs += BLOCK_K
        x_ptrs += BLOCK_K
    tl.store(y_ptr + rows, acc, mask=rows < M)
'''),), "pointer blocks advanced by BLOCK_K each step instead of recomputing offsets"),
]
