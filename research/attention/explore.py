"""Times every design of kernels.py next to PyTorch's attention (its pick, and each backend forced),
after checking each against float32 attention at a size with tails. On a GPU:

    cd research/attention && ROOT=../.. OUT=. python explore.py all

writes explore.json (one record per design and size, written as it goes: a run cut short keeps what
it timed); to_book.py turns it into book/data/attention_designs.json."""
import json
import os
import sys
import time
import traceback

import torch
import triton

from check import bwd, fwd, grads, inputs, load, ref, rel

T0 = time.time()
BUDGET = float(os.environ.get("BUDGET", 520))
OUT = os.environ.get("OUT", "/tmp")
ROOT = os.environ.get("ROOT", ".")
sys.path.insert(0, ROOT)
from checker.bench.timing import replay_median_ms  # noqa: E402
RESULTS = []


SOL31 = load(f"{ROOT}/solutions/p31_flash_attention_forward.py", "sol31")
SOL32 = load(f"{ROOT}/solutions/p32_flash_attention_backward.py", "sol32")


def save(entry):
    entry["t"] = round(time.time() - T0, 1)
    RESULTS.append(entry)
    with open(f"{OUT}/explore.json", "w") as f:
        json.dump(RESULTS, f, indent=0)
    print(json.dumps(entry), flush=True)


def left():
    return BUDGET - (time.time() - T0)


def timed(fn, rep=40):
    """Median ms of fn's CUDA-graph replays (the checker's bench timing)."""
    return replay_median_ms(fn, rep)


def kernel_names(fn):
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return [n[:70] for n in dict.fromkeys(names)]


def fl(B, H, L, S, D, causal, factor=1.0):
    return factor * 4 * B * H * L * S * D / (2 if causal else 1)


def sdpa_fwd(q, k, v, causal, G, backend=None):
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    kw = dict(is_causal=causal, enable_gqa=G > 1)
    if backend is None:
        return lambda: F.scaled_dot_product_attention(q, k, v, **kw)

    def run():
        with sdpa_kernel(getattr(SDPBackend, backend)):
            return F.scaled_dot_product_attention(q, k, v, **kw)
    return run


def sdpa_bwd(q, k, v, do, causal, G, backend=None):
    import contextlib
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    ctx = contextlib.nullcontext() if backend is None else sdpa_kernel(getattr(SDPBackend, backend))
    with ctx:
        o = F.scaled_dot_product_attention(*leaves, is_causal=causal, enable_gqa=G > 1)
    return lambda: torch.autograd.grad(o, leaves, do, retain_graph=True)


def baselines(tag, make, size, flops):
    for backend in (None, "CUDNN_ATTENTION", "FLASH_ATTENTION", "EFFICIENT_ATTENTION"):
        if left() < 30:
            return
        try:
            fn = make(backend)
            ms = timed(fn)
            names = kernel_names(fn) if backend is None else []
            save(dict(kind=tag, who=f"sdpa {backend or 'pick'}", size=size, ms=ms, tflops=flops / ms / 1e9,
                      kernels=names))
        except Exception as e:
            save(dict(kind=tag, who=f"sdpa {backend or 'pick'}", size=size, error=repr(e)[:300]))


FWD128 = [("ptr", 128, 64, 8, 3), ("ptr", 128, 128, 8, 3), ("tma", 128, 64, 8, 3), ("tma", 128, 128, 8, 2),
          ("tma", 128, 128, 8, 3), ("tma", 128, 64, 8, 4), ("tma", 128, 64, 4, 3), ("tma", 64, 128, 4, 3),
          ("tma", 256, 64, 16, 2), ("tma", 256, 128, 16, 2), ("persist", 128, 128, 8, 3), ("persist", 128, 64, 8, 3),
          ("ws", 128, 128, 8, 3), ("ws", 128, 64, 8, 3)]
