"""Puzzle 11 reference kernels: the softmax of each row, shifted by the row's max.

    x: [M, N], contiguous (row i starts at x + i * N)     y: [M, N], like x
    y[i, j] = exp(x[i, j] - m_i) / sum_k exp(x[i, k] - m_i),   m_i = max_k x[i, k]

The checker launches one program per row for both parts:
    softmax_fwd_kernel[(M,)](x, y, N, BLOCK_N=BLOCK_N)        # BLOCK_N = next power of two >= N
    softmax_online_kernel[(M,)](x, y, N, BLOCK_N=CHUNK)       # CHUNK = 16 unless a case says otherwise
"""
import triton
import triton.language as tl


@triton.jit
def softmax_fwd_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    """y[i, :] = softmax(x[i, :]) with the whole row in one block (BLOCK_N >= N). Grid: (M,)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    # padded lanes load -inf: they cannot win the max, and exp(-inf - m) = 0 adds nothing to the
    # sum. (0.0 would do both wrong: a row of negative logits would get max 0, and every padded
    # lane would add exp(0 - m) to the denominator.)
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)
    # softmax(x) = softmax(x - m) for any m; with m the max every exponent is <= 0, so exp never
    # overflows (fp32 exp overflows above 88.7) and the largest term is exactly 1 (the sum cannot
    # underflow to 0 either)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * N + cols, y, mask=mask)  # converted to y's dtype (bf16 on the GPU cases)


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    """The same for rows wider than the block: one pass that keeps a running max and a running
    sum, then a second pass that writes y. Grid: (M,)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    # per lane: m_lane = the max this lane has seen, s_lane = sum of exp(x - m_lane) over its values.
    # -inf as the first max: exp(-inf - m) = 0 rescales an empty sum to 0, never NaN, once the
    # lane has seen a real value (a lane that sees none keeps -inf and is masked out below)
    m_lane = tl.full([BLOCK_N], -float("inf"), dtype=tl.float32)
    s_lane = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m_lane, x)
        # the old terms were exp(x - m_old); they must become exp(x - m_new): multiply by
        # exp(m_old - m_new) <= 1. Without it, a row whose max arrives late sums mismatched terms.
        # (A lane that has seen only -inf has m_new = -inf: guard the -inf - -inf = NaN.)
        seen = m_new > -float("inf")
        s_lane = tl.where(seen, s_lane * tl.exp(m_lane - m_new) + tl.exp(x - m_new), 0.0)
        m_lane = m_new
    # combine the lanes: the row's max, and each lane's sum moved to it
    m = tl.max(m_lane, axis=0)
    s = tl.sum(tl.where(m_lane > -float("inf"), s_lane * tl.exp(m_lane - m), 0.0), axis=0)

    # second pass: the row again, each element divided by the whole row's sum
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=mask)
