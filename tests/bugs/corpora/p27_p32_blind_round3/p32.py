"""Third blind corpus, puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward
from bugs.then import P32_BEFORE_GQA, P32_GQA

_DS_T = "ds_t = p_t * (dp_t - delta[None, :])"
_DK = "    dk += tl.dot(ds_t.to(q.dtype), q)"
_DV = "    dv += tl.dot(p_t.to(do.dtype), do)"
_P_T = "    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])\n"
_MASK_THEN_DV = ("    if MASK:  # a block across the diagonal: query i sees key j only if j <= i\n"
                 "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)\n"
                 "    dv += tl.dot(p_t.to(do.dtype), do)                  # dV = Pᵀ dO\n")

_ONE_LOOP_DKDV = '''
@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale,
                         D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                         CAUSAL: tl.constexpr):
    """dK and dV of BLOCK_K keys of one head, one walk over every query block, the causal mask a where
    in every step. Grid: (cdiv(S, BLOCK_K), B * H)."""
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_K
    cols = first + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    k = tl.load(k_ptr + head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    qk_scale = scale * 1.4426950408889634
    dk = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    for start in range(0, L, BLOCK_Q):
        rows = start + tl.arange(0, BLOCK_Q)
        q_mask = (rows[:, None] < L) & (dims[None, :] < D)
        q = tl.load(q_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
        do = tl.load(do_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
        lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634
        delta = tl.load(delta_ptr + head * L + rows, mask=rows < L, other=0.0)
        p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])
        if CAUSAL:
            p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)
        dv += tl.dot(p_t.to(do.dtype), do)
        ds_t = p_t * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk += tl.dot(ds_t.to(q.dtype), q)
    dk *= scale
    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)
    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)
'''

MEASURED = [
    Bug("dk_from_do", "backward",
        ((_DK, "    dk += tl.dot(ds_t.to(q.dtype), do)", 1),),
        "formula", "dK = dSᵀ dO: the upstream gradient used where the queries belong (dK = scale · dSᵀ Q)"),
    Bug("ds_sign_flipped", "backward",
        ((_DS_T, "ds_t = p_t * (delta[None, :] - dp_t)", 1),),
        "formula", "dS = P ∘ (Δ − dP): the difference taken the wrong way round, dK comes out negated"),
    Bug("dq_scores_unscaled", "backward",
        (("    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])\n",
          "    p = tl.exp2(tl.dot(q, tl.trans(k)) - lse[:, None])\n", 1),),
        "formula", "the dQ walk rebuilds P from the raw scores q kᵀ, without scale · log2(e): P no longer matches the forward's softmax"),
    Bug("dk_scaled_twice", "backward",
        (("cols[:, None] * D + dims[None, :], dk, mask=kv_mask)", "cols[:, None] * D + dims[None, :], dk * scale, mask=kv_mask)", 1),),
        "formula", "dK multiplied by scale at the store as well as by dk *= scale before it: scale² where the gradient has scale once"),
    Bug("dq_keys_past_s_unmasked", "backward",
        (("    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)\n    k = tl.load(k_head",
          "    kv_mask = dims[None, :] < D\n    k = tl.load(k_head", 1),),
        "mask", "the dQ walk loads k and v without the key mask: past S they read the next head's keys, whose P and dS are not 0, into dQ",
        notes='shows only where S is not a multiple of BLOCK_K'),
    Bug("key_block_start_by_block_q", "backward",
        (("    first = tl.program_id(0) * BLOCK_K\n", "    first = tl.program_id(0) * BLOCK_Q\n", 1),),
        "address", "the dK/dV program's first key computed with BLOCK_Q instead of BLOCK_K: key blocks overlap or leave gaps",
        notes='shows only where BLOCK_Q != BLOCK_K'),
    Bug("do_heads_s_apart", "backward",
        (("    do_head = do_ptr + head * L * D\n", "    do_head = do_ptr + head * S * D\n", 1),),
        "address", "the dK/dV kernel's dO head offset taken with S (keys): dO has L rows per head like q",
        notes='shows only where L != S and there are several heads'),
    Bug("dkdv_causal_walk_from_first_key", "backward",
        (("for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):", "for start in range(first, after, BLOCK_Q):", 1),),
        "loop", "the causal dK/dV walk starts at query `first` (the key block's first key) not rounded down to a query block: its blocks straddle two query blocks, and rows are counted twice",
        notes='shows only where BLOCK_K is not a multiple of BLOCK_Q'),
    Bug("dkdv_unmasked_walk_skips_a_block", "backward",
        (("    for start in range(after, L, BLOCK_Q):", "    for start in range(after + BLOCK_Q, L, BLOCK_Q):", 1),),
        "loop", "the unmasked dK/dV walk starts one query block after `after` (taken as the last masked block): the first block it owns is never added"),
    Bug("dv_taken_before_causal_mask", "backward",
        ((_MASK_THEN_DV,
          "    dv += tl.dot(p_t.to(do.dtype), do)                  # dV = Pᵀ dO\n"
          "    if MASK:  # a block across the diagonal: query i sees key j only if j <= i\n"
          "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)\n", 1),),
        "mask", "dV accumulated from Pᵀ before the causal mask is applied: on the diagonal blocks hidden queries add to dV",
        notes='causal cases only'),
    Bug("scores_rounded_to_bf16", "backward",
        ((_P_T, "    p_t = tl.exp2(tl.dot(k, tl.trans(q)).to(tl.bfloat16) * qk_scale - lse[None, :])\n", 1),),
        "precision", "the dK/dV walk rounds the scores k qᵀ to bf16 before the exponential whatever the inputs: P is off by the rounding of a score",
        notes='clearest in the fp32 cases; in bf16 the error sits near the tolerance'),
    Bug("preprocess_dims_of_the_documented_d", "backward",
        (("    dims = tl.arange(0, BLOCK_D)\n    mask = (rows[:, None] < L)", "    dims = tl.arange(0, 16)\n    mask = (rows[:, None] < L)", 1),),
        "hardcoded", "the preprocess reads 16 head dimensions (the documented D) instead of BLOCK_D: with a wider head Δ misses terms",
        notes='shows only where D > 16'),
    Bug("dk_stored_over_k", "backward",
        (("    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)",
          "    tl.store(k_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)", 1),),
        "inplace", "dK stored into k's buffer: an input overwritten (the dQ kernel then reads dK as keys), dk never written",
        accept=("address",)),
    Bug("lse_converted_with_ln2", "backward",
        (("    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634  # base 2",
          "    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 0.6931471805599453  # base 2", 1),),
        "formula", "the dK/dV walk converts lse to base 2 by multiplying with ln 2 instead of log2(e): P = exp2(s − lse) is off by a row factor"),
    Bug("dv_with_p_untransposed", "backward",
        ((_DV, "    dv += tl.dot(tl.trans(p_t).to(do.dtype), do)", 1),),
        "formula", "dV from tl.trans(p_t), i.e. P instead of Pᵀ: the tile is already transposed, the extra transpose sums over the wrong axis",
        accept=("address",), notes='wrong values where BLOCK_Q == BLOCK_K, a shape error otherwise'),
    Bug("dq_causal_split_in_blocks_not_keys", "backward",
        (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n", "        whole = tl.minimum(S, first + 1) // BLOCK_K\n", 1),),
        "loop", "the causal dQ walk's unmasked end is a block count (not times BLOCK_K) used as a key index: the masked walk starts inside the first block and keys are counted twice",
        notes='causal cases with a query block past the first key block'),
]

RIGHT = [
    Right("padded_lse_plus_inf",
          (("mask=rows < L, other=0.0) * 1.4426950408889634", "mask=rows < L, other=float(\"inf\")) * 1.4426950408889634", 2),),
          "padded query rows load lse = +inf, so their P = exp2(s − inf) is 0 outright"),
    Right("preprocess_int64_offsets",
          (("    offsets = head * L * D + rows[:, None] * D + dims[None, :]\n",
            "    offsets = head.to(tl.int64) * L * D + rows[:, None] * D + dims[None, :]\n", 1),),
          "the preprocess computes its offsets in int64"),
    Right("dv_product_in_fp32",
          ((_DV, "    dv += tl.dot(p_t, do.to(tl.float32))", 1),),
          "dV's product taken in fp32 (dO widened) instead of rounding Pᵀ to the inputs' dtype"),
    Right("dkdv_one_loop_masked_by_where", (Kernel("attn_bwd_dkdv_kernel", _ONE_LOOP_DKDV),),
          "the dK/dV kernel walks every query block in one loop, the causal mask a where in each step"),
    Right("causal_mask_as_row_minus_col",
          (("p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)", "p_t = tl.where(rows[None, :] - cols[:, None] >= 0, p_t, 0.0)", 1),
           ("p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)", "p = tl.where(rows[:, None] - cols[None, :] >= 0, p, 0.0)", 1)),
          "the causal masks written as row − col >= 0"),
]

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P32_BEFORE_GQA, MEASURED, P32_GQA)
RIGHT = carried_forward(P32_BEFORE_GQA, RIGHT, P32_GQA)
