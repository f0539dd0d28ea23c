"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 11 (softmax): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_LOAD = 'x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)'
_ON_LOAD1 = 'x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)'
_RESCALE = "s_lane = tl.where(seen, s_lane * tl.exp(m_lane - m_new) + tl.exp(x - m_new), 0.0)"
_MERGE = 's = tl.sum(tl.where(m_lane > -float("inf"), s_lane * tl.exp(m_lane - m), 0.0), axis=0)'
_WALK2 = ("    for start in range(0, N, BLOCK_N):\n"
          "        cols = start + tl.arange(0, BLOCK_N)\n"
          "        mask = cols < N\n")

MEASURED = [
    # part 1: the whole row in one block
    Bug("fwd_pad_with_zero", "forward",
        ((_FWD_LOAD, _FWD_LOAD.replace('other=-float("inf")', "other=0.0"), 1),),
        "fill", "the padded lanes load 0.0, a real logit: each adds exp(0 - m) to the denominator, and an all-negative row gets max 0"),
    Bug("fwd_no_max_shift", "forward",
        (("    e = tl.exp(x - m)\n", "    e = tl.exp(x)\n", 1),),
        "stability", "exp of the raw logits: large logits overflow fp32 to inf (NaN after the division), very negative rows underflow to 0/0"),
    Bug("fwd_store_unmasked", "forward",
        (("tl.store(y_ptr + row * N + cols, y, mask=mask)", "tl.store(y_ptr + row * N + cols, y)", 1),),
        "mask", "the store has no mask: the padded lanes write into the next row of y (and past its end on the last row)"),
    Bug("fwd_row_offset_block", "forward",
        ((_FWD_LOAD, _FWD_LOAD.replace("row * N", "row * BLOCK_N"), 1),),
        "address", "the row is read at row * BLOCK_N (the padded width) instead of row * N: rows of x are N apart"),
    Bug("fwd_denominator_unshifted", "forward",
        (("    y = e / tl.sum(e, axis=0)\n", "    y = e / tl.sum(tl.exp(x), axis=0)\n", 1),),
        "formula", "the numerator is shifted by the max but the denominator sums exp(x) unshifted: y is off by the factor exp(m)"),
    # part 2: the online softmax
    Bug("online_no_rescale", "online",
        ((_RESCALE, "s_lane = tl.where(seen, s_lane + tl.exp(x - m_new), 0.0)", 1),),
        "accumulate", "the running sum is not moved to the new max when the max grows: old terms stay measured against the old max"),
    Bug("online_rescale_after_add", "online",
        ((_RESCALE, "s_lane = tl.where(seen, (s_lane + tl.exp(x - m_new)) * tl.exp(m_lane - m_new), 0.0)", 1),),
        "accumulate", "the rescale factor is applied after the chunk's terms were added: the new terms are scaled down a second time"),
    Bug("online_pad_with_zero", "online",
        ((_ON_LOAD1, _ON_LOAD1.replace('other=-float("inf")', "other=0.0"), 1),),
        "fill", "the first walk loads padded lanes as 0.0: the tail lanes take part in the max and add exp(0 - m) terms to the sum"),
    Bug("online_lanes_merged_unscaled", "online",
        ((_MERGE, 's = tl.sum(tl.where(m_lane > -float("inf"), s_lane, 0.0), axis=0)', 1),),
        "accumulate", "the lanes' sums are added as they are: each is relative to its own lane max and is not moved to the row's max before the merge",
        accept=("formula",)),
    Bug("online_write_walk_misses_tail", "online",
        ((_WALK2, _WALK2.replace("range(0, N, BLOCK_N)", "range(0, N // BLOCK_N * BLOCK_N, BLOCK_N)"), 1),),
        "loop", "the writing walk stops at the last whole chunk: the elements of the partial chunk at the row's end are never written"),
]

RIGHT = [
    Right("fwd_exp2_and_reciprocal",
          (("    e = tl.exp(x - m)\n    y = e / tl.sum(e, axis=0)\n",
            "    e = tl.exp2((x - m) * 1.4426950408889634)  # exp(t) = 2^(t log2 e)\n"
            "    inv = 1.0 / tl.sum(e, axis=0)\n    y = e * inv\n", 1),),
          "part 1 with exp2 of the scaled shifted logits and one reciprocal multiplied in: the same softmax, the usual fast form"),
    Right("online_scalar_running_max",
          (Kernel("softmax_online_kernel", '''@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    """One running max and one running sum per row (scalars), rescaled chunk by chunk."""
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    m = -float("inf")
    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))  # every chunk holds a real logit: m_new is finite
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    inv = 1.0 / s
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * N + cols, tl.exp(x - m) * inv, mask=mask)
'''),),
          "part 2 with a scalar running max and sum per row (no per-lane merge, no -inf guard needed), the second walk multiplying by 1/s"),
    Right("online_three_walks",
          (Kernel("softmax_online_kernel", '''@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    """Three walks instead of an online pass: the max, then the sum of exp(x - max), then y."""
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    m_lane = tl.full([BLOCK_N], -float("inf"), dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        m_lane = tl.maximum(m_lane, tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32))
    m = tl.max(m_lane, axis=0)
    s_lane = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        s_lane += tl.exp(x - m)
    s = tl.sum(s_lane, axis=0)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=mask)
'''),),
          "part 2 as three walks (max, then sum against the final max, then write): no rescaling needed, one more read of the row"),
]
