"""Puzzle 32's backward, the designs of issue 54: what each changes in the reference's walks
(solutions/p32_flash_attention_backward.py), the launches tried per head dim, and one launcher for
all of them. Timed by bwd_sweep.py on a GPU, compiled for the H100 without one by
bwd_compile_check.py, and checked against the reference on the CPU interpreter by cpu_smoke()
(tests/test_research.py).

The kernels take the reference's arguments, in its order, with the design's switches as further
constexprs; all switches off, each computes what the reference computes, in the same order (the
same bits). The switches:

  SLICE    the blocks that straddle the causal diagonal walked in steps of BLOCK / SLICE (queries in
           the dK/dV walk, keys in the dQ walk), masked; the other blocks in whole steps, unmasked
           (the slice factor of Triton's tutorial 06). A dK/dV program whose key block is narrower
           than a query step (BLOCK_K < BLOCK_Q) then also skips the query rows before its first
           key, which see none of its keys.
  SPLIT    the steps whose rows lie wholly inside the sequence loaded without a row mask, only the
           last, partial step with one: a mask the compiler cannot prove true costs a compare and a
           select per element, and may stop a load from being vectorised or pipelined as one copy.
  REVERSE  the dQ programs in reverse order: causal, a query block's walk grows with its index, so
           the longest walks go first and the last wave holds short ones.
  fused    (fused_kernel) the tutorial's arrangement: one program per key block computes that key
           block's dK and dV, then the dQ of the query block with the same index. Causal, the dK/dV
           walk of block i shrinks as the dQ walk of block i grows, so every program does about the
           same work, in one launch instead of two. It needs L = S and as many query blocks as key
           blocks (BLOCK_Q of the dQ half = BLOCK_K of the dK/dV half); not the puzzle's contract of
           three kernels, an anchor for what the arrangement is worth.

A launch is a Walk (tiles, warps, stages, switches) per kernel, or a Fused; `own` marks a walk run
by the reference's own kernel (the per-head-dim launches a spec can adopt without a kernel change).
They and the lists of launches tried are in book/p32_bwd_launches.py (the page names them).
No torch at import time: bwd_compile_check.py compiles these kernels where torch is absent.
"""
import sys
from pathlib import Path
from types import SimpleNamespace

import triton
import triton.language as tl

# the launches (Walk, Fused and the lists of them) are puzzle 32's page's too: it names them where no
# sweep is committed, so they live beside it, in book/p32_bwd_launches.py
sys.path.append(str(Path(__file__).resolve().parents[2] / "book"))
from p32_bwd_launches import DKDV, DKDV_DESIGNS, DQ, DQ_DESIGNS, FUSED, Fused, Walk, runs, switched  # noqa: E402,F401

LOG2E = 1.4426950408889634


# ---------------------------------------------------------------- kernels

@triton.jit
def _tile(ptr_head, idx, n, dims, D: tl.constexpr, BLOCK_D: tl.constexpr, INSIDE: tl.constexpr):
    """Rows idx of an [n, D] matrix, zeros past its ends. INSIDE: every row is below n (no row mask;
    no column mask either where BLOCK_D = D)."""
    offsets = idx[:, None] * D + dims[None, :]
    if INSIDE:
        if BLOCK_D == D:
            t = tl.load(ptr_head + offsets)
        else:
            t = tl.load(ptr_head + offsets, mask=dims[None, :] < D, other=0.0)
    else:
        t = tl.load(ptr_head + offsets, mask=(idx[:, None] < n) & (dims[None, :] < D), other=0.0)
    return t


@triton.jit
def _values(ptr_head, idx, n, INSIDE: tl.constexpr):
    """One float per row idx (lse, Δ), 0 past n."""
    if INSIDE:
        x = tl.load(ptr_head + idx)
    else:
        x = tl.load(ptr_head + idx, mask=idx < n, other=0.0)
    return x


