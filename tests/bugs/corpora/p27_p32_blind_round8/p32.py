"""Blind corpus (round 8 for p27-p32), puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

DK_STORE = "tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)"
DV_STORE = "tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)"
STEP_LSE = "lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634  # base 2, as the scores"
DQ_KV = """    k_head = k_ptr + (head // GROUP) * S * D  # the key/value head this query head reads (puzzle 31)
    v_head = v_ptr + (head // GROUP) * S * D"""
DQ_WHOLE = "whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K"
DQ_LSE = "lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634"
DQ_SCALE = "qk_scale = scale * 1.4426950408889634\n    dq = tl.zeros"

MEASURED = [
    Bug("ds_without_delta", "backward",
        (("ds_t = p_t * (dp_t - delta[None, :])", "ds_t = p_t * dp_t", 1),),
        "formula", "dK's dS forgets the softmax backward's Δ term: dS = P ∘ dP"),
    Bug("dkdv_causal_strict", "backward",
        (("p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)", "p_t = tl.where(cols[:, None] < rows[None, :], p_t, 0.0)", 1),),
        "mask", "the dK/dV causal mask drops the diagonal: a query does not see its own key"),
    Bug("dk_not_scaled", "backward",
        (("    dk *= scale  # dS is the gradient of scale · q kᵀ: the scale comes back once, here\n", "", 1),),
        "formula", "dK is never multiplied by the softmax scale"),
    Bug("dq_not_scaled", "backward",
        (("    dq *= scale\n", "", 1),),
        "formula", "dQ is never multiplied by the softmax scale"),
    Bug("lse_left_natural", "backward",
        ((STEP_LSE, STEP_LSE.replace(" * 1.4426950408889634", ""), 1),),
        "formula", "the dK/dV walk subtracts the natural-log lse from base-2 scores"),
    Bug("dkdv_store_kv_head", "backward",
        ((DK_STORE, DK_STORE.replace("head * S * D", "kv_head * S * D"), 1),
         (DV_STORE, DV_STORE.replace("head * S * D", "kv_head * S * D"), 1)),
        "address", "each query head's dK/dV share is stored at its key/value head's slot, not its own: the group's shares overwrite each other"),
    Bug("dq_gqa_ignored", "backward",
        ((DQ_KV, DQ_KV.replace("(head // GROUP)", "head"), 1),),
        "address", "the dQ walk reads key/value head h instead of h // GROUP"),
    Bug("dkdv_causal_start_unaligned", "backward",
        (("for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):", "for start in range(first, after, BLOCK_Q):", 1),),
        "loop", "the masked query walk starts at the key block's first key, not at the start of its query block: blocks overlap the unmasked walk"),
    Bug("dq_whole_not_rounded", "backward",
        ((DQ_WHOLE, "whole = tl.minimum(S, first + 1)", 1),),
        "loop", "dQ's unmasked stage ends at first + 1, not rounded down to a whole key block: its last block crosses the diagonal unmasked"),
    Bug("dv_overwritten", "backward",
        (("dv += tl.dot(p_t.to(do.dtype), do)", "dv = tl.dot(p_t.to(do.dtype), do)", 1),),
        "accumulate", "dV is overwritten by each query block instead of summed over them"),
    Bug("dq_overwritten", "backward",
        (("dq += tl.dot(ds.to(k.dtype), k)", "dq = tl.dot(ds.to(k.dtype), k)", 1),),
        "accumulate", "dQ keeps only the last key block's share"),
    Bug("delta_store_unmasked", "backward",
        (("tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)",
          "tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1))", 1),),
        "mask", "Δ's store has no row mask: the last block writes past L, into the next head's Δ or past the buffer"),
    Bug("dk_store_rows_unmasked", "backward",
        ((DK_STORE, DK_STORE.replace("mask=kv_mask", "mask=dims[None, :] < D"), 1),),
        "mask", "dK's store masks only the head lanes: padded key rows past S are written"),
    Bug("dq_scale_hardcoded", "backward",
        (("    dq *= scale\n", "    dq *= 0.125\n", 1),),
        "hardcoded", "dQ's scale written as 1/sqrt(64) instead of the scale argument"),
    Bug("dq_uses_v", "backward",
        (("dq += tl.dot(ds.to(k.dtype), k)", "dq += tl.dot(ds.to(k.dtype), v)", 1),),
        "formula", "dQ = dS V instead of dS K: the wrong operand"),
    Bug("do_padded_with_ones", "backward",
        (("do = tl.load(do_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)",
          "do = tl.load(do_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=1.0)", 1),),
        "fill", "padded query rows load dO = 1: their P (not 0) adds to dV"),
    Bug("dq_causal_strict", "backward",
        (("p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)", "p = tl.where(cols[None, :] < rows[:, None], p, 0.0)", 1),),
        "mask", "dQ's causal mask drops the diagonal"),
]

RIGHT = [
    Right("dkdv_all_masked_when_causal",
          (("after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)", "after = L", 1),),
          "causal: every query block from the diagonal on goes through the masked step (the mask keeps all of a whole block)"),
    Right("dkdv_causal_from_zero",
          (("for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):", "for start in range(0, after, BLOCK_Q):", 1),),
          "the masked walk starts at query 0: the blocks before the diagonal are masked to 0 and add nothing"),
    Right("dq_natural_exp",
          (("p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])", "p = tl.exp(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])", 1),
           (DQ_LSE, DQ_LSE.replace(" * 1.4426950408889634", ""), 1),
           (DQ_SCALE, "qk_scale = scale\n    dq = tl.zeros", 1)),
          "the dQ walk in natural exp with the natural-log lse"),
    Right("dk_scaled_per_step",
          (("dk += tl.dot(ds_t.to(q.dtype), q)", "dk += tl.dot(ds_t.to(q.dtype), q) * (qk_scale * 0.6931471805599453)", 1),
           ("    dk *= scale  # dS is the gradient of scale · q kᵀ: the scale comes back once, here\n", "", 1)),
          "each query block's dK share scaled as it is added (qk_scale · ln 2 = scale) instead of once at the end"),
]
