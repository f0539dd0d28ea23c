"""Every known kernel of puzzle 32 (FlashAttention backward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the mutants no check can catch (EQUIVALENT).
What each list means: tests/bugs/__init__.py."""
from pathlib import Path

from bugs import Bug, Kernel, Right, carried_forward
from bugs.then import P32_BEFORE_GQA, P32_GQA, P32_GQA_NO_DQ_WALK
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
    # grouped-query attention: a walk that reads k and v at the query head's index
    Bug("dq_walk_key_head_not_shared", "backward",
        (("k_head = k_ptr + (head // GROUP) * S * D", "k_head = k_ptr + head * S * D", 1),
         ("v_head = v_ptr + (head // GROUP) * S * D", "v_head = v_ptr + head * S * D", 1)),
        cause="address",
        reasons=(("programs per step",),), not_causes=("mask",),
        notes="fails the grouped-query cases only, out of bounds", code='fault.oob'),
    Bug("dkdv_walk_key_head_not_shared", "backward",
        (("    kv_head = head // GROUP\n", "    kv_head = head\n", 1),),
        cause="address",
        reasons=(("programs per step",),), not_causes=("mask",),
        notes="fails the grouped-query cases only, out of bounds", code='fault.oob'),
    Bug("causal_mask_forgotten_in_backward", "backward",
        ((DKDV_MASK, "", 1), (DQ_MASK, "", 1)),
        cause="mask", named="candidates",
        reasons=(("rebuilt without the causal mask",),), not_causes=("atomic",),
        notes="the forward masked (its lse is causal's), the backward's P is not: weight on future keys", code='variant.mask_forgotten_in_backward'),
    Bug("causal_mask_in_every_backward", "backward",
        (("    if MASK:  # a block", "    if True:  # a block", 1), ("    if MASK:\n        p = tl.where", "    if True:\n        p = tl.where", 1)),
        cause="mask",
        reasons=(("non-causal cases match a P masked causally",),), not_causes=("atomic",),
        notes="the reverse: a mask in the non-causal kernels (here on every block, causal or not)", code='variant.mask_in_non_causal_backward'),
    Bug("delta_from_do_alone", "backward",
        ((DELTA, "tl.store(delta_ptr + head * L + rows, tl.sum(do, axis=1), mask=rows < L)", 1),),
        cause="formula",
        reasons=(("rowsum(dO) alone",),), not_causes=("atomic", "mask"), code='variant.delta_from_do'),
    Bug("scale_missing_in_ds", "backward",
        (("    dk *= scale  #", "    dk *= 1.0  #", 1), ("    dq *= scale\n", "", 1)),
        cause="formula",
        reasons=(("without the scale",),), not_causes=("atomic", "mask"), code='variant.scale_missing_in_ds'),
    Bug("natural_lse_against_base2_scores", "backward",
        ((LSE_LOAD, " # base 2, as the scores", 1),
         (DQ_LSE, DQ_LSE.replace(" * 1.4426950408889634", ""), 1)),
        cause="formula",
        reasons=(("natural log",),), not_causes=("atomic", "mask"),
        notes="the logsumexp reused, but in the wrong base: P = e^(s - lse·ln 2)", code='variant.lse_natural_in_base2'),
    Bug("dq_diagonal_blocks_unmasked", "backward",
        (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n",
          "        whole = (tl.minimum(S, first + BLOCK_Q) // BLOCK_K) * BLOCK_K\n", 1),),
        cause="mask", named="candidates",
        reasons=(("only the causal cases fail",),), not_causes=("atomic",),
        notes="dQ's walk runs the diagonal blocks in its unmasked loop: dK and dV stay right", code='variant.mask_forgotten_in_backward'),
    Bug("dkdv_walk_skips_the_diagonal_block", "backward",
        (("range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q)", "range((first // BLOCK_Q + 1) * BLOCK_Q, after, BLOCK_Q)", 1),),
        cause="loop", named="candidates",
        reasons=(("only the causal cases fail",),), not_causes=("atomic",),
        notes="the query block holding the key block's first key is never visited", code='values.zero'),
    Bug("key_tail_loads_unmasked", "backward",
        ((KV_LOAD, KV_LOAD.replace("mask=kv_mask", "mask=dims[None, :] < D"), 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),), not_causes=("atomic",), gpu_by_chance=True,
        notes="dQ's last key block reads past S; on a GPU what lies past the end decides the verdict "
              "(the H100 failed it where zeros would have passed), but the read itself is out of bounds", code='fault.oob'),
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
                notes="right when programs run one after another (the interpreter without its race check)", code='fault.race'))


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
    "fill.other:attn_bwd_dkdv_kernel:92ead788:0": "a padded key row of v reaches only its own dSᵀ row and so its own "
                                                  "dK row, which the masked store leaves out; v's padded dimensions "
                                                  "meet dO's padded 0 in dPᵀ",
    "fill.other:attn_bwd_dkdv_kernel:e401dd8c:0": "a padded key row of k reaches only its own dK and dV rows, which "
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

