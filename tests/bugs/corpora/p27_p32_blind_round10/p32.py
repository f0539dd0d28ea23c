"""Blind corpus (round 10 for p27-p32), puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_LSE_KV = "    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634  # base 2, as the scores"
_DKDV_WALK = """    after = 0
    if CAUSAL:
        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)
        for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):
            dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,
                               qk_scale, D, BLOCK_Q, True)
    for start in range(after, L, BLOCK_Q):
        dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,
                           qk_scale, D, BLOCK_Q, False)
"""

_STEP_DQ = '''
@triton.jit
def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, dq_head, start, cols, dims, L, qk_scale, scale,
              D: tl.constexpr, BLOCK_Q: tl.constexpr, MASK: tl.constexpr):
    """One query block's share of dK and dV, and this key block's share of that query block's dQ."""
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
    # dQ = scale * dS K: this key block's share of every query row of the block
    dq = tl.dot(tl.trans(ds_t).to(k.dtype), k) * scale
    STORE_DQ
    return dk, dv
'''

_KERNEL_DQ = '''
@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale,
                         GROUP, D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                         CAUSAL: tl.constexpr):
    """dK, dV of BLOCK_K keys of one head, and the key block's shares of dQ. Grid: (cdiv(S, BLOCK_K), B * H)."""
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_K
    cols = first + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    kv_head = head // GROUP
    k = tl.load(k_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    q_head = q_ptr + head * L * D
    do_head = do_ptr + head * L * D
    dq_head = dq_ptr + head * L * D
    lse_head = lse_ptr + head * L
    delta_head = delta_ptr + head * L
    qk_scale = scale * 1.4426950408889634
    dk = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    after = 0
    if CAUSAL:
        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)
        for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):
            dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, dq_head, start, cols, dims, L,
                               qk_scale, scale, D, BLOCK_Q, True)
    for start in range(after, L, BLOCK_Q):
        dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, dq_head, start, cols, dims, L,
                           qk_scale, scale, D, BLOCK_Q, False)
    dk *= scale
    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)
    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)
'''

_DQ_NOTHING = '''
@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP,
                       D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                       CAUSAL: tl.constexpr):
    """dQ was summed by the dK/dV kernel: nothing left to do."""
    return