FWD64 = [("ptr", 128, 64, 4, 3), ("tma", 128, 64, 4, 3), ("tma", 128, 128, 8, 3), ("tma", 128, 128, 4, 3),
         ("tma", 128, 64, 8, 3), ("tma", 256, 64, 8, 2), ("tma", 128, 64, 4, 4), ("persist", 128, 64, 4, 3),
         ("persist", 128, 128, 8, 3)]


def fwd_kw(design, causal):
    return dict(tma=design != "ptr", persist=design == "persist", ws=design == "ws", reverse=causal)


def explore_fwd(D, configs, sizes, G=1):
    for (B, H, N, causal) in sizes:
        if left() < 30:
            return
        size = f"B={B} H={H} N={N} D={D} G={G} {'causal' if causal else 'full'}"
        q, k, v = inputs(B, H, N, N, D, G, torch.bfloat16)
        flops = fl(B, H, N, N, D, causal)
        baselines("fwd", lambda backend: sdpa_fwd(q, k, v, causal, G, backend), size, flops)
        if G == 1:
            mod = SOL31
            o = torch.empty_like(q)
            lse = torch.empty(B, H, N, device="cuda")
            bq, bk, w, s = (128, 64, 8, 3) if D == 128 else (128, 64, 4, 3)
            ms = timed(lambda: mod.attn_fwd_kernel[(triton.cdiv(N, bq), B * H)](
                q, k, v, o, lse, N, N, D ** -0.5, 1, D=D, BLOCK_Q=bq, BLOCK_K=bk, BLOCK_D=D, CAUSAL=causal,
                num_warps=w, num_stages=s))
            save(dict(kind="fwd", who="main", size=size, ms=ms, tflops=flops / ms / 1e9))
        for cfg in configs:
            if left() < 30:
                return
            design, bq, bk, w, s = cfg
            kw = fwd_kw(design, causal)
            try:
                # correctness on a small size with tails (same integer specialisation as the benchmark)
                cq, ck, cv = inputs(1, 4, 1008, 1008, D, G, torch.bfloat16)
                o, lse = fwd(cq, ck, cv, causal, G, bq, bk, w, s, **kw)
                o_r, lse_r, _ = ref(cq, ck, cv, causal, G)
                err = (rel(o, o_r), rel(lse, lse_r))
                ms = timed(lambda: fwd(q, k, v, causal, G, bq, bk, w, s, **kw))
                save(dict(kind="fwd", who=f"{design} {bq}x{bk} w{w} s{s}", size=size, ms=ms,
                          tflops=flops / ms / 1e9, err=err))
            except Exception:
                save(dict(kind="fwd", who=f"{design} {bq}x{bk} w{w} s{s}", size=size,
                          error=traceback.format_exc()[-600:]))


KV128 = [("ptr", 32, 64, 4, 4), ("tma", 32, 64, 4, 4), ("tma", 64, 64, 4, 3), ("ptr", 64, 64, 4, 3),
         ("tma", 64, 128, 8, 2), ("ptr", 64, 128, 8, 2), ("tma", 32, 128, 8, 3), ("tma", 64, 64, 8, 3)]
DQ128 = [("ptr", 128, 64, 8, 3), ("tma", 128, 64, 8, 3), ("tma", 64, 128, 4, 3), ("tma", 128, 32, 4, 3),
         ("tma", 64, 64, 4, 3), ("ptr", 64, 64, 4, 3)]
AT128 = [("ptr", 32, 64, 4, 4, 1), ("tma", 32, 64, 4, 4, 2), ("tma", 64, 64, 4, 3, 2), ("tma", 64, 128, 8, 2, 2),
         ("ptr", 64, 64, 4, 3, 1)]
KV64 = [("ptr", 64, 64, 4, 3), ("tma", 64, 64, 4, 3), ("tma", 32, 64, 4, 4), ("tma", 64, 128, 8, 2),
        ("tma", 128, 64, 8, 2), ("tma", 64, 128, 4, 2)]
