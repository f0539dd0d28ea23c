"""What the two attention puzzles (p31 forward, p32 backward) share: the scores, a block of query rows
at a time (a reference's float64 scores fit a learner's GPU), inputs whose first key block scores far
above the rest; and in their benchmarks, the sizes a model runs, how PyTorch's pick is named, how the
flops of a causal size are counted, and Triton's own tutorial as a column beside them."""
from checker.puzzle import custom
from checker.puzzle.tutorials import FUSED_ATTENTION, triton_tutorial, tutorial_column

# (D, N, B) at H = 16: B·N = 4096 and 16384 tokens at N = 1024 and 4096, and the long rows a model
# runs at D = 128, 16384 tokens a batch (FlashAttention-3's paper measures that way)
BENCH_SIZES = [(64, 1024, 4), (64, 4096, 4), (128, 1024, 4), (128, 4096, 4), (128, 8192, 2), (128, 16384, 1)]
# grouped-query attention as a model runs it (Llama 3 8B's heads): 32 query heads sharing 8 key/value heads
GQA = dict(B=4, H=32, KV=8, L=4096, S=4096, D=128)


def bench_sizes() -> list[tuple[str, dict]]:
    """Every benchmark size of both puzzles, named as their tables name it: (name, the case's sizes and
    CAUSAL), BENCH_SIZES at H = 16 then the grouped-query size, each not causal and causal."""
    sizes = []
    for D, N, B in BENCH_SIZES:
        for causal in (False, True):
            sizes.append((f"{'causal' if causal else 'non-causal'}, N={N}, D={D}",
                          dict(B=B, H=16, KV=16, L=N, S=N, D=D, CAUSAL=causal)))
    for causal in (False, True):
        sizes.append((f"{'causal' if causal else 'non-causal'}, grouped-query (KV={GQA['KV']}), N={GQA['L']}, "
                      f"D={GQA['D']}", dict(GQA, CAUSAL=causal)))
    return sizes


def sdpa_backend(kernels: list[str]) -> str:
    """The library behind F.scaled_dot_product_attention's pick, from the names of the GPU kernels
    it launched (cuDNN's "cudnn_generated_fort_native_sdpa_sm90_flash_fprop…", the flash backend's
    "flash_fwd_kernel…", the memory-efficient one's "fmha_cutlass…")."""
    found = " ".join(kernels).lower()
    for mark, name in (("cudnn", "cuDNN"), ("flash", "flash"), ("fmha", "efficient"), ("efficient", "efficient")):
        if mark in found:
            return name
    return "math"


def flops_note(count: str) -> str:
    """The table head's line on what a TFLOP/s column divides: `count` flops per size, and what
    causal does to it."""
    return (f"flops per size: {count}, halved when causal (the blocks above the diagonal are skipped by "
            "every column; the masked half of the diagonal blocks still costs time)")


# float64 scores a block of query rows holds at most (256 MiB): one head of 16384 queries against 16384
# keys is 2 GiB of them, and a reference that holds a few such tensors at once does not fit a 16 GiB GPU
ROW_BLOCK = 1 << 25