# MEASURED and RIGHT: the first blind corpus, bugs and correct rewrites written from the solution, the
# page and the notebook alone, by someone who had not read the hint code; scored untouched on the
# checker it was written against before any hint was tuned to it (tests/bugs/measure.py).
_BLIND_DS_T = "ds_t = p_t * (dp_t - delta[None, :])"
_BLIND_DS = "ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])"
_BLIND_DELTA_STORE = "tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)"
_BLIND_LSE_KV = "lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634"
_BLIND_CAUSAL_KV = "p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)"
_BLIND_DK_SCALE = "    dk *= scale  # dS is the gradient"
_BLIND_DQ_BOUNDS = ("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n"
             "        end = tl.minimum(S, first + BLOCK_Q)\n")
_BLIND_STEP_Q_MASK = ("    q_mask = (rows[:, None] < L) & (dims[None, :] < D)\n"
               "    q = tl.load(q_head")
_BLIND_P_DQ = "p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])"

_BLIND_PLAIN_DQ_STEP = '''
@triton.jit
def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
              D: tl.constexpr, BLOCK_Q: tl.constexpr, MASK: tl.constexpr, dq_head, scale):
    rows = start + tl.arange(0, BLOCK_Q)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)
    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])
    if MASK:
        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)
    dv += tl.dot(p_t.to(do.dtype), do)
    dp_t = tl.dot(v, tl.trans(do))
    ds_t = p_t * (dp_t - delta[None, :])
    dk += tl.dot(ds_t.to(q.dtype), q)
    # dQ's share of this key block: dS K, summed into dq here
    dq_share = tl.dot(tl.trans(ds_t).to(k.dtype), k) * scale
    dq_ptrs = dq_head + rows[:, None] * D + dims[None, :]
    ADD_LINE
    return dk, dv
'''

_BLIND_DKDV_WITH_DQ = '''
@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale,
                         D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                         CAUSAL: tl.constexpr):
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_K
    cols = first + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    k = tl.load(k_ptr + head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    q_head = q_ptr + head * L * D
    do_head = do_ptr + head * L * D
    lse_head = lse_ptr + head * L
    delta_head = delta_ptr + head * L
    dq_head = dq_ptr + head * L * D
    qk_scale = scale * 1.4426950408889634
    dk = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    after = 0
    if CAUSAL:
        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)
        for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):
            dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,
                               qk_scale, D, BLOCK_Q, True, dq_head, scale)
    for start in range(after, L, BLOCK_Q):
        dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,
                           qk_scale, D, BLOCK_Q, False, dq_head, scale)
    dk *= scale
    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)
    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)
'''

_BLIND_EMPTY_DQ = '''
@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale,
                       D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                       CAUSAL: tl.constexpr):
    pass
'''

_BLIND_PLAIN_ADD = ("tl.store(dq_ptrs, tl.load(dq_ptrs, mask=q_mask, other=0.0) + dq_share, mask=q_mask)")
_BLIND_ATOMIC_ADD = "tl.atomic_add(dq_ptrs, dq_share, mask=q_mask)"

