"""Third blind corpus, puzzle 31 (FlashAttention forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward, written_against
from bugs.then import P31_BEFORE_FUSED_SCALE, P31_BEFORE_GQA, P31_GQA

_LSE = "(m + tl.log2(l)) * 0.6931471805599453"
_WALK_BOUNDS = "    whole = S\n    end = S\n"
_MASKED_UPDATE = ("        m_new = tl.maximum(m, tl.max(s, axis=1))\n"
                  "        p = tl.exp2(s - m_new[:, None])\n"
                  "        alpha = tl.exp2(m - m_new)\n"
                  "        l = l * alpha + tl.sum(p, axis=1)\n"
                  "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)\n"
                  "        m = m_new\n")
_STAGE1 = (
    "    for start in range(0, whole, BLOCK_K):\n"
    "        cols = start + tl.arange(0, BLOCK_K)\n"
    "        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n"
    "        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n"
    "        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n"
    "        m_new = tl.maximum(m, tl.max(s, axis=1))\n"
    "        p = tl.exp2(s - m_new[:, None])\n"
    "        alpha = tl.exp2(m - m_new)  # 0 at the first block (m = -inf), 1 while the max holds\n"
    "        l = l * alpha + tl.sum(p, axis=1)\n"
    "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the inputs' dtype: the tensor cores' operand\n"
    "        m = m_new\n")
_STAGE2 = (
    "    for start in range(whole, end, BLOCK_K):\n"
    "        cols = start + tl.arange(0, BLOCK_K)\n"
    "        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)\n"
    "        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)\n"
    "        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)\n"
    "        s = tl.dot(q, tl.trans(k)) * qk_scale\n"
    "        # a padded key scores q · 0 = 0, not -inf: left in, each would add exp2(0 - m) to the sum\n"
    "        visible = cols[None, :] < S\n"
    "        if CAUSAL:\n"
    "            visible = visible & (cols[None, :] <= rows[:, None])\n"
    "        s = tl.where(visible, s, float(\"-inf\"))\n"
    "        # every row sees key 0 in its first block, so m is finite from there on: no -inf - -inf\n"
    + _MASKED_UPDATE)

MEASURED = [
    Bug("rescale_applied_after_adding", "forward",
        (("        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the",
          "        acc = (acc + tl.dot(p.to(v.dtype), v)) * alpha[:, None]  # P in the", 1),),
        "accumulate", "the unmasked stage rescales acc after adding the new block: the new block is scaled too, and on the first block (alpha = 0) it is erased"),
    Bug("scale_applied_twice", "forward",
        (("    qk_scale = scale * 1.4426950408889634\n", "    q = q * scale\n    qk_scale = scale * 1.4426950408889634\n", 1),),
        "formula", "q multiplied by scale once before the walk and the scores by scale again: the softmax sees scale² · q kᵀ"),
    Bug("scale_as_one_over_d", "forward",
        (("qk_scale = scale * 1.4426950408889634", "qk_scale = (1.0 / D) * 1.4426950408889634", 1),),
        "formula", "the kernel recomputes the scale as 1 / D instead of using scale = 1 / sqrt(D): the scores are too small and the softmax too flat"),
    Bug("causal_mask_or_instead_of_and", "forward",
        (("visible = visible & (cols[None, :] <= rows[:, None])", "visible = visible | (cols[None, :] <= rows[:, None])", 1),),
        "mask", "the causal condition joined to the key-range mask with | instead of &: inside S every key is visible, the future is not hidden",
        notes='causal cases only'),
    Bug("o_store_rows_unmasked", "forward",
        (("    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o,\n             mask=(rows[:, None] < L) & (dims[None, :] < D))\n",
          "    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o,\n             mask=dims[None, :] < D)\n", 1),),
        "mask", "o stored with the head-dimension mask only: the padded query rows of the last block write past the head's L rows",
        notes='shows only where L is not a multiple of BLOCK_Q'),
    Bug("lse_log2_of_l_not_converted", "forward",
        ((_LSE, "m * 0.6931471805599453 + tl.log2(l)", 1),),
        "formula", "lse = m · ln 2 + log2(l): the base-2 max converted back to the natural log but the sum's log2 left in base 2"),
    Bug("lse_heads_s_apart", "forward",
        (("tl.store(lse_ptr + head * L + rows,", "tl.store(lse_ptr + head * S + rows,", 1),),
        "address", "lse's head offset taken with S (the key count): lse has L entries per head",
        notes='shows only where L != S and there are several heads'),
    Bug("query_block_start_by_block_k", "forward",
        (("    first = tl.program_id(0) * BLOCK_Q\n", "    first = tl.program_id(0) * BLOCK_K\n", 1),),
        "address", "the program's first query computed with BLOCK_K (the key block) instead of BLOCK_Q: query blocks overlap or leave gaps",
        notes='shows only where BLOCK_Q != BLOCK_K'),
    Bug("walk_end_as_last_key_index", "forward",
        ((_WALK_BOUNDS, "    whole = S\n    end = S - 1\n", 1),),
        "loop", "the non-causal walk ends at S − 1 (the last key's index, used as a bound): where the last key starts a block of its own it is never visited",
        notes='shows only non-causal, where S − 1 is a multiple of BLOCK_K'),
    Bug("alpha_as_ratio_of_exp2", "forward",
        (("alpha = tl.exp2(m - m_new)", "alpha = tl.exp2(m) / tl.exp2(m_new)", 2),),
        "stability", "the rescale factor written 2^m / 2^m_new instead of 2^(m − m_new): very negative scores underflow both to 0 (0 / 0), large ones overflow",
        notes='shows only with scores far from 0'),
    Bug("lse_rounded_to_input_dtype", "forward",
        ((_LSE + ", mask=rows < L)", "(" + _LSE + ").to(q_ptr.dtype.element_ty), mask=rows < L)", 1),),
        "precision", "lse rounded to q's dtype before it is stored in the fp32 buffer: in bf16 it keeps 8 bits, the backward's P is off by its rounding",
        notes='bf16 cases only'),
    Bug("o_written_over_q", "forward",
        (("tl.store(o_ptr + head * L * D +", "tl.store(q_ptr + head * L * D +", 1),),
        "inplace", "o stored into q's buffer (q is read already, so it seemed free): an input overwritten, o never written",
        accept=("address",)),
    Bug("key_walk_to_documented_40", "forward",
        ((_WALK_BOUNDS, "    whole = 40\n    end = 40\n", 1),),
        "hardcoded", "the non-causal walk's bounds written as 40, the documented S, instead of the argument",
        notes='non-causal cases with S != 40'),
    Bug("row_max_over_wrong_axis", "forward",
        ((_MASKED_UPDATE, _MASKED_UPDATE.replace("tl.max(s, axis=1)", "tl.max(s, axis=0)"), 1),),
        "formula", "the masked stage takes the max over axis 0 (over the queries, per key) instead of axis 1: each row is shifted by another row's maximum",
        notes='wrong values where BLOCK_Q == BLOCK_K, a shape error otherwise'),
    Bug("kv_loads_without_key_mask", "forward",
        (("        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)\n", "        kv_mask = dims[None, :] < D\n", 1),),
        "mask", "the masked stage loads k and v with the head-dimension mask only: past S they read the next head's rows or past the tensor",
        notes='the scores of those keys are set to -inf: the values are right, the out-of-bounds read at the last head is the fault'),
    Bug("max_updated_before_alpha", "forward",
        ((_MASKED_UPDATE,
          "        m_new = tl.maximum(m, tl.max(s, axis=1))\n"
          "        m = m_new\n"
          "        p = tl.exp2(s - m[:, None])\n"
          "        alpha = tl.exp2(m - m_new)\n"
          "        l = l * alpha + tl.sum(p, axis=1)\n"
          "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)\n", 1),),
        "accumulate", "the masked stage sets m = m_new before computing alpha, so alpha is always 1: l and acc are not rescaled when a masked block raises the max"),
    Bug("lse_converted_with_log2e", "forward",
        ((_LSE, "(m + tl.log2(l)) * 1.4426950408889634", 1),),
        "formula", "lse brought back from base 2 by multiplying with log2(e) instead of ln 2: the logsumexp comes out about twice too large"),
]

RIGHT = [
    Right("pv_product_in_fp32",
          (("tl.dot(p.to(v.dtype), v)", "tl.dot(p, v.to(tl.float32))", 2),),
          "P · V taken in fp32 (v widened) instead of rounding P to the inputs' dtype"),
    Right("int64_head_index",
          (("    head = tl.program_id(1)\n", "    head = tl.program_id(1).to(tl.int64)\n", 1),),
          "the head index widened to int64, so the head offsets are computed in 64 bits"),
    Right("scale_folded_into_k",
          (("        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n",
            "        s = tl.dot(q.to(tl.float32), tl.trans(k.to(tl.float32) * qk_scale))\n", 1),
           ("        s = tl.dot(q, tl.trans(k)) * qk_scale\n",
            "        s = tl.dot(q.to(tl.float32), tl.trans(k.to(tl.float32) * qk_scale))\n", 1)),
          "scale · log2(e) applied to each key block in fp32 before the product instead of to the scores"),
    Right("dot_accumulates_into_rescaled_acc",
          (("acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)", "acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])", 2),),
          "the rescaled acc passed to tl.dot as its accumulator instead of added after"),
    Right("alpha_only_when_max_grows",
          (("alpha = tl.exp2(m - m_new)", "alpha = tl.where(m_new > m, tl.exp2(m - m_new), 1.0)", 2),),
          "the rescale factor computed only where the max grew (1 elsewhere)"),
    Right("masked_blocks_walked_first",
          ((_STAGE1 + _STAGE2, _STAGE2 + _STAGE1, 1),),
          "the masked stage (tail and diagonal blocks) walked before the unmasked one: the online softmax does not depend on the order"),
]

# written against the solution before its scores were scaled once each (tests/bugs/then.py)
MEASURED = written_against(P31_BEFORE_FUSED_SCALE, MEASURED)
RIGHT = written_against(P31_BEFORE_FUSED_SCALE, RIGHT)

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P31_BEFORE_GQA, MEASURED, P31_GQA)
RIGHT = carried_forward(P31_BEFORE_GQA, RIGHT, P31_GQA)