def query_blocks(q, k) -> list:
    """Slices of q's query rows (its dimension -2) whose scores against every key of every head hold
    at most ROW_BLOCK elements: the long cases' references are computed a block of rows at a time
    (each query's row of scores is its own), the short ones in one block, as a whole."""
    heads = q[..., 0, 0].numel() if q.dim() > 2 else 1
    L, S = q.shape[-2], k.shape[-2]
    rows = max(1, ROW_BLOCK // max(1, heads * S))
    return [slice(first, min(L, first + rows)) for first in range(0, L, rows)] or [slice(0, 0)]


def scores(q, k, CAUSAL: bool, factor: float = 1.0, rows: slice = slice(None)):
    """scale · q kᵀ (times factor) for the query rows `rows` (all by default), -inf above the diagonal
    when causal (query i sees keys j <= i); each query head against its key head (per_query_head:
    grouped-query attention)."""
    import torch
    first = rows.start or 0
    qr = q[..., rows, :]
    s = qr @ per_query_head(k, q).transpose(-1, -2) * (factor / q.shape[-1] ** 0.5)
    if CAUSAL:
        i = torch.arange(first, first + qr.shape[-2], device=s.device)[:, None]
        j = torch.arange(s.shape[-1], device=s.device)[None, :]
        s = s.masked_fill(j > i, float("-inf"))
    return s


def by_query_blocks(q, k, compute) -> dict:
    """compute(rows) -> {name: a tensor of those query rows (dimension -2, or -1 for one number per
    query)}, for each block of query_blocks(q, k), put back together along the rows."""
    import torch
    parts = [compute(rows) for rows in query_blocks(q, k)]
    return {name: torch.cat([p[name] for p in parts], dim=-2 if parts[0][name].dim() == q.dim() else -1)
            for name in parts[0]}


def per_query_head(t, q):
    """k or v, [B, KV, S, D], as every query head of q [B, H, L, D] reads it: grouped-query attention
    shares each key/value head among H / KV query heads, query head h reading key/value head
    h // (H / KV) (KV = H: one each, the plain case). One head's [S, D] is read as it is."""
    if t.dim() < 3 or t.shape[-3] == q.shape[-3]:
        return t  # (not a copy: autograd then runs the blocks of a long case's reference one by one)
    return t.repeat_interleave(q.shape[-3] // t.shape[-3], dim=-3)


def per_kv_head(grad, t):
    """A gradient per query head, [B, H, S, D], summed over the query heads that share each of t's
    key/value heads: [B, KV, S, D] (the chain rule through per_query_head)."""
    return grad.unflatten(-3, (t.shape[-3], grad.shape[-3] // t.shape[-3])).sum(-3)


def kv_heads(H: int) -> int:
    """Key/value heads unless a case says KV: as many as query heads."""
    return H


def grouped_cases(case, causal, gpu_tiles: dict) -> list:
    """Both puzzles' grouped-query cases: KV key/value heads, each read by H / KV query heads (query head
    h of batch b reads key/value head h // (H / KV) of batch b). Two batches: a kernel that finds the
    key/value head from the query head alone, without its batch, reads batch 0's for batch 1. `case`
    and `causal` are the spec's own case makers; gpu_tiles, the benchmark's tiles at D = 128."""
    return [case("grouped-query: 2 query heads per key/value head (KV = 2)", B=2, H=4, KV=2, L=20, S=20, D=16,
                 tags=("grouped",)),
            causal("multi-query: 3 query heads share one key/value head (KV = 1)", B=2, H=3, KV=1, L=20, S=20,
                   D=16, tags=("grouped",)),
            causal("grouped-query, bfloat16, D = 128: 8 query heads, 2 key/value heads", B=2, H=8, KV=2, L=1000,
                   S=1000, D=128, dtype="bfloat16", tags=("grouped",), **gpu_tiles)]


# The tutorial column (checker.puzzle.tutorials): Triton's tutorial 06, run from a Triton checkout
@tutorial_column
def tutorial_backward(q, k, v, do, CAUSAL: bool):
    """p32's "tutorial" baseline: Triton's tutorial 06's backward for the same work, or None without the
    tutorial (the table says why); where the tutorial cannot do this size's work, a work that raises
    why when run, which the table prints for the size it leaves the column out at."""
    module = triton_tutorial(FUSED_ATTENTION)
    if module is None:
        return None
    why = tutorial_refusal(module, q, k, CAUSAL)
    if why:
        def refused():
            raise ValueError(why)
        return refused
    return tutorial_backward_of(module, q, k, v, do, CAUSAL)


TUTORIAL_NOTE = ("tutorial: Triton's tutorial 06 (06-fused-attention.py of the checkout TRITON_TUTORIALS names): "
                 "its backward at the one launch it sets (written for D = 64), timed in float16, since its kernels "
                 "round P and dS to float16, which bfloat16 inputs cannot take; its forward, run once outside the "
                 "timing, tuned over its 128 x 64 tiles only; left out where its gradients differ from PyTorch's.")
TUTORIAL_CHECK_N = 256  # the small size each (D, causal) of the tutorial is checked at, once


def tutorial_refusal(module, q, k, CAUSAL: bool) -> str:
    """Why Triton's tutorial 06 (the module) cannot do this size's work, or "": it takes one key/value
    head per query head, head dims of 16 to 256, sequences of whole 128-row blocks; a version whose
    backward kernel takes no CAUSAL masks every backward as causal; and at every head dim and causal
    setting its gradients must match PyTorch's at a small size (checked once, tutorial_error)."""
    L, D = q.shape[-2:]
    if k.shape[-3] != q.shape[-3]:
        return "it takes one key/value head per query head (no grouped-query attention)"
    if D not in (16, 32, 64, 128, 256) or L % 128 or k.shape[-2] != L:
        return "it takes L = S, a multiple of 128, and D a power of two from 16 to 256"
    if not CAUSAL and "CAUSAL" not in getattr(getattr(module, "_attn_bwd", None), "arg_names", ()):
        return "this version's backward kernel takes no CAUSAL: it masks every backward as causal"
    B, H = q.shape[0], q.shape[1]
    try:
        error = tutorial_error(module, D, CAUSAL, B, H)
    except Exception as failure:  # noqa: BLE001  (a tutorial that fails here fails the column, not the benchmark)
        return f"it failed at N = {TUTORIAL_CHECK_N} ({type(failure).__name__}: {str(failure).splitlines()[0][:120]})"
    return (f"its gradients differ from PyTorch's by {error:.1e} (relative) at B = {B}, H = {H}, N = {TUTORIAL_CHECK_N}"
            if error > 2e-2 else "")


_TUTORIAL_ERRORS: dict = {}  # (module, D, CAUSAL) -> tutorial_error's answer


def tutorial_error(module, D: int, CAUSAL: bool, B: int = 1, H: int = 2) -> float:
    """The largest relative error (norm of the difference over the norm) of the tutorial's dq, dk, dv
    against PyTorch's float32 attention, at the size's B and H and N = TUTORIAL_CHECK_N: once per
    (D, CAUSAL, B, H). (Batches and heads are where a kernel's offsets can go wrong that one batch hides.)"""
    cache = _TUTORIAL_ERRORS
    if (module, D, CAUSAL, B, H) not in cache:
        import torch
        import torch.nn.functional as F
        generator = torch.Generator(device="cuda").manual_seed(0)
        q, k, v, do = (torch.randn(B, H, TUTORIAL_CHECK_N, D, device="cuda", generator=generator) for _ in range(4))
        ours = tutorial_backward_of(module, q, k, v, do, CAUSAL)()
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        o = F.scaled_dot_product_attention(*leaves, is_causal=CAUSAL)
        theirs = torch.autograd.grad(o, leaves, do)
        cache[(module, D, CAUSAL, B, H)] = max(float((a.float() - b).norm() / b.norm()) for a, b in zip(ours, theirs))
    return cache[(module, D, CAUSAL, B, H)]


def tutorial_backward_of(module, q, k, v, do, CAUSAL: bool):
    """The tutorial's backward of this work, in float16: its forward (attention = _attention.apply; with
    a warp_specialize argument, as since 2025, False: the forward alone would use it) run once, its
    backward the returned function."""
    import inspect

    import torch
    _one_forward_tiling(module)
    leaves = [t.detach().half().requires_grad_() for t in (q, k, v)]
    taken = inspect.signature(module._attention.forward).parameters
    extra = (False,) if "warp_specialize" in taken else ()
    o = module.attention(*leaves, CAUSAL, q.shape[-1] ** -0.5, *extra)
    grad = do.half()
    return lambda: torch.autograd.grad(o, leaves, grad, retain_graph=True)


def _one_forward_tiling(module) -> None:
    """The tutorial's forward autotunes over a score of launches at every new size, minutes of compiles
    for the benchmark's sizes; it only makes o and lse here, outside the timing, so it is tuned over its
    128 x 64 tiles at 3 stages alone (all of its launches where it has none such)."""
    for name in ("_attn_fwd", "_attn_fwd_tma"):
        tuner = getattr(module, name, None)
        configs = list(getattr(tuner, "configs", None) or ())
        kept = [c for c in configs if c.kwargs.get("BLOCK_M") == 128 and c.kwargs.get("BLOCK_N") == 64]
        kept = [c for c in kept if c.num_stages == 3] or kept
        if kept:
            tuner.configs = kept


def first_keys_above(gap: float = 200.0, keys: int = 16) -> dict:
    """q and k whose scores (scale · q · k, scale = 1/√D) put the first `keys` keys `gap` above the rest,
    for every query: q's dimension 0 is 10, the first keys' dimension 0 is gap · √D / 10, the rest
    randn. A later key block's max then lies far below the first's: a max taken per block instead of
    kept from block to block rescales by exp2 of that gap and overflows."""
    def q(gen, dims, sizes):
        import torch
        t = torch.randn(*dims, generator=gen, dtype=torch.float64)
        t[..., 0] = 10.0
        return t

    def k(gen, dims, sizes):
        import torch
        t = torch.randn(*dims, generator=gen, dtype=torch.float64)
        t[..., :keys, 0] = gap * dims[-1] ** 0.5 / 10.0
        return t
    return {"q": custom("B H L D", q, note="randn, dimension 0 = 10"),
            "k": custom("B KV S D", k, note=f"randn, the first {keys} keys' dimension 0 = {gap:g}·√D/10")}
