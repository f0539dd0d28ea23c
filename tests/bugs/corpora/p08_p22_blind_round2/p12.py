"""Blind corpus (round 2 for p08-p22), puzzle 12 (softmax backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

PASS1_HEAD = "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):"
PASS2_HEAD = "    # pass 2: each element from its own y and dy, and the row's s\n    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        mask = cols < N"
DY1 = "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n        acc += dy * y"

MEASURED = [
    Bug("jacobian_diagonal_only", "backward",
        (("tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)",
          "tl.store(dx_ptr + row * N + cols, dy * y * (1.0 - y), mask=mask)", 1),),
        "formula", "the per-element dy * y * (1 - y): only the Jacobian's diagonal, the cross term through s is lost"),
    Bug("s_not_times_y", "backward",
        (("y * (dy - s)", "y * dy - s", 1),),
        "formula", "the cross term s is subtracted without the factor y"),
    Bug("dy_without_other", "backward",
        ((DY1, DY1.replace(", other=0.0", ""), 1),),
        "fill", "the first pass's dy load has no other=0.0: padded lanes' values enter s"),
    Bug("s_acc_assigned", "backward",
        (("acc += dy * y", "acc = dy * y", 1),),
        "accumulate", "each chunk overwrites the running dot product: s keeps only the last chunk"),
    Bug("s_acc_in_loop", "backward",
        ((PASS1_HEAD, "    for start in range(0, N, BLOCK_N):\n        acc = tl.zeros([BLOCK_N], dtype=tl.float32)", 1),),
        "accumulate", "the running sum is zeroed at the top of every chunk"),
    Bug("store_unmasked", "backward",
        (("tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)",
          "tl.store(dx_ptr + row * N + cols, y * (dy - s))", 1),),
        "mask", "the second pass's store has no mask: the last chunk writes past the row"),
    Bug("pass2_mask_lane_index", "backward",
        ((PASS2_HEAD, PASS2_HEAD.replace("mask = cols < N", "mask = tl.arange(0, BLOCK_N) < N"), 1),),
        "mask", "the second pass masks by the lane index, not the column: chunks past the first are never cut at N"),
    Bug("dy_row_stride_block", "backward",
        (("dy_row = dy_ptr + row * N", "dy_row = dy_ptr + row * BLOCK_N", 1),),
        "address", "dy's row start uses the block width instead of the row length"),
    Bug("pass2_skips_tail", "backward",
        ((PASS2_HEAD, PASS2_HEAD.replace("range(0, N, BLOCK_N)", "range(0, N - BLOCK_N, BLOCK_N)"), 1),),
        "loop", "the writing loop stops one chunk early: the row's last chunk of dx is never written"),
    Bug("dx_written_into_dy", "backward",
        (("tl.store(dx_ptr + row * N + cols", "tl.store(dy_ptr + row * N + cols", 1),),
        "inplace", "the result is written back into dy (an input) instead of dx", accept=("address",)),
]

RIGHT = [
    Right("scalar_s_and_expanded_product", (Kernel("softmax_bwd_kernel", '''
@triton.jit
def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    base = row * N
    s = 0.0
    for i in range(tl.cdiv(N, BLOCK_N)):
        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)
        ok = cols < N
        y = tl.load(y_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
        s += tl.sum(y * dy, axis=0)
    for i in range(tl.cdiv(N, BLOCK_N)):
        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)
        ok = cols < N
        y = tl.load(y_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
        tl.store(dx_ptr + base + cols, y * dy - y * s, mask=ok)
'''),), "a scalar s reduced chunk by chunk, loops counting chunks, dx as y*dy - y*s"),
    Right("while_loops", (Kernel("softmax_bwd_kernel", '''
@triton.jit
def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    start = 0
    while start < N:
        cols = start + tl.arange(0, BLOCK_N)
        ok = cols < N
        y = tl.load(y_ptr + row * N + cols, mask=ok)
        dy = tl.load(dy_ptr + row * N + cols, mask=ok)
        acc += tl.where(ok, y.to(tl.float32) * dy.to(tl.float32), 0.0)
        start += BLOCK_N
    s = tl.sum(acc, axis=0)
    start = 0
    while start < N:
        cols = start + tl.arange(0, BLOCK_N)
        ok = cols < N
        y = tl.load(y_ptr + row * N + cols, mask=ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * N + cols, mask=ok, other=0.0).to(tl.float32)
        tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=ok)
        start += BLOCK_N
'''),), "while loops, padded products zeroed with tl.where instead of other="),
]
