"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 08 (long row sum): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_ACC = "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n"

MEASURED = [
    Bug("acc_created_in_loop", "forward",
        (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):\n",
          "    for start in range(0, N, BLOCK_N):\n        acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", 1),),
        "accumulate", "the accumulator is zeroed inside the loop, so y keeps only the last chunk's sum"),
    Bug("no_mask_on_chunk", "forward",
        (("tl.load(x_row + cols, mask=cols < N, other=0.0)", "tl.load(x_row + cols)", 1),),
        "mask", "the chunk load has no mask: the last chunk reads past the row end (into the next row / past x)"),
    Bug("mask_on_lane_index", "forward",
        (("mask=cols < N, other=0.0", "mask=tl.arange(0, BLOCK_N) < N, other=0.0", 1),),
        "mask", "the mask compares the lane index, not the column start + lane, with N: the tail of the last chunk is not switched off"),
    Bug("row_stride_block", "forward",
        (("x_row = x_ptr + row * N", "x_row = x_ptr + row * BLOCK_N", 1),),
        "address", "the row's start is row * BLOCK_N instead of row * N: rows are N elements apart, not one block"),
    Bug("loop_misses_tail", "forward",
        (("    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n",
          "    for i in range(0, N // BLOCK_N):\n        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)\n", 1),),
        "loop", "the loop runs N // BLOCK_N whole chunks: the partial chunk at the end of the row is never added"),
    Bug("loop_starts_at_block", "forward",
        (("for start in range(0, N, BLOCK_N):", "for start in range(BLOCK_N, N + BLOCK_N, BLOCK_N):", 1),),
        "loop", "the loop starts at BLOCK_N (the end of the first chunk): the first chunk is skipped and one chunk past the row is read, masked"),
    Bug("bf16_accumulator", "forward",
        (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", "    acc = tl.zeros([BLOCK_N], dtype=x_ptr.dtype.element_ty)\n", 1),
         ("other=0.0).to(tl.float32)", "other=0.0)", 1)),
        "precision", "the running sum is kept in x's dtype (bf16 on the bf16 cases): large partial sums round every small term away"),
    Bug("divides_by_n", "forward",
        (("tl.store(y_ptr + row, tl.sum(acc, axis=0))", "tl.store(y_ptr + row, tl.sum(acc, axis=0) / N)", 1),),
        "formula", "the row's sum is divided by N on the way out: a mean, not the sum asked for"),
]

RIGHT = [
    Right("scalar_sum_per_chunk",
          (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", "    acc = 0.0\n", 1),
           ("        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)\n",
            "        acc += tl.sum(tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32), axis=0)\n", 1),
           ("tl.store(y_ptr + row, tl.sum(acc, axis=0))", "tl.store(y_ptr + row, acc)", 1)),
          "each chunk reduced with tl.sum inside the loop into a scalar fp32 running sum: the same sum, one reduction per step"),
    Right("while_loop_chunk_count",
          (Kernel("long_row_sum_kernel", '''@triton.jit
def long_row_sum_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    """Counts chunks with cdiv and walks them with a while loop; the lane offsets advance by BLOCK_N."""
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    ptrs = x_ptr + row.to(tl.int64) * N + offs
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    n_chunks = tl.cdiv(N, BLOCK_N)
    i = 0
    while i < n_chunks:
        acc += tl.load(ptrs, mask=offs < N - i * BLOCK_N, other=0.0).to(tl.float32)
        ptrs += BLOCK_N
        i += 1
    tl.store(y_ptr + row, tl.sum(acc, axis=0))
'''),),
          "a while loop over cdiv(N, BLOCK_N) chunks with a pointer that advances; the mask is written as lane < remaining elements"),
]
