"""Each design of kernels.py against float32 attention (on a GPU, or in Triton's interpreter with
TRITON_INTERPRET=1: python check.py, small sizes with tails and grouped-query heads)."""
import importlib.util
import math
import os

import torch
import triton
import kernels as K
DEV = "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"
if DEV == "cuda":
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))

def load(path, name):
    """A module from a file: the solutions are loaded by path, as the checker does."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ref(q, k, v, causal, G):
    k = k.repeat_interleave(G, dim=1); v = v.repeat_interleave(G, dim=1)
    s = q.float() @ k.float().transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        L, S = s.shape[-2:]
        s = s.masked_fill(torch.ones(L, S, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return s.softmax(-1) @ v.float(), s.logsumexp(-1), s

def fwd(q, k, v, causal, G, BQ, BK, warps, stages, tma=False, ws=False, persist=False, reverse=False, sms=132,
        overlap=False):
    B, H, L, D = q.shape; S = k.shape[2]
    o = torch.empty_like(q); lse = torch.empty(B, H, L, device=q.device, dtype=torch.float32)
    BD = max(16, triton.next_power_of_2(D))
    c = dict(D=D, BQ=BQ, BK=BK, BD=BD, CAUSAL=causal, TMA=tma, WS=ws, REVERSE=reverse, OVERLAP=overlap,
             num_warps=warps, num_stages=stages)
    if persist:
        K.fwd_persistent[(min(sms, triton.cdiv(L, BQ) * B * H),)](q, k, v, o, lse, L, S, D ** -0.5, H, G, B * H, **c)
    else:
        K.fwd_kernel[(triton.cdiv(L, BQ), B * H)](q, k, v, o, lse, L, S, D ** -0.5, H, G, **c)
    return o, lse

def bwd(q, k, v, o, lse, do, causal, G, kv_cfg, dq_cfg, tma=False, atomic=0):
    B, H, L, D = q.shape; S = k.shape[2]
    BD = max(16, triton.next_power_of_2(D))
    delta = torch.empty(B, H, L, device=q.device, dtype=torch.float32)
    dq = torch.zeros(q.shape, device=q.device, dtype=torch.float32)
    dk = torch.empty_like(k); dv = torch.empty_like(v)
    K.bwd_preprocess[(triton.cdiv(L, 128), B * H)](o, do, delta, L, D=D, BQ=128, BD=BD)
    bq, bk, w, s = kv_cfg
    K.bwd_dkdv[(triton.cdiv(S, bk), B * H // G)](q, k, v, do, lse, delta, dq, dk, dv, L, S, D ** -0.5, H, G, D=D, BQ=bq,
                                              BK=bk, BD=BD, CAUSAL=causal, TMA=tma, ATOMIC=atomic, num_warps=w, num_stages=s)
    if not atomic:
        bq, bk, w, s = dq_cfg
        K.bwd_dq[(triton.cdiv(L, bq), B * H)](q, k, v, do, lse, delta, dq, L, S, D ** -0.5, H, G, D=D, BQ=bq, BK=bk,
                                           BD=BD, CAUSAL=causal, TMA=tma, num_warps=w, num_stages=s)
    return dq, dk, dv

def grads(q, k, v, do, causal, G):
    leaves = [t.detach().float().requires_grad_() for t in (q, k, v)]
    o, _, _ = ref(*leaves, causal, G)
    return torch.autograd.grad(o, leaves, do.float())

def rel(a, b):
    return float((a.float() - b.float()).norm() / b.float().norm())

def inputs(B, H, L, S, D, G, dtype):
    q = torch.randn(B, H, L, D, device=DEV, dtype=dtype)
    k = torch.randn(B, H // G, S, D, device=DEV, dtype=dtype)
    v = torch.randn(B, H // G, S, D, device=DEV, dtype=dtype)
    return q, k, v

if __name__ == "__main__":
    torch.manual_seed(0)
    dt = torch.float32 if DEV == "cpu" else torch.bfloat16
    for (B, H, L, S, D, G) in [(1, 4, 40, 40, 32, 2), (1, 2, 33, 50, 16, 1), (1, 2, 50, 20, 32, 2)]:
        q, k, v = inputs(B, H, L, S, D, G, dt)
        do = torch.randn_like(q)
        for causal in (False, True):
            o_r, lse_r, _ = ref(q, k, v, causal, G)
            for kw in (dict(tma=False), dict(tma=True), dict(tma=True, persist=True, reverse=True, sms=3), dict(overlap=True)):
                o, lse = fwd(q, k, v, causal, G, 16, 16, 4, 2, **kw)
                print("fwd", (L, S, D, G, causal), kw, f"o {rel(o, o_r):.1e} lse {rel(lse, lse_r):.1e}")
            gq, gk, gv = grads(q, k, v, do, causal, G)
            for kw in (dict(tma=False), dict(tma=True), dict(tma=False, atomic=1)) + ((dict(tma=True, atomic=2),) if DEV == "cuda" else ()):
                dq, dk, dv = bwd(q, k, v, o_r.to(dt), lse_r, do, causal, G, (16, 32, 4, 2), (32, 16, 4, 2), **kw)
                print("bwd", (L, S, D, G, causal), kw, f"dq {rel(dq, gq):.1e} dk {rel(dk, gk):.1e} dv {rel(dv, gv):.1e}")
