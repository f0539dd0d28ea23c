"""Blind corpus, puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward
from bugs.then import P32_BEFORE_GQA, P32_GQA

_DS_T = "ds_t = p_t * (dp_t - delta[None, :])"
_DQ = "    dq += tl.dot(ds.to(k.dtype), k)"

MEASURED = [
    Bug("delta_head_dims_unmasked", "backward",
        (("    mask = (rows[:, None] < L) & (dims[None, :] < D)\n    offsets = head * L * D",
          "    mask = rows[:, None] < L\n    offsets = head * L * D", 1),),
        "mask", "the preprocess masks rows only: with D < BLOCK_D the padded lanes read the next row's o and dO into Δ",
        notes='shows only where D < BLOCK_D'),
    Bug("delta_broadcast_along_keys", "backward",
        ((_DS_T, "ds_t = p_t * (dp_t - delta[:, None])", 1),),
        "formula", "Δ broadcast along the key axis of the transposed tile (delta[:, None]): each key gets a query's Δ",
        accept=("address",),
        notes='wrong values where BLOCK_Q == BLOCK_K, a shape error otherwise'),
    Bug("dq_from_v", "backward",
        ((_DQ, "    dq += tl.dot(ds.to(k.dtype), v)", 1),),
        "formula", "dQ = dS V: the values used where the keys belong"),
    Bug("ds_product_in_bf16", "backward",
        ((_DQ, "    dq += tl.dot(ds.to(tl.bfloat16), k.to(tl.bfloat16))", 1),),
        "precision", "dS and K cast to bf16 for dQ's product whatever the inputs: the fp32 cases lose digits"),
    Bug("p_as_ratio_of_exp2", "backward",
        (("    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])\n",
          "    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale) / tl.exp2(lse[None, :])\n", 1),),
        "stability", "the dK/dV walk rebuilds P as 2^s / 2^lse: large scores overflow (inf / inf), very negative ones give 0 / 0",
        notes='shows only with large scores'),
    Bug("dkdv_walk_to_s", "backward",
        (("    for start in range(after, L, BLOCK_Q):", "    for start in range(after, S, BLOCK_Q):", 1),),
        "loop", "the dK/dV walk over query blocks runs to S (keys) instead of L (queries): with S < L the last queries are left out"),
    Bug("dq_reads_first_heads_lse", "backward",
        (("    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634\n",
          "    lse = tl.load(lse_ptr + rows, mask=rows < L, other=0.0) * 1.4426950408889634\n", 1),),
        "address", "the dQ kernel reads lse without the head offset: every head uses head 0's logsumexp"),
    Bug("dq_query_mask_against_s", "backward",
        (("    q_mask = (rows[:, None] < L) & (dims[None, :] < D)\n    q = tl.load(q_ptr + head * L * D",
          "    q_mask = (rows[:, None] < S) & (dims[None, :] < D)\n    q = tl.load(q_ptr + head * L * D", 1),),
        "mask", "the dQ kernel's query mask rows < S (the key count) instead of rows < L: with S < L the last rows of dQ are never written"),
    Bug("dq_padded_keys_load_minus_inf", "backward",
        (("tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)",
          "tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=float(\"-inf\"))", 1),
         ("tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)",
          "tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=float(\"-inf\"))", 1)),
        "fill", "the dQ walk's padded keys and values load -inf (to mask them out): q · (-inf) and 0 · (-inf) give NaN"),
    Bug("dkdv_accumulators_restarted_after_diagonal", "backward",
        (("    for start in range(after, L, BLOCK_Q):\n",
          "    dk = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)\n    dv = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)\n"
          "    for start in range(after, L, BLOCK_Q):\n", 1),),
        "accumulate", "dK and dV started from zero again before the unmasked walk: the diagonal blocks' shares are dropped (causal)"),
    Bug("delta_head_offset_documented_l", "backward",
        (("tl.store(delta_ptr + head * L + rows,", "tl.store(delta_ptr + head * 40 + rows,", 1),),
        "hardcoded", "Δ's head offset written with 40, the documented L, instead of the argument"),
    Bug("ds_delta_outside_product", "backward",
        ((_DS_T, "ds_t = p_t * dp_t - delta[None, :]", 1),),
        "formula", "dS = P ∘ dP − Δ: Δ subtracted outside the product, it must be multiplied by P too"),
    Bug("dq_scaled_by_qk_scale", "backward",
        (("    dq *= scale\n", "    dq *= qk_scale\n", 1),),
        "formula", "dQ multiplied by qk_scale (scale · log2 e, the exp2 factor) instead of scale"),
    Bug("dq_causal_split_not_rounded", "backward",
        (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n", "        whole = tl.minimum(S, first + 1)\n", 1),),
        "loop", "the causal dQ walk's unmasked part ends at first + 1, not rounded down to a key block: the diagonal block runs unmasked"),
    Bug("dk_dv_stored_swapped", "backward",
        (("cols[:, None] * D + dims[None, :], dk, mask=kv_mask)\n    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)\n",
          "cols[:, None] * D + dims[None, :], dv, mask=kv_mask)\n    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)\n", 1),),
        "address", "dK stored into dv's buffer and dV into dk's: the stores' pointers swapped"),
    Bug("dq_starts_as_python_scalar", "backward",
        (("    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)\n", "    dq = 0.0\n", 1),),
        "compile", "dq = 0.0 before the walk: a loop-carried value that starts a scalar and becomes a block does not compile"),
]

RIGHT = [
    Right("mask_scores_before_exp2",
          (("    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])\n"
            "    if MASK:  # a block across the diagonal: query i sees key j only if j <= i\n"
            "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)\n",
            "    s_t = tl.dot(k, tl.trans(q)) * qk_scale\n"
            "    if MASK:  # the hidden scores become -inf, their exp2 is 0\n"
            "        s_t = tl.where(cols[:, None] <= rows[None, :], s_t, float(\"-inf\"))\n"
            "    p_t = tl.exp2(s_t - lse[None, :])\n", 1),),
          "the dK/dV walk masks the scores with -inf before exp2 instead of P after it"),
    Right("dq_masks_ds_not_p",
          (("    if MASK:\n        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)\n", "", 1),
           ("    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])  # dS = P ∘ (dO Vᵀ − Δ)\n",
            "    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])  # dS = P ∘ (dO Vᵀ − Δ)\n"
            "    if MASK:\n        ds = tl.where(cols[None, :] <= rows[:, None], ds, 0.0)\n", 1)),
          "the dQ walk masks dS instead of P (a hidden key's P may be inf, the where drops it)"),
    Right("dkdv_query_blocks_last_first",
          (("    for start in range(after, L, BLOCK_Q):\n",
            "    n_after = tl.cdiv(L - after, BLOCK_Q)\n    for j in range(0, n_after):\n"
            "        start = after + (n_after - 1 - j) * BLOCK_Q\n", 1),),
          "the dK/dV walk's unmasked query blocks taken last first"),
    Right("dq_scale_folded_into_q",
          (("    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)\n",
            "    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)\n    q = q.to(tl.float32) * qk_scale  # the scores' factor once\n", 1),
           ("    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])\n",
            "    p = tl.exp2(tl.dot(q, tl.trans(k.to(tl.float32))) - lse[:, None])\n", 1)),
          "the dQ kernel folds scale · log2(e) into q once, in fp32, before its walk"),
    Right("dq_causal_all_masked",
          (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n", "        whole = 0\n", 1),),
          "the causal dQ walk masks every key block it visits (no unmasked stage): slower, the same numbers"),
]

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P32_BEFORE_GQA, MEASURED, P32_GQA)
RIGHT = carried_forward(P32_BEFORE_GQA, RIGHT, P32_GQA)
