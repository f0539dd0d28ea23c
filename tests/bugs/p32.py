"""Every known kernel of puzzle 32 (FlashAttention backward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the mutants no check can catch (EQUIVALENT).
What each list means: tests/bugs/__init__.py."""
from pathlib import Path

from bugs import Bug, Right
from bugs.reasons import ZERO_PARTNER

DKDV_MASK = "    if MASK:  # a block across the diagonal: query i sees key j only if j <= i\n"\
            "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)\n"
DQ_MASK = "    if MASK:\n        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)\n"
DELTA = "tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)"
LSE_LOAD = "* 1.4426950408889634  # base 2, as the scores"
DQ_LSE = "    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634\n"
KV_LOAD = """    k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)"""

PINNED = [
    Bug("causal_mask_forgotten_in_backward", "backward",
        ((DKDV_MASK, "", 1), (DQ_MASK, "", 1)),
        cause="mask",
        reasons=(("rebuilt without the causal mask",),), not_causes=("atomic",),
        notes="the forward masked (its lse is causal's), the backward's P is not: weight on future keys"),
    Bug("causal_mask_in_every_backward", "backward",
        (("    if MASK:  # a block", "    if True:  # a block", 1), ("    if MASK:\n        p = tl.where", "    if True:\n        p = tl.where", 1)),
        cause="mask",
        reasons=(("non-causal cases match a P masked causally",),), not_causes=("atomic",),
        notes="the reverse: a mask in the non-causal kernels (here on every block, causal or not)"),
    Bug("delta_from_do_alone", "backward",
        ((DELTA, "tl.store(delta_ptr + head * L + rows, tl.sum(do, axis=1), mask=rows < L)", 1),),
        cause="formula",
        reasons=(("rowsum(dO) alone",),), not_causes=("atomic", "mask")),
    Bug("scale_missing_in_ds", "backward",
        (("    dk *= scale  #", "    dk *= 1.0  #", 1), ("    dq *= scale\n", "", 1)),
        cause="formula",
        reasons=(("without the scale",),), not_causes=("atomic", "mask")),
    Bug("natural_lse_against_base2_scores", "backward",
        ((LSE_LOAD, " # base 2, as the scores", 1),
         (DQ_LSE, DQ_LSE.replace(" * 1.4426950408889634", ""), 1)),
        cause="formula",
        reasons=(("natural log",),), not_causes=("atomic", "mask"),
        notes="the logsumexp reused, but in the wrong base: P = e^(s - lse·ln 2)"),
    Bug("dq_diagonal_blocks_unmasked", "backward",
        (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n",
          "        whole = (tl.minimum(S, first + BLOCK_Q) // BLOCK_K) * BLOCK_K\n", 1),),
        cause="mask",
        reasons=(("only the causal cases fail",),), not_causes=("atomic",),
        notes="dQ's walk runs the diagonal blocks in its unmasked loop: dK and dV stay right"),
    Bug("dkdv_walk_skips_the_diagonal_block", "backward",
        (("range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q)", "range((first // BLOCK_Q + 1) * BLOCK_Q, after, BLOCK_Q)", 1),),
        cause="loop", named="candidates",
        reasons=(("only the causal cases fail",),), not_causes=("atomic",),
        notes="the query block holding the key block's first key is never visited"),
    Bug("key_tail_loads_unmasked", "backward",
        ((KV_LOAD, KV_LOAD.replace("mask=kv_mask", "mask=dims[None, :] < D"), 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),), not_causes=("atomic",), gpu_by_chance=True,
        notes="dQ's last key block reads past S; on a GPU what lies past the end decides the verdict "
              "(the H100 failed it where zeros would have passed), but the read itself is out of bounds"),
]

_TEXT = (Path(__file__).resolve().parents[2] / "solutions" / "p32_flash_attention_backward.py").read_text(encoding="utf-8")
# dQ summed by the dK/dV programs themselves: each adds its key block's dS K to every query row it
# visits, with tl.atomic_add (dq starts at zero); the dQ kernel then has nothing to do
DQ_ATOMIC = ("    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK = dSᵀ Q (times scale, at the end)\n",
             "    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK = dSᵀ Q (times scale, at the end)\n"
             "    dq_part = tl.dot(tl.trans(ds_t).to(k.dtype), k) * scale\n"
             "    tl.atomic_add(dq_head + rows[:, None] * D + dims[None, :], dq_part, mask=q_mask)\n", 1)
ATOMIC_PATCHES = (
    DQ_ATOMIC,
    ("def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,\n",
     "def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, dq_head, scale, start, cols, dims, L, "
     "qk_scale,\n", 1),
    ("dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start,",
     "dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, dq_ptr + head * L * D, scale, start,", 2),
    ("    for start in range(0, whole, BLOCK_K):\n        dq = dq_step(", "    for start in range(0, 0, BLOCK_K):\n        dq = dq_step(", 1),
    ("    for start in range(whole, end, BLOCK_K):\n        dq = dq_step(", "    for start in range(0, 0, BLOCK_K):\n        dq = dq_step(", 1),
    ("    tl.store(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq, mask=q_mask)\n", "", 1),
)

