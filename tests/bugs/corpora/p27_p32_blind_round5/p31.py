"""Fifth blind corpus, puzzle 31 (FlashAttention forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward, written_against
from bugs.then import P31_BEFORE_FUSED_SCALE, P31_BEFORE_GQA, P31_GQA

_S1_LOOP = "    for start in range(0, whole, BLOCK_K):\n"
_S1_V = "        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n"
_S1_K = "        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n"
_S1_SCORES = "        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n"
_S1_L = ("        l = l * alpha + tl.sum(p, axis=1)\n"
         "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the")
_S2_SCORES = "        s = tl.dot(q, tl.trans(k)) * qk_scale\n        # a padded key"
_S2_COLS = "        cols = start + tl.arange(0, BLOCK_K)\n        kv_mask"
_CAUSAL = "            visible = visible & (cols[None, :] <= rows[:, None])\n"
_LSE_STORE = "tl.store(lse_ptr + head * L + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < L)"
_Q_LOAD = "                mask=(rows[:, None] < L) & (dims[None, :] < D), other=0.0)\n"
_M_NEW = "m_new = tl.maximum(m, tl.max(s, axis=1))"

MEASURED = [
    Bug("masked_stage_scale_without_log2e", "forward",
        ((_S2_SCORES, _S2_SCORES.replace("* qk_scale", "* scale"), 1),),
        "formula", "the masked stage scales its scores by scale alone (log2 e left out) while the unmasked stage and exp2 use base-2 units: the tail and diagonal blocks are weighted in the wrong base"),
    Bug("scores_as_k_q_transposed", "forward",
        ((_S1_SCORES, "        s = tl.dot(k, tl.trans(q)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n", 1),),
        "formula", "the unmasked stage's scores written k · qᵀ: a [keys, queries] tile used as [queries, keys], each score in another row's place (and no shape fits when BLOCK_Q != BLOCK_K)"),
    Bug("row_sum_over_query_axis", "forward",
        ((_S1_L, _S1_L.replace("tl.sum(p, axis=1)", "tl.sum(p, axis=0)"), 1),),
        "formula", "the unmasked stage's running sum adds tl.sum(p, axis=0), a sum over the queries per key, where each query's own row sum (axis 1) belongs",
        accept=("accumulate",)),
    Bug("alpha_scaled_again", "forward",
        (("alpha = tl.exp2(m - m_new)", "alpha = tl.exp2((m - m_new) * qk_scale)", 2),),
        "formula", "the rescale factor 2^((m − m_new) · qk_scale): m is already in scaled base-2 units, so the old terms are rescaled by the wrong factor whenever the max grows",
        accept=("accumulate",)),
    Bug("unmasked_stage_starts_at_block_k", "forward",
        ((_S1_LOOP, "    for start in range(BLOCK_K, whole, BLOCK_K):\n", 1),),
        "loop", "the unmasked stage starts at BLOCK_K: keys 0 .. BLOCK_K − 1 never enter a row that sees them whole"),
    Bug("unmasked_stage_drops_last_whole_block", "forward",
        ((_S1_LOOP, "    for start in range(0, whole - BLOCK_K, BLOCK_K):\n", 1),),
        "loop", "the unmasked stage runs range(0, whole − BLOCK_K): its last whole key block is never visited"),
    Bug("whole_rounded_to_block_q", "forward",
        (("    whole = (whole // BLOCK_K) * BLOCK_K\n", "    whole = (whole // BLOCK_Q) * BLOCK_Q\n", 1),),
        "loop", "the unmasked stage's end rounded down to a multiple of BLOCK_Q instead of BLOCK_K: where BLOCK_K > BLOCK_Q a key block that crosses the diagonal runs unmasked",
        notes="causal, BLOCK_K > BLOCK_Q only"),
    Bug("v_rows_at_query_indices", "forward",
        ((_S1_V, "        v = tl.load(v_head + rows[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)\n", 1),),
        "address", "the unmasked stage loads v at the query rows (rows) instead of the key block's (cols): every key block averages the same values"),
    Bug("masked_stage_columns_from_whole", "forward",
        ((_S2_COLS, "        cols = whole + tl.arange(0, BLOCK_K)\n        kv_mask", 1),),
        "address", "the masked stage's columns computed from whole, not from the loop's start: every masked step reads (and masks) the first masked block again",
        accept=("loop",), notes="shows where the masked stage has more than one block"),
    Bug("q_dims_unmasked", "forward",
        ((_Q_LOAD, "                mask=rows[:, None] < L, other=0.0)\n", 1),),
        "mask", "q loaded with the row mask only: where D < BLOCK_D the padded lanes read the next row's q, and the last row of the last head reads past the end",
        notes="the padded lanes multiply k's zeros: the out-of-bounds read itself is the fault"),
    Bug("causal_mask_transposed_tile", "forward",
        ((_CAUSAL, "            visible = visible & (cols[:, None] <= rows[None, :])\n", 1),),
        "mask", "the causal mask built as a [keys, queries] tile (cols[:, None] <= rows[None, :]) on [queries, keys] scores: the upper triangle kept, the lower hidden"),
    Bug("lse_store_mask_against_s", "forward",
        ((_LSE_STORE, _LSE_STORE.replace("mask=rows < L)", "mask=rows < S)"), 1),),
        "mask", "lse stored under rows < S (the key count) instead of rows < L: with L > S the last rows' lse is never written, with L < S padded rows write into the next head's lse"),
    Bug("o_rounded_to_bf16", "forward",
        (("    o = acc / l[:, None]\n", "    o = (acc / l[:, None]).to(tl.bfloat16)\n", 1),),
        "precision", "o rounded to bf16 before the store whatever o's dtype: an fp32 o keeps 8 bits",
        notes="fp32 cases only"),
    Bug("max_on_raw_scores", "forward",
        ((_M_NEW, "m_new = tl.maximum(m, tl.max(s / qk_scale, axis=1))", 2),),
        "stability", "the running max taken on the raw scores q · kᵀ (s / qk_scale) while p = 2^(s − m) uses the scaled ones: the shift is in other units, and for very negative scores 2^(s − m) overflows",
        notes="shows on the far-below-zero scores"),
    Bug("causal_end_documented_16", "forward",
        (("        end = tl.minimum(S, first + BLOCK_Q)\n", "        end = tl.minimum(S, first + 16)\n", 1),),
        "hardcoded", "the causal walk ends at first + 16 (the documented BLOCK_Q) instead of first + BLOCK_Q: with BLOCK_Q = 32 the later rows of a block miss keys they see",
        notes="causal cases with BLOCK_Q > 16 only"),
    Bug("acc_rescaled_along_columns", "forward",
        (("acc = acc * alpha[:, None]", "acc = acc * alpha[None, :]", 2),),
        "accumulate", "the running output rescaled by alpha[None, :]: each head dimension scaled by one row's factor instead of each row by its own (and no shape fits when BLOCK_D != BLOCK_Q)",
        accept=("formula",)),
    Bug("k_scaled_in_place", "forward",
        ((_S1_K, _S1_K + "        k = k * scale  # fold the scale into the keys once\n"
                        "        tl.store(k_head + cols[:, None] * D + dims[None, :], k, mask=dims[None, :] < D)\n", 1),
         (_S1_SCORES, "        s = tl.dot(q, tl.trans(k)) * 1.4426950408889634  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n", 1)),
        "inplace", "the unmasked stage folds the scale into k and stores k · scale back into k: the input is changed, and every other query block (and the masked stage) then reads rescaled keys"),
]

_MERGED_BLOCKS = '''    for start in range(0, whole, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        # the block's own softmax first (every key of these blocks is visible: its max is finite)
        m_b = tl.max(s, axis=1)
        p = tl.exp2(s - m_b[:, None])
        l_b = tl.sum(p, axis=1)
        acc_b = tl.dot(p.to(v.dtype), v)
        # then merged into the running state, each side brought to the common max
        m_new = tl.maximum(m, m_b)
        a_old = tl.exp2(m - m_new)
        a_blk = tl.exp2(m_b - m_new)
        l = l * a_old + l_b * a_blk
        acc = acc * a_old[:, None] + acc_b * a_blk[:, None]
        m = m_new
'''
_S1_REF = '''    for start in range(0, whole, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)  # 0 at the first block (m = -inf), 1 while the max holds
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)  # P in the inputs' dtype: the tensor cores' operand
        m = m_new
'''
_TWO_BLOCKS_A_STEP = '''    for start in range(0, whole, 2 * BLOCK_K):
        for j in tl.static_range(2):
            if start + j * BLOCK_K < whole:
                cols = start + j * BLOCK_K + tl.arange(0, BLOCK_K)
                k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
                v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
                s = tl.dot(q, tl.trans(k)) * qk_scale
                m_new = tl.maximum(m, tl.max(s, axis=1))
                p = tl.exp2(s - m_new[:, None])
                alpha = tl.exp2(m - m_new)
                l = l * alpha + tl.sum(p, axis=1)
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
                m = m_new
'''
_S2_LOADS = ('''        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
''')
_S2_CLAMPED = ('''        keys = tl.minimum(cols, S - 1)  # padded keys read key S - 1 again; the visible mask drops them
        k = tl.load(k_head + keys[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
        v = tl.load(v_head + keys[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
''')

RIGHT = [
    Right("unmasked_blocks_merged", ((_S1_REF, _MERGED_BLOCKS, 1),),
          "each unmasked key block's own softmax (max, sum, P·V) computed first, then merged into the running state"),
    Right("pv_product_in_fp32",
          (("tl.dot(p.to(v.dtype), v)", "tl.dot(p, v.to(tl.float32))", 2),),
          "P · V taken in fp32 (v widened) instead of rounding P to the inputs' dtype"),
    Right("running_stats_as_columns",
          (("    m = tl.full([BLOCK_Q], float(\"-inf\"), dtype=tl.float32)\n    l = tl.zeros([BLOCK_Q], dtype=tl.float32)\n",
            "    m = tl.full([BLOCK_Q, 1], float(\"-inf\"), dtype=tl.float32)\n    l = tl.zeros([BLOCK_Q, 1], dtype=tl.float32)\n", 1),
           (_M_NEW, "m_new = tl.maximum(m, tl.max(s, axis=1, keep_dims=True))", 2),
           ("p = tl.exp2(s - m_new[:, None])", "p = tl.exp2(s - m_new)", 2),
           ("l = l * alpha + tl.sum(p, axis=1)", "l = l * alpha + tl.sum(p, axis=1, keep_dims=True)", 2),
           ("acc = acc * alpha[:, None]", "acc = acc * alpha", 2),
           ("    o = acc / l[:, None]\n", "    o = acc / l\n", 1),
           ("(m + tl.log2(l)) * 0.6931471805599453", "tl.sum(m + tl.log2(l), axis=1) * 0.6931471805599453", 1)),
          "m and l kept as [BLOCK_Q, 1] columns (keep_dims), broadcast without [:, None]"),
    Right("unmasked_two_blocks_a_step", ((_S1_REF, _TWO_BLOCKS_A_STEP, 1),),
          "the unmasked stage takes two key blocks per step, the second guarded by a runtime if"),
    Right("masked_keys_clamped", ((_S2_LOADS, _S2_CLAMPED, 1),),
          "the masked stage clamps padded key indices to S − 1 instead of masking the loads; the visible mask drops them"),
]

# written against the solution before its scores were scaled once each (tests/bugs/then.py)
MEASURED = written_against(P31_BEFORE_FUSED_SCALE, MEASURED)
RIGHT = written_against(P31_BEFORE_FUSED_SCALE, RIGHT)

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P31_BEFORE_GQA, MEASURED, P31_GQA)
RIGHT = carried_forward(P31_BEFORE_GQA, RIGHT, P31_GQA)