@triton.jit
def _dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
               D: tl.constexpr, BLOCK_D: tl.constexpr, STEP: tl.constexpr, MASK: tl.constexpr,
               INSIDE: tl.constexpr):
    """STEP queries' share of dK and dV, as the reference's dkdv_step (transposed tiles)."""
    rows = start + tl.arange(0, STEP)
    q = _tile(q_head, rows, L, dims, D, BLOCK_D, INSIDE)
    do = _tile(do_head, rows, L, dims, D, BLOCK_D, INSIDE)
    lse = _values(lse_head, rows, L, INSIDE) * 1.4426950408889634
    delta = _values(delta_head, rows, L, INSIDE)
    p_t = tl.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse[None, :])
    if MASK:
        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)
    dv += tl.dot(p_t.to(do.dtype), do)
    dp_t = tl.dot(v, tl.trans(do))
    ds_t = p_t * (dp_t - delta[None, :])
    dk += tl.dot(ds_t.to(q.dtype), q)
    return dk, dv


@triton.jit
def _dkdv_program(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, L, S, scale, GROUP, head, kblock,
                  D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                  CAUSAL: tl.constexpr, SLICE: tl.constexpr, SPLIT: tl.constexpr):
    """dK and dV of key block `kblock` of query head `head` (the reference's attn_bwd_dkdv_kernel)."""
    first = kblock * BLOCK_K
    cols = first + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, BLOCK_D)
    kv_head = head // GROUP
    k = _tile(k_ptr + kv_head * S * D, cols, S, dims, D, BLOCK_D, False)
    v = _tile(v_ptr + kv_head * S * D, cols, S, dims, D, BLOCK_D, False)
    q_head = q_ptr + head * L * D
    do_head = do_ptr + head * L * D
    lse_head = lse_ptr + head * L
    delta_head = delta_ptr + head * L
    qk_scale = scale * 1.4426950408889634
    dk = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    STEP: tl.constexpr = BLOCK_Q // SLICE  # the diagonal's steps
    tl.static_assert(STEP >= 16)  # tl.dot's smallest side on a GPU
    after = 0
    if CAUSAL:  # the query steps holding a key of this block's diagonal, from the one holding `first`
        after = tl.minimum(L, tl.cdiv(first + BLOCK_K - 1, STEP) * STEP)
        for start in range((first // STEP) * STEP, after, STEP):
            dk, dv = _dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
                                D, BLOCK_D, STEP, True, False)
    if SPLIT:  # the whole steps inside L without a row mask; the last, partial one (if any) below
        inside = after + (L - after) // BLOCK_Q * BLOCK_Q
        for start in range(after, inside, BLOCK_Q):
            dk, dv = _dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
                                D, BLOCK_D, BLOCK_Q, False, True)
        after = inside
    for start in range(after, L, BLOCK_Q):
        dk, dv = _dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,
                            D, BLOCK_D, BLOCK_Q, False, False)
    dk *= scale
    kv_mask = (cols[:, None] < S) & (dims[None, :] < D)
    tl.store(dk_ptr + head * S * D + cols[:, None] * D + dims[None, :], dk, mask=kv_mask)
    tl.store(dv_ptr + head * S * D + cols[:, None] * D + dims[None, :], dv, mask=kv_mask)


@triton.jit
def _dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D: tl.constexpr,
             BLOCK_D: tl.constexpr, STEP: tl.constexpr, MASK: tl.constexpr, INSIDE: tl.constexpr):
    """STEP keys' share of dQ, as the reference's dq_step."""
    cols = start + tl.arange(0, STEP)
    k = _tile(k_head, cols, S, dims, D, BLOCK_D, INSIDE)
    v = _tile(v_head, cols, S, dims, D, BLOCK_D, INSIDE)
    p = tl.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse[:, None])
    if MASK:
        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)
    ds = p * (tl.dot(do, tl.trans(v)) - delta[:, None])
    dq += tl.dot(ds.to(k.dtype), k)
    return dq


