"""Puzzle 32: the FlashAttention backward, dQ, dK and dV from the forward's o and logsumexp, causal or
not: Δ in a first kernel, dK and dV by programs that own a key block, dQ by a second walk."""
from checker.puzzle import (CONDITIONED, SummaryPattern, Tolerance, bench, case, cdiv, next_pow2, out, part, puzzle,
                            randn, scratch, variant)
from checker.specs.families.attention import (TUTORIAL_NOTE, bench_sizes, by_query_blocks, flops_note, grouped_cases,
                                             kv_heads, per_kv_head, per_query_head, query_blocks, scores, sdpa_backend,
                                             tutorial_backward)

# dQ is an fp32 buffer that starts at zero (a kernel may add into it with atomics); from bf16 inputs
# its products take P and dS rounded to bf16 (tl.dot's operands), as dK and dV do. On the H100 the
# solution's bf16 dQ and dK were off by up to 4 times 1.6e-2 of the gradient's scale in the causal
# cases of 777-1000 queries and with large logits (dS = P ∘ (dP − Δ) cancels, and P and dS are
# rounded to bf16 before each product, as every FlashAttention backward on tensor cores does): the
# bf16 tolerance is what that measured, and the solution's share of it half
BF16_GRAD = Tolerance(atol=1e-1, rtol=6.4e-2, per_condition=CONDITIONED)
DQ = {"bfloat16": BF16_GRAD}
# The benchmark tiles, from a sweep on an H100 (bf16, B = 4, H = 16, N = 1024 and 4096, each kernel
# timed alone). The two walks want opposite shapes: the dK/dV program keeps its key block in
# registers and walks short query blocks (32 × 64, 4 warps, 4 stages: 2.07 ms at N = 4096, D = 128,
# where 64 × 64, 8 warps took 3.77 ms), the dQ program keeps a tall query block and walks short key
# blocks (128 × 64, 8 warps, 3 stages: 1.41 ms, against 2.79 ms). DQ_TILES gives the dQ kernel its
# own (BLOCK_Q, BLOCK_K, warps, stages); without it, both kernels take the case's.
FAST = dict(BLOCK_Q=32, BLOCK_K=64, NUM_WARPS=4, NUM_STAGES=4, DQ_TILES=(128, 64, 8, 3))
FAST_D64 = dict(BLOCK_Q=64, BLOCK_K=64, NUM_WARPS=4, NUM_STAGES=3)
# The benchmark's launch per (D, CAUSAL), and the GPU cases' "benchmark tiles": one place to change
# when a sweep finds better ones (research/attention/bwd_sweep.py prints its pick in this form)
BENCH_LAUNCH = {(64, False): FAST_D64, (64, True): FAST_D64, (128, False): FAST, (128, True): FAST}
LOG2E = 1.4426950408889634


def attention(q, k, v, CAUSAL):
    """o = softmax(s) v, a block of query rows at a time (checker/specs/families/attention.py:
    query_blocks), each block's scores made again for its gradient (torch's checkpoint): autograd
    holds one block's scores at a time, not the whole L × S of them (2 GiB a head at 16384 keys)."""
    from torch.utils.checkpoint import checkpoint
    vq = per_query_head(v, q)

    def block(rows):
        return {"o": checkpoint(lambda q, k, vq: scores(q, k, CAUSAL, rows=rows).softmax(-1) @ vq, q, k, vq,
                                use_reentrant=False)}
    return by_query_blocks(q, k, block)


def backward(q, k, v, do, make_p, *, CAUSAL: bool, delta_from_do: bool = False, scale_in_ds: bool = True) -> dict:
    """The page's equations from a P that make_p(rows) gives for a block of query rows (the right one,
    or one a buggy kernel rebuilds); Δ from the forward's own P (a kernel reads the forward's O), as
    rowsum(P ∘ dP) = dO · O, the sum autograd takes. A block of query rows at a time: dQ's rows are
    the block's own, dK and dV add every block's share. dK and dV per query head, summed over the
    query heads that share a key/value head (per_kv_head)."""
    import torch
    scale = q.shape[-1] ** -0.5 if scale_in_ds else 1.0
    kq, vq = per_query_head(k, q), per_query_head(v, q)
    dq, dkq, dvq = torch.zeros_like(q), torch.zeros_like(kq), torch.zeros_like(vq)
    for rows in query_blocks(q, k):
        P, dob = make_p(rows), do[..., rows, :]
        dp = dob @ vq.transpose(-1, -2)                                          # dP = dO Vᵀ
        delta = dob.sum(-1) if delta_from_do else (right_p(q, k, CAUSAL, rows) * dp).sum(-1)   # Δ = rowsum(dO ∘ O)
        ds = P * (dp - delta[..., None])                                         # dS = P ∘ (dP − Δ)
        dq[..., rows, :] = ds @ kq * scale
        dkq += ds.transpose(-1, -2) @ q[..., rows, :] * scale
        dvq += P.transpose(-1, -2) @ dob
    return {"dq": dq, "dk": per_kv_head(dkq, k), "dv": per_kv_head(dvq, v)}


