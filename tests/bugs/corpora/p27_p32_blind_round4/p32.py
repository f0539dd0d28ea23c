"""Fourth blind corpus, puzzle 32 (FlashAttention backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right, carried_forward
from bugs.then import P32_BEFORE_GQA, P32_GQA

_DELTA_STORE = "    tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)\n"
_PT = "    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])\n"
_PT_MASK = "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)\n"
_DV = "    dv += tl.dot(p_t.to(do.dtype), do)                  # dV = Pᵀ dO\n"
_DS_T = "    ds_t = p_t * (dp_t - delta[None, :])                 # dSᵀ = Pᵀ ∘ (dPᵀ − Δ)\n"
_DK = "    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK = dSᵀ Q (times scale, at the end)\n"
_DKDV_CAUSAL = ("        for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):\n"
                "            dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,\n"
                "                               qk_scale, D, BLOCK_Q, True)\n")
_DKDV_WHOLE = ("    for start in range(after, L, BLOCK_Q):\n"
               "        dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,\n"
               "                           qk_scale, D, BLOCK_Q, False)\n")
_DQ_P = "    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])\n"
_DQ_DS = "    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])  # dS = P ∘ (dO Vᵀ − Δ)\n"
_DQ_ADD = "    dq += tl.dot(ds.to(k.dtype), k)                        # dQ = dS K (times scale, at the end)\n"
_DQ_LSE = "    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634\n"
_DQ_DELTA = "    delta = tl.load(delta_ptr + head * L + rows, mask=rows < L, other=0.0)\n    k_head"
_DQ_SCALE = "    k_head = k_ptr + head * S * D\n    v_head = v_ptr + head * S * D\n    qk_scale = scale * 1.4426950408889634\n    dq = tl.zeros"
_DQ_LOOPS = ("    for start in range(0, whole, BLOCK_K):\n"
             "        dq = dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D, BLOCK_K, False)\n"
             "    for start in range(whole, end, BLOCK_K):\n"
             "        dq = dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D, BLOCK_K, True)\n")
_DQ_STORE = "    tl.store(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq, mask=q_mask)\n"

MEASURED = [
    Bug("delta_store_without_head_offset", "backward",
        ((_DELTA_STORE, _DELTA_STORE.replace("delta_ptr + head * L + rows", "delta_ptr + rows"), 1),),
        "address", "the preprocess stores Δ at rows alone, without the head's offset head · L: every head writes the first head's Δ, the others keep what the buffer held",
        notes="shows only with several heads"),
    Bug("dkdv_lse_broadcast_along_keys", "backward",
        ((_PT, _PT.replace("lse[None, :]", "lse[:, None]"), 1),),
        "formula", "the transposed Pᵀ ([keys, queries]) subtracts lse[:, None], each key's row its own query's lse: lse belongs along the query axis, lse[None, :]",
        accept=("address",)),
    Bug("dv_from_q", "backward",
        ((_DV, "    dv += tl.dot(p_t.to(q.dtype), q)                    # dV = Pᵀ Q\n", 1),),
        "formula", "dV = Pᵀ Q: the queries where the upstream gradient dO belongs"),
    Bug("ds_from_diagonal_jacobian", "backward",
        ((_DS_T, "    ds_t = p_t * (1.0 - p_t) * dp_t                      # the softmax's derivative, elementwise\n", 1),),
        "formula", "dS = P(1 − P) dP, the diagonal of the softmax's Jacobian alone (as for a sigmoid): the row's coupling term −P Δ is replaced by −P² dP"),
    Bug("dk_from_p", "backward",
        ((_DK, "    dk += tl.dot(p_t.to(q.dtype), q)                     # dK = Pᵀ Q\n", 1),),
        "formula", "dK = Pᵀ Q: the probabilities where the score gradient dSᵀ belongs"),
    Bug("dq_qk_scale_without_log2e", "backward",
        ((_DQ_SCALE, _DQ_SCALE.replace("qk_scale = scale * 1.4426950408889634", "qk_scale = scale"), 1),),
        "formula", "the dQ kernel's scores scaled by scale alone, while its lse is converted to base 2: P = 2^(s − lse · log2 e) is not the forward's softmax"),
    Bug("dkdv_walk_stops_a_block_early", "backward",
        ((_DKDV_WHOLE, _DKDV_WHOLE.replace("range(after, L, BLOCK_Q)", "range(after, L - BLOCK_Q, BLOCK_Q)"), 1),),
        "loop", "the dK/dV walk over the whole query blocks ends at L − BLOCK_Q: the last query block (or the last whole one) never adds its share"),
    Bug("dq_walk_skips_first_key_block", "backward",
        ((_DQ_LOOPS, _DQ_LOOPS.replace("range(0, whole, BLOCK_K)", "range(BLOCK_K, whole, BLOCK_K)"), 1),),
        "loop", "the dQ kernel's unmasked walk starts at BLOCK_K: the first key block (keys 0 .. BLOCK_K − 1) never adds to dQ",
        notes="shows wherever the unmasked walk has a key block (not causal, or a query block past the first key block)"),
    Bug("do_head_from_q_ptr", "backward",
        (("    do_head = do_ptr + head * L * D\n", "    do_head = q_ptr + head * L * D\n", 1),),
        "address", "the dK/dV kernel's dO head pointer built from q_ptr (the line above, copied): dV = Pᵀ Q and dPᵀ = V Qᵀ"),
    Bug("dq_lse_rounded_to_bf16", "backward",
        ((_DQ_LSE, "    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0).to(tl.bfloat16).to(tl.float32) * 1.4426950408889634\n", 1),),
        "precision", "the dQ kernel rounds lse to bf16 after the load: an lse near 5 is off by up to 0.016, every P of the row by 1.6 %"),
    Bug("dq_lse_load_unmasked", "backward",
        ((_DQ_LSE, "    lse = tl.load(lse_ptr + head * L + rows) * 1.4426950408889634\n", 1),),
        "mask", "the dQ kernel loads lse without the row mask: the padded rows of the last query block read the next head's lse, and past the end after the last head",
        notes="the stray rows are never stored: the out-of-bounds read itself is the fault (L not a multiple of BLOCK_Q)"),
    Bug("dkdv_causal_mask_local_indices", "backward",
        ((_PT_MASK, "        p_t = tl.where(tl.arange(0, BLOCK_K)[:, None] <= (rows - start)[None, :], p_t, 0.0)\n", 1),),
        "mask", "the dK/dV causal mask compares the key's and the query's positions inside their blocks, not their absolute indices: right only where the two blocks start at the same index",
        notes="causal cases with BLOCK_Q != BLOCK_K"),
    Bug("dkdv_walk_steps_documented_16", "backward",
        ((_DKDV_WHOLE, _DKDV_WHOLE.replace("range(after, L, BLOCK_Q)", "range(after, L, 16)"), 1),),
        "hardcoded", "the dK/dV walk steps 16 query rows (the documented BLOCK_Q) while each step loads BLOCK_Q: with BLOCK_Q = 32 every row is counted twice",
        notes="shows only where BLOCK_Q != 16"),
    Bug("dq_delta_read_from_lse", "backward",
        ((_DQ_DELTA, _DQ_DELTA.replace("tl.load(delta_ptr + head * L + rows", "tl.load(lse_ptr + head * L + rows"), 1),),
        "address", "the dQ kernel loads Δ from lse_ptr (the line above, copied): dS = P(dP − lse)"),
    Bug("dq_added_twice", "backward",
        ((_DQ_LOOPS, _DQ_LOOPS.replace("        dq = dq_step(", "        dq += dq_step("), 1),),
        "accumulate", "dq += dq_step(dq, ...), while dq_step already returns dq plus the block's share: the running dQ is added to itself at every step"),
    Bug("dq_written_into_q", "backward",
        ((_DQ_STORE, "    tl.store(q_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq, mask=q_mask)\n", 1),),
        "inplace", "dQ stored over q (the last kernel, so q is not needed any more): the input q is destroyed and dq is never written"),
    Bug("dq_lse_heads_documented_40", "backward",
        ((_DQ_LSE, _DQ_LSE.replace("lse_ptr + head * L + rows", "lse_ptr + head * 40 + rows"), 1),),
        "hardcoded", "the dQ kernel's lse head offset written head · 40 (the documented L): other lengths read another head's lse",
        notes="shows only where L != 40 and there are several heads"),
]

_DKDV_ONE_LOOP = ("    after = 0\n"
                  "    begin = 0\n"
                  "    if CAUSAL:\n"
                  "        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)\n"
                  "        begin = (first // BLOCK_Q) * BLOCK_Q\n"
                  "    for start in range(begin, L, BLOCK_Q):\n"
                  "        if start < after:  # a block across the diagonal\n"
                  "            dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,\n"
                  "                               qk_scale, D, BLOCK_Q, True)\n"
                  "        else:\n"
                  "            dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,\n"
                  "                               qk_scale, D, BLOCK_Q, False)\n")

_PREPROCESS_CHUNKS = '''
@triton.jit
def attn_bwd_preprocess(o_ptr, do_ptr, delta_ptr, L, D: tl.constexpr, BLOCK_Q: tl.constexpr,
                        BLOCK_D: tl.constexpr):
    """Δ_i = Σ_d dO_id · O_id, the head dimension summed 16 lanes at a time (BLOCK_D >= 16)."""
    head = tl.program_id(1)
    rows = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    total = tl.zeros([BLOCK_Q], dtype=tl.float32)
    for d0 in tl.static_range(0, BLOCK_D, 16):
        dims = d0 + tl.arange(0, 16)
        mask = (rows[:, None] < L) & (dims[None, :] < D)
        offsets = head * L * D + rows[:, None] * D + dims[None, :]
        o = tl.load(o_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        do = tl.load(do_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        total += tl.sum(o * do, axis=1)
    tl.store(delta_ptr + head * L + rows, total, mask=rows < L)
'''

_DQ_STEP_T = '''
@triton.jit
def dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale,
            D: tl.constexpr, BLOCK_K: tl.constexpr, MASK: tl.constexpr):
    """One key block's share of dQ, k and v loaded as [BLOCK_D, BLOCK_K] tiles (kᵀ, vᵀ)."""
    cols = start + tl.arange(0, BLOCK_K)
    kv_mask_t = (cols[None, :] < S) & (dims[:, None] < D)
    k_t = tl.load(k_head + cols[None, :] * D + dims[:, None], mask=kv_mask_t, other=0.0)
    v_t = tl.load(v_head + cols[None, :] * D + dims[:, None], mask=kv_mask_t, other=0.0)
    p = tl.exp2(tl.dot(q, k_t) * qk_scale - lse[:, None])
    if MASK:
        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    ds = p * (tl.dot(do, v_t) - delta[:, None])
    dq += tl.dot(ds.to(k_t.dtype), tl.trans(k_t))
    return dq