@triton.jit
def _dq_program(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP, head, qblock,
                D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                CAUSAL: tl.constexpr, SLICE: tl.constexpr, SPLIT: tl.constexpr):
    """dQ of query block `qblock` of head `head` (the reference's attn_bwd_dq_kernel)."""
    first = qblock * BLOCK_Q
    rows = first + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, BLOCK_D)
    q = _tile(q_ptr + head * L * D, rows, L, dims, D, BLOCK_D, False)
    do = _tile(do_ptr + head * L * D, rows, L, dims, D, BLOCK_D, False)
    lse = _values(lse_ptr + head * L, rows, L, False) * 1.4426950408889634
    delta = _values(delta_ptr + head * L, rows, L, False)
    k_head = k_ptr + (head // GROUP) * S * D
    v_head = v_ptr + (head // GROUP) * S * D
    qk_scale = scale * 1.4426950408889634
    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)
    STEP: tl.constexpr = BLOCK_K // SLICE  # the diagonal's steps
    tl.static_assert(STEP >= 16)
    whole = S
    end = S
    if CAUSAL:
        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K
        end = tl.minimum(S, first + BLOCK_Q)
    first_key = 0
    if SPLIT:  # the whole blocks inside S without a column mask (causal: all of them up to `whole`)
        first_key = whole // BLOCK_K * BLOCK_K
        for start in range(0, first_key, BLOCK_K):
            dq = _dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D, BLOCK_D, BLOCK_K,
                          False, True)
    for start in range(first_key, whole, BLOCK_K):
        dq = _dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D, BLOCK_D, BLOCK_K,
                      False, False)
    for start in range(whole, end, STEP):
        dq = _dq_step(dq, q, do, lse, delta, k_head, v_head, start, rows, dims, S, qk_scale, D, BLOCK_D, STEP,
                      True, False)
    dq *= scale
    tl.store(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq,
             mask=(rows[:, None] < L) & (dims[None, :] < D))


@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale,
                         GROUP, D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                         CAUSAL: tl.constexpr, SLICE: tl.constexpr = 1, SPLIT: tl.constexpr = False):
    """The reference's dK/dV kernel with the SLICE and SPLIT switches. Grid (cdiv(S, BLOCK_K), B * H)."""
    _dkdv_program(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, L, S, scale, GROUP,
                  tl.program_id(1), tl.program_id(0), D, BLOCK_Q, BLOCK_K, BLOCK_D, CAUSAL, SLICE, SPLIT)


@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP,
                       D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                       CAUSAL: tl.constexpr, SLICE: tl.constexpr = 1, SPLIT: tl.constexpr = False,
                       REVERSE: tl.constexpr = False):
    """The reference's dQ kernel with the SLICE, SPLIT and REVERSE switches. Grid (cdiv(L, BLOCK_Q), B * H)."""
    qblock = tl.program_id(0)
    if REVERSE:  # causal: the longest walks first
        qblock = tl.num_programs(0) - 1 - qblock
    _dq_program(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP, tl.program_id(1), qblock,
                D, BLOCK_Q, BLOCK_K, BLOCK_D, CAUSAL, SLICE, SPLIT)


@triton.jit
def fused_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr, L, S, scale, GROUP,
                 D: tl.constexpr, BLOCK_Q1: tl.constexpr, BLOCK_K1: tl.constexpr, BLOCK_K2: tl.constexpr,
                 BLOCK_D: tl.constexpr, CAUSAL: tl.constexpr, SLICE: tl.constexpr, SPLIT: tl.constexpr):
    """Program i: dK and dV of key block i, then dQ of query block i (BLOCK_K1 queries). Grid
    (cdiv(S, BLOCK_K1), B * H), with L = S."""
    head = tl.program_id(1)
    block = tl.program_id(0)
    _dkdv_program(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, L, S, scale, GROUP, head, block,
                  D, BLOCK_Q1, BLOCK_K1, BLOCK_D, CAUSAL, SLICE, SPLIT)
    _dq_program(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, L, S, scale, GROUP, head, block,
                D, BLOCK_K1, BLOCK_K2, BLOCK_D, CAUSAL, SLICE, SPLIT)