def cancellation(q, k, v, do, CAUSAL) -> float:
    """Digits lost in dP − Δ: the RMS of the term P ∘ dP (in dS, and carried into dQ = dS K and
    dK = dSᵀ Q) over the RMS of what is left after Δ's share is taken off, the largest of the three,
    at least 1 and at most 1000. A row that sees one key has P = 1 and dS = dP − Δ = 0 exactly, which
    an fp32 kernel gets as the difference of two sums of D products rounded differently (the cap
    keeps such a case checked, at 1000 units). And large scores: P = exp2(s · log2 e − lse · log2 e)
    takes the rounding of s (a dot of D products), of lse and of their difference, each some |s|
    roundings of fp32 absolute, so P carries a relative error of a few |s| roundings: the largest
    |s| counts as that many units. Summed a block of query rows at a time (dK's terms over all of them)."""
    import torch

    def ratio(terms: float, left: float) -> float:  # of sums of squares over the same elements: of RMS
        terms, left = terms ** 0.5, left ** 0.5
        return 1000.0 if left * 1000.0 < terms else max(1.0, terms / left)
    kq, vq = per_query_head(k, q), per_query_head(v, q)
    squares = [0.0] * 4  # Σ (P ∘ dP)², Σ dS², Σ (P ∘ dP K)², Σ (dS K)²
    pdp_q, ds_q = torch.zeros_like(kq), torch.zeros_like(kq)   # (P ∘ dP)ᵀ Q and dSᵀ Q, over every row
    largest = 0.0
    for rows in query_blocks(q, k):
        s = scores(q, k, CAUSAL, rows=rows)
        largest = max(largest, float(s.masked_fill(s == float("-inf"), 0.0).abs().max()))
        P = s.softmax(-1)
        pdp = P * (do[..., rows, :] @ vq.transpose(-1, -2))
        ds = pdp - P * pdp.sum(-1, keepdim=True)
        for i, t in enumerate((pdp, ds, pdp @ kq, ds @ kq)):
            squares[i] += float(t.pow(2).sum())
        pdp_q += pdp.transpose(-1, -2) @ q[..., rows, :]
        ds_q += ds.transpose(-1, -2) @ q[..., rows, :]
    worst = max(ratio(squares[0], squares[1]), ratio(squares[2], squares[3]),
                ratio(float(pdp_q.pow(2).sum()), float(ds_q.pow(2).sum())))
    return max(largest, worst)


def right_p(q, k, CAUSAL, rows: slice = slice(None), **_):
    return scores(q, k, CAUSAL, rows=rows).softmax(-1)


def visited(L, S, BLOCK_Q, BLOCK_K, CAUSAL, device="cpu", rows: slice = slice(None)):
    """[rows, S]: the scores in blocks the kernels compute (a causal walk stops after the diagonal), on
    the device of the reference (a GPU computes the long cases' in seconds)."""
    import torch
    i = torch.arange(L, device=device)[rows][:, None] // BLOCK_Q * BLOCK_Q
    j = torch.arange(S, device=device)[None, :] // BLOCK_K * BLOCK_K
    return (j < i + BLOCK_Q) if CAUSAL else torch.ones(i.shape[0], S, dtype=torch.bool, device=device)


def with_p(make_p, **switches):
    def compute(q, k, v, do, L, S, BLOCK_Q, BLOCK_K, CAUSAL):
        return backward(q, k, v, do, lambda rows: make_p(q=q, k=k, L=L, S=S, BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K,
                                                        CAUSAL=CAUSAL, rows=rows), CAUSAL=CAUSAL, **switches)
    return compute


