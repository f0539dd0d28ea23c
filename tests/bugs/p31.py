"""Every known kernel of puzzle 31 (FlashAttention forward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the mutants no check can catch (EQUIVALENT,
SAME_BUG). What each list means: tests/bugs/__init__.py."""
from pathlib import Path

from bugs import Bug, Right
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
    Bug("scale_missing", "forward",
        (("qk_scale = scale * 1.4426950408889634", "qk_scale = 1.4426950408889634", 1),),
        cause="formula",
        reasons=(("without the scale",),), not_causes=("atomic", "mask"),
        notes="softmax(q kᵀ): a softmax √D times too sharp"),
    Bug("exp_of_base2_scores", "forward",
        ((P, P.replace("tl.exp2", "tl.exp"), 2), (ALPHA, ALPHA.replace("tl.exp2", "tl.exp"), 2)),
        cause="formula",
        reasons=(("1.44 times too sharp",),), not_causes=("atomic", "mask"),
        notes="tl.exp of scores already scaled by log2(e) for tl.exp2"),
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
        cause="mask",
        reasons=(("padded keys of the last key block",),), not_causes=("atomic",),
        notes="k past S loads 0, scores 0 and adds exp(0 - m) to the sum"),
    Bug("acc_not_rescaled", "forward",
        ((ACC, "        acc = acc + tl.dot(p.to(v.dtype), v)", 2),),
        cause="formula",
        reasons=(("running output that is not rescaled",),), not_causes=("atomic", "mask")),
    Bug("lse_in_base_2", "forward",
        ((LSE, "m + tl.log2(l)", 1),),
        cause="formula",
        reasons=(("logsumexp in base 2",),), not_causes=("atomic", "mask")),
    Bug("lse_without_the_max", "forward",
        ((LSE, "tl.log2(l) * 0.6931471805599453", 1),),
        cause="formula",
        reasons=(("lse matches log(l) alone",),), not_causes=("atomic", "mask")),
    Bug("o_stored_without_row_mask", "forward",
        ((O_STORE, O_STORE.replace("mask=(rows[:, None] < L) & (dims[None, :] < D)", "mask=dims[None, :] < D"), 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),), not_causes=("atomic",),
        notes="the last query block's padded rows write past the head: into the next head, or past o"),
    Bug("q_loaded_without_row_mask", "forward",
        ((Q_LOAD, "mask=dims[None, :] < D, other=0.0)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),), not_causes=("atomic",),
        gpu_blind=True, notes="the padded rows read past q; on a GPU what they read lands in rows no store writes"),
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
    # padded keys scored 0 instead of -inf: the key mask does not switch them off, whether the tl.where
    # is missing (a mask) or fills 0 (a fill); the two give the same numbers, and the variant's hint says so
    "fill.where:attn_fwd_kernel:ded71b7b:0": ("mask", "tl.where(visible, s, 0.0) leaves the padded keys in the "
                                                      "softmax with score 0: the key mask does not switch them off"),
}