# ---------------------------------------------------------------- launches

# this module's walks where a launch takes a module of kernels (the solution is the other)
DESIGNS = SimpleNamespace(attn_bwd_dkdv_kernel=attn_bwd_dkdv_kernel, attn_bwd_dq_kernel=attn_bwd_dq_kernel)

def block_d(D: int) -> int:
    """The head's block, as the puzzle's declaration sets it (next_pow2("D", floor=16))."""
    return max(16, triton.next_power_of_2(D))


def dkdv_launch(kernels, walk: Walk, q, k, v, do, lse, delta, dq, dk_heads, dv_heads, causal: bool):
    """One dK/dV walk: `kernels` holds attn_bwd_dkdv_kernel (the solution's, or this module's)."""
    B, H, L, D = q.shape
    S, KV = k.shape[2], k.shape[1]
    switches = {} if walk.own else dict(SLICE=walk.slice, SPLIT=walk.split)
    kernels.attn_bwd_dkdv_kernel[(triton.cdiv(S, walk.block_k), B * H)](
        q, k, v, do, lse, delta, dq, dk_heads, dv_heads, L, S, D ** -0.5, H // KV, D=D, BLOCK_Q=walk.block_q,
        BLOCK_K=walk.block_k, BLOCK_D=block_d(D), CAUSAL=causal, num_warps=walk.warps, num_stages=walk.stages,
        **switches)


def dq_launch(kernels, walk: Walk, q, k, v, do, lse, delta, dq, causal: bool):
    B, H, L, D = q.shape
    S, KV = k.shape[2], k.shape[1]
    switches = {} if walk.own else dict(SLICE=walk.slice, SPLIT=walk.split, REVERSE=walk.reverse)
    kernels.attn_bwd_dq_kernel[(triton.cdiv(L, walk.block_q), B * H)](
        q, k, v, do, lse, delta, dq, L, S, D ** -0.5, H // KV, D=D, BLOCK_Q=walk.block_q, BLOCK_K=walk.block_k,
        BLOCK_D=block_d(D), CAUSAL=causal, num_warps=walk.warps, num_stages=walk.stages, **switches)


def fused_launch(fused: Fused, q, k, v, do, lse, delta, dq, dk_heads, dv_heads, causal: bool):
    B, H, L, D = q.shape
    S, KV = k.shape[2], k.shape[1]
    assert L == S, "the fused arrangement pairs key block i with query block i: L = S"
    fused_kernel[(triton.cdiv(S, fused.block_k1), B * H)](
        q, k, v, do, lse, delta, dq, dk_heads, dv_heads, L, S, D ** -0.5, H // KV, D=D, BLOCK_Q1=fused.block_q1,
        BLOCK_K1=fused.block_k1, BLOCK_K2=fused.block_k2, BLOCK_D=block_d(D), CAUSAL=causal, SLICE=fused.slice,
        SPLIT=fused.split, num_warps=fused.warps, num_stages=fused.stages)