'''

RIGHT = [
    Right("ds_expanded",
          ((_DS_T, "    ds_t = p_t * dp_t - p_t * delta[None, :]\n", 1),
           (_DQ_DS, "    ds = p * tl.dot(do, tl.trans(v)) - p * delta[:, None]\n", 1)),
          "dS = P ∘ dP − P ∘ Δ, the product distributed, in both kernels"),
    Right("dkdv_one_loop_runtime_if",
          (("    after = 0\n    if CAUSAL:\n        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)\n"
            + _DKDV_CAUSAL + _DKDV_WHOLE, _DKDV_ONE_LOOP, 1),),
          "the dK/dV walk as one loop from the first query block that sees the keys, a runtime if choosing the masked step before `after`"),
    Right("preprocess_in_dim_chunks", (Kernel("attn_bwd_preprocess", _PREPROCESS_CHUNKS),),
          "Δ summed over the head dimension 16 lanes at a time, a static loop"),
    Right("dq_keys_loaded_transposed", (Kernel("dq_step", _DQ_STEP_T),),
          "the dQ step loads kᵀ and vᵀ directly ([BLOCK_D, BLOCK_K]) and transposes kᵀ back for dS K"),
    Right("dq_step_returns_its_share",
          ((_DQ_ADD, "    return tl.dot(ds.to(k.dtype), k)\n", 1),
           ("    return dq\n\n\n@triton.jit\ndef attn_bwd_dq_kernel", "\n\n@triton.jit\ndef attn_bwd_dq_kernel", 1),
           (_DQ_LOOPS, _DQ_LOOPS.replace("        dq = dq_step(", "        dq += dq_step("), 1)),
          "dq_step returns only the key block's share and the dQ kernel adds it"),
]

# written before grouped-query attention, and brought up to it (tests/bugs/then.py)
MEASURED = carried_forward(P32_BEFORE_GQA, MEASURED, P32_GQA)
RIGHT = carried_forward(P32_BEFORE_GQA, RIGHT, P32_GQA)