def p_mask_forgotten(q, k, L, S, BLOCK_Q, BLOCK_K, CAUSAL, rows, **_):
    """The forward's (causal) lse, but P not masked in the backward: exp(s − lse) on every score of
    the blocks the walk visits."""
    s = scores(q, k, False, rows=rows)
    lse = scores(q, k, CAUSAL, rows=rows).logsumexp(-1)
    return (s - lse[..., None]).exp() * visited(L, S, BLOCK_Q, BLOCK_K, CAUSAL, q.device, rows)


def p_mask_always(q, k, CAUSAL, rows, **_):
    """The forward's lse, but P masked causally whether or not the attention is causal."""
    lse = scores(q, k, CAUSAL, rows=rows).logsumexp(-1)
    return (scores(q, k, True, rows=rows) - lse[..., None]).exp()


def p_natural_lse_in_base2(q, k, CAUSAL, rows, **_):
    """exp2(s · log2 e − lse): the natural-log lse subtracted from base-2 scores, e^(s − lse · ln 2)."""
    s = scores(q, k, CAUSAL, rows=rows)
    return (s - s.logsumexp(-1, keepdim=True) / LOG2E).exp()


def p_blockwise(q, k, S, BLOCK_K, CAUSAL, rows, **_):
    """P rebuilt with each key block's own max and sum: a softmax over the block alone."""
    import torch
    s = scores(q, k, CAUSAL, rows=rows)
    P = torch.zeros_like(s)
    for start in range(0, S, BLOCK_K):
        block = s[..., start:start + BLOCK_K]
        P[..., start:start + BLOCK_K] = block.softmax(-1).nan_to_num(0.0)  # a block the row cannot see: 0
    return P


def page_backward(q, k, v, do, CAUSAL) -> dict:
    """dQ, dK and dV by the page's equations, from the softmax P."""
    return backward(q, k, v, do, lambda rows: right_p(q, k, CAUSAL, rows), CAUSAL=CAUSAL)


def forward_saved(q, k, v, CAUSAL) -> tuple:
    """The forward's saved o (in the inputs' dtype) and lse (float32), as puzzle 31 stores them; made
    once per set of inputs, so that --bench times the backward alone."""
    key = (q, k, v, q._version, k._version, v._version, CAUSAL)
    if _SAVED.get("key") is None or any(a is not b for a, b in zip(_SAVED["key"], key)) or _SAVED["key"][3:] != key[3:]:
        import torch
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[:-1], dtype=torch.float32, device=q.device)
        # one head and one block of query rows at a time: 16 heads of 16384 keys hold 16 GiB of fp32
        # scores at once, one head 1 GiB
        k, v = per_query_head(k, q), per_query_head(v, q)
        for head, (qh, kh, vh) in enumerate(zip(*(t.reshape(-1, *t.shape[-2:]) for t in (q, k, v)))):
            qh, kh, vh = qh.float(), kh.float(), vh.float()
            for rows in query_blocks(qh, kh):
                s = scores(qh, kh, CAUSAL, rows=rows)
                o.view(-1, *o.shape[-2:])[head, rows] = (s.softmax(-1) @ vh).to(q.dtype)
                lse.view(-1, lse.shape[-1])[head, rows] = s.logsumexp(-1)
        _SAVED["key"], _SAVED["out"] = key, (o, lse)
    return _SAVED["out"]


_SAVED: dict = {}


