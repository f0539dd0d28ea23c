"""Blind corpus, puzzle 31 (FlashAttention forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward, written_against
from bugs.then import P31_BEFORE_FUSED_SCALE, P31_BEFORE_GQA, P31_GQA

_LSE = "(m + tl.log2(l)) * 0.6931471805599453"

MEASURED = [
    Bug("log2e_divided_instead_of_multiplied", "forward",
        (("qk_scale = scale * 1.4426950408889634", "qk_scale = scale / 1.4426950408889634", 1),),
        "formula", "the scores divided by log2(e) instead of multiplied: exp2 of them is not exp of the scores"),
    Bug("unmasked_stage_p_with_old_max", "forward",
        (("        p = tl.exp2(s - m_new[:, None])\n        alpha = tl.exp2(m - m_new)  # 0 at the first block",
          "        p = tl.exp2(s - m[:, None])\n        alpha = tl.exp2(m - m_new)  # 0 at the first block", 1),),
        "formula", "the unmasked stage's p = exp2(s − m) with the old max: the first block's m = -inf makes p infinite"),
    Bug("lse_natural_log_of_l", "forward",
        ((_LSE, "(m + tl.log(l)) * 0.6931471805599453", 1),),
        "formula", "lse = (m + ln l) · ln 2: the sum's log is natural where the base-2 max needs log2 l"),
    Bug("pv_product_in_bf16", "forward",
        (("tl.dot(p.to(v.dtype), v)", "tl.dot(p.to(tl.bfloat16), v.to(tl.bfloat16))", 2),),
        "precision", "P and V cast to bf16 for the product whatever the inputs (copied from a bf16 tutorial): fp32 cases lose digits"),
    Bug("lse_store_unmasked", "forward",
        (("(m + tl.log2(l)) * 0.6931471805599453, mask=rows < L)", "(m + tl.log2(l)) * 0.6931471805599453)", 1),),
        "mask", "lse stored without the row mask: the padded query rows write past the head's L entries"),
    Bug("tail_mask_against_l", "forward",
        (("        visible = cols[None, :] < S\n", "        visible = cols[None, :] < L\n", 1),),
        "mask", "the masked stage keeps keys cols < L (the query count) instead of cols < S"),
    Bug("causal_mask_on_local_indices", "forward",
        (("visible = visible & (cols[None, :] <= rows[:, None])",
          "visible = visible & (tl.arange(0, BLOCK_K)[None, :] <= tl.arange(0, BLOCK_Q)[:, None])", 1),),
        "mask", "the causal mask compares the lanes' local indices, not the key and query positions", accept=("address",),
        notes='shows where BLOCK_Q != BLOCK_K or, causal, S < L'),
    Bug("unmasked_end_not_rounded_down", "forward",
        (("    whole = (whole // BLOCK_K) * BLOCK_K\n", "", 1),),
        "loop", "the unmasked stage's end not rounded down to whole key blocks: its last block runs past the diagonal or S unmasked"),
    Bug("unmasked_stage_steps_block_q", "forward",
        (("    for start in range(0, whole, BLOCK_K):\n", "    for start in range(0, whole, BLOCK_Q):\n", 1),),
        "loop", "the unmasked stage steps BLOCK_Q while its blocks are BLOCK_K keys wide: keys skipped or counted twice",
        notes='shows only where BLOCK_Q != BLOCK_K'),
    Bug("o_head_offset_with_s", "forward",
        (("tl.store(o_ptr + head * L * D +", "tl.store(o_ptr + head * S * D +", 1),),
        "address", "o's head offset taken with S (k's length): o has L rows per head"),
    Bug("padded_keys_load_minus_inf", "forward",
        (("mask=kv_mask, other=0.0)", "mask=kv_mask, other=float(\"-inf\"))", 2),),
        "fill", "the masked stage's padded keys and values load -inf (to mask them): q · (-inf) and 0 · (-inf) give NaN"),
    Bug("running_state_reset_before_masked_stage", "forward",
        (("    for start in range(whole, end, BLOCK_K):\n",
          "    m = tl.full([BLOCK_Q], float(\"-inf\"), dtype=tl.float32)\n    l = tl.zeros([BLOCK_Q], dtype=tl.float32)\n"
          "    acc = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)\n    for start in range(whole, end, BLOCK_K):\n", 1),),
        "accumulate", "m, l and acc started again before the masked stage: the unmasked stage's keys are forgotten"),
    Bug("q_head_offset_documented_l", "forward",
        (("    q_head = q_ptr + head * L * D\n", "    q_head = q_ptr + head * 40 * D\n", 1),),
        "hardcoded", "q's head offset written with 40, the documented L, instead of the argument"),
    Bug("walk_ends_at_l", "forward",
        (("    whole = S\n    end = S\n", "    whole = S\n    end = L\n", 1),),
        "loop", "the non-causal walk's end set to L (queries) instead of S (keys): with S > L the last keys are never seen",
        notes='shows only non-causal with S > L'),
    Bug("lse_as_log_of_scaled_sum", "forward",
        ((_LSE, "tl.log(l * tl.exp2(m))", 1),),
        "stability", "lse = ln(l · 2^m): the max put back inside the log, 2^m overflows or underflows for large scores",
        notes='shows only with large scores'),
    Bug("masked_stage_v_from_k", "forward",
        (("        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)\n",
          "        v = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)\n", 1),),
        "address", "the masked stage loads v from k's pointer (a line copied): those blocks average keys, not values",
        accept=("formula",)),
]

RIGHT = [
    Right("scale_folded_into_q",
          (("    qk_scale = scale * 1.4426950408889634\n",
            "    qk_scale = scale * 1.4426950408889634\n    q = q.to(tl.float32) * qk_scale  # fp32: the scale once, not per block\n", 1),
           ("        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n",
            "        s = tl.dot(q, tl.trans(k.to(tl.float32)))\n", 1),
           ("        s = tl.dot(q, tl.trans(k)) * qk_scale\n", "        s = tl.dot(q, tl.trans(k.to(tl.float32)))\n", 1)),
          "q multiplied by scale · log2(e) once, in fp32, before the walk"),
    Right("lse_from_natural_log",
          ((_LSE, "m * 0.6931471805599453 + tl.log(l)", 1),),
          "lse = m · ln 2 + ln l: the base-2 max converted, the sum's log taken natural"),
    Right("unmasked_stage_last_block_first",
          (("    for start in range(0, whole, BLOCK_K):\n        cols = start + tl.arange(0, BLOCK_K)\n",
            "    n_whole = whole // BLOCK_K\n    for j in range(0, n_whole):\n        start = (n_whole - 1 - j) * BLOCK_K\n"
            "        cols = start + tl.arange(0, BLOCK_K)\n", 1),),
          "the unmasked key blocks walked last first (the online softmax does not care about the order)"),
    Right("mask_added_as_bias",
          (("        s = tl.where(visible, s, float(\"-inf\"))\n", "        s = s + tl.where(visible, 0.0, float(\"-inf\"))\n", 1),),
          "the mask added to the scores as a bias of 0 or -inf"),
    Right("keys_loaded_transposed",
          (("        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n",
            "        kt = tl.load(k_head + cols[None, :] * D + dims[:, None], mask=dims[:, None] < D, other=0.0)\n", 1),
           ("        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q", "        s = tl.dot(q, kt) * qk_scale  # [BLOCK_Q", 1),
           ("        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)\n",
            "        kt = tl.load(k_head + cols[None, :] * D + dims[:, None], mask=(cols[None, :] < S) & (dims[:, None] < D), other=0.0)\n", 1),
           ("        s = tl.dot(q, tl.trans(k)) * qk_scale\n", "        s = tl.dot(q, kt) * qk_scale\n", 1)),
          "k loaded directly as its transpose [BLOCK_D, BLOCK_K], no tl.trans"),
]

# written against the solution before its scores were scaled once each (tests/bugs/then.py)
MEASURED = written_against(P31_BEFORE_FUSED_SCALE, MEASURED)
RIGHT = written_against(P31_BEFORE_FUSED_SCALE, RIGHT)

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P31_BEFORE_GQA, MEASURED, P31_GQA)
RIGHT = carried_forward(P31_BEFORE_GQA, RIGHT, P31_GQA)
