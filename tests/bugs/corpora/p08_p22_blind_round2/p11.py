"""Blind corpus (round 2 for p08-p22), puzzle 11 (softmax): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

ONLINE_LOAD1 = "        x = tl.load(x_row + cols, mask=cols < N, other=-float(\"inf\")).to(tl.float32)\n        m_new"
PASS2 = "    # second pass: the row again, each element divided by the whole row's sum\n    for start in range(0, N, BLOCK_N):"

MEASURED = [
    # forward (whole row in one block)
    Bug("fwd_padded_lanes_zero", "forward",
        (("x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float(\"inf\"))",
          "x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)", 1),),
        "fill", "padded lanes load 0 instead of -inf: they enter the max and add exp(0 - m) to the denominator"),
    Bug("fwd_no_max_shift", "forward",
        (("    e = tl.exp(x - m)\n", "    e = tl.exp(x)\n", 1),),
        "stability", "exp of the raw logits, without subtracting the row max: overflows for large logits"),
    Bug("fwd_store_unmasked", "forward",
        (("tl.store(y_ptr + row * N + cols, y, mask=mask)", "tl.store(y_ptr + row * N + cols, y)", 1),),
        "mask", "the store has no mask: the padded lanes write past the row's end"),
    Bug("fwd_row_stride_block", "forward",
        (("x = tl.load(x_ptr + row * N + cols", "x = tl.load(x_ptr + row * BLOCK_N + cols", 1),),
        "address", "the load steps rows by BLOCK_N instead of N"),
    Bug("fwd_denominator_unshifted", "forward",
        (("y = e / tl.sum(e, axis=0)", "y = e / tl.sum(tl.exp(x), axis=0)", 1),),
        "formula", "numerator shifted by the max but denominator not: the two no longer match"),
    # online (rows wider than the block)
    Bug("online_no_rescale", "online",
        (("s_lane * tl.exp(m_lane - m_new) + tl.exp(x - m_new)", "s_lane + tl.exp(x - m_new)", 1),),
        "accumulate", "the running sum is not rescaled when the running max grows"),
    Bug("online_lanes_not_moved_to_row_max", "online",
        (("s_lane * tl.exp(m_lane - m), 0.0)", "s_lane, 0.0)", 1),),
        "accumulate", "the lanes' sums are added without moving each to the row's max", accept=("formula",)),
    Bug("online_padded_lanes_zero", "online",
        ((ONLINE_LOAD1, ONLINE_LOAD1.replace('other=-float("inf")', "other=0.0"), 1),),
        "fill", "the first pass's padded lanes load 0: they raise the max and add exp(0 - m) to the sum"),
    Bug("online_second_pass_one_chunk", "online",
        ((PASS2, "    # second pass\n    for start in range(0, BLOCK_N, BLOCK_N):", 1),),
        "loop", "the writing pass covers only the first chunk of the row"),
    Bug("online_store_unmasked", "online",
        (("tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=mask)", "tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s)", 1),),
        "mask", "the second pass's store has no mask: the last chunk writes past the row"),
    Bug("online_second_pass_no_row", "online",
        (("x = tl.load(x_row + cols, mask=mask, other=-float(\"inf\"))", "x = tl.load(x_ptr + cols, mask=mask, other=-float(\"inf\"))", 1),),
        "address", "the second pass reads from the start of x instead of the program's row"),
]

RIGHT = [
    Right("online_scalar_running", (Kernel("softmax_online_kernel", '''
@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    m = -float("inf")
    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=mask)
'''),), "one scalar running max and sum per row (each chunk reduced first), rescaled chunk to chunk"),
    Right("online_three_passes", (Kernel("softmax_online_kernel", '''
@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    mx = tl.full([BLOCK_N], -float("inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mx = tl.maximum(mx, tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32))
    m = tl.max(mx, axis=0)
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        acc += tl.exp(x - m)
    inv = 1.0 / tl.sum(acc, axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_ptr + row * N + cols, tl.exp(x - m) * inv, mask=mask)
'''),), "three passes (max, then sum, then write) instead of the online one, multiplying by 1/sum"),
    Right("fwd_exp2", (("e = tl.exp(x - m)", "e = tl.exp2((x - m) * 1.4426950408889634)", 1),),
        "exp written as exp2 of x * log2(e): the same exponentials"),
]
