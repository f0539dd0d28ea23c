"""Fifth blind corpus, puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward
from bugs.then import P32_BEFORE_GQA, P32_GQA

_PRE_OFF = "    offsets = head * L * D + rows[:, None] * D + dims[None, :]\n"
_PRE_LOADS = ("    o = tl.load(o_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
              "    do = tl.load(do_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n")
_PRE_STORE = "    tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)\n"
_DP_T = "    dp_t = tl.dot(v, tl.trans(do))                       # dPᵀ = V dOᵀ\n"
_DK_STEP = "    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK = dSᵀ Q (times scale, at the end)\n"
_AFTER = "        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)\n"
_DQ_WALK = "    whole = S\n    end = S\n    if CAUSAL:\n        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n"
_DQ_LOOP1 = "    for start in range(0, whole, BLOCK_K):\n        dq = dq_step("
_DK_STORE = "    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)\n"
_DV_STORE = "    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)\n"
_STEP_DELTA = "    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)\n    # P rebuilt"
_DKDV_KV_MASK = "    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)\n    k = tl.load(k_ptr + head * S * D"
_DQ_CAUSAL = "        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)\n"
_DQ_STEP_COLS = "    cols = start + tl.arange(0, BLOCK_K)\n    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)\n    k = tl.load(k_head"
_DQ_LOOP2 = "    for start in range(whole, end, BLOCK_K):\n        dq = dq_step("

MEASURED = [
    # the preprocess (Δ)
    Bug("delta_rows_block_d_apart", "backward",
        ((_PRE_OFF, "    offsets = head * L * D + rows[:, None] * BLOCK_D + dims[None, :]\n", 1),),
        "address", "the preprocess reads o's and dO's rows BLOCK_D apart (the padded lane count) instead of D: where D is no power of two every row after the first is read from the wrong place",
        notes="shows where D < BLOCK_D"),
    Bug("delta_times_scale", "backward",
        ((_PRE_STORE, "    tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1) * scale, mask=rows < L)\n", 1),),
        "formula", "Δ multiplied by the softmax scale (the scale put on every backward quantity): Δ = rowsum(dO ∘ O) has no scale, dS = P(dP − Δ) then subtracts the wrong amount"),
    Bug("preprocess_pads_with_one", "backward",
        ((_PRE_LOADS, _PRE_LOADS.replace("other=0.0", "other=1.0"), 1),),
        "fill", "the preprocess's padded lanes load 1.0 (taken as the neutral value of a product): each padded head lane adds 1 · 1 to Δ",
        notes="shows where D < BLOCK_D"),
    Bug("delta_rounded_to_bf16", "backward",
        ((_PRE_STORE, "    tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1).to(tl.bfloat16), mask=rows < L)\n", 1),),
        "precision", "Δ rounded to bf16 before it is stored in the fp32 buffer: dP − Δ cancels, and Δ's rounding error becomes a large part of dS",
        notes="fp32 cases only"),
    # the dK / dV walk
    Bug("dp_tile_untransposed", "backward",
        ((_DP_T, "    dp_t = tl.dot(do, tl.trans(v))                       # dPᵀ = V dOᵀ\n", 1),),
        "formula", "the dK/dV step takes dO Vᵀ ([queries, keys]) as dPᵀ ([keys, queries]): each element of dS pairs a P with another pair's dP (and no shape fits when BLOCK_Q != BLOCK_K)"),
    Bug("dk_from_ds_transposed_back", "backward",
        ((_DK_STEP, "    dk += tl.dot(tl.trans(ds_t).to(q.dtype), q)          # dK = dSᵀ Q (times scale, at the end)\n", 1),),
        "formula", "dK from tl.trans(ds_t) · Q: the tile is already dSᵀ, the extra transpose makes it dS Q, summed over the wrong axis"),
    Bug("masked_walk_end_floored", "backward",
        ((_AFTER, "        after = tl.minimum(L, ((first + BLOCK_K - 1) // BLOCK_Q) * BLOCK_Q)\n", 1),),
        "loop", "the end of the causal dK/dV masked walk rounded down instead of up: the query block holding the key block's last key is walked unmasked, its future queries add to dK and dV",
        notes="causal only"),
    Bug("dq_walk_ends_at_l", "backward",
        ((_DQ_WALK, _DQ_WALK.replace("    whole = S\n    end = S\n", "    whole = L\n    end = L\n"), 1),),
        "loop", "the dQ walk's non-causal bounds set to L (queries) instead of S (keys): with S > L the last keys never reach dQ, with S < L the walk runs past the keys unmasked"),
    Bug("dq_walk_steps_block_q", "backward",
        ((_DQ_LOOP1, "    for start in range(0, whole, BLOCK_Q):\n        dq = dq_step(", 1),),
        "loop", "the dQ kernel's unmasked walk steps BLOCK_Q while each step loads BLOCK_K keys: where the two differ key blocks are skipped or counted twice"),
    Bug("dk_store_heads_l_apart", "backward",
        ((_DK_STORE, _DK_STORE.replace("head * S * D", "head * L * D"), 1),),
        "address", "dK stored with the head offset head · L · D (q's layout) instead of head · S · D: with L != S the heads after the first land in the wrong rows",
        notes="shows where L != S and there are several heads"),
    Bug("step_delta_at_key_indices", "backward",
        ((_STEP_DELTA, "    delta = tl.load(delta_head + cols, mask=cols < L, other=0.0)\n    # P rebuilt", 1),),
        "address", "the dK/dV step reads Δ at the key block's indices (cols) instead of the query rows': every query block subtracts the same, wrong Δ"),
    Bug("dkdv_kv_mask_against_l", "backward",
        ((_DKDV_KV_MASK, _DKDV_KV_MASK.replace("cols[:, None] < S", "cols[:, None] < L"), 1),),
        "mask", "the dK/dV kernel masks its keys with cols < L (the query count): with L > S it reads and writes keys past S (into the next head), with L < S the last keys get no gradient"),
    Bug("dq_causal_mask_from_first_query", "backward",
        ((_DQ_CAUSAL, "        p = tl.where(cols[None, :] <= tl.min(rows, axis=0), p, 0.0)\n", 1),),
        "mask", "the dQ step's causal mask compares each key with the query block's first row (the same bound for every row) instead of with each row: the later rows of a block lose keys they see",
        notes="causal only"),
    Bug("dk_rounded_to_bf16", "backward",
        ((_DK_STORE, _DK_STORE.replace(", dk, mask", ", dk.to(tl.bfloat16), mask"), 1),),
        "precision", "dK rounded to bf16 before the store whatever dk's dtype: an fp32 dK keeps 8 bits",
        notes="fp32 cases only"),
    Bug("dq_step_keys_documented_16", "backward",
        ((_DQ_STEP_COLS, _DQ_STEP_COLS.replace("tl.arange(0, BLOCK_K)", "tl.arange(0, 16)"), 1),),
        "hardcoded", "the dQ step's keys tl.arange(0, 16) (the documented BLOCK_K) while the walk steps BLOCK_K: with BLOCK_K = 32 half of every key block never reaches dQ",
        notes="shows where BLOCK_K != 16"),
    Bug("dq_restarted_before_masked_walk", "backward",
        ((_DQ_LOOP2, "    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)\n" + _DQ_LOOP2, 1),),
        "accumulate", "dQ started from zero again before the masked walk: the unmasked key blocks' shares are dropped",
        notes="shows where a query block has both unmasked and masked key blocks"),
    Bug("dv_stored_over_v", "backward",
        ((_DV_STORE, _DV_STORE.replace("tl.store(dv_ptr", "tl.store(v_ptr"), 1),),
        "inplace", "dV stored into v's buffer (v is loaded already, so it seemed free): an input overwritten, dv never written, and the dQ kernel then reads dV as values"),
]

_DKDV_STEP_T = '''
@triton.jit
def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
              D: tl.constexpr, BLOCK_Q: tl.constexpr, MASK: tl.constexpr):
    """The step with Qᵀ and dOᵀ loaded directly as [BLOCK_D, BLOCK_Q] tiles."""
    rows = start + tl.arange(0, BLOCK_Q)
    t_mask = (dims[:, None] < D) & (rows[None, :] < L)
    q_t = tl.load(q_head + rows[None, :] * D + dims[:, None], mask=t_mask, other=0.0)
    do_t = tl.load(do_head + rows[None, :] * D + dims[:, None], mask=t_mask, other=0.0)
    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)
    p_t = tl.exp2(tl.dot(k, q_t) * qk_scale - lse[None, :])
    if MASK:
        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)
    dv += tl.dot(p_t.to(do_t.dtype), tl.trans(do_t))
    dp_t = tl.dot(v, do_t)
    ds_t = p_t * (dp_t - delta[None, :])
    dk += tl.dot(ds_t.to(q_t.dtype), tl.trans(q_t))
    return dk, dv
'''

RIGHT = [
    Right("dkdv_step_with_transposed_loads", (Kernel("dkdv_step", _DKDV_STEP_T),),
          "the dK/dV step loads Qᵀ and dOᵀ directly as [BLOCK_D, BLOCK_Q] tiles (no tl.trans on the scores' operands)"),
    Right("dv_as_transposed_product",
          (("    dv += tl.dot(p_t.to(do.dtype), do)                  # dV = Pᵀ dO\n",
            "    dv += tl.trans(tl.dot(tl.trans(do), tl.trans(p_t.to(do.dtype))))  # dV = (dOᵀ P)ᵀ\n", 1),),
          "dV's share computed as (dOᵀ P)ᵀ"),
    Right("dq_as_transposed_product",
          (("    dq += tl.dot(ds.to(k.dtype), k)                        # dQ = dS K (times scale, at the end)\n",
            "    dq += tl.trans(tl.dot(tl.trans(k), tl.trans(ds.to(k.dtype))))  # dQ = (Kᵀ dSᵀ)ᵀ\n", 1),),
          "dQ's share computed as (Kᵀ dSᵀ)ᵀ"),
    Right("preprocess_in_fp64",
          ((_PRE_LOADS, _PRE_LOADS.replace("tl.float32", "tl.float64"), 1),
           ("tl.sum(o * do, axis=1), mask=rows < L)", "tl.sum(o * do, axis=1).to(tl.float32), mask=rows < L)", 1)),
          "the preprocess forms Δ in fp64, rounded to fp32 once at the store"),
    Right("dq_masked_walk_last_first",
          ((_DQ_LOOP2,
            "    for back in range(0, tl.cdiv(end - whole, BLOCK_K)):\n"
            "        start = whole + (tl.cdiv(end - whole, BLOCK_K) - 1 - back) * BLOCK_K\n"
            "        dq = dq_step(", 1),),
          "the dQ kernel's masked key blocks walked last first"),
]

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P32_BEFORE_GQA, MEASURED, P32_GQA)
RIGHT = carried_forward(P32_BEFORE_GQA, RIGHT, P32_GQA)