def launch(kernels, q, k, v, do, dq, dk, dv, B, H, KV, L, S, D, BLOCK_Q, BLOCK_K, BLOCK_D, CAUSAL, NUM_WARPS,
           NUM_STAGES, DQ_TILES):
    o, lse = forward_saved(q, k, v, CAUSAL)
    delta = scratch((B, H, L), like=lse)
    tiles = dict(D=D, BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, CAUSAL=CAUSAL, num_warps=NUM_WARPS,
                 num_stages=NUM_STAGES)
    kernels.attn_bwd_preprocess[(cdiv(L, BLOCK_Q), B * H)](o, do, delta, L, D=D, BLOCK_Q=BLOCK_Q, BLOCK_D=BLOCK_D)
    # grouped-query attention: one share of dK and dV per query head, in fp32 (the group's sum is
    # rounded once), added up per key/value head below; one key/value head per query head: dk and dv
    dk_heads, dv_heads = (dk, dv) if KV == H else (scratch((B, H, S, D), like=lse) for _ in range(2))
    kernels.attn_bwd_dkdv_kernel[(cdiv(S, BLOCK_K), B * H)](q, k, v, do, lse, delta, dq, dk_heads, dv_heads, L, S,
                                                            D ** -0.5, H // KV, **tiles)
    dq_q, dq_k, dq_warps, dq_stages = DQ_TILES or (BLOCK_Q, BLOCK_K, NUM_WARPS, NUM_STAGES)
    dq_tiles = dict(tiles, BLOCK_Q=dq_q, BLOCK_K=dq_k, num_warps=dq_warps, num_stages=dq_stages)
    kernels.attn_bwd_dq_kernel[(cdiv(L, dq_q), B * H)](q, k, v, do, lse, delta, dq, L, S, D ** -0.5, H // KV,
                                                       **dq_tiles)
    if KV != H:
        dk.copy_(per_kv_head(dk_heads, dk))
        dv.copy_(per_kv_head(dv_heads, dv))


def sdpa_backward(q, k, v, do, CAUSAL, wrap, backend=None):
    """PyTorch's attention backward alone: F.scaled_dot_product_attention's forward run once (under
    `backend` when given, else the backend PyTorch picks), its backward timed."""
    import contextlib

    import torch
    import torch.nn.functional as F
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    context = contextlib.nullcontext()
    if backend is not None:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        context = sdpa_kernel(getattr(SDPBackend, backend))
    gqa = k.shape[-3] != q.shape[-3]
    with context:
        o = wrap(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=CAUSAL, enable_gqa=gqa))(*leaves)
    return lambda: torch.autograd.grad(o, leaves, do, retain_graph=True)


def backward_flops(B, H, L, S, D, CAUSAL) -> float:
    """2.5 times the forward's 4·B·H·L·S·D (five products to the forward's two), halved when causal."""
    return 2.5 * 4 * B * H * L * S * D / (2 if CAUSAL else 1)


def causal(why: str, tags: tuple = (), **values):
    return case(f"causal: {why}", CAUSAL=True, tags=("causal", *tags), **values)


def hint(name: str, cause: str | tuple, text: str, make_p, **switches):
    return variant(name, cause, text, with_p(make_p, **switches))


