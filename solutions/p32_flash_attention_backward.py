"""Puzzle 32 reference kernels: the FlashAttention backward, causal or not, from the forward's o and lse.

    q: [B, H, L, D]    k, v: [B, KV, S, D]    o, do: [B, H, L, D]    lse: [B, H, L] float32 (natural log)
    P = exp(scale · q kᵀ − lse)   (0 above the diagonal when causal)
    dV = Pᵀ dO    dP = dO Vᵀ    Δ = rowsum(dO ∘ O)    dS = P ∘ (dP − Δ)
    dQ = scale · dS K    dK = scale · dSᵀ Q
    grouped-query attention (puzzle 31): query head h reads key/value head h // GROUP (GROUP = H / KV).
    A key/value head's dK and dV are the sum of its GROUP query heads' shares: the kernels write one
    share per query head, into dk and dv of shape [B, H, S, D] (fp32 buffers when GROUP > 1), and the
    checker adds each group's GROUP shares (as FlashAttention-2 does)

The checker runs the forward itself (o, lse), then launches, with delta a float32 [B, H, L] buffer
and dq a float32 buffer of zeros:
    attn_bwd_preprocess[(cdiv(L, BLOCK_Q), B * H)](o, do, delta, L, D=D, BLOCK_Q=BLOCK_Q, BLOCK_D=BLOCK_D)
    attn_bwd_dkdv_kernel[(cdiv(S, BLOCK_K), B * H)](q, k, v, do, lse, delta, dq, dk, dv, L, S, scale, GROUP, D=D,
        BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, CAUSAL=CAUSAL)
    attn_bwd_dq_kernel[(cdiv(L, BLOCK_Q), B * H)](q, k, v, do, lse, delta, dq, L, S, scale, GROUP, D=D,
        BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, CAUSAL=CAUSAL)
The large bf16 cases at D = 128 give the two walks tiles of opposite shapes (they measured twice as
fast on an H100): dK/dV BLOCK_Q = 32, BLOCK_K = 64; dQ BLOCK_Q = 128, BLOCK_K = 64, its own grid.
"""
import triton
import triton.language as tl


@triton.jit
def attn_bwd_preprocess(o_ptr, do_ptr, delta_ptr, L, D: tl.constexpr, BLOCK_Q: tl.constexpr,
                        BLOCK_D: tl.constexpr):
    """Δ_i = Σ_d dO_id · O_id for BLOCK_Q rows of one head. Grid: (cdiv(L, BLOCK_Q), B * H)."""
    head = tl.program_id(1)
    rows = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, BLOCK_D)
    mask = (rows[:, None] < L) & (dims[None, :] < D)
    offsets = head * L * D + rows[:, None] * D + dims[None, :]
    o = tl.load(o_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    do = tl.load(do_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    # Δ_i = Σ_j P_ij dP_ij = Σ_j P_ij (dO_i · v_j) = dO_i · o_i: the softmax backward's row sum
    # (puzzle 12's Σ dy·y), got from D numbers per row instead of S
    tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)


@triton.jit
def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
              D: tl.constexpr, BLOCK_Q: tl.constexpr, MASK: tl.constexpr):
    """One query block's share of dK and dV for this program's key block, in transposed form
    ([BLOCK_K, BLOCK_Q] tiles, so that Pᵀ and dSᵀ come out of tl.dot without a transpose)."""
    rows = start + tl.arange(0, BLOCK_Q)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_head + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    # padded query rows load q = dO = lse = Δ = 0: their Pᵀ is exp2(0) = 1, but it multiplies dO = 0
    # (dV) and dPᵀ − Δ = 0 − 0 (dK): they add nothing, and need no mask
    lse = tl.load(lse_head + rows, mask=rows < L, other=0.0) * 1.4426950408889634  # base 2, as the scores
    delta = tl.load(delta_head + rows, mask=rows < L, other=0.0)
    # P rebuilt from the forward's logsumexp: one exp2 per score, no max, no sum, no second pass
    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])
    if MASK:  # a block across the diagonal: query i sees key j only if j <= i
        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)
    dv += tl.dot(p_t.to(do.dtype), do)                  # dV = Pᵀ dO
    dp_t = tl.dot(v, tl.trans(do))                       # dPᵀ = V dOᵀ
    ds_t = p_t * (dp_t - delta[None, :])                 # dSᵀ = Pᵀ ∘ (dPᵀ − Δ)
    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK = dSᵀ Q (times scale, at the end)
    return dk, dv


