"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 13 (matrix-vector product): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_TILE = ("        tile = tl.load(a_ptr + rows[:, None] * K + cols[None, :], mask=row_ok[:, None] & col_ok[None, :],\n"
         "                       other=0.0)\n")
_X = "        x = tl.load(x_ptr + cols, mask=col_ok, other=0.0)\n"
_ACC = "        acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)\n"

MEASURED = [
    Bug("x_load_unmasked", "forward",
        ((_X, "        x = tl.load(x_ptr + cols)\n", 1),),
        "mask", "x's chunk is loaded without a mask: the last K step reads past the end of x"),
    Bug("tile_mask_rows_only", "forward",
        ((_TILE, _TILE.replace("mask=row_ok[:, None] & col_ok[None, :]", "mask=row_ok[:, None]"), 1),),
        "mask", "A's tile is masked on the rows only: the last K step reads past each row's end (into the next row, past A on the last)"),
    Bug("a_row_stride_m", "forward",
        ((_TILE, _TILE.replace("rows[:, None] * K", "rows[:, None] * M"), 1),),
        "address", "rows of A are stepped by M instead of K: a row of A is K elements long"),
    Bug("x_chunk_without_k0", "forward",
        ((_X, "        x = tl.load(x_ptr + tl.arange(0, BLOCK_K), mask=col_ok, other=0.0)\n", 1),),
        "address", "x is loaded at arange(BLOCK_K) in every step: the step's offset k0 is left out, so every step multiplies by x's first chunk"),
    Bug("acc_overwritten", "forward",
        ((_ACC, _ACC.replace("acc +=", "acc ="), 1),),
        "accumulate", "acc = instead of acc +=: each K step replaces the running sums, y keeps the last step's share"),
    Bug("k_loop_steps_by_block_m", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, K, BLOCK_M):", 1),),
        "loop", "the K loop steps by BLOCK_M while each step covers BLOCK_K columns: columns are skipped or added twice"),
    Bug("y_store_unmasked", "forward",
        (("tl.store(y_ptr + rows, acc, mask=row_ok)", "tl.store(y_ptr + rows, acc)", 1),),
        "mask", "the store of y has no mask: the last row block writes past the end of y"),
    Bug("rows_from_block_k", "forward",
        (("rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)", "rows = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_M)", 1),),
        "address", "the program's first row is pid * BLOCK_K instead of pid * BLOCK_M: row blocks overlap or leave gaps"),
]

RIGHT = [
    Right("2d_accumulator_one_reduction",
          (("    acc = tl.zeros([BLOCK_M], dtype=tl.float32)\n", "    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)\n", 1),
           (_ACC, "        acc += tile.to(tl.float32) * x.to(tl.float32)[None, :]\n", 1),
           ("tl.store(y_ptr + rows, acc, mask=row_ok)", "tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)", 1)),
          "the products kept in a [BLOCK_M, BLOCK_K] accumulator and reduced over K once, after the loop"),
    Right("while_pointer_advance",
          (Kernel("matvec_kernel", '''@triton.jit
def matvec_kernel(a_ptr, x_ptr, y_ptr, M, K, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    """The K walk as a while loop with pointers advanced by BLOCK_K and a lane < remaining mask."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * K + ks[None, :]
    x_ptrs = x_ptr + ks
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    left = K
    while left > 0:
        k_ok = ks < left
        a = tl.load(a_ptrs, mask=row_ok[:, None] & k_ok[None, :], other=0.0).to(tl.float32)
        x = tl.load(x_ptrs, mask=k_ok, other=0.0).to(tl.float32)
        acc += tl.sum(a * x[None, :], axis=1)
        a_ptrs += BLOCK_K
        x_ptrs += BLOCK_K
        left -= BLOCK_K
    tl.store(y_ptr + rows, acc, mask=row_ok)
'''),),
          "a while loop over the elements left in K, with A's and x's pointers advanced by BLOCK_K each step"),
]
