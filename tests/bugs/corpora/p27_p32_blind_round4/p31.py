"""Fourth blind corpus, puzzle 31 (FlashAttention forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward, written_against
from bugs.then import P31_BEFORE_FUSED_SCALE, P31_BEFORE_GQA, P31_GQA

_LSE = "(m + tl.log2(l)) * 0.6931471805599453"
_QK_SCALE = "    qk_scale = scale * 1.4426950408889634\n"
_S1_SCORES = "        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n"
_S1_LOADS = ("    for start in range(0, whole, BLOCK_K):\n"
             "        cols = start + tl.arange(0, BLOCK_K)\n"
             "        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n"
             "        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n")
_S1_UPDATE = ("        l = l * alpha + tl.sum(p, axis=1)\n"
              "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the")
_S2_UPDATE = ("        l = l * alpha + tl.sum(p, axis=1)\n"
              "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)\n"
              "        m = m_new\n")
_S2_P = "        p = tl.exp2(s - m_new[:, None])\n        alpha = tl.exp2(m - m_new)\n"
_Q_LOAD = "    q = tl.load(q_head + rows[:, None] * D + dims[None, :],\n"
_O_MASK = "             mask=(rows[:, None] < L) & (dims[None, :] < D))\n"

MEASURED = [
    Bug("alpha_inverted", "forward",
        (("alpha = tl.exp2(m - m_new)", "alpha = tl.exp2(m_new - m)", 2),),
        "formula", "the rescale factor written 2^(m_new − m) instead of 2^(m − m_new): on the first block it is 2^inf and 0 · inf is NaN; later it scales the old terms up instead of down",
        accept=("accumulate",)),
    Bug("unmasked_stage_scores_from_v", "forward",
        ((_S1_SCORES, _S1_SCORES.replace("tl.trans(k)", "tl.trans(v)"), 1),),
        "formula", "the unmasked stage scores q · vᵀ instead of q · kᵀ: the keys are never used there"),
    Bug("masked_stage_skips_its_first_block", "forward",
        (("    for start in range(whole, end, BLOCK_K):\n", "    for start in range(whole + BLOCK_K, end, BLOCK_K):\n", 1),),
        "loop", "the masked stage starts one block after whole: the first masked block (the diagonal, or the tail past the last whole block) is never visited"),
    Bug("causal_end_by_block_k", "forward",
        (("        end = tl.minimum(S, first + BLOCK_Q)\n", "        end = tl.minimum(S, first + BLOCK_K)\n", 1),),
        "loop", "the causal walk ends at first + BLOCK_K instead of first + BLOCK_Q (the last query's diagonal): where BLOCK_Q > BLOCK_K the later rows miss keys they see",
        notes="causal cases with BLOCK_Q > BLOCK_K only"),
    Bug("q_head_offset_with_s", "forward",
        (("    q_head = q_ptr + head * L * D\n", "    q_head = q_ptr + head * S * D\n", 1),),
        "address", "q's head offset taken with S (copied from the k and v lines): q has L rows per head",
        notes="shows only where L != S and there are several heads"),
    Bug("lse_store_without_head_offset", "forward",
        (("tl.store(lse_ptr + head * L + rows,", "tl.store(lse_ptr + rows,", 1),),
        "address", "lse stored at rows alone, without the head's offset head · L: every head writes the first head's lse",
        notes="shows only with several heads"),
    Bug("q_rows_block_d_apart", "forward",
        ((_Q_LOAD, "    q = tl.load(q_head + rows[:, None] * BLOCK_D + dims[None, :],\n", 1),),
        "address", "q's rows read BLOCK_D apart instead of D: where the head size is padded the rows after the first are read from the wrong place",
        notes="shows only where D is not a power of two"),
    Bug("kv_dims_unmasked_in_unmasked_stage", "forward",
        ((_S1_LOADS, _S1_LOADS.replace(", mask=dims[None, :] < D, other=0.0)", ")"), 1),),
        "mask", "the unmasked stage loads k and v without the head-dimension mask: where D < BLOCK_D the padded lanes read the next key's row, and past the last key, past the end",
        notes="the stray lanes meet q's zeros and the store's mask: the out-of-bounds read itself is the fault"),
    Bug("o_store_dims_unmasked", "forward",
        ((_O_MASK, "             mask=rows[:, None] < L)\n", 1),),
        "mask", "o stored with the row mask only: the padded head lanes (D .. BLOCK_D) write zeros into the next row's first elements, and past the end after the last row",
        notes="shows only where D is not a power of two"),
    Bug("scores_rounded_to_bf16", "forward",
        ((_S1_SCORES, "        s = (tl.dot(q, tl.trans(k)) * qk_scale).to(tl.bfloat16).to(tl.float32)\n", 1),),
        "precision", "the unmasked stage rounds the scores to bf16 before the softmax: scores near 10 are off by 0.03, the weights by 3 %",
        notes="fp32 cases with whole key blocks"),
    Bug("running_sum_rounded_to_bf16", "forward",
        ((_S2_UPDATE, _S2_UPDATE.replace("        l = l * alpha + tl.sum(p, axis=1)\n",
                                         "        l = (l * alpha + tl.sum(p, axis=1)).to(tl.bfloat16).to(tl.float32)\n"), 1),),
        "precision", "the masked stage keeps the running sum l in bf16: o = acc / l and lse are off by up to 0.4 %",
        notes="fp32 cases only"),
    Bug("block_p_as_ratio_of_exp2", "forward",
        ((_S2_P, "        p = tl.exp2(s) / tl.exp2(m_new[:, None])\n        alpha = tl.exp2(m - m_new)\n", 1),),
        "stability", "the masked stage computes p as 2^s / 2^m_new: scores far below 0 underflow both to 0 (0 / 0 = NaN), large ones overflow (inf / inf)",
        notes="shows only with scores far from 0"),
    Bug("head_dims_documented_16", "forward",
        (("    dims = tl.arange(0, BLOCK_D)\n", "    dims = tl.arange(0, 16)\n", 1),),
        "hardcoded", "the head lanes tl.arange(0, 16) (the documented D) instead of BLOCK_D: other head sizes do not fit the accumulator, or lose their last dimensions",
        notes="shows only where BLOCK_D != 16"),
    Bug("sum_rescale_on_new_block", "forward",
        ((_S1_UPDATE, _S1_UPDATE.replace("l = l * alpha + tl.sum(p, axis=1)", "l = l + tl.sum(p, axis=1) * alpha"), 1),),
        "accumulate", "the unmasked stage rescales the new block's sum instead of the running one: l = l + alpha · Σp (on the first block alpha = 0 drops it all)"),
    Bug("q_scaled_in_memory", "forward",
        ((_QK_SCALE, "    # scale q once, in memory: the walk then needs no multiply by scale\n"
                     "    q = (q * scale).to(q_ptr.dtype.element_ty)\n"
                     "    tl.store(q_head + rows[:, None] * D + dims[None, :], q, mask=(rows[:, None] < L) & (dims[None, :] < D))\n"
                     "    qk_scale = 1.4426950408889634\n", 1),),
        "inplace", "the forward stores scale · q back into q: o is (nearly) right, but the input q is changed, and a second call scales it again"),
    Bug("causal_visible_compares_with_first", "forward",
        (("visible = visible & (cols[None, :] <= rows[:, None])", "visible = visible & (cols[None, :] <= first)", 1),),
        "mask", "the causal mask compares the key with the block's first query instead of each row's: the later rows of a block do not see the keys between first and their own diagonal",
        notes="causal cases only"),
    Bug("scale_inverted", "forward",
        ((_QK_SCALE, "    qk_scale = 1.4426950408889634 / scale\n", 1),),
        "formula", "the scores multiplied by sqrt(D) (1 / scale) instead of divided by it: the softmax is far too sharp"),
]

_ONE_LOOP = '''
    for start in range(0, end, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        if start >= whole:  # only the blocks past the whole ones need a mask
            visible = cols[None, :] < S
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
'''


_TWO_STAGES = (
    '    for start in range(0, whole, BLOCK_K):\n'
    '        cols = start + tl.arange(0, BLOCK_K)\n'
    '        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n'
    '        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n'
    '        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n'
    '        m_new = tl.maximum(m, tl.max(s, axis=1))\n'
    '        p = tl.exp2(s - m_new[:, None])\n'
    '        alpha = tl.exp2(m - m_new)  # 0 at the first block (m = -inf), 1 while the max holds\n'
    '        l = l * alpha + tl.sum(p, axis=1)\n'
    "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the inputs' dtype: the tensor cores' operand\n"
    '        m = m_new\n'
    '    for start in range(whole, end, BLOCK_K):\n'
    '        cols = start + tl.arange(0, BLOCK_K)\n'
    '        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)\n'
    '        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)\n'
    '        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)\n'
    '        s = tl.dot(q, tl.trans(k)) * qk_scale\n'
    '        # a padded key scores q · 0 = 0, not -inf: left in, each would add exp2(0 - m) to the sum\n'
    '        visible = cols[None, :] < S\n'
    '        if CAUSAL:\n'
    '            visible = visible & (cols[None, :] <= rows[:, None])\n'
    '        s = tl.where(visible, s, float("-inf"))\n'
    '        # every row sees key 0 in its first block, so m is finite from there on: no -inf - -inf\n'
    '        m_new = tl.maximum(m, tl.max(s, axis=1))\n'
    '        p = tl.exp2(s - m_new[:, None])\n'
    '        alpha = tl.exp2(m - m_new)\n'
    '        l = l * alpha + tl.sum(p, axis=1)\n'
    '        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)\n'
    '        m = m_new\n'
    '\n'
)


RIGHT = [
    Right("lse_as_m_ln2_plus_log_l",
          ((_LSE, "m * 0.6931471805599453 + tl.log(l)", 1),),
          "lse = m · ln 2 + ln l: the base-2 max converted alone, the sum's log taken in the natural base"),
    Right("key_pointers_advanced_per_block",
          ((_S1_LOADS, "    k_ptrs = k_head + tl.arange(0, BLOCK_K)[:, None] * D + dims[None, :]\n"
                       "    v_ptrs = v_head + tl.arange(0, BLOCK_K)[:, None] * D + dims[None, :]\n"
                       "    for start in range(0, whole, BLOCK_K):\n"
                       "        k = tl.load(k_ptrs, mask=dims[None, :] < D, other=0.0)\n"
                       "        v = tl.load(v_ptrs, mask=dims[None, :] < D, other=0.0)\n"
                       "        k_ptrs += BLOCK_K * D\n"
                       "        v_ptrs += BLOCK_K * D\n", 1),),
          "the unmasked stage keeps k and v block pointers and advances them BLOCK_K rows a step"),
    Right("one_loop_masked_past_whole", ((_TWO_STAGES, _ONE_LOOP.lstrip("\n") + "\n", 1),),
          "one walk over every key block up to end, the mask applied (a runtime if) only to blocks past the whole ones"),
    Right("output_kept_normalised",
          (("        l = l * alpha + tl.sum(p, axis=1)\n",
            "        l_new = l * alpha + tl.sum(p, axis=1)\n        keep = l * alpha / l_new\n        l = l_new\n", 2),
           ("acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)",
            "acc = acc * keep[:, None] + tl.dot(p.to(v.dtype), v) / l[:, None]", 2),
           ("    o = acc / l[:, None]\n", "    o = acc\n", 1)),
          "the running output kept normalised at every block (acc = acc · l_old α / l_new + P V / l_new): no division at the end"),
    Right("max_taken_on_unscaled_scores",
          (("        s = tl.dot(q, tl.trans(k)) * qk_scale", "        s = tl.dot(q, tl.trans(k))", 2),
           ("p = tl.exp2(s - m_new[:, None])", "p = tl.exp2((s - m_new[:, None]) * qk_scale)", 2),
           ("alpha = tl.exp2(m - m_new)", "alpha = tl.exp2((m - m_new) * qk_scale)", 2),
           (_LSE, "(m * qk_scale + tl.log2(l)) * 0.6931471805599453", 1)),
          "the running max kept on the raw scores q · kᵀ (the scale > 0 commutes with the max), the scale applied inside each exp2"),
]

# written against the solution before its scores were scaled once each (tests/bugs/then.py)
MEASURED = written_against(P31_BEFORE_FUSED_SCALE, MEASURED)
RIGHT = written_against(P31_BEFORE_FUSED_SCALE, RIGHT)

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P31_BEFORE_GQA, MEASURED, P31_GQA)
RIGHT = carried_forward(P31_BEFORE_GQA, RIGHT, P31_GQA)
