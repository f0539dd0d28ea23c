"""The attention designs timed for the p31 and p32 pages (book/data/attention_designs.json): not the
puzzles' reference kernels, but one kernel per pass with a switch per design, so that each design
differs from the others in that one thing.

Forward: K and V by pointers or by TMA tensor descriptors (tl.make_tensor_descriptor: the copy
engine), a grid of one program per query block or a persistent one (a program per multiprocessor,
tiles in head order), tl.range's warp_specialize, and OVERLAP: the next key block's q kᵀ issued
before this block's softmax (see disassemble.py). Backward: the dK/dV walk (dQ left to the dQ walk,
or added by tl.atomic_add, or by the copy engine's reductions) and the dQ walk. Every kernel takes
grouped-query heads: H query heads per batch, H // G key/value heads.
"""
import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _load_tile(src, ptr_head, first, n_rows, D: tl.constexpr, ROWS: tl.constexpr, BD: tl.constexpr,
               TMA: tl.constexpr, MASK_ROWS: tl.constexpr):
    if TMA:
        t = src.load([first, 0])
    else:
        rows = first + tl.arange(0, ROWS)
        dims = tl.arange(0, BD)
        if MASK_ROWS:
            t = tl.load(ptr_head + rows[:, None] * D + dims[None, :],
                        mask=(rows[:, None] < n_rows) & (dims[None, :] < D), other=0.0)
        else:
            t = tl.load(ptr_head + rows[:, None] * D + dims[None, :], mask=dims[None, :] < D, other=0.0)
    return t


@triton.jit
def _make(ptr, head_off, n_rows, D: tl.constexpr, ROWS: tl.constexpr, BD: tl.constexpr, TMA: tl.constexpr):
    if TMA:
        return tl.make_tensor_descriptor(ptr + head_off, shape=[n_rows, D], strides=[D, 1], block_shape=[ROWS, BD])
    else:
        return ptr + head_off


@triton.jit
def _fwd_walk(acc, l, m, q, k_src, v_src, k_head, v_head, lo, hi, rows, S, qk_scale,
              D: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, MASKED: tl.constexpr, CAUSAL: tl.constexpr,
              TMA: tl.constexpr, WS: tl.constexpr):
    for start in tl.range(lo, hi, BK, warp_specialize=WS):
        k = _load_tile(k_src, k_head, start, S, D, BK, BD, TMA, MASKED)
        s = tl.dot(q, tl.trans(k))
        if MASKED:
            cols = start + tl.arange(0, BK)
            visible = cols[None, :] < S
            if CAUSAL:
                visible = visible & (cols[None, :] <= rows[:, None])
            s = tl.where(visible, s * qk_scale, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, axis=1))
            p = tl.exp2(s - m_new[:, None])
        else:
            # the max on the raw scores, the scale folded into the exponent's argument (one FMA)
            m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)
            p = tl.exp2(s * qk_scale - m_new[:, None])
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        v = _load_tile(v_src, v_head, start, S, D, BK, BD, TMA, MASKED)
        acc = tl.dot(p.to(v.dtype), v, acc)
        m = m_new
    return acc, l, m


@triton.jit
def _softmax_step(acc, l, m, s, v, qk_scale):
    m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)
    p = tl.exp2(s * qk_scale - m_new[:, None])
    alpha = tl.exp2(m - m_new)
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None]
    acc = tl.dot(p.to(v.dtype), v, acc)
    return acc, l, m_new


@triton.jit
def _fwd_walk_overlap(acc, l, m, q, k_src, v_src, k_head, v_head, lo, hi, S, qk_scale,
                      D: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, TMA: tl.constexpr):
    """The unmasked walk with the next block's q kᵀ issued before this block's softmax (the tensor
    cores work on block j + 1 while the other units exponentiate block j)."""
    if hi > lo:
        k = _load_tile(k_src, k_head, lo, S, D, BK, BD, TMA, False)
        s = tl.dot(q, tl.trans(k))
        for start in tl.range(lo + BK, hi, BK):
            k = _load_tile(k_src, k_head, start, S, D, BK, BD, TMA, False)
            s_next = tl.dot(q, tl.trans(k))
            v = _load_tile(v_src, v_head, start - BK, S, D, BK, BD, TMA, False)
            acc, l, m = _softmax_step(acc, l, m, s, v, qk_scale)
            s = s_next
        v = _load_tile(v_src, v_head, hi - BK, S, D, BK, BD, TMA, False)
        acc, l, m = _softmax_step(acc, l, m, s, v, qk_scale)
    return acc, l, m


