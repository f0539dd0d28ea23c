"""Blind corpus (round 6 for p27-p32), puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_DELTA = "    tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)\n"
_PRE_MASK = "    mask = (rows[:, None] < L) & (dims[None, :] < D)\n    offsets = head * L * D"
_DS_T = "    ds_t = p_t * (dp_t - delta[None, :])                 # dSᵀ"
_DK_ACC = "    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK"
_DV_ACC = "    dv += tl.dot(p_t.to(do.dtype), do)                  # dV"
_MASK_T = "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)\n"
_MASK_Q = "        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)\n"
_DQ_ACC = "    dq += tl.dot(ds.to(k.dtype), k)                        # dQ"
_DK_SCALE = "    dk *= scale  # dS is the gradient"
_DK_STORE = "    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)\n"
_DQ_LSE = "    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634\n    delta = tl.load(delta_ptr + head * L + rows, mask=rows < L, other=0.0)\n    k_head"
_DQ_KHEAD = "    k_head = k_ptr + (head // GROUP) * S * D  # the key/value head"
_DKDV_TAIL = "    for start in range(after, L, BLOCK_Q):\n"
_DQ_SCALE = "    dq *= scale\n"

_DKDV_ATOMIC_DQ = '''
@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale,
                         GROUP, D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                         CAUSAL: tl.constexpr):
    """dK, dV of a key block, and its share of dQ added with atomics; every query block walked, masked when causal."""
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_K
    cols = first + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    kv_head = head // GROUP
    k = tl.load(k_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
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
        ok = (cols[:, None] < S) & (rows[None, :] < L)
        if CAUSAL:
            ok = ok & (cols[:, None] <= rows[None, :])
        p_t = tl.where(ok, p_t, 0.0)
        dv += tl.dot(p_t.to(do.dtype), do)
        ds_t = p_t * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk += tl.dot(ds_t.to(q.dtype), q)
        dq_share = tl.dot(tl.trans(ds_t), k.to(tl.float32)) * scale
        tl.atomic_add(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq_share, mask=q_mask)
    dk *= scale
    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)
    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)
'''

_DQ_NOTHING = '''
@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP,
                       D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                       CAUSAL: tl.constexpr):
    """dQ was summed by the dK/dV kernel with atomics: nothing left to do."""
    pass
'''

_DQ_ONE_LOOP = '''
@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP,
                       D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                       CAUSAL: tl.constexpr):
    """dQ in one loop over the key blocks up to the causal end, every block masked when causal, natural exp."""
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_Q
    rows = first + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, BLOCK_D)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0)
    delta = tl.load(delta_ptr + head * L + rows, mask=rows < L, other=0.0)
    kv = (head // GROUP) * S * D
    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)
    end = S
    if CAUSAL:
        end = tl.minimum(S, first + BLOCK_Q)
    start = 0
    while start < end:
        cols = start + tl.arange(0, BLOCK_K)
        kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
        k = tl.load(k_ptr + kv + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + kv + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
        p = tl.exp(tl.dot(q, tl.trans(k)) * scale - lse[:, None])
        ok = (cols[None, :] < S) & (rows[:, None] >= 0)
        if CAUSAL:
            ok = ok & (cols[None, :] <= rows[:, None])
        p = tl.where(ok, p, 0.0)
        ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k)
        start += BLOCK_K
    tl.store(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq * scale, mask=q_mask)
'''

MEASURED = [
    # the preprocess
    Bug("delta_sum_of_do", "backward",
        ((_DELTA, "    tl.store(delta_ptr + head * L + rows, tl.sum(do, axis=1), mask=rows < L)\n", 1),),
        "formula", "Δ taken as the row sum of dO alone: it is the row sum of dO ∘ O"),
    Bug("delta_without_head", "backward",
        ((_DELTA, "    tl.store(delta_ptr + rows, tl.sum(o * do, axis=1), mask=rows < L)\n", 1),),
        "address", "Δ stored at delta + rows, the head's offset head·L forgotten: every head writes head 0's slots"),
    Bug("preprocess_rows_not_masked", "backward",
        ((_PRE_MASK, "    mask = dims[None, :] < D\n    offsets = head * L * D", 1),),
        "mask", "the preprocess bounds only the head lanes: the last row block reads o and dO past row L"),
    # the dK/dV walk
    Bug("ds_without_delta", "backward",
        ((_DS_T, "    ds_t = p_t * dp_t                                   # dSᵀ", 1),),
        "formula", "dS written P ∘ dP: the softmax backward's − Δ term is dropped"),
    Bug("dk_from_do", "backward",
        ((_DK_ACC, "    dk += tl.dot(ds_t.to(q.dtype), do)                   # dK", 1),),
        "formula", "dK multiplied dSᵀ by dO instead of Q (the dV line copied)"),
    Bug("dv_overwritten", "backward",
        ((_DV_ACC, "    dv = tl.dot(p_t.to(do.dtype), do)                   # dV", 1),),
        "accumulate", "dV is set to each query block's Pᵀ dO instead of adding it: only the last query block counts"),
    Bug("dkdv_causal_strict", "backward",
        ((_MASK_T, "        p_t = tl.where(cols[:, None] < rows[None, :], p_t, 0.0)\n", 1),),
        "mask", "the dK/dV walk's causal mask is j < i: the diagonal's own weight is dropped"),
    Bug("dkdv_mask_fill_neg_inf", "backward",
        ((_MASK_T, "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, float(\"-inf\"))\n", 1),),
        "fill", "the hidden weights set to -inf (the forward's score fill) instead of 0: P is a probability here, already exponentiated"),
    Bug("dk_not_scaled", "backward",
        ((_DK_SCALE, "    # dS is the gradient", 1),),
        "formula", "dK is never multiplied by the scale: dS is the gradient of scale · q kᵀ"),
    Bug("dk_stored_at_kv_head", "backward",
        ((_DK_STORE, _DK_STORE.replace("dk_ptr + head * S * D", "dk_ptr + kv_head * S * D"), 1),),
        "address", "dK stored at the key/value head's slot, not the query head's share: with grouped-query attention the GROUP shares overwrite each other"),
    Bug("dkdv_walk_to_S", "backward",
        ((_DKDV_TAIL, "    for start in range(after, S, BLOCK_Q):\n", 1),),
        "loop", "the dK/dV walk over the query blocks runs to S, the key count, not L: wrong whenever L ≠ S"),
    # the dQ walk
    Bug("dq_lse_natural", "backward",
        ((_DQ_LSE, _DQ_LSE.replace("other=0.0) * 1.4426950408889634\n", "other=0.0)\n", 1), 1),),
        "formula", "the dQ walk subtracts lse in natural-log units from base-2 scores: P is rebuilt wrong"),
    Bug("dq_kv_head_not_grouped", "backward",
        ((_DQ_KHEAD, "    k_head = k_ptr + head * S * D  # the key/value head", 1),),
        "address", "the dQ walk reads key head `head`, not head // GROUP: out of range with grouped-query attention"),
    Bug("dq_overwritten", "backward",
        ((_DQ_ACC, "    dq = tl.dot(ds.to(k.dtype), k)                         # dQ", 1),),
        "accumulate", "dQ is replaced by each key block's dS K instead of summed over the key blocks"),
    Bug("dq_causal_mask_transposed", "backward",
        ((_MASK_Q, "        p = tl.where(rows[:, None] <= cols[None, :], p, 0.0)\n", 1),),
        "mask", "the dQ walk's causal mask written i <= j (transposed): the diagonal blocks keep the future keys and drop the past ones"),
    Bug("dq_scale_hardcoded", "backward",
        ((_DQ_SCALE, "    dq *= 0.25\n", 1),),
        "hardcoded", "dQ scaled by 0.25, 1/sqrt(16) of the documented D, not the scale passed"),
]

RIGHT = [
    Right("dq_by_atomics_in_dkdv",
          (Kernel("attn_bwd_dkdv_kernel", _DKDV_ATOMIC_DQ), Kernel("attn_bwd_dq_kernel", _DQ_NOTHING)),
          "dQ summed in the dK/dV walk with tl.atomic_add (the page's alternative) and the dQ kernel left empty"),
    Right("dq_one_loop_natural_exp", (Kernel("attn_bwd_dq_kernel", _DQ_ONE_LOOP),),
          "the dQ walk as one while loop, every block masked when causal, P rebuilt with the natural exp"),
    Right("dkdv_all_masked_from_zero",
          (("        for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):\n",
            "        for start in range(0, after, BLOCK_Q):\n", 1),),
          "the causal dK/dV walk starts at query block 0 (the blocks before the diagonal are all masked to 0): more work, the same sums"),
    Right("delta_from_products",
          ((_DELTA, "    prod = o * do\n    delta = tl.sum(prod, axis=1)\n"
                    "    tl.store(delta_ptr + head * L + rows, delta, mask=rows < L)\n", 1),),
          "Δ computed in two named steps before the store"),
]