PUZZLE = puzzle(
    32, "flash_attention_backward", "FlashAttention backward",
    skill="attention's backward from the saved logsumexp: Δ = rowsum(dO ∘ O) first, dK and dV by the key block's "
          "owner walking the queries, dQ by a second walk, the causal mask and skip in both",
    chapter="Attention",
    inputs={"q": randn("B H L D"), "k": randn("B KV S D"), "v": randn("B KV S D"), "do": randn("like o")},
    reference=attention,
    parts=[part("backward", "dQ, dK and dV from o and lse", ["attn_bwd_preprocess", "attn_bwd_dkdv_kernel",
                                                              "attn_bwd_dq_kernel"],
                outputs=[out("dq", accumulated=True, tolerance=DQ), out("dk", tolerance=DQ), out("dv", tolerance=DQ)],
                grads={"dq": "q", "dk": "k", "dv": "v"}, upstream={"o": "do"}, launch=launch)],
    params={"KV": kv_heads, "BLOCK_Q": 16, "BLOCK_K": 16, "BLOCK_D": next_pow2("D", floor=16), "CAUSAL": False,
            "NUM_WARPS": 4, "NUM_STAGES": 2, "DQ_TILES": None},
    blocks={"L": "BLOCK_Q", "S": "BLOCK_K", "D": "BLOCK_D"},
    condition=cancellation,
    formulas={"eq-p32-dv": ("dv", lambda q, k, v, do, CAUSAL: page_backward(q, k, v, do, CAUSAL)["dv"]),
              "eq-p32-ds": ("dq", lambda q, k, v, do, CAUSAL: page_backward(q, k, v, do, CAUSAL)["dq"]),
              "eq-p32-dk": ("dk", lambda q, k, v, do, CAUSAL: page_backward(q, k, v, do, CAUSAL)["dk"]),
              "eq-p32-p": ("dv", lambda q, k, v, do, CAUSAL: backward(
                  q, k, v, do, lambda rows: (scores(q, k, CAUSAL, rows=rows)
                                             - scores(q, k, CAUSAL, rows=rows).logsumexp(-1, keepdim=True)).exp(),
                  CAUSAL=CAUSAL)["dv"])},
    variants=[hint("delta_from_do", "formula", "dQ and dK match Δ = rowsum(dO) alone: Δ_i = Σ_j P_ij dP_ij = dO_i · O_i, "
                   "the row sum of dO ∘ O (the forward's output, which attn_bwd_preprocess loads).", right_p,
                   delta_from_do=True),
              hint("scale_missing_in_ds", "formula", "dQ and dK match dS K and dSᵀ Q without the scale: the "
                   "scores are scale · q kᵀ, so dQ = scale · dS K and dK = scale · dSᵀ Q.", right_p, scale_in_ds=False),
              hint("mask_forgotten_in_backward", ("mask", "loop"), "the causal cases match a P rebuilt without the "
                   "causal mask on the blocks that cross the diagonal: the backward must zero P where the key comes "
                   "after the query (tl.where(cols <= rows, p, 0)) there, in both the dK/dV and the dQ walks. Is the "
                   "tl.where missing, or does a walk's unmasked part run into a block that crosses the diagonal "
                   "(its bound not rounded to whole blocks)?",
                   p_mask_forgotten),
              hint("mask_in_non_causal_backward", "mask", "the non-causal cases match a P masked causally: the "
                   "mask belongs to the causal kernels only (if CAUSAL:, a tl.constexpr).", p_mask_always),
              hint("lse_natural_in_base2", "formula", "the gradients match P = exp2(s · log2 e − lse): lse is in the "
                   "natural log, the scores in base 2. Multiply lse by log2(e) too (or use tl.exp on scale · q kᵀ "
                   "− lse).", p_natural_lse_in_base2),
              hint("p_per_key_block", "formula", "the gradients match a P rebuilt from each key block's own max "
                   "and sum (a softmax over the block alone): the weights must be the forward's, "
                   "P = exp(s − lse) with the lse the forward saved.", p_blockwise)],
    summaries=[SummaryPattern("only the causal cases fail: in the backward as in the forward, P is 0 where the key "
                              "comes after the query (the tl.where's mask, and the 0 it fills in), and the walks "
                              "skip the blocks past the diagonal: dK/dV programs start at the query block holding "
                              "their first key, dQ programs stop at min(S, first + BLOCK_Q).",
                              lambda c: "causal" in c.tags, candidates=("mask", "loop", "fill", "accumulate")),
               SummaryPattern("only the grouped-query cases fail: there k and v have KV heads, fewer than q's H "
                              "(GROUP = H / KV, the kernels' argument), and both walks read key/value head "
                              "head // GROUP, with head = tl.program_id(1) counting (batch, query head) pairs. dK and "
                              "dV are stored per query head, at head (the checker adds each group's shares).",
                              lambda c: "grouped" in c.tags, candidates=("address",))],
    cases=[case(B=1, H=2, L=40, S=40, D=16, documented=True),
           causal("the diagonal crosses every block", B=1, H=2, L=40, S=40, D=16),
           case(B=1, H=1, L=1, S=1, D=24), causal("one query, one key", B=1, H=1, L=1, S=1, D=24),
           case("L=S=12: one partly filled block of queries and of keys", B=1, H=2, L=12, S=12, D=16),
           case(B=1, H=2, L=1, S=37, D=24), causal("one query sees key 0 alone", B=1, H=2, L=1, S=37, D=24),
           case(B=2, H=1, L=33, S=33, D=32), causal("L = S = 33, last blocks of one row", B=2, H=1, L=33, S=33, D=32),
           case(B=1, H=2, L=20, S=50, D=24),
           causal("more queries than keys", B=1, H=2, L=50, S=20, D=24),
           causal("fewer queries than keys: the last keys seen by none", B=1, H=1, L=20, S=45, D=16),
           causal("BLOCK_Q = 32 > BLOCK_K", B=1, H=1, L=64, S=64, D=48, BLOCK_Q=32),
           causal("BLOCK_K = 32 > BLOCK_Q", B=1, H=1, L=48, S=48, D=48, BLOCK_K=32),
           # a head narrower than the query block: BLOCK_D = 16 < BLOCK_Q = 32, so a walk bound counted
           # in the wrong block splits a query block
           causal("BLOCK_D = 16 < BLOCK_Q = 32", B=1, H=1, L=64, S=64, D=16, BLOCK_Q=32),
           case(B=1, H=1, L=70, S=70, D=48, BLOCK_Q=32),  # three different blocks, each stepped more than once
           case("large logits (q: 6·randn)", B=1, H=2, L=24, S=40, D=16, inputs={"q": randn("B H L D", 0.0, 6.0)}),
           causal("bfloat16, small", B=1, H=1, L=24, S=24, D=16, dtype="bfloat16", gpu_only=False),
           # Δ = rowsum(dO ∘ O) large beside dP − Δ: a Δ summed in bf16 is off by more than dS itself. In the
           # interpreter (its bf16 rounds as a GPU's does), seeds 0-3: the solution used 0.12-0.17 of the
           # tolerance, Δ summed in bf16 (tests/bugs/p32.py) 1.4-2.6 times it; on the plain inputs, 0.2 of it
           case("bf16, v and dO off zero (1 + randn, 2 + randn): Δ large, dP − Δ cancels", B=1, H=2, L=64, S=64,
                D=64, dtype="bfloat16", gpu_only=False,
                inputs={"v": randn("B KV S D", 1.0, 1.0), "do": randn("like o", 2.0, 1.0)}),
           *grouped_cases(case, causal, BENCH_LAUNCH[128, True]),
           case(B=1, H=2, L=113, S=113, D=128, BLOCK_Q=32, BLOCK_K=32, gpu_only=True),
           causal("113 queries, D = 128", B=1, H=2, L=113, S=113, D=128, BLOCK_Q=32, BLOCK_K=32, gpu_only=True),
           case(B=2, H=3, L=255, S=255, D=64, BLOCK_Q=32, BLOCK_K=32, gpu_only=True),
           causal("255 queries", B=2, H=3, L=255, S=255, D=64, BLOCK_Q=32, BLOCK_K=32, gpu_only=True),
           causal("fewer queries than keys, D = 128", B=1, H=2, L=113, S=255, D=128, BLOCK_Q=32, BLOCK_K=32,
                  gpu_only=True),
           case(B=2, H=4, L=1000, S=1000, D=128, dtype="bfloat16", **BENCH_LAUNCH[128, False]),
           causal("bfloat16, D = 128, the benchmark tiles", B=2, H=4, L=1000, S=1000, D=128, dtype="bfloat16",
                  **BENCH_LAUNCH[128, True]),
           causal("bfloat16, D = 64, the benchmark tiles", B=2, H=4, L=777, S=777, D=64, dtype="bfloat16",
                  **BENCH_LAUNCH[64, True]),
           case("bf16 large logits", B=1, H=4, L=255, S=255, D=64, dtype="bfloat16",
                inputs={"q": randn("B H L D", 0.0, 6.0)}, **BENCH_LAUNCH[64, False]),
           # the rows a model runs: 8192 and 16384 keys, where dK and dV sum over thousands of query blocks.
           # Not causal: the bf16 tolerance is relative to the output's RMS, which a causal case's many long rows shrink
           # while its first rows (few keys, outputs near 1) keep their rounding; the reference's dK used
           # 80 % of it at a causal N = 16384 on the H100 (the benchmark times causal N = 16384)
           case("N = 8192, D = 128: a model's long rows", B=1, H=2, L=8192, S=8192, D=128, dtype="bfloat16",
                **BENCH_LAUNCH[128, False]),
           case("N = 16384, D = 128: longer rows", B=1, H=1, L=16384, S=16384, D=128, dtype="bfloat16",
                **BENCH_LAUNCH[128, False])],
    bench=bench("backward", [case(name, dtype="bfloat16", **sizes, **BENCH_LAUNCH[sizes["D"], sizes["CAUSAL"]])
                             for name, sizes in bench_sizes()],
                backend=sdpa_backend, notes=(flops_note("2.5 × 4·B·H·L·S·D (the five products)"), TUTORIAL_NOTE),
                traffic=lambda q, B, H, KV, L, S, D: q.element_size() * B * D * (4 * H * L + 4 * KV * S),
                flops=backward_flops, torch=lambda q, k, v, do, CAUSAL, wrap: sdpa_backward(q, k, v, do, CAUSAL, wrap),
                extra={"sdpa flash": lambda q, k, v, do, CAUSAL: sdpa_backward(q, k, v, do, CAUSAL, lambda fn: fn,
                                                                              "FLASH_ATTENTION"),
                       "tutorial": tutorial_backward}),
)