@triton.jit
def _fwd_tile(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, qk_scale, head, kv_head, qblock,
              D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, CAUSAL: tl.constexpr,
              TMA: tl.constexpr, WS: tl.constexpr, OVERLAP: tl.constexpr):
    first = qblock * BQ
    rows = first + tl.arange(0, BQ)
    dims = tl.arange(0, BD)
    q_src = _make(q_ptr, head * L * D, L, D, BQ, BD, TMA)
    k_src = _make(k_ptr, kv_head * S * D, S, D, BK, BD, TMA)
    v_src = _make(v_ptr, kv_head * S * D, S, D, BK, BD, TMA)
    q = _load_tile(q_src, q_ptr + head * L * D, first, L, D, BQ, BD, TMA, True)
    m = tl.full([BQ], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BQ], dtype=tl.float32)
    acc = tl.zeros([BQ, BD], dtype=tl.float32)
    whole = S
    end = S
    if CAUSAL:
        whole = tl.minimum(S, first + 1)
        end = tl.minimum(S, first + BQ)
    whole = (whole // BK) * BK
    k_head = k_ptr + kv_head * S * D
    v_head = v_ptr + kv_head * S * D
    if OVERLAP:
        acc, l, m = _fwd_walk_overlap(acc, l, m, q, k_src, v_src, k_head, v_head, 0, whole, S, qk_scale, D, BK, BD,
                                      TMA)
    else:
        acc, l, m = _fwd_walk(acc, l, m, q, k_src, v_src, k_head, v_head, 0, whole, rows, S, qk_scale, D, BK, BD,
                              False, CAUSAL, TMA, WS)
    acc, l, m = _fwd_walk(acc, l, m, q, k_src, v_src, k_head, v_head, whole, end, rows, S, qk_scale, D, BK, BD,
                          True, CAUSAL, TMA, False)
    o = acc / l[:, None]
    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o.to(o_ptr.dtype.element_ty),
             mask=(rows[:, None] < L) & (dims[None, :] < D))
    tl.store(lse_ptr + head * L + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < L)


@triton.jit
def fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale, H, G,
               D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, CAUSAL: tl.constexpr,
               TMA: tl.constexpr, WS: tl.constexpr, REVERSE: tl.constexpr, OVERLAP: tl.constexpr):
    """Grid (cdiv(L, BQ), B * H). OVERLAP: the unmasked walk issues the next block's q kᵀ first."""
    head = tl.program_id(1)
    kv_head = (head // H) * (H // G) + (head % H) // G
    qblock = tl.program_id(0)
    if REVERSE:  # causal: the longest walks first
        qblock = tl.num_programs(0) - 1 - qblock
    _fwd_tile(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale * 1.4426950408889634, head, kv_head, qblock,
              D, BQ, BK, BD, CAUSAL, TMA, WS, OVERLAP)


@triton.jit
def fwd_persistent(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale, H, G, n_heads,
                   D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, CAUSAL: tl.constexpr,
                   TMA: tl.constexpr, WS: tl.constexpr, REVERSE: tl.constexpr, OVERLAP: tl.constexpr):
    """Grid (number of SMs,): tiles in (head, query block) order, so that the programs working at
    one time share a head's K and V in L2; causal: longest query blocks first."""
    n_q = tl.cdiv(L, BQ)
    total = n_q * n_heads
    for tile in tl.range(tl.program_id(0), total, tl.num_programs(0)):
        qblock = tile % n_q
        if REVERSE:
            qblock = n_q - 1 - qblock
        head = tile // n_q
        kv_head = (head // H) * (H // G) + (head % H) // G
        _fwd_tile(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale * 1.4426950408889634, head, kv_head, qblock,
                  D, BQ, BK, BD, CAUSAL, TMA, WS, OVERLAP)


# ---------------------------------------------------------------- backward

@triton.jit
def bwd_preprocess(o_ptr, do_ptr, delta_ptr, L, D: tl.constexpr, BQ: tl.constexpr, BD: tl.constexpr):
    head = tl.program_id(1)
    rows = tl.program_id(0) * BQ + tl.arange(0, BQ)
    dims = tl.arange(0, BD)
    mask = (rows[:, None] < L) & (dims[None, :] < D)
    off = head * L * D + rows[:, None] * D + dims[None, :]
    o = tl.load(o_ptr + off, mask=mask, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + off, mask=mask, other=0.0).to(tl.float32)
    tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)


@triton.jit
def _kv_step(dk, dv, k, v, q_src, do_src, q_head, do_head, lse_head, delta_head, dq_dst, dq_head, start, cols, L,
             qk_scale, scale, D: tl.constexpr, BQ: tl.constexpr, BD: tl.constexpr, MASK: tl.constexpr,
             TMA: tl.constexpr, ATOMIC: tl.constexpr):
    rows = start + tl.arange(0, BQ)
    q = _load_tile(q_src, q_head, start, L, D, BQ, BD, TMA, True)
    do = _load_tile(do_src, do_head, start, L, D, BQ, BD, TMA, True)
    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)
    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])
    if MASK:
        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)
    dv = tl.dot(p_t.to(do.dtype), do, dv)
    dp_t = tl.dot(v, tl.trans(do))
    ds_t = (p_t * (dp_t - delta[None, :])).to(q.dtype)
    dk = tl.dot(ds_t, q, dk)
    if ATOMIC == 1:
        dims = tl.arange(0, BD)
        dq = tl.dot(tl.trans(ds_t), k) * scale
        tl.atomic_add(dq_head + rows[:, None] * D + dims[None, :], dq,
                      mask=(rows[:, None] < L) & (dims[None, :] < D), sem="relaxed")
    elif ATOMIC == 2:
        dq = tl.dot(tl.trans(ds_t), k) * scale
        dq_dst.atomic_add([start, 0], dq)
    return dk, dv