MEASURED = [
    Bug("ds_without_delta", "backward",
        ((_BLIND_DS_T, "ds_t = p_t * dp_t", 1), (_BLIND_DS, "ds = p * tl.dot(do, tl.trans(v))", 1)),
        "formula", "dS = P ∘ dP: the softmax backward's Δ term dropped"),
    Bug("delta_from_do_squared", "backward",
        ((_BLIND_DELTA_STORE, _BLIND_DELTA_STORE.replace("o * do", "do * do"), 1),),
        "formula", "Δ = rowsum(dO ∘ dO) instead of rowsum(dO ∘ O)"),
    Bug("delta_summed_over_rows", "backward",
        ((_BLIND_DELTA_STORE, _BLIND_DELTA_STORE.replace("axis=1", "axis=0"), 1),),
        "address", "Δ summed over the wrong axis (the rows instead of the head's dimensions)",
        accept=("formula",)),
    Bug("dk_without_scale", "backward",
        ((_BLIND_DK_SCALE, "    # dS is the gradient", 1),),
        "formula", "dK not multiplied by scale at the end"),
    Bug("dv_scaled_too", "backward",
        ((_BLIND_DK_SCALE, "    dv *= scale\n" + _BLIND_DK_SCALE, 1),),
        "formula", "dV multiplied by scale as well: V is not inside the scaled product"),
    Bug("lse_left_in_natural_log", "backward",
        ((_BLIND_LSE_KV, "lse = tl.load(lse_head + rows, mask=rows < L, other=0.0)", 1),),
        "formula", "the dK/dV walk subtracts the natural-log lse from base-2 scores"),
    Bug("causal_strict_less", "backward",
        ((_BLIND_CAUSAL_KV, _BLIND_CAUSAL_KV.replace("<=", "<"), 1),),
        "mask", "the dK/dV walk's causal mask j < i: the diagonal's weights dropped"),
    Bug("causal_mask_transposed", "backward",
        ((_BLIND_CAUSAL_KV, "p_t = tl.where(rows[None, :] <= cols[:, None], p_t, 0.0)", 1),),
        "mask", "the dK/dV walk keeps i <= j, the upper triangle: the mask turned around",
        accept=("formula",)),
    Bug("diagonal_blocks_unmasked", "backward",
        (("qk_scale, D, BLOCK_Q, True)", "qk_scale, D, BLOCK_Q, False)", 1),),
        "mask", "the dK/dV walk's diagonal blocks called without the mask: future queries' weights added"),
    Bug("dq_walk_stops_before_diagonal", "backward",
        ((_BLIND_DQ_BOUNDS, _BLIND_DQ_BOUNDS.replace("end = tl.minimum(S, first + BLOCK_Q)", "end = tl.minimum(S, first)"), 1),),
        "loop", "the dQ walk ends at the block's first query: the diagonal block's keys never reach dQ"),
    Bug("dq_unmasked_past_diagonal", "backward",
        ((_BLIND_DQ_BOUNDS, _BLIND_DQ_BOUNDS.replace("whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K",
                                       "whole = tl.minimum(S, first + BLOCK_Q)"), 1),),
        "loop", "the dQ walk's unmasked stage runs through the diagonal", accept=("mask",)),
    Bug("kv_heads_l_apart", "backward",
        (("k = tl.load(k_ptr + head * S * D", "k = tl.load(k_ptr + head * L * D", 1),
         ("v = tl.load(v_ptr + head * S * D", "v = tl.load(v_ptr + head * L * D", 1)),
        "address", "the dK/dV program reads k and v's heads L·D apart (q's stride): wrong when S ≠ L"),
    Bug("delta_heads_d_apart", "backward",
        (("delta_head = delta_ptr + head * L\n", "delta_head = delta_ptr + head * L * D\n", 1),),
        "address", "the dK/dV walk reads Δ at head · L · D, as if Δ had o's layout"),
    Bug("dp_from_k", "backward",
        (("dp_t = tl.dot(v, tl.trans(do))", "dp_t = tl.dot(k, tl.trans(do))", 1),),
        "formula", "dPᵀ = K dOᵀ: K used where V belongs"),
    Bug("dv_overwritten_per_block", "backward",
        (("dv += tl.dot(p_t.to(do.dtype), do)", "dv = tl.dot(p_t.to(do.dtype), do)", 1),),
        "accumulate", "dV overwritten by each query block's share: only the last block counts"),
    Bug("delta_in_input_dtype", "backward",
        (("    o = tl.load(o_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
          "    do = tl.load(do_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n",
          "    o = tl.load(o_ptr + offsets, mask=mask, other=0.0)\n"
          "    do = tl.load(do_ptr + offsets, mask=mask, other=0.0)\n", 1),),
        "precision", "Δ's products and sum taken in the inputs' dtype (bf16): no .to(tl.float32)"),
    Bug("p_from_a_fresh_softmax", "backward",
        ((_BLIND_P_DQ, "s = tl.dot(q, tl.trans(k)) * qk_scale\n"
                "    p = tl.exp2(s - tl.max(s, axis=1)[:, None])\n"
                "    p = p / tl.sum(p, axis=1)[:, None]", 1),),
        "formula", "the dQ walk rebuilds P as a softmax of the key block alone instead of exp(s − lse)"),
    Bug("padded_lse_minus_inf", "backward",
        ((_BLIND_LSE_KV, _BLIND_LSE_KV.replace("other=0.0", 'other=-float("inf")'), 1),),
        "fill", "padded query rows load lse = -inf: their P is inf, and inf · 0 puts NaN into dV and dK"),
    Bug("step_rows_unmasked", "backward",
        ((_BLIND_STEP_Q_MASK, _BLIND_STEP_Q_MASK.replace("(rows[:, None] < L) & (dims[None, :] < D)", "dims[None, :] < D"), 1),),
        "mask", "the dK/dV walk loads q and dO rows past L: the next head's rows join dV and dK"),
    Bug("dk_scale_of_the_documented_d", "backward",
        ((_BLIND_DK_SCALE, "    dk *= 0.25  # dS is the gradient", 1),),
        "hardcoded", "dK scaled by 0.25, 1/sqrt(16) of the documented D = 16, instead of scale"),
    Bug("dkdv_walk_steps_block_k", "backward",
        (("    for start in range(after, L, BLOCK_Q):", "    for start in range(after, L, BLOCK_K):", 1),),
        "loop", "the dK/dV walk over query blocks steps BLOCK_K: query blocks skipped or counted twice when the tiles differ"),
    Bug("dq_summed_without_atomics", "backward",
        (Kernel("dkdv_step", _BLIND_PLAIN_DQ_STEP.replace("ADD_LINE", _BLIND_PLAIN_ADD)),
         Kernel("attn_bwd_dkdv_kernel", _BLIND_DKDV_WITH_DQ), Kernel("attn_bwd_dq_kernel", _BLIND_EMPTY_DQ)),
        "atomic", "dQ summed in the dK/dV walk with a plain load, add and store: key blocks race on each row",
        accept=("determinism",)),
]