'''

_DQ_PTRS = "dq_head + rows[:, None] * D + dims[None, :], dq, mask=q_mask)"

MEASURED = [
    Bug("delta_head_lanes_unmasked", "backward",
        (("    mask = (rows[:, None] < L) & (dims[None, :] < D)\n    offsets = head * L * D",
          "    mask = rows[:, None] < L\n    offsets = head * L * D", 1),),
        "mask", "the preprocess masks the rows but not the head lanes: with D below BLOCK_D, Δ sums o·dO over the next row's elements"),
    Bug("dk_scale_dropped", "backward",
        (("    dk *= scale  # dS is the gradient of scale · q kᵀ: the scale comes back once, here\n", "", 1),),
        "formula", "dK left without its factor scale (dK = scale · dSᵀQ): only dQ gets the chain rule's scale"),
    Bug("dq_scaled_by_base2_scale", "backward",
        (("    dq *= scale\n", "    dq *= qk_scale\n", 1),),
        "formula", "dQ multiplied by qk_scale (scale · log2 e, the exponent's factor) instead of scale"),
    Bug("lse_not_to_base2_in_dkdv", "backward",
        ((_LSE_KV, "    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0)", 1),),
        "formula", "the dK/dV walk subtracts the natural-log lse from base-2 scores: P rebuilt wrong (not scaled by log2 e)"),
    Bug("delta_broadcast_on_key_axis", "backward",
        (("    ds_t = p_t * (dp_t - delta[None, :])", "    ds_t = p_t * (dp_t - delta[:, None])", 1),),
        "address", "in the transposed [keys, queries] tile Δ is broadcast down the key axis (delta[:, None], copied from dq_step)",
        accept=("formula",)),
    Bug("dkdv_causal_strict", "backward",
        (("p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)", "p_t = tl.where(cols[:, None] < rows[None, :], p_t, 0.0)", 1),),
        "mask", "the dK/dV walk's causal mask written j < i: each key's own query's weight dropped from dK and dV"),
    Bug("dq_causal_mask_reversed", "backward",
        (("p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)", "p = tl.where(cols[None, :] >= rows[:, None], p, 0.0)", 1),),
        "mask", "the dQ walk keeps the keys at or after the query on the diagonal blocks (j >= i) instead of j <= i"),
    Bug("dkdv_query_walk_to_S", "backward",
        (("    for start in range(after, L, BLOCK_Q):", "    for start in range(after, S, BLOCK_Q):", 1),),
        "loop", "the dK/dV program walks the queries up to S, the number of keys: with L > S the last query blocks are never added"),
    Bug("dq_kv_head_not_grouped", "backward",
        (("    k_head = k_ptr + (head // GROUP) * S * D  # the key/value head this query head reads (puzzle 31)\n"
          "    v_head = v_ptr + (head // GROUP) * S * D",
          "    k_head = k_ptr + head * S * D  # the key/value head this query head reads (puzzle 31)\n"
          "    v_head = v_ptr + head * S * D", 1),),
        "address", "the dQ walk reads key/value head `head`, not head // GROUP: grouped-query cases read the wrong (or no) head"),
    Bug("dkdv_stored_at_kv_head", "backward",
        (("    tl.store(dk_ptr + head * S * D", "    tl.store(dk_ptr + kv_head * S * D", 1),
         ("    tl.store(dv_ptr + head * S * D", "    tl.store(dv_ptr + kv_head * S * D", 1)),
        "address", "dK and dV stored at the key/value head's slot: the GROUP query heads' shares overwrite each other "
        "and the other slots stay unwritten"),
    Bug("dp_from_keys", "backward",
        (("    dp_t = tl.dot(v, tl.trans(do))", "    dp_t = tl.dot(k, tl.trans(do))", 1),),
        "formula", "dPᵀ built from the keys (K dOᵀ) instead of the values (V dOᵀ)"),
    Bug("dq_overwritten_per_block", "backward",
        (("    dq += tl.dot(ds.to(k.dtype), k)", "    dq = tl.dot(ds.to(k.dtype), k)", 1),),
        "accumulate", "dq_step returns only this key block's dS K: the running dQ is replaced, not added to"),
    Bug("dv_overwritten_per_block", "backward",
        (("    dv += tl.dot(p_t.to(do.dtype), do)", "    dv = tl.dot(p_t.to(do.dtype), do)", 1),),
        "accumulate", "dkdv_step assigns dV = PᵀdO of the current query block: only the last block's share survives"),
    Bug("delta_store_unmasked", "backward",
        (("tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)",
          "tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1))", 1),),
        "mask", "Δ stored for every lane of the last row block: the padded rows write past the head's L slots (past delta's end at the last head)"),
    Bug("dk_scale_for_d16", "backward",
        (("    dk *= scale  #", "    dk *= 0.25  #", 1),),
        "hardcoded", "dK's scale written in as 1/sqrt(16) (the documented D) instead of the scale argument"),
    Bug("padded_lse_minus_inf", "backward",
        ((_LSE_KV, _LSE_KV.replace("other=0.0", "other=-float(\"inf\")"), 1),),
        "fill", "padded query rows load lse = -inf (the forward's padding habit): their P is exp2(+inf) and inf·0 spreads NaN into dK and dV"),
    Bug("ds_sign_flipped", "backward",
        (("    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])", "    ds = p * (delta[:, None] - tl.dot(do, tl.trans(v)))", 1),),
        "formula", "dS written P ∘ (Δ − dP) in the dQ walk: dQ comes out with the wrong sign"),
    Bug("dq_shares_stored_not_added", "backward",
        (Kernel("dkdv_step", _STEP_DQ.replace("STORE_DQ", "tl.store(" + _DQ_PTRS)),
         Kernel("attn_bwd_dkdv_kernel", _KERNEL_DQ), Kernel("attn_bwd_dq_kernel", _DQ_NOTHING)),
        "atomic", "dQ summed in the dK/dV walk (as the statement allows) with tl.store: each key block's share overwrites "
        "the others' instead of tl.atomic_add"),
]

RIGHT = [
    Right("dq_by_atomics_in_dkdv",
          (Kernel("dkdv_step", _STEP_DQ.replace("STORE_DQ", "tl.atomic_add(" + _DQ_PTRS)),
           Kernel("attn_bwd_dkdv_kernel", _KERNEL_DQ), Kernel("attn_bwd_dq_kernel", _DQ_NOTHING)),
          "dQ summed in the dK/dV walk with tl.atomic_add into the fp32 zeros, the dQ kernel does nothing"),
    Right("natural_exp", ((" * 1.4426950408889634", "", 4), ("tl.exp2(", "tl.exp(", 2)),
          "P rebuilt as exp(scale·qk − lse) in the natural base, no log2 e factors anywhere"),
    Right("dkdv_one_walk_masked_when_causal",
          ((_DKDV_WALK, """    for start in range(0, L, BLOCK_Q):
        dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,
                           qk_scale, D, BLOCK_Q, CAUSAL)
""", 1),),
          "the dK/dV program walks every query block from 0, masking all of them when causal (the blocks before the diagonal mask to 0)"),
    Right("dq_every_causal_block_masked",
          (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K", "        whole = 0", 1),),
          "causal dQ: every key block up to the diagonal goes through the masked step"),
    Right("dkdv_untransposed_tiles", (Kernel("dkdv_step", '''
@triton.jit
def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
              D: tl.constexpr, BLOCK_Q: tl.constexpr, MASK: tl.constexpr):
    """One query block's share of dK and dV, in [BLOCK_Q, BLOCK_K] tiles, transposed at the products."""
    rows = start + tl.arange(0, BLOCK_Q)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)
    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])
    if MASK:
        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    dv += tl.dot(tl.trans(p.to(do.dtype)), do)
    dp = tl.dot(do, tl.trans(v))
    ds = p * (dp - delta[:, None])
    dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    return dk, dv
'''),),
          "dkdv_step builds P and dS as [queries, keys] tiles (the dQ walk's shape) and transposes them into the products"),
]