@triton.jit
def bwd_dkdv(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale, H, G,
             D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, CAUSAL: tl.constexpr,
             TMA: tl.constexpr, ATOMIC: tl.constexpr):
    """Grid (cdiv(S, BK), B * H // G): one key block of one K/V head, walking the queries of its G
    query heads. ATOMIC: 0 no dQ, 1 dQ by tl.atomic_add, 2 by a TMA reduce."""
    kv_head = tl.program_id(1)
    HK = H // G
    first = tl.program_id(0) * BK
    cols = first + tl.arange(0, BK)
    dims = tl.arange(0, BD)
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    k = tl.load(k_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    qk_scale = scale * 1.4426950408889634
    dk = tl.zeros([BK, BD], dtype=tl.float32)
    dv = tl.zeros([BK, BD], dtype=tl.float32)
    for g in range(G):
        head = (kv_head // HK) * H + (kv_head % HK) * G + g
        q_head = q_ptr + head * L * D
        do_head = do_ptr + head * L * D
        dq_head = dq_ptr + head * L * D
        q_src = _make(q_ptr, head * L * D, L, D, BQ, BD, TMA)
        do_src = _make(do_ptr, head * L * D, L, D, BQ, BD, TMA)
        dq_dst = dq_head
        if ATOMIC == 2:
            dq_dst = tl.make_tensor_descriptor(dq_head, shape=[L, D], strides=[D, 1], block_shape=[BQ, BD])
        lse_head = lse_ptr + head * L
        delta_head = delta_ptr + head * L
        after = 0
        if CAUSAL:
            after = tl.minimum(L, tl.cdiv(first + BK - 1, BQ) * BQ)
            for start in range((first // BQ) * BQ, after, BQ):
                dk, dv = _kv_step(dk, dv, k, v, q_src, do_src, q_head, do_head, lse_head, delta_head, dq_dst,
                                  dq_head, start, cols, L, qk_scale, scale, D, BQ, BD, True, TMA, ATOMIC)
        for start in range(after, L, BQ):
            dk, dv = _kv_step(dk, dv, k, v, q_src, do_src, q_head, do_head, lse_head, delta_head, dq_dst,
                              dq_head, start, cols, L, qk_scale, scale, D, BQ, BD, False, TMA, ATOMIC)
    dk *= scale
    tl.store(dk_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], dk.to(dk_ptr.dtype.element_ty), mask=kv_mask)
    tl.store(dv_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], dv.to(dv_ptr.dtype.element_ty), mask=kv_mask)


@triton.jit
def _q_step(dq, q, do, lse, delta, k_src, v_src, k_head, v_head, start, rows, S, qk_scale,
            D: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, MASK: tl.constexpr, TMA: tl.constexpr):
    k = _load_tile(k_src, k_head, start, S, D, BK, BD, TMA, True)
    v = _load_tile(v_src, v_head, start, S, D, BK, BD, TMA, True)
    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])
    if MASK:
        cols = start + tl.arange(0, BK)
        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
    dq = tl.dot(ds.to(k.dtype), k, dq)
    return dq


@triton.jit
def bwd_dq(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, H, G,
           D: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr, BD: tl.constexpr, CAUSAL: tl.constexpr,
           TMA: tl.constexpr):
    head = tl.program_id(1)
    kv_head = (head // H) * (H // G) + (head % H) // G
    first = tl.program_id(0) * BQ
    rows = first + tl.arange(0, BQ)
    dims = tl.arange(0, BD)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + head * L + rows, mask=rows < L, other=0.0)
    k_head = k_ptr + kv_head * S * D
    v_head = v_ptr + kv_head * S * D
    k_src = _make(k_ptr, kv_head * S * D, S, D, BK, BD, TMA)
    v_src = _make(v_ptr, kv_head * S * D, S, D, BK, BD, TMA)
    qk_scale = scale * 1.4426950408889634
    dq = tl.zeros([BQ, BD], dtype=tl.float32)
    whole = S
    end = S
    if CAUSAL:
        whole = (tl.minimum(S, first + 1) // BK) * BK
        end = tl.minimum(S, first + BQ)
    for start in range(0, whole, BK):
        dq = _q_step(dq, q, do, lse, delta, k_src, v_src, k_head, v_head, start, rows, S, qk_scale, D, BK, BD,
                     False, TMA)
    for start in range(whole, end, BK):
        dq = _q_step(dq, q, do, lse, delta, k_src, v_src, k_head, v_head, start, rows, S, qk_scale, D, BK, BD,
                     True, TMA)
    dq *= scale
    tl.store(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq, mask=q_mask)