@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale,
                         GROUP, D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                         CAUSAL: tl.constexpr):
    """dK and dV of BLOCK_K keys of one head: the program owns its key block and walks the queries,
    so every dK and dV row has one writer (no atomics). Grid: (cdiv(S, BLOCK_K), B * H): with
    grouped-query attention, the share of one query head, from the key/value head it reads.

    dq_ptr (float32, zeros) is there for a dQ summed here instead, with tl.atomic_add: every key block
    adds to every query row it sees, so a row has many writers. This kernel leaves dQ to the next."""
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_K
    cols = first + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    # the key/value head this query head reads (puzzle 31): head counts (batch, query head) pairs
    kv_head = head // GROUP
    k = tl.load(k_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_ptr + kv_head * S * D + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    q_head = q_ptr + head * L * D
    do_head = do_ptr + head * L * D
    lse_head = lse_ptr + head * L
    delta_head = delta_ptr + head * L
    qk_scale = scale * 1.4426950408889634
    dk = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    # causal: no query before this key block's first key sees it, so the walk starts at the query
    # block holding `first`; the blocks up to the one holding the last key cross the diagonal and
    # are masked, the later ones are seen whole. (Padded keys past S end in rows no store writes.)
    after = 0
    if CAUSAL:
        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q)
        for start in range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q):
            dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,
                               qk_scale, D, BLOCK_Q, True)
    for start in range(after, L, BLOCK_Q):
        dk, dv = dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L,
                           qk_scale, D, BLOCK_Q, False)
    dk *= scale  # dS is the gradient of scale · q kᵀ: the scale comes back once, here
    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)
    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)


@triton.jit
def dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale,
            D: tl.constexpr, BLOCK_K: tl.constexpr, MASK: tl.constexpr):
    """One key block's share of dQ for this program's query block."""
    cols = start + tl.arange(0, BLOCK_K)
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])
    if MASK:
        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    # a padded key (past S) loads k = v = 0: its P is not 0, but dP = dO · 0 and its dS multiplies
    # k = 0 below, so it adds nothing to dQ
    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])  # dS = P ∘ (dO Vᵀ − Δ)
    dq += tl.dot(ds.to(k.dtype), k)                        # dQ = dS K (times scale, at the end)
    return dq


@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP,
                       D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                       CAUSAL: tl.constexpr):
    """dQ of BLOCK_Q queries of one head, walking the keys as the forward does (a second pass over
    the scores: recomputing P costs less than summing dQ with atomics). Grid: (cdiv(L, BLOCK_Q), B * H)."""
    head = tl.program_id(1)
    first = tl.program_id(0) * BLOCK_Q
    rows = first + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, BLOCK_D)
    q_mask = (rows[:, None] < L) & (dims[None, :] < D)
    q = tl.load(q_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    do = tl.load(do_ptr + head * L * D + rows[:, None] * D + dims[None, :], mask=q_mask, other=0.0)
    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + head * L + rows, mask=rows < L, other=0.0)
    k_head = k_ptr + (head // GROUP) * S * D  # the key/value head this query head reads (puzzle 31)
    v_head = v_ptr + (head // GROUP) * S * D
    qk_scale = scale * 1.4426950408889634
    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)
    # the forward's walk: causal, whole blocks before the first query's diagonal, then the masked
    # ones up to the last query's; not causal, every key block (the padded keys need no mask, above)
    whole = S
    end = S
    if CAUSAL:
        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K
        end = tl.minimum(S, first + BLOCK_Q)
    for start in range(0, whole, BLOCK_K):
        dq = dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D, BLOCK_K, False)
    for start in range(whole, end, BLOCK_K):
        dq = dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D, BLOCK_K, True)
    dq *= scale
    tl.store(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq, mask=q_mask)
