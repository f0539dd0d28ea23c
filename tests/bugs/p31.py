"""Every known kernel of puzzle 31 (FlashAttention forward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the mutants no check can catch (EQUIVALENT,
SAME_BUG). What each list means: tests/bugs/__init__.py."""
from pathlib import Path

from bugs.reasons import RESCALE_DROPPED
from bugs import Bug, Kernel, Right, carried_forward, written_against
from bugs.then import P31_BEFORE_FUSED_SCALE, P31_BEFORE_GQA, P31_GQA
from bugs.reasons import ZERO_PARTNER

P = "        p = tl.exp2(s - m_new[:, None])\n"
ALPHA = "        alpha = tl.exp2(m - m_new)"
ACC = "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)"
LSE = "(m + tl.log2(l)) * 0.6931471805599453"
O_STORE = """    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o,
             mask=(rows[:, None] < L) & (dims[None, :] < D))"""
Q_LOAD = "mask=(rows[:, None] < L) & (dims[None, :] < D), other=0.0)"
CAUSAL_MASK = "        if CAUSAL:\n            visible = visible & (cols[None, :] <= rows[:, None])\n"

PINNED = [
    # grouped-query attention: k and v read at the query head's index, as if every query head had its own
    Bug("key_head_not_shared", "forward",
        (("k_ptr + (head // GROUP) * S * D", "k_ptr + head * S * D", 1),
         ("v_ptr + (head // GROUP) * S * D", "v_ptr + head * S * D", 1)),
        cause="address",
        reasons=(("programs per step",),), not_causes=("mask",),
        notes="fails the grouped-query cases only, out of bounds: the report counts the programs sharing each head", code='fault.oob'),
    Bug("scale_missing", "forward",
        (("qk_scale = scale * 1.4426950408889634", "qk_scale = 1.4426950408889634", 1),),
        cause="formula",
        reasons=(("without the scale",),), not_causes=("atomic", "mask"),
        notes="softmax(q kᵀ): a softmax √D times too sharp", code='variant.unscaled'),
    Bug("exp_of_base2_scores", "forward",
        ((P, P.replace("tl.exp2", "tl.exp"), 2), (ALPHA, ALPHA.replace("tl.exp2", "tl.exp"), 2)),
        cause="formula",
        reasons=(("1.44 times too sharp",),), not_causes=("atomic", "mask"),
        notes="tl.exp of scores already scaled by log2(e) for tl.exp2", code='variant.exp_of_base2'),
    Bug("causal_mask_forgotten", "forward",
        ((CAUSAL_MASK, "", 1),),
        cause="mask", named="candidates",
        reasons=(("only the causal cases fail",),), not_causes=("atomic",),
        notes="the blocks past the diagonal are still skipped, so the result is neither mask's attention"),
    Bug("diagonal_blocks_unmasked", "forward",
        (("        whole = tl.minimum(S, first + 1)\n", "        whole = tl.minimum(S, first + BLOCK_Q)\n", 1),),
        cause="mask", named="candidates",
        reasons=(("only the causal cases fail",),), not_causes=("atomic",),
        notes="the blocks across the diagonal run in the unmasked loop: each query sees the keys after it there"),
    Bug("padded_keys_in_the_softmax", "forward",
        (("        visible = cols[None, :] < S\n", "        visible = cols[None, :] >= 0\n", 1),),
        cause="mask", named="candidates",
        reasons=(("padded keys of the last key block",),), not_causes=("atomic",),
        notes="k past S loads 0, scores 0 and adds exp(0 - m) to the sum", code='variant.padded_keys'),
    Bug("acc_not_rescaled", "forward",
        ((ACC, "        acc = acc + tl.dot(p.to(v.dtype), v)", 2),),
        cause="accumulate",
        reasons=(("running output that is not rescaled",),), not_causes=("atomic", "mask"), code='variant.acc_not_rescaled'),
    Bug("running_max_per_block", "forward",
        (("        m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)\n", "        m_new = tl.max(s, axis=1) * qk_scale\n", 1),),
        cause="accumulate", named="candidates",
        not_causes=("atomic", "mask"),
        notes="each whole key block's own max instead of the max kept from block to block: exact while the "
              "blocks' maxima stay within 88 of each other, overflows where the first key block scores 200 "
              "above the rest", code='values.nonfinite'),
    Bug("lse_in_base_2", "forward",
        ((LSE, "m + tl.log2(l)", 1),),
        cause="formula",
        reasons=(("logsumexp in base 2",),), not_causes=("atomic", "mask"), code='variant.lse_base2'),
    Bug("lse_without_the_max", "forward",
        ((LSE, "tl.log2(l) * 0.6931471805599453", 1),),
        cause="formula",
        reasons=(("lse matches log(l) alone",),), not_causes=("atomic", "mask"), code='variant.lse_without_max'),
    Bug("o_stored_without_row_mask", "forward",
        ((O_STORE, O_STORE.replace("mask=(rows[:, None] < L) & (dims[None, :] < D)", "mask=dims[None, :] < D"), 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),), not_causes=("atomic",),
        notes="the last query block's padded rows write past the head: into the next head, or past o", code='fault.oob'),
    Bug("q_loaded_without_row_mask", "forward",
        ((Q_LOAD, "mask=dims[None, :] < D, other=0.0)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),), not_causes=("atomic",),
        gpu_blind=True, notes="the padded rows read past q; on a GPU what they read lands in rows no store writes", code='fault.oob'),
]

_TEXT = (Path(__file__).resolve().parents[2] / "solutions" / "p31_flash_attention_forward.py").read_text(encoding="utf-8")
TWO_STAGES = _TEXT[_TEXT.index("    whole = S\n"):_TEXT.index("    o = acc / l[:, None]\n")]
ONE_MASKED_LOOP = """    end = S
    if CAUSAL:
        end = tl.minimum(S, first + BLOCK_Q)
    for start in range(0, end, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
        k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        visible = (cols[None, :] < S) & ((cols[None, :] <= rows[:, None]) | (not CAUSAL))
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new

"""

PASSING = [
    Right("one_masked_loop", ((TWO_STAGES, ONE_MASKED_LOOP, 1),),
                notes="every key block masked, no unmasked first stage: slower, same values"),
    Right("natural_exp", (("qk_scale = scale * 1.4426950408889634", "qk_scale = scale", 1),
                                (P, P.replace("tl.exp2", "tl.exp"), 2), (ALPHA, ALPHA.replace("tl.exp2", "tl.exp"), 2),
                                (LSE, "m + tl.log(l)", 1)),
                notes="tl.exp on unscaled scores, and lse = m + log l in the natural log throughout"),
    Right("normalised_at_each_block", ((ACC, "        acc = (acc * (l_old * alpha)[:, None] + "
                                                   "tl.dot(p.to(v.dtype), v)) / l[:, None]", 2),
                                             ("        l = l * alpha + tl.sum(p, axis=1)\n",
                                              "        l_old = l\n        l = l * alpha + tl.sum(p, axis=1)\n", 2),
                                             ("    o = acc / l[:, None]\n", "    o = acc\n", 1)),
                notes="acc kept as the normalised output so far (FlashAttention-1's order): one division per block"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:attn_fwd_kernel:d3b1fdcc:0": ZERO_PARTNER,
    "fill.other:attn_fwd_kernel:54f0d24e:0": ZERO_PARTNER,
    "fill.other:attn_fwd_kernel:ab7b19fe:0": ZERO_PARTNER,
    "fill.other:attn_fwd_kernel:9083a13a:0": "a padded key's score is set to -inf by the tl.where whatever k "
                                             "holds, and its padded head lanes meet q's padded 0",
    "fill.other:attn_fwd_kernel:c2d8d6b0:0": "a padded key's weight is exp2(-inf) = 0, which multiplies what v "
                                             "holds; its padded head lanes end in columns no store writes",
    # alpha = exp2(m - m_new) = exp2(-inf) = 0 at the first key block: what l and acc start as is lost
    "fill.start:attn_fwd_kernel:8f796bea:0": "l is multiplied by exp2(-inf - m_new) = 0 at the first key block",
    "fill.start:attn_fwd_kernel:810f961d:0": "acc is multiplied by exp2(-inf - m_new) = 0 at the first key block",
    "address.offset:attn_fwd_kernel:74485521:0": "first is a multiple of BLOCK_Q and the blocks are powers of two "
                                                 ">= 16 (tl.dot's minimum): no multiple of BLOCK_K lies between "
                                                 "first + 1 and first + 2, so whole is unchanged",
    "address.offset:attn_fwd_kernel:98568e77:0": "the one more key, first + BLOCK_Q, comes after every query of "
                                                 "the block: the causal tl.where hides it (a block of it alone "
                                                 "adds exp2(-inf) = 0 and leaves the max)",
}

# also a bug of a second class: the hint that names that class is right, not misleading (listed only
# where the two are the same bug, seen from two sides: never to excuse a hint)
SAME_BUG = {
    "formula.drop:attn_fwd_kernel:512551d4:0": ("accumulate", RESCALE_DROPPED),
    "formula.drop:attn_fwd_kernel:a2b0078d:0": ("accumulate", RESCALE_DROPPED),
    "formula.drop:attn_fwd_kernel:512551d4:1": ("accumulate", RESCALE_DROPPED),
    "formula.drop:attn_fwd_kernel:a2b0078d:1": ("accumulate", RESCALE_DROPPED),
    # padded keys scored 0 instead of -inf: the key mask does not switch them off, whether the tl.where
    # is missing (a mask) or fills 0 (a fill); the two give the same numbers, and the variant's hint says so
    "fill.where:attn_fwd_kernel:ded71b7b:0": ("mask", "tl.where(visible, s, 0.0) leaves the padded keys in the "
                                                      "softmax with score 0: the key mask does not switch them off"),
    # the unmasked stage's max without its scale: any shift gives the same softmax and lse (they cancel), so
    # what breaks is only what the max is there for, keeping exp2 in range: a stability bug, as the blind
    # corpora's writers classed the same mistake (round 5 max_on_raw_scores, first blind no_running_max)
    "formula.drop:attn_fwd_kernel:971925d9:0": ("stability", "the running max of the raw scores is in other units "
                                                             "than s · qk_scale: not the row's max, so far-below-zero "
                                                             "scores underflow exp2"),
    "formula.drop:attn_fwd_kernel:23ce47e4:0": ("stability", "the running max becomes max(m, qk_scale), a constant: "
                                                             "no max at all, so far-below-zero scores underflow exp2"),
}

# MEASURED and RIGHT: the first blind corpus, bugs and correct rewrites written from the solution, the
# page and the notebook alone, by someone who had not read the hint code; scored untouched on the
# checker it was written against before any hint was tuned to it (tests/bugs/measure.py).
_BLIND_ACC = "acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)"
_BLIND_L_UPD = "l = l * alpha + tl.sum(p, axis=1)"
_BLIND_M_SET = "        m = m_new\n"
_BLIND_QK_SCALE = "qk_scale = scale * 1.4426950408889634"
_BLIND_LSE_STORE = "tl.store(lse_ptr + head * L + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < L)"
_BLIND_CAUSAL_CMP = "visible = visible & (cols[None, :] <= rows[:, None])"
_BLIND_WHERE = 's = tl.where(visible, s, float("-inf"))'
_BLIND_MASKS = ('        visible = cols[None, :] < S\n'
         '        if CAUSAL:\n'
         '            visible = visible & (cols[None, :] <= rows[:, None])\n'
         '        s = tl.where(visible, s, float("-inf"))\n')
_BLIND_CAUSAL_BOUNDS = ("        whole = tl.minimum(S, first + 1)\n"
                 "        end = tl.minimum(S, first + BLOCK_Q)\n")
_BLIND_M_INIT = 'm = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)'
_BLIND_M_NEW = "m_new = tl.maximum(m, tl.max(s, axis=1))"

MEASURED = [
    Bug("output_not_rescaled", "forward",
        ((_BLIND_ACC, "acc = acc + tl.dot(p.to(v.dtype), v)", 2),),
        "accumulate", "the running output not rescaled by alpha when the max grows"),
    Bug("sum_not_rescaled", "forward",
        ((_BLIND_L_UPD, "l = l + tl.sum(p, axis=1)", 2),),
        "accumulate", "the running sum l not rescaled by alpha when the max grows"),
    Bug("running_max_not_updated", "forward",
        ((_BLIND_M_SET, "", 2),),
        "accumulate", "m = m_new forgotten: every block rescales the past by exp2(-inf) = 0, lse is -inf"),
    Bug("output_overwritten_per_block", "forward",
        ((_BLIND_ACC, "acc = tl.dot(p.to(v.dtype), v)", 2),),
        "accumulate", "acc overwritten by each key block's product: only the last block's values count"),
    Bug("scale_forgotten", "forward",
        ((_BLIND_QK_SCALE, "qk_scale = 1.4426950408889634", 1),),
        "formula", "the scores not multiplied by scale = 1/sqrt(D)"),
    Bug("exp_of_base2_scores", "forward",
        (("tl.exp2(", "tl.exp(", 4),),
        "formula", "tl.exp of scores already in base 2: a softmax 1.44 times too sharp"),
    Bug("lse_in_the_wrong_base", "forward",
        ((_BLIND_LSE_STORE, _BLIND_LSE_STORE.replace("(m + tl.log2(l)) * 0.6931471805599453", "m + tl.log(l)"), 1),),
        "formula", "lse = m + ln l with m in base-2 units: the base-2 max not brought back to the natural log"),
    Bug("lse_without_the_max", "forward",
        ((_BLIND_LSE_STORE, _BLIND_LSE_STORE.replace("(m + tl.log2(l))", "tl.log2(l)"), 1),),
        "formula", "lse = log l: the running max left out"),
    Bug("output_not_normalised", "forward",
        (("o = acc / l[:, None]", "o = acc", 1),),
        "formula", "o = acc: the output never divided by the softmax's sum l"),
    Bug("causal_strict_less", "forward",
        ((_BLIND_CAUSAL_CMP, _BLIND_CAUSAL_CMP.replace("<=", "<"), 1),),
        "mask", "causal mask j < i: a query does not see itself, row 0 sees nothing (0/0)"),
    Bug("causal_loop_stops_before_diagonal", "forward",
        ((_BLIND_CAUSAL_BOUNDS, _BLIND_CAUSAL_BOUNDS.replace("end = tl.minimum(S, first + BLOCK_Q)", "end = tl.minimum(S, first)"), 1),),
        "loop", "the causal walk ends at the block's first query: the diagonal block is never visited"),
    Bug("unmasked_stage_runs_past_diagonal", "forward",
        ((_BLIND_CAUSAL_BOUNDS, _BLIND_CAUSAL_BOUNDS.replace("whole = tl.minimum(S, first + 1)", "whole = tl.minimum(S, first + BLOCK_Q)"), 1),),
        "loop", "the unmasked stage runs to the last query's diagonal: the diagonal blocks go unmasked",
        accept=("mask",)),
    Bug("padded_keys_left_in", "forward",
        ((_BLIND_MASKS, '        if CAUSAL:\n'
                 '            s = tl.where(cols[None, :] <= rows[:, None], s, float("-inf"))\n', 1),),
        "mask", "only the causal mask applied: keys past S score 0 and join the softmax"),
    Bug("masked_scores_set_to_zero", "forward",
        ((_BLIND_WHERE, 's = tl.where(visible, s, 0.0)', 1),),
        "fill", "masked scores set to 0 instead of -inf: each adds exp2(0 − m) to the sum"),
    Bug("kv_heads_l_apart", "forward",
        (("    k_head = k_ptr + head * S * D\n    v_head = v_ptr + head * S * D\n",
          "    k_head = k_ptr + head * L * D\n    v_head = v_ptr + head * L * D\n", 1),),
        "address", "k and v's heads taken L·D apart (q's stride): wrong when S ≠ L"),
    Bug("kv_rows_block_d_apart", "forward",
        (("cols[:, None] * D", "cols[:, None] * BLOCK_D", 4),),
        "address", "k and v's rows taken BLOCK_D apart instead of D (wrong when D is no power of two or < 16)"),
    Bug("program_axes_swapped", "forward",
        (("    head = tl.program_id(1)\n    first = tl.program_id(0) * BLOCK_Q\n",
          "    head = tl.program_id(0)\n    first = tl.program_id(1) * BLOCK_Q\n", 1),),
        "address", "the head read from program axis 0 and the query block from axis 1"),
    Bug("scale_of_the_documented_d", "forward",
        ((_BLIND_QK_SCALE, "qk_scale = 0.25 * 1.4426950408889634", 1),),
        "hardcoded", "scale written as 0.25, 1/sqrt(16) of the documented D = 16, instead of the argument"),
    Bug("running_max_starts_at_zero", "forward",
        ((_BLIND_M_INIT, "m = tl.zeros([BLOCK_Q], dtype=tl.float32)", 1),),
        "fill", "the running max starts at 0, not -inf: rows whose scores are all far below 0 underflow l to 0",
        accept=("stability",)),
    Bug("no_running_max", "forward",
        ((_BLIND_M_INIT, "m = tl.zeros([BLOCK_Q], dtype=tl.float32)", 1), (_BLIND_M_NEW, "m_new = m", 2)),
        "stability", "the scores exponentiated unshifted (no running max): large scores overflow exp2"),
    Bug("causal_skip_ignores_s", "forward",
        ((_BLIND_CAUSAL_BOUNDS, _BLIND_CAUSAL_BOUNDS.replace("whole = tl.minimum(S, first + 1)", "whole = first + 1"), 1),),
        "loop", "the unmasked stage's end not clipped to S: with S < L it loads keys past S, unmasked",
        accept=("mask",)),
    Bug("lse_heads_d_apart", "forward",
        ((_BLIND_LSE_STORE, _BLIND_LSE_STORE.replace("lse_ptr + head * L + rows", "lse_ptr + head * L * D + rows"), 1),),
        "address", "lse's head offset head · L · D, as if lse had o's layout"),
    Bug("masked_stage_restarts_at_zero", "forward",
        (("for start in range(whole, end, BLOCK_K):", "for start in range(0, end, BLOCK_K):", 1),),
        "loop", "the masked stage starts at key 0: the blocks of the unmasked stage are counted twice"),
    Bug("running_output_in_input_dtype", "forward",
        (("acc = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)", "acc = tl.zeros([BLOCK_Q, BLOCK_D], dtype=q_ptr.dtype.element_ty)", 1),
         (_BLIND_ACC, "acc = (acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)).to(q_ptr.dtype.element_ty)", 2)),
        "precision", "the running output kept in the inputs' dtype (bf16): rounded at every key block"),
]

_BLIND_ONE_LOOP = '''
@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale, D: tl.constexpr,
                    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr):
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_Q
    rows = first + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, BLOCK_D)
    q = tl.load(q_ptr + head * L * D + rows[:, None] * D + dims[None, :],
                mask=(rows[:, None] < L) & (dims[None, :] < D), other=0.0)
    m = tl.full([BLOCK_Q], -1.0e30, dtype=tl.float32)
    l = tl.zeros([BLOCK_Q], dtype=tl.float32)
    acc = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)
    for start in range(0, S, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
        k = tl.load(k_ptr + head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        visible = cols[None, :] < S
        if CAUSAL:
            visible = visible & (rows[:, None] - cols[None, :] >= 0)
        s = tl.where(visible, s, -1.0e30)
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.where(visible, tl.exp(s - m_new[:, None]), 0.0)
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    o = acc / l[:, None]
    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o,
             mask=(rows[:, None] < L) & (dims[None, :] < D))
    tl.store(lse_ptr + head * L + rows, m + tl.log(l), mask=rows < L)
'''

RIGHT = [
    Right("natural_exp",
          ((_BLIND_QK_SCALE, "qk_scale = scale", 1), ("tl.exp2(", "tl.exp(", 4),
           (_BLIND_LSE_STORE, _BLIND_LSE_STORE.replace("(m + tl.log2(l)) * 0.6931471805599453", "m + tl.log(l)"), 1)),
          "the natural exponential throughout, lse = m + ln l"),
    Right("one_masked_loop_no_skip",
          (Kernel("attn_fwd_kernel", _BLIND_ONE_LOOP),),
          "one loop over every key block, always masked, a finite -1e30 sentinel, the causal mask as i − j >= 0"),
    Right("causal_mask_as_difference",
          ((_BLIND_CAUSAL_CMP, "visible = visible & (rows[:, None] - cols[None, :] >= 0)", 1),),
          "the causal comparison written i − j >= 0"),
    Right("finite_sentinel_max",
          ((_BLIND_M_INIT, "m = tl.full([BLOCK_Q], -1.0e30, dtype=tl.float32)", 1),),
          "the running max starts at -1e30 instead of -inf"),
    Right("normalise_with_reciprocal",
          (("o = acc / l[:, None]", "o = acc * (1.0 / l)[:, None]", 1),),
          "o = acc times 1/l"),
    Right("causal_walk_to_s",
          ((_BLIND_CAUSAL_BOUNDS, "        whole = tl.minimum(S, first + 1)\n", 1),),
          "the causal walk goes on to S (no early stop): blocks past the diagonal are masked whole, alpha = 1, p = 0"),
]

# written against the solution before its scores were scaled once each (tests/bugs/then.py)
MEASURED = written_against(P31_BEFORE_FUSED_SCALE, MEASURED)
RIGHT = written_against(P31_BEFORE_FUSED_SCALE, RIGHT)

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P31_BEFORE_GQA, MEASURED, P31_GQA)
RIGHT = carried_forward(P31_BEFORE_GQA, RIGHT, P31_GQA)

# the second blind corpus (tests/bugs/corpora/p27_p32_blind_round2/p31.py), measured beside the first
from bugs.corpora.p27_p32_blind_round2 import p31 as _second  # noqa: E402
MEASURED = MEASURED + _second.MEASURED
RIGHT = RIGHT + _second.RIGHT
