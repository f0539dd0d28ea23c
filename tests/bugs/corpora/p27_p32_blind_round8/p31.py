"""Blind corpus (round 8 for p27-p32), puzzle 31 (FlashAttention forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

ACC = "acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)"
STAGE1_ACC = "acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the inputs' dtype"
L_UPD = "l = l * alpha + tl.sum(p, axis=1)"
Q_LOAD = """    q = tl.load(q_head + rows[:, None] * D + dims[None, :],
                mask=(rows[:, None] < L) & (dims[None, :] < D), other=0.0)"""

MEASURED = [
    Bug("causal_strict", "forward",
        (("visible = visible & (cols[None, :] <= rows[:, None])", "visible = visible & (cols[None, :] < rows[:, None])", 1),),
        "mask", "the causal mask is strict: a query does not see its own key"),
    Bug("causal_reversed", "forward",
        (("visible = visible & (cols[None, :] <= rows[:, None])", "visible = visible & (rows[:, None] <= cols[None, :])", 1),),
        "mask", "the causal comparison is reversed: a query sees the keys after it on the diagonal block"),
    Bug("no_softmax_scale", "forward",
        (("qk_scale = scale * 1.4426950408889634", "qk_scale = 1.4426950408889634", 1),),
        "formula", "the scores are not multiplied by 1/sqrt(D)"),
    Bug("exp2_without_log2e", "forward",
        (("qk_scale = scale * 1.4426950408889634", "qk_scale = scale", 1),),
        "formula", "exp2 is used but the scores are not converted to base 2 (times log2 e)"),
    Bug("stage1_acc_not_rescaled", "forward",
        ((STAGE1_ACC, "acc = acc + tl.dot(p.to(v.dtype), v)  # P in the inputs' dtype", 1),),
        "accumulate", "the whole blocks' output is not rescaled by alpha when the running max grows"),
    Bug("stage2_l_not_rescaled", "forward",
        ((L_UPD + "\n        " + ACC + "\n        m = m_new\n\n", "l = l + tl.sum(p, axis=1)\n        " + ACC + "\n        m = m_new\n\n", 1),),
        "accumulate", "in the masked blocks the running sum l is not rescaled by alpha"),
    Bug("padded_keys_fill_zero", "forward",
        (('s = tl.where(visible, s, float("-inf"))', "s = tl.where(visible, s, 0.0)", 1),),
        "fill", "masked-out scores are set to 0 instead of -inf: they still get weight exp2(0 - m)"),
    Bug("gqa_head_ignored", "forward",
        (("k_head = k_ptr + (head // GROUP) * S * D\n    v_head = v_ptr + (head // GROUP) * S * D",
          "k_head = k_ptr + head * S * D\n    v_head = v_ptr + head * S * D", 1),),
        "address", "query head h reads key/value head h, not h // GROUP (grouped-query attention ignored)"),
    Bug("lse_left_in_base2", "forward",
        (("(m + tl.log2(l)) * 0.6931471805599453", "m + tl.log2(l)", 1),),
        "formula", "lse is stored in base-2 units, not converted back to the natural log"),
    Bug("output_not_normalized", "forward",
        (("o = acc / l[:, None]", "o = acc", 1),),
        "formula", "the output is never divided by the softmax's sum l"),
    Bug("causal_end_first_query", "forward",
        (("end = tl.minimum(S, first + BLOCK_Q)", "end = tl.minimum(S, first + 1)", 1),),
        "loop", "a causal program stops at its first query's diagonal: the later queries miss their last keys"),
    Bug("whole_not_rounded", "forward",
        (("    whole = (whole // BLOCK_K) * BLOCK_K\n", "", 1),),
        "loop", "stage 1 runs up to `whole` without rounding down to whole blocks: its last block crosses S or the diagonal unmasked"),
    Bug("q_load_rows_unmasked", "forward",
        ((Q_LOAD, Q_LOAD.replace("mask=(rows[:, None] < L) & (dims[None, :] < D)", "mask=dims[None, :] < D"), 1),),
        "mask", "q's load masks only the head lanes: the last query block reads rows past L"),
    Bug("lse_no_head_offset", "forward",
        (("tl.store(lse_ptr + head * L + rows,", "tl.store(lse_ptr + rows,", 1),),
        "address", "lse is stored without the head's offset: every head writes over head 0's rows"),
    Bug("scale_hardcoded", "forward",
        (("qk_scale = scale * 1.4426950408889634", "qk_scale = 0.125 * 1.4426950408889634", 1),),
        "hardcoded", "the scale written as 1/sqrt(64) instead of the scale argument"),
    Bug("stage1_max_unscaled", "forward",
        (("m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)", "m_new = tl.maximum(m, tl.max(s, axis=1))", 1),),
        "formula", "the whole blocks' max is taken from the raw scores, not the scaled ones: m and s are in different units"),
]

RIGHT = [
    Right("natural_exp",
          (("qk_scale = scale * 1.4426950408889634", "qk_scale = scale", 1),
           ("p = tl.exp2(s - m_new[:, None])", "p = tl.exp(s - m_new[:, None])", 2),
           ("alpha = tl.exp2(m - m_new)", "alpha = tl.exp(m - m_new)", 2),
           ("(m + tl.log2(l)) * 0.6931471805599453", "m + tl.log(l)", 1)),
          "the online softmax in natural exp and log: slower on a GPU, the same values"),
    Right("all_blocks_masked",
          (("    whole = (whole // BLOCK_K) * BLOCK_K\n", "    whole = 0\n", 1),),
          "no unmasked stage: every key block goes through the masked loop"),
    Right("scale_before_max",
          (("""        m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)
        s = s * qk_scale
""", """        s = s * qk_scale
        m_new = tl.maximum(m, tl.max(s, axis=1))
""", 1),),
          "the scores scaled first, then the max: the same m"),
    Right("normalize_by_reciprocal",
          (("o = acc / l[:, None]", "inv = 1.0 / l\n    o = acc * inv[:, None]", 1),),
          "the output multiplied by 1 / l instead of divided"),
]
