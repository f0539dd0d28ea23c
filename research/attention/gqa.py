"""Grouped-query attention's backward, two ways, timed in one run next to PyTorch's pick:

  per query head (the reference, as the checker launches puzzle 32): B·H dK/dV programs, each storing
      its query head's share into fp32 buffers [B, H, S, D], then each group's shares summed (torch);
  looped over the group (kernels.py's bwd_dkdv): B·KV dK/dV programs, each walking the queries of
      its GROUP query heads into one accumulator, its key block loaded once, no buffers, no sum.

Both dQ walks are the reference's. Each design is first checked against float32 autograd. On a GPU:

    cd research/attention && ROOT=../.. OUT=. python gqa.py

writes gqa.json; copied to book/data/attention_gqa.json for puzzle 32's page."""
import json
import os
import time

import torch
import triton
import triton.testing

from check import bwd, grads, inputs, load, ref, rel

ROOT = os.environ.get("ROOT", ".")
OUT = os.environ.get("OUT", "/tmp")
SOL = load(f"{ROOT}/solutions/p32_flash_attention_backward.py", "sol32")
# the reference's benchmark tiles at D = 128 (checker/specs/p32: FAST): dK/dV 32 x 64, 4 warps, 4
# stages; dQ 128 x 64, 8 warps, 3 stages
KV_TILES, DQ_TILES = (32, 64, 4, 4), (128, 64, 8, 3)


def per_query_head(q, k, v, o, lse, do, causal, G):
    """Puzzle 32's reference as the checker launches it for GROUP = G > 1."""
    B, H, L, D = q.shape
    S, KV = k.shape[2], k.shape[1]
    delta = torch.empty(B, H, L, device=q.device, dtype=torch.float32)
    dq = torch.zeros(q.shape, device=q.device, dtype=torch.float32)
    dk_heads = torch.empty(B, H, S, D, device=q.device, dtype=torch.float32)
    dv_heads = torch.empty_like(dk_heads)
    bq, bk, w, s = KV_TILES
    tiles = dict(D=D, BLOCK_D=max(16, triton.next_power_of_2(D)), CAUSAL=causal)
    SOL.attn_bwd_preprocess[(triton.cdiv(L, bq), B * H)](o, do, delta, L, D=D, BLOCK_Q=bq, BLOCK_D=tiles["BLOCK_D"])
    SOL.attn_bwd_dkdv_kernel[(triton.cdiv(S, bk), B * H)](q, k, v, do, lse, delta, dq, dk_heads, dv_heads, L, S,
                                                          D ** -0.5, G, BLOCK_Q=bq, BLOCK_K=bk, num_warps=w,
                                                          num_stages=s, **tiles)
    bq, bk, w, s = DQ_TILES
    SOL.attn_bwd_dq_kernel[(triton.cdiv(L, bq), B * H)](q, k, v, do, lse, delta, dq, L, S, D ** -0.5, G,
                                                        BLOCK_Q=bq, BLOCK_K=bk, num_warps=w, num_stages=s, **tiles)
    dk = dk_heads.unflatten(1, (KV, G)).sum(2).to(k.dtype)
    dv = dv_heads.unflatten(1, (KV, G)).sum(2).to(v.dtype)
    return dq, dk, dv


def looped(q, k, v, o, lse, do, causal, G):
    return bwd(q, k, v, o, lse, do, causal, G, KV_TILES, DQ_TILES)


def sdpa_backward(q, k, v, do, causal):
    import torch.nn.functional as F
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    o = F.scaled_dot_product_attention(*leaves, is_causal=causal, enable_gqa=True)
    return lambda: torch.autograd.grad(o, leaves, do, retain_graph=True)


def main():
    records = []
    torch.manual_seed(0)
    # correctness first, at a size with tails
    q, k, v = inputs(2, 8, 1000, 1000, 128, 4, torch.bfloat16)
    do = torch.randn_like(q)
    for causal in (False, True):
        o, lse, _ = ref(q, k, v, causal, 4)
        gq, gk, gv = grads(q, k, v, do, causal, 4)
        for name, fn in (("per query head", per_query_head), ("looped over the group", looped)):
            dq, dk, dv = fn(q, k, v, o.to(q.dtype), lse, do, causal, 4)
            errors = {"dq": rel(dq, gq), "dk": rel(dk, gk), "dv": rel(dv, gv)}
            print(name, causal, errors, flush=True)
            assert max(errors.values()) < 2e-2, (name, causal, errors)
    # Llama 3 8B's heads: 32 query heads, 8 key/value heads, D = 128, B = 4, N = 4096
    B, H, KV, N, D = 4, 32, 8, 4096, 128
    G = H // KV
    q, k, v = inputs(B, H, N, N, D, G, torch.bfloat16)
    do = torch.randn_like(q)
    for causal in (False, True):
        o, lse, _ = ref(q, k, v, causal, G)
        o = o.to(q.dtype)
        flops = 2.5 * 4 * B * H * N * N * D / (2 if causal else 1)
        row = {"size": f"{'causal' if causal else 'non-causal'}, B={B}, H={H}, KV={KV}, N={N}, D={D}"}
        for name, fn in (("per query head", lambda: per_query_head(q, k, v, o, lse, do, causal, G)),
                         ("looped over the group", lambda: looped(q, k, v, o, lse, do, causal, G)),
                         ("torch (its pick)", sdpa_backward(q, k, v, do, causal))):
            ms = triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")
            row[name] = {"ms": round(ms, 4), "tflops": round(flops / ms / 1e9, 1)}
        print(json.dumps(row), flush=True)
        records.append(row)
        del o, lse
    result = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
              "torch": torch.__version__, "triton": triton.__version__, "rows": records}
    with open(f"{OUT}/gqa.json", "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