def backward(solution, design, q, k, v, do, o, lse, dq, dk, dv, causal: bool):
    """The whole backward as the checker launches puzzle 32 (checker/specs/p32's launch): dq zeroed (an
    accumulated output), Δ, the walks, and with grouped-query heads the fp32 shares per query head
    summed per key/value head. design: (dK/dV Walk, dQ Walk) or a Fused; a Walk marked own runs the
    solution's kernel, else this module's."""
    import torch
    B, H, L, D = q.shape
    S, KV = k.shape[2], k.shape[1]
    dq.zero_()
    delta = torch.empty((B, H, L), dtype=torch.float32, device=q.device)
    pre = design.block_k1 if isinstance(design, Fused) else design[1].block_q
    solution.attn_bwd_preprocess[(triton.cdiv(L, pre), B * H)](o, do, delta, L, D=D, BLOCK_Q=pre, BLOCK_D=block_d(D))
    dk_heads, dv_heads = (dk, dv) if KV == H else (torch.empty((B, H, S, D), dtype=torch.float32, device=q.device)
                                                   for _ in range(2))
    if isinstance(design, Fused):
        fused_launch(design, q, k, v, do, lse, delta, dq, dk_heads, dv_heads, causal)
    else:
        kv_walk, dq_walk = design
        dkdv_launch(solution if kv_walk.own else DESIGNS, kv_walk, q, k, v, do, lse, delta, dq, dk_heads, dv_heads, causal)
        dq_launch(solution if dq_walk.own else DESIGNS, dq_walk, q, k, v, do, lse, delta, dq, causal)
    if KV != H:
        dk.copy_(dk_heads.unflatten(1, (KV, H // KV)).sum(2))
        dv.copy_(dv_heads.unflatten(1, (KV, H // KV)).sum(2))


# ---------------------------------------------------------------- the CPU check

def cpu_smoke() -> None:
    """The designs against the reference solution on Triton's interpreter (TRITON_INTERPRET=1), float32,
    small sizes with partial blocks and a head narrower than its block: bit for bit where a design
    sums the same products in the same order (split, reverse, and the fused arrangement at the
    reference's tiles), and all of them, slice too (its diagonal's sums regrouped), against float64
    autograd. L = S with two query heads per key/value head, causal and not; then causal with more
    queries than keys, where slice's dK/dV programs (key blocks narrower than a query step) skip the
    rows before their first key."""
    import torch

    from research.runs import solution
    solution_kernels = solution("p32")
    generator = torch.Generator().manual_seed(0)
    reference = (Walk(16, 32, 4, 2, own=True), Walk(32, 16, 4, 2, own=True))
    same = [(Walk(16, 32, 4, 2, split=True), Walk(32, 16, 4, 2, split=True, reverse=True)), Fused(16, 32, 16, 4, 2)]
    for B, H, KV, L, S, D, causals in ((1, 2, 1, 40, 40, 24, (False, True)), (1, 1, 1, 48, 33, 16, (True,))):
        q, k, v = (torch.randn(B, heads, n, D, generator=generator) for heads, n in ((H, L), (KV, S), (KV, S)))
        do = torch.randn(B, H, L, D, generator=generator)
        for causal in causals:
            leaves = [t.clone().double().requires_grad_() for t in (q, k, v)]
            s = leaves[0] @ leaves[1].repeat_interleave(H // KV, 1).transpose(-1, -2) * D ** -0.5
            if causal:
                s = s.masked_fill(torch.ones(L, S, dtype=torch.bool).triu(1), float("-inf"))
            o64 = s.softmax(-1) @ leaves[2].repeat_interleave(H // KV, 1)
            truth = torch.autograd.grad(o64, leaves, do.double())
            o, lse = o64.float().detach(), s.logsumexp(-1).float().detach()

            def run(design):
                dq, dk, dv = torch.full_like(q, float("nan")), torch.empty_like(k), torch.empty_like(v)
                backward(solution_kernels, design, q, k, v, do, o, lse, dq, dk, dv, causal)
                return dq, dk, dv

            want = run(reference)
            sliced = (Walk(32, 16 if L > S else 32, 4, 2, slice=2), Walk(32, 32, 4, 2, slice=2, split=True, reverse=True))
            for design in [reference, *(same if L == S else same[:1]), sliced]:
                got = want if design is reference else run(design)
                if design in same:
                    for g, w, name in zip(got, want, ("dq", "dk", "dv")):
                        assert torch.equal(g, w), (design, causal, name, float((g - w).abs().max()))
                for g, w in zip(got, truth):
                    torch.testing.assert_close(g.double(), w, rtol=1e-4, atol=1e-4)
