"""Blind corpus (round 9 for p27-p32), puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("delta_no_head_offset", "backward",
        (("tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)",
          "tl.store(delta_ptr + rows, tl.sum(o * do, axis=1), mask=rows < L)", 1),),
        "address", "Δ stored without the head's offset: every head writes head 0's row"),
    Bug("dkdv_causal_strict", "backward",
        (("p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)", "p_t = tl.where(cols[:, None] < rows[None, :], p_t, 0.0)", 1),),
        "mask", "the dK/dV walk's causal mask is j < i: the diagonal's P is dropped"),
    Bug("dq_causal_flipped", "backward",
        (("p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)", "p = tl.where(cols[None, :] >= rows[:, None], p, 0.0)", 1),),
        "mask", "the dQ walk's causal mask keeps keys after the query (j >= i) instead of before"),
    Bug("dk_not_scaled", "backward",
        (("    dk *= scale  # dS", "    # dS", 1),),
        "formula", "dK left without the softmax scale: dS is the gradient of scale · q kᵀ"),
    Bug("dq_scaled_base2", "backward",
        (("    dq *= scale\n", "    dq *= qk_scale\n", 1),),
        "formula", "dQ scaled by the base-2 qk_scale (scale · log2 e) instead of scale"),
    Bug("ds_without_delta", "backward",
        (("ds_t = p_t * (dp_t - delta[None, :])", "ds_t = p_t * dp_t", 1),),
        "formula", "dSᵀ = Pᵀ ∘ dPᵀ: the softmax backward's row term Δ dropped"),
    Bug("dp_with_k", "backward",
        (("ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])", "ds = p * (tl.dot(do, tl.trans(k)) - delta[:, None])", 1),),
        "formula", "dP = dO Kᵀ: the wrong operand, dP is dO Vᵀ"),
    Bug("dkdv_lse_natural", "backward",
        (("lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634",
          "lse = tl.load(lse_head + rows, mask=rows < L, other=0.0)", 1),),
        "formula", "the natural-log lse subtracted from base-2 scores: P is rebuilt wrong"),
    Bug("dq_walk_stops_at_first", "backward",
        (("        end = tl.minimum(S, first + BLOCK_Q)\n    for start in range(0, whole, BLOCK_K):",
          "        end = tl.minimum(S, first + 1)\n    for start in range(0, whole, BLOCK_K):", 1),),
        "loop", "the dQ walk stops at the first query's diagonal, not the last one's: later queries miss keys"),
    Bug("dkdv_masked_blocks_too_few", "backward",
        (("after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)", "after = tl.minimum(L, first + BLOCK_Q)", 1),),
        "loop", "the masked stage ends one query block past first: the rest of the diagonal is walked unmasked", ("mask",)),
    Bug("dkdv_gqa_ignored", "backward",
        (("    kv_head = head // GROUP\n", "    kv_head = head\n", 1),),
        "address", "grouped-query attention ignored: the dK/dV walk reads key/value head h instead of h // GROUP"),
    Bug("dk_stored_in_kv_slot", "backward",
        (("tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)",
          "tl.store(dk_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)", 1),
         ("tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)",
          "tl.store(dv_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)", 1)),
        "address", "dK and dV stored at the key/value head's slot: dk and dv hold one share per query head"),
    Bug("dv_overwritten", "backward",
        (("    dv += tl.dot(p_t.to(do.dtype), do)", "    dv = tl.dot(p_t.to(do.dtype), do)", 1),),
        "accumulate", "dV overwritten by each query block's share instead of summed"),
    Bug("dq_overwritten", "backward",
        (("    dq += tl.dot(ds.to(k.dtype), k)", "    dq = tl.dot(ds.to(k.dtype), k)", 1),),
        "accumulate", "dQ overwritten by each key block's share instead of summed"),
    Bug("masked_p_minus_inf", "backward",
        (("p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)", 'p_t = tl.where(cols[:, None] <= rows[None, :], p_t, float("-inf"))', 1),),
        "fill", "masked Pᵀ entries set to -inf, as scores would be, instead of probability 0", ("mask",)),
    Bug("dk_store_unmasked", "backward",
        (("tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)",
          "tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk)", 1),),
        "mask", "dK's store has no mask: padded keys past S and head lanes past D are written"),
    Bug("dq_scale_hardcoded", "backward",
        (("    qk_scale = scale * 1.4426950408889634\n    dq = tl.zeros", "    qk_scale = 0.125 * 1.4426950408889634\n    dq = tl.zeros", 1),),
        "hardcoded", "the dQ walk's score scale written as 1/8 (D = 64) instead of the scale argument"),
]

_DKDV_STEP = '''
@triton.jit
def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
              D: tl.constexpr, BLOCK_Q: tl.constexpr, MASK: tl.constexpr):
    rows = start + tl.arange(0, BLOCK_Q)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)
    # P in the forward's [queries, keys] orientation, transposed at each use
    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])
    if MASK:
        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    dv += tl.dot(tl.trans(p.to(do.dtype)), do)
    dp = tl.dot(do, tl.trans(v))
    ds = p * (dp - delta[:, None])
    dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    return dk, dv
'''

RIGHT = [
    Right("dkdv_untransposed", (Kernel("dkdv_step", _DKDV_STEP),),
          "P and dS built [queries, keys] as in the forward, transposed at the products"),
    Right("dkdv_causal_from_zero",
          (("for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):", "for start in range(0, after, BLOCK_Q):", 1),),
          "the causal dK/dV walk starts at query 0: the blocks before the key block are masked to 0 whole"),
    Right("dq_all_masked",
          (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n", "        whole = 0\n", 1),),
          "the causal dQ walk takes every block through the masked step"),
    Right("dq_natural_exp",
          (("lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634",
            "lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0)", 1),
           ("p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])",
            "p = tl.exp(tl.dot(q, tl.trans(k)) * (qk_scale * 0.6931471805599453) - lse[:, None])", 1)),
          "the dQ walk rebuilds P in base e from the natural-log lse"),
]
