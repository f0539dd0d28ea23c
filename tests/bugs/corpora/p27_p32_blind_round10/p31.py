"""Blind corpus (round 10 for p27-p32), puzzle 31 (FlashAttention forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_ACC1 = "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the inputs' dtype: the tensor cores' operand"
_TAIL2 = ("        l = l * alpha + tl.sum(p, axis=1)\n        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)\n"
          "        m = m_new\n\n    o = acc")

MEASURED = [
    Bug("acc_not_rescaled_unmasked_loop", "forward",
        ((_ACC1, _ACC1.replace("acc = acc * alpha[:, None] + ", "acc = acc + "), 1),),
        "accumulate", "the unmasked loop rescales l by alpha but adds the block's p·v to the output unrescaled: "
        "earlier blocks keep weights relative to an old max"),
    Bug("l_not_rescaled_masked_loop", "forward",
        ((_TAIL2, _TAIL2.replace("l = l * alpha + tl.sum", "l = l + tl.sum"), 1),),
        "accumulate", "the masked (diagonal/tail) loop adds the block's row sums to l without multiplying the old sum by alpha"),
    Bug("max_not_carried_masked_loop", "forward",
        ((_TAIL2, _TAIL2.replace("        m = m_new\n", ""), 1),),
        "accumulate", "the masked loop never moves m to m_new: the next block's alpha and the final lse use a stale max"),
    Bug("kv_head_is_query_head", "forward",
        (("    k_head = k_ptr + (head // GROUP) * S * D\n    v_head = v_ptr + (head // GROUP) * S * D",
          "    k_head = k_ptr + head * S * D\n    v_head = v_ptr + head * S * D", 1),),
        "address", "grouped-query attention ignored: query head h reads key/value head h instead of h // GROUP"),
    Bug("lse_left_in_base2", "forward",
        (("tl.store(lse_ptr + head * L + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < L)",
          "tl.store(lse_ptr + head * L + rows, m + tl.log2(l), mask=rows < L)", 1),),
        "formula", "lse stored as m + log2(l), the base-2 logsumexp, without the factor ln 2 back to the natural log"),
    Bug("causal_diagonal_excluded", "forward",
        (("visible = visible & (cols[None, :] <= rows[:, None])", "visible = visible & (cols[None, :] < rows[:, None])", 1),),
        "mask", "causal mask written j < i: a query no longer sees its own key (query 0 sees nothing at all)"),
    Bug("only_causal_mask_applied", "forward",
        (("        visible = cols[None, :] < S\n        if CAUSAL:\n            visible = visible & (cols[None, :] <= rows[:, None])\n"
          "        s = tl.where(visible, s, float(\"-inf\"))",
          "        if CAUSAL:\n            s = tl.where(cols[None, :] <= rows[:, None], s, float(\"-inf\"))", 1),),
        "mask", "the masked loop masks only the causal triangle: the padded keys past S score q·0 = 0 and join the softmax"),
    Bug("unmasked_loop_end_not_rounded", "forward",
        (("    whole = (whole // BLOCK_K) * BLOCK_K\n", "", 1),),
        "loop", "the unmasked loop runs to S (or the diagonal) itself, not to the last whole block: its last block is "
        "partial and goes unmasked, and the masked loop starts past it"),
    Bug("qk_scale_without_log2e", "forward",
        (("    qk_scale = scale * 1.4426950408889634", "    qk_scale = scale", 1),),
        "formula", "scores scaled by 1/sqrt(D) only, yet exponentiated with exp2: the softmax is taken in base 2, too flat"),
    Bug("output_not_divided_by_l", "forward",
        (("    o = acc / l[:, None]", "    o = acc", 1),),
        "formula", "the output left unnormalised: a, the running sum of e^(s - m) v, stored without dividing by l"),
    Bug("q_rows_not_masked", "forward",
        (("    q = tl.load(q_head + rows[:, None] * D + dims[None, :],\n                mask=(rows[:, None] < L) & (dims[None, :] < D), other=0.0)",
          "    q = tl.load(q_head + rows[:, None] * D + dims[None, :],\n                mask=dims[None, :] < D, other=0.0)", 1),),
        "mask", "q's load masks the head lanes but not the query rows: the last block reads past the end of q"),
    Bug("scale_written_for_d16", "forward",
        (("    qk_scale = scale * 1.4426950408889634", "    qk_scale = 0.25 * 1.4426950408889634  # 1 / sqrt(16)", 1),),
        "hardcoded", "the scale written in as 1/sqrt(16), the documented D, instead of the scale argument"),
    Bug("alpha_inverted", "forward",
        (("        alpha = tl.exp2(m - m_new)  # 0 at the first block", "        alpha = tl.exp2(m_new - m)  # 0 at the first block", 1),),
        "formula", "the rescale factor written e^(m_new - m) in the unmasked loop: old terms grow instead of shrinking "
        "(inf on the first block)"),
    Bug("masked_scores_set_to_zero", "forward",
        (("        s = tl.where(visible, s, float(\"-inf\"))", "        s = tl.where(visible, s, 0.0)", 1),),
        "fill", "hidden scores set to 0 instead of -inf: each masked key still adds exp2(0 - m) to the sum and its value to the output"),
    Bug("v_loaded_from_k", "forward",
        (("        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)",
          "        v = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)", 1),),
        "address", "the unmasked loop's value block loaded from k's head (the k line copied): the output averages keys"),
    Bug("lse_head_offset_dropped", "forward",
        (("tl.store(lse_ptr + head * L + rows,", "tl.store(lse_ptr + rows,", 1),),
        "address", "lse stored at row offsets only: every head writes head 0's slots, the other heads' lse never written"),
    Bug("row_sum_of_rounded_p", "forward",
        (("        p = tl.exp2(s - m_new[:, None])\n        alpha = tl.exp2(m - m_new)  # 0 at the first block",
          "        p = tl.exp2(s - m_new[:, None]).to(v.dtype)\n        alpha = tl.exp2(m - m_new)  # 0 at the first block", 1),),
        "precision", "p rounded to the inputs' dtype before the row sum as well as for the product: l summed from bf16 "
        "weights, lse off by bf16 rounding"),
]

RIGHT = [
    Right("every_block_masked", (("    whole = (whole // BLOCK_K) * BLOCK_K\n", "    whole = 0  # no unmasked stage: every block through the masked loop\n", 1),),
          "no unmasked fast loop: every key block goes through the masked loop (slower, same values)"),
    Right("natural_exp", (("    qk_scale = scale * 1.4426950408889634", "    qk_scale = scale", 1),
                          ("tl.exp2(", "tl.exp(", 4),
                          ("(m + tl.log2(l)) * 0.6931471805599453", "m + tl.log(l)", 1)),
          "the online softmax in the natural base throughout: exp and log, no base-2 factors"),
    Right("reciprocal_normalise", (("    o = acc / l[:, None]", "    o = acc * (1.0 / l)[:, None]", 1),),
          "the output normalised by multiplying with 1/l, one division per row"),
    Right("scale_before_max", (("        m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)\n        s = s * qk_scale",
                                "        s = s * qk_scale\n        m_new = tl.maximum(m, tl.max(s, axis=1))", 1),),
          "the scores scaled first and the max taken of the scaled scores (the same max, scale > 0)"),
    Right("masked_stage_while_loop", (("    for start in range(whole, end, BLOCK_K):\n        cols = start + tl.arange(0, BLOCK_K)\n        kv_mask",
                                       "    start = whole\n    while start < end:\n        cols = start + tl.arange(0, BLOCK_K)\n        kv_mask", 1),
                                      (_TAIL2, _TAIL2.replace("        m = m_new\n", "        m = m_new\n        start += BLOCK_K\n"), 1)),
          "the masked stage written as a while loop over the key blocks"),
]