RIGHT = [
    Right("dq_by_atomics",
          (Kernel("dkdv_step", _BLIND_PLAIN_DQ_STEP.replace("ADD_LINE", _BLIND_ATOMIC_ADD)),
           Kernel("attn_bwd_dkdv_kernel", _BLIND_DKDV_WITH_DQ), Kernel("attn_bwd_dq_kernel", _BLIND_EMPTY_DQ)),
          "dQ summed in the dK/dV walk with tl.atomic_add, the dQ kernel empty"),
    Right("natural_exp",
          ((_BLIND_LSE_KV, "lse = tl.load(lse_head + rows, mask=rows < L, other=0.0)", 1),
           ("p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])",
            "p_t = tl.exp(tl.dot(k, tl.trans(q)) * (qk_scale * 0.6931471805599453) - lse[None, :])", 1),
           ("lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634",
            "lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0)", 1),
           (_BLIND_P_DQ, "p = tl.exp(tl.dot(q, tl.trans(k)) * (qk_scale * 0.6931471805599453) - lse[:, None])", 1)),
          "P = exp(scale · q kᵀ − lse) in the natural log, in both walks"),
    Right("scale_inside_the_step",
          ((_BLIND_DS_T, _BLIND_DS_T + " * (qk_scale * 0.6931471805599453)", 1),
           (_BLIND_DK_SCALE, "    # dS is the gradient", 1)),
          "dK's scale applied to dSᵀ in each step instead of once at the end"),
    Right("causal_walk_from_zero_all_masked",
          (("        for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):",
            "        for start in range(0, after, BLOCK_Q):", 1),),
          "the causal dK/dV walk starts at query block 0 (masked): the early blocks add P = 0"),
    Right("dkdv_untransposed",
          (Kernel("dkdv_step", '''
@triton.jit
def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
              D: tl.constexpr, BLOCK_Q: tl.constexpr, MASK: tl.constexpr):
    rows = start + tl.arange(0, BLOCK_Q)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    lse = tl.load(lse_head + rows, mask=rows < L, other=float("inf"))
    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)
    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None] * 1.4426950408889634)
    if MASK:
        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    dv += tl.dot(tl.trans(p.to(do.dtype)), do)
    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
    dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    return dk, dv
'''),),
          "the dK/dV step in [BLOCK_Q, BLOCK_K] tiles, transposed at the dots; padded rows load lse = +inf (P = 0)"),
    Right("dq_keys_walked_backwards",
          (("    for start in range(0, whole, BLOCK_K):\n        dq = dq_step(",
            "    for back in range(0, tl.cdiv(whole, BLOCK_K)):\n        start = (tl.cdiv(whole, BLOCK_K) - 1 - back) * BLOCK_K\n        dq = dq_step(", 1),),
          "the dQ walk's unmasked key blocks taken last first"),
]

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
# (the entries whose dQ kernel is emptied, dQ summed by the dK/dV walk, grow its argument only)
MEASURED, RIGHT = ([grown for entry in entries
                    for grown in carried_forward(P32_BEFORE_GQA, [entry], P32_GQA_NO_DQ_WALK
                                                 if Kernel("attn_bwd_dq_kernel", _BLIND_EMPTY_DQ) in entry.patches
                                                 else P32_GQA)]
                   for entries in (MEASURED, RIGHT))

# the second blind corpus (tests/bugs/corpora/p27_p32_blind_round2/p32.py), measured beside the first
from bugs.corpora.p27_p32_blind_round2 import p32 as _second  # noqa: E402
MEASURED = MEASURED + _second.MEASURED
RIGHT = RIGHT + _second.RIGHT
