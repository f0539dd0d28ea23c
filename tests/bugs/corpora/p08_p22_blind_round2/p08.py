"""Blind corpus (round 2 for p08-p22), puzzle 08 (long row sum): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("load_without_mask", "forward",
        (("tl.load(x_row + cols, mask=cols < N, other=0.0)", "tl.load(x_row + cols)", 1),),
        "mask", "the chunk loads have no mask: the last chunk reads past the end of the row"),
    Bug("mask_less_equal", "forward",
        (("mask=cols < N,", "mask=cols <= N,", 1),),
        "mask", "off by one in the mask: column N (the next row's first element) is summed too"),
    Bug("mask_forgets_start", "forward",
        (("mask=cols < N,", "mask=tl.arange(0, BLOCK_N) < N,", 1),),
        "mask", "the mask compares the lane index, not the column, with N: it never switches off the tail"),
    Bug("no_other_on_masked_load", "forward",
        (("mask=cols < N, other=0.0)", "mask=cols < N)", 1),),
        "fill", "the masked load has no other=0.0: the padded lanes' values are summed"),
    Bug("row_offset_uses_block", "forward",
        (("x_row = x_ptr + row * N", "x_row = x_ptr + row * BLOCK_N", 1),),
        "address", "the row's start is computed with the block width instead of the row length N"),
    Bug("full_chunks_only", "forward",
        (("for start in range(0, N, BLOCK_N):", "for start in range(0, N - BLOCK_N + 1, BLOCK_N):", 1),),
        "loop", "the loop stops at the last full chunk: the ragged tail of the row is never added"),
    Bug("acc_reset_in_loop", "forward",
        (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):\n",
          "    for start in range(0, N, BLOCK_N):\n        acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", 1),),
        "accumulate", "the partial sums are zeroed inside the loop: only the last chunk survives"),
    Bug("acc_assigned", "forward",
        (("acc += tl.load(", "acc = tl.load(", 1),),
        "accumulate", "each chunk overwrites the running sum instead of adding to it"),
    Bug("loop_bound_hardcoded", "forward",
        (("for start in range(0, N, BLOCK_N):", "for start in range(0, 1024, BLOCK_N):", 1),),
        "hardcoded", "the loop walks a fixed 1024 columns (the notebook's example width) instead of N"),
    Bug("row_from_axis_one", "forward",
        (("row = tl.program_id(0)", "row = tl.program_id(1)", 1),),
        "address", "the row is taken from program id axis 1 of a 1-D grid: every program sums row 0"),
    Bug("running_sum_in_input_dtype", "forward",
        (("acc = tl.zeros([BLOCK_N], dtype=tl.float32)", "acc = tl.zeros([BLOCK_N], dtype=x_ptr.dtype.element_ty)", 1),
         ("other=0.0).to(tl.float32)", "other=0.0)", 1)),
        "precision", "the running sums are kept in x's own dtype (bf16 on the half cases) instead of fp32"),
]

RIGHT = [
    Right("scalar_running_sum", (Kernel("long_row_sum_kernel", '''
@triton.jit
def long_row_sum_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    total = tl.zeros([], dtype=tl.float32)
    for i in range(tl.cdiv(N, BLOCK_N)):
        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)
        chunk = tl.load(x_ptr + row * N + cols, mask=cols < N, other=0.0).to(tl.float32)
        total += tl.sum(chunk, axis=0)
    tl.store(y_ptr + row, total)
'''),), "one scalar running sum, each chunk reduced inside the loop; loop counts chunks with cdiv"),
    Right("while_loop_where", (Kernel("long_row_sum_kernel", '''
@triton.jit
def long_row_sum_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    start = 0
    while start < N:
        cols = start + tl.arange(0, BLOCK_N)
        ok = cols < N
        v = tl.load(x_ptr + row * N + cols, mask=ok)
        acc += tl.where(ok, v.to(tl.float32), 0.0)
        start += BLOCK_N
    tl.store(y_ptr + row, tl.sum(acc, axis=0))
'''),), "a while loop, padded lanes zeroed with tl.where after the load instead of other="),
]