DQ64 = [("ptr", 64, 64, 4, 3), ("tma", 64, 64, 4, 3), ("tma", 128, 64, 8, 3), ("tma", 128, 64, 4, 3),
        ("tma", 128, 128, 8, 2), ("tma", 64, 128, 4, 3)]
AT64 = [("tma", 64, 64, 4, 3, 2), ("tma", 64, 128, 8, 2, 2)]


def explore_bwd(D, kvs, dqs, ats, sizes, G=1):
    import check as C
    for (B, H, N, causal) in sizes:
        if left() < 30:
            return
        size = f"B={B} H={H} N={N} D={D} G={G} {'causal' if causal else 'full'}"
        q, k, v = inputs(B, H, N, N, D, G, torch.bfloat16)
        do = torch.randn_like(q)
        o_r, lse, _ = ref(q, k, v, causal, G) if N <= 4096 and B * H <= 64 else (None, None, None)
        if o_r is None:
            o, lse = fwd(q, k, v, causal, G, 128, 64, 8, 3, tma=True)
        else:
            o = o_r.to(q.dtype)
        lse = lse.float().contiguous()
        flops = fl(B, H, N, N, D, causal, 2.5)
        baselines("bwd", lambda backend: sdpa_bwd(q, k, v, do, causal, G, backend), size, flops)
        BD = D
        delta = torch.empty(B, H, N, device="cuda")
        dq = torch.zeros(q.shape, device="cuda")
        dk = torch.empty_like(k)
        dv = torch.empty_like(v)
        if G == 1:
            s32 = SOL32
            ms_pre = timed(lambda: s32.attn_bwd_preprocess[(triton.cdiv(N, 128), B * H)](o, do, delta, N, D=D,
                                                                                          BLOCK_Q=128, BLOCK_D=BD))
            save(dict(kind="bwd", who="preprocess", size=size, ms=ms_pre))
            kvb = (32, 64, 4, 4) if D == 128 else (64, 64, 4, 3)
            dqb = (128, 64, 8, 3) if D == 128 else (64, 64, 4, 3)
            ms_kv = timed(lambda: s32.attn_bwd_dkdv_kernel[(triton.cdiv(N, kvb[1]), B * H)](
                q, k, v, do, lse, delta, dq, dk, dv, N, N, D ** -0.5, 1, D=D, BLOCK_Q=kvb[0], BLOCK_K=kvb[1],
                BLOCK_D=BD, CAUSAL=causal, num_warps=kvb[2], num_stages=kvb[3]))
            ms_dq = timed(lambda: s32.attn_bwd_dq_kernel[(triton.cdiv(N, dqb[0]), B * H)](
                q, k, v, do, lse, delta, dq, N, N, D ** -0.5, 1, D=D, BLOCK_Q=dqb[0], BLOCK_K=dqb[1],
                BLOCK_D=BD, CAUSAL=causal, num_warps=dqb[2], num_stages=dqb[3]))
            save(dict(kind="bwd", who="main", size=size, ms=ms_pre + ms_kv + ms_dq, kv_ms=ms_kv, dq_ms=ms_dq,
                      tflops=flops / (ms_pre + ms_kv + ms_dq) / 1e9))
        C.K.bwd_preprocess[(triton.cdiv(N, 128), B * H)](o, do, delta, N, D=D, BQ=128, BD=BD)
        cq, ck, cv = inputs(1, 4, 1008, 1008, D, G, torch.bfloat16)
        cdo = torch.randn_like(cq)
        co, clse, _ = ref(cq, ck, cv, causal, G)
        gq, gk, gv = grads(cq, ck, cv, cdo, causal, G)

        def check(kv_cfg, dq_cfg, tma, atomic):
            dq_, dk_, dv_ = bwd(cq, ck, cv, co.to(cq.dtype), clse.float().contiguous(), cdo, causal, G, kv_cfg,
                                dq_cfg, tma=tma, atomic=atomic)
            return (rel(dq_, gq), rel(dk_, gk), rel(dv_, gv))

        for (design, bq, bk, w, s) in kvs:
            if left() < 30:
                return
            try:
                err = check((bq, bk, w, s), (64, 64, 4, 3), design == "tma", 0)
                ms = timed(lambda: C.K.bwd_dkdv[(triton.cdiv(N, bk), B * H // G)](
                    q, k, v, do, lse, delta, dq, dk, dv, N, N, D ** -0.5, H, G, D=D, BQ=bq, BK=bk, BD=BD,
                    CAUSAL=causal, TMA=design == "tma", ATOMIC=0, num_warps=w, num_stages=s))
                save(dict(kind="bwd-kv", who=f"{design} {bq}x{bk} w{w} s{s}", size=size, ms=ms, err=err))
            except Exception:
                save(dict(kind="bwd-kv", who=f"{design} {bq}x{bk} w{w} s{s}", size=size,
                          error=traceback.format_exc()[-600:]))
        for (design, bq, bk, w, s) in dqs:
            if left() < 30:
                return
            try:
                err = check((64, 64, 4, 3), (bq, bk, w, s), design == "tma", 0)
                ms = timed(lambda: C.K.bwd_dq[(triton.cdiv(N, bq), B * H)](
                    q, k, v, do, lse, delta, dq, N, N, D ** -0.5, H, G, D=D, BQ=bq, BK=bk, BD=BD,
                    CAUSAL=causal, TMA=design == "tma", num_warps=w, num_stages=s))
                save(dict(kind="bwd-dq", who=f"{design} {bq}x{bk} w{w} s{s}", size=size, ms=ms, err=err))
            except Exception:
                save(dict(kind="bwd-dq", who=f"{design} {bq}x{bk} w{w} s{s}", size=size,
                          error=traceback.format_exc()[-600:]))
        for (design, bq, bk, w, s, atomic) in ats:
            if left() < 30:
                return
            try:
                err = check((bq, bk, w, s), None, design == "tma", atomic)

                def run():
                    dq.zero_()
                    C.K.bwd_dkdv[(triton.cdiv(N, bk), B * H // G)](
                        q, k, v, do, lse, delta, dq, dk, dv, N, N, D ** -0.5, H, G, D=D, BQ=bq, BK=bk, BD=BD,
                        CAUSAL=causal, TMA=design == "tma", ATOMIC=atomic, num_warps=w, num_stages=s)
                ms = timed(run)
                save(dict(kind="bwd-atomic", who=f"{design} {bq}x{bk} w{w} s{s} a{atomic}", size=size, ms=ms,
                          err=err))
            except Exception:
                save(dict(kind="bwd-atomic", who=f"{design} {bq}x{bk} w{w} s{s} a{atomic}", size=size,
                          error=traceback.format_exc()[-600:]))


if __name__ == "__main__":
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    torch.manual_seed(0)
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
    if what in ("fwd", "all"):
        explore_fwd(128, FWD128, [(4, 16, 4096, False), (4, 16, 4096, True)])
    if what in ("bwd", "all"):
        explore_bwd(128, KV128, DQ128, AT128, [(4, 16, 4096, False), (4, 16, 4096, True)])
    if what in ("fwd", "all"):
        explore_fwd(64, FWD64, [(4, 16, 4096, False), (4, 16, 4096, True)])
    if what in ("bwd", "all"):
        explore_bwd(64, KV64, DQ64, AT64, [(4, 16, 4096, False)])
    # what a model runs: long rows, grouped-query heads (PyTorch's pick may change backend there)
    if what in ("fwd", "all"):
        explore_fwd(128, [("tma", 128, 128, 8, 2), ("tma", 128, 64, 8, 3), ("persist", 128, 128, 8, 3)],
                    [(1, 16, 16384, False), (1, 16, 16384, True)])
        explore_fwd(128, [("tma", 128, 128, 8, 2), ("tma", 128, 64, 8, 3)], [(4, 32, 4096, True)], G=4)
    print(f"done in {time.time() - T0:.0f} s")
