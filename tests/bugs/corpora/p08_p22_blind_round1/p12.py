"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 12 (softmax backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_STORE = "tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)"
_PASS1 = ("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
          "    for start in range(0, N, BLOCK_N):\n")

MEASURED = [
    Bug("jacobian_diagonal_only", "backward",
        ((_STORE, "tl.store(dx_ptr + row * N + cols, dy * y * (1.0 - y), mask=mask)", 1),),
        "formula", "dx = dy * y * (1 - y): only the Jacobian's diagonal; the cross term s = sum(dy * y) of the whole row is dropped"),
    Bug("cross_term_without_y", "backward",
        (("        acc += dy * y\n", "        acc += dy\n", 1),),
        "formula", "the cross term sums dy alone instead of dy * y"),
    Bug("acc_zeroed_each_chunk", "backward",
        ((_PASS1, "    for start in range(0, N, BLOCK_N):\n        acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", 1),),
        "accumulate", "the cross term's accumulator is created inside the first loop: s holds the last chunk's share only"),
    Bug("one_walk_chunk_cross_term", "backward",
        (Kernel("softmax_bwd_kernel", '''@triton.jit
def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    y_row = y_ptr + row * N
    dy_row = dy_ptr + row * N
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        s = tl.sum(dy * y, axis=0)
        tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)
'''),),
        "accumulate", "one walk that uses each chunk's own sum of dy * y as s: the cross term must be the whole row's, summed before any dx is written",
        accept=("loop",)),
    Bug("dx_without_row_offset", "backward",
        ((_STORE, "tl.store(dx_ptr + cols, y * (dy - s), mask=mask)", 1),),
        "address", "dx is stored at cols alone: every row's program writes row 0 of dx"),
    Bug("dx_store_unmasked", "backward",
        ((_STORE, "tl.store(dx_ptr + row * N + cols, y * (dy - s))", 1),),
        "mask", "the store of dx has no mask: the last chunk's padded lanes write into the next row (past dx on the last row)"),
    Bug("first_walk_stops_early", "backward",
        ((_PASS1, _PASS1.replace("range(0, N, BLOCK_N)", "range(0, N - BLOCK_N, BLOCK_N)"), 1),),
        "loop", "the first walk's range ends at N - BLOCK_N: the last chunk (or the whole row when N <= BLOCK_N) is left out of s"),
    Bug("step_written_as_32", "backward",
        (("for start in range(0, N, BLOCK_N):", "for start in range(0, N, 32):", 2),),
        "hardcoded", "both walks step by 32 (the default block) instead of BLOCK_N: with another block size chunks overlap or are skipped"),
]

RIGHT = [
    Right("scalar_cross_term",
          ((_PASS1, "    s = 0.0\n    for start in range(0, N, BLOCK_N):\n", 1),
           ("        acc += dy * y\n    s = tl.sum(acc, axis=0)\n", "        s += tl.sum(dy * y, axis=0)\n", 1),
           (_STORE, "tl.store(dx_ptr + row * N + cols, y * dy - y * s, mask=mask)", 1)),
          "s summed as a scalar chunk by chunk, and dx written as y*dy - y*s: the same arithmetic rearranged"),
    Right("while_pointer_walks",
          (Kernel("softmax_bwd_kernel", '''@triton.jit
def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, N, BLOCK_N: tl.constexpr):
    """Both walks as while loops over a remaining-element count, offsets advanced by BLOCK_N."""
    row = tl.program_id(0)
    base = row * N
    lanes = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    start = 0
    while start < N:
        mask = lanes < N - start
        y = tl.load(y_ptr + base + start + lanes, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + start + lanes, mask=mask, other=0.0).to(tl.float32)
        acc += dy * y
        start += BLOCK_N
    s = tl.sum(acc, axis=0)
    start = 0
    while start < N:
        mask = lanes < N - start
        y = tl.load(y_ptr + base + start + lanes, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + start + lanes, mask=mask, other=0.0).to(tl.float32)
        tl.store(dx_ptr + base + start + lanes, y * (dy - s), mask=mask)
        start += BLOCK_N
'''),),
          "both walks as while loops with a lane < remaining mask: the same two passes written another way"),
]