PASSING = [
    Right("dq_by_atomics", ATOMIC_PATCHES,
                notes="dQ added by the dK/dV programs with tl.atomic_add: one walk instead of two, but every "
                      "query row takes an fp32 atomic from each key block (S / BLOCK_K writers), in an order "
                      "that changes from run to run"),
    Right("p_by_natural_exp", (("    qk_scale = scale * 1.4426950408889634\n", "    qk_scale = scale\n", 2),
                                     (" * 1.4426950408889634  # base 2, as the scores", "", 1),
                                     (DQ_LSE, DQ_LSE.replace(" * 1.4426950408889634", ""), 1),
                                     ("p_t = tl.exp2(", "p_t = tl.exp(", 1), ("p = tl.exp2(", "p = tl.exp(", 1)),
                notes="tl.exp on scale · q kᵀ − lse, everything in the natural log"),
]
# the atomic alternative with a plain load, add and store instead of tl.atomic_add: shares from
# several key-block programs race on the same dQ rows
_RACY = tuple((old, new.replace("    tl.atomic_add(dq_head + rows[:, None] * D + dims[None, :], dq_part, mask=q_mask)\n",
                                 "    dq_rows = dq_head + rows[:, None] * D + dims[None, :]\n"
                                 "    tl.store(dq_rows, tl.load(dq_rows, mask=q_mask) + dq_part, mask=q_mask)\n"), n)
              for old, new, n in ATOMIC_PATCHES)
PINNED.append(Bug("dq_summed_without_atomics", "backward", _RACY,
                cause="atomic",
                cpu_blind_without_sanitizer=True, gpu_by_chance=True,
                notes="right when programs run one after another (the interpreter without its race check)"))


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
# a walk over blocks starts at a multiple of BLOCK_K or BLOCK_Q (powers of two >= 16, tl.dot's minimum):
# one more than such a start is odd, so it is never a multiple of a block and a floor division by one
# gives what the start alone gives
ODD_PAST_BLOCK = ("first is a multiple of a block (powers of two >= 16): first + 1 and first + 2 are never "
                  "multiples of a block, so the floor division gives what first alone gives")
EQUIVALENT = {
    "fill.other:attn_bwd_preprocess:83beb307:0": ZERO_PARTNER,
    "fill.other:dkdv_step:26926ccb:0": "a padded query row's dSᵀ column multiplies q's padded 0 in dK, and "
                                       "dV does not read Δ",
    "fill.other:attn_bwd_dq_kernel:c039b50d:0": ZERO_PARTNER,
    "fill.other:attn_bwd_dq_kernel:89c2d9e9:0": ZERO_PARTNER,
    "fill.other:attn_bwd_dq_kernel:2b296a23:0": "Δ's padded rows reach only dQ rows the masked store leaves out",
    "address.offset:attn_bwd_dq_kernel:d1c2728f:0": "first is a multiple of BLOCK_Q and the blocks are powers of "
                                                    "two >= 16: no multiple of BLOCK_K lies between first + 1 and "
                                                    "first + 2, so whole is unchanged",
    "address.offset:attn_bwd_dq_kernel:b4bac5d9:0": ODD_PAST_BLOCK,
    "address.offset:attn_bwd_dkdv_kernel:94821ae5:0": ODD_PAST_BLOCK,
    "address.offset:attn_bwd_dq_kernel:98568e77:0": "the one more key, first + BLOCK_Q, comes after every query of "
                                                    "the block: the causal tl.where gives it P = 0, so its dS is 0 "
                                                    "(a block of it alone adds nothing to dQ)",
    "fill.other:attn_bwd_preprocess:d7fb2eeb:0": ZERO_PARTNER,
    "fill.other:dkdv_step:65c1a8ea:0": "a padded query row's q is 0, so its Pᵀ is exp2(−lse), finite whatever lse "
                                       "holds, and it multiplies dO's padded 0 in dV and dPᵀ − Δ = 0 − 0 in dK",
    # tried: an attention sink (one key of 12 + randn in 64 dimensions) makes this mutant's padded Pᵀ
    # overflow, but the solution's own dV then missed its tolerance for some inputs (the fp32 scores
    # near 100 carry more rounding than the tolerance model allows)
    "fill.other:dkdv_step:0f697de0:0": "a padded query row's Pᵀ = exp2(scale · log2 e · Σ_d k) multiplies dO's "
                                       "padded 0 in dV and dPᵀ − Δ = 0 − 0 in dK; it overflows (Inf · 0) only "
                                       "for a key whose coordinates sum past 89·√D, and there the solution "
                                       "itself leaves the tolerances",
    "fill.other:attn_bwd_dkdv_kernel:e7b14ba1:0": "a padded key row of v reaches only its own dSᵀ row and so its own "
                                                  "dK row, which the masked store leaves out; v's padded dimensions "
                                                  "meet dO's padded 0 in dPᵀ",
    "fill.other:attn_bwd_dkdv_kernel:65144ceb:0": "a padded key row of k reaches only its own dK and dV rows, which "
                                                  "the masked stores leave out; k's padded dimensions meet q's "
                                                  "padded 0 in the scores",
    "fill.other:dq_step:c2d8d6b0:0": "a padded key's dS (from v's padded row) multiplies k's padded 0 in dQ = dS K; "
                                     "v's padded dimensions meet dO's padded 0",
    "fill.other:attn_bwd_dq_kernel:8889c991:0": "lse's padded rows reach only dQ rows the masked store leaves out",
    "address.offset:attn_bwd_dkdv_kernel:7ef68b95:0": "the masked walk takes one more query block, wholly after "
                                                      "the key block: there every key is at or before every query, "
                                                      "so the causal mask keeps every score, as the unmasked walk does",
    "address.offset:attn_bwd_dkdv_kernel:829c16fe:0": "first + BLOCK_K is a multiple of BLOCK_K >= 16, so it is never "
                                                      "one past a multiple of BLOCK_Q: cdiv(first + BLOCK_K, BLOCK_Q) "
                                                      "equals cdiv(first + BLOCK_K - 1, BLOCK_Q)",
}
