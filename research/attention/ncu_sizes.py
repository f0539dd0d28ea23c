"""One launch of each kernel at every benchmark size (after two warm-ups), between cudaProfilerStart
and Stop: per size, the reference forward (1 kernel) and backward (Δ, dK/dV, dQ), then cuDNN's forward
(1) and backward (Δ, the walk, dQ's conversion): 8 kernels a size, in that order. On a GPU:

    ncu --profile-from-start off --kernel-name regex:'attn|cudnn' --metrics gpu__time_duration.sum,\\
        sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active --csv --page raw \\
        python ncu_sizes.py ../.. > ncu_sizes.csv

(every size of checker.specs.families.attention.bench_sizes, the grouped-query ones included)"""
import sys

import torch
import torch.nn.functional as F
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
sys.path.insert(0, ROOT)
from check import load  # noqa: E402
from checker.specs.families.attention import bench_sizes  # noqa: E402


f = load(f"{ROOT}/solutions/p31_flash_attention_forward.py", "f")
b = load(f"{ROOT}/solutions/p32_flash_attention_backward.py", "b")
work = []
for _, size in bench_sizes():
    B, H, KV, N, D, causal = (size[n] for n in ("B", "H", "KV", "L", "D", "CAUSAL"))
    G = H // KV
    q, do = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(B, KV, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    o = torch.empty_like(q)
    lse = torch.empty(B, H, N, device="cuda")
    delta = torch.empty_like(lse)
    dq = torch.zeros(q.shape, device="cuda")
    # dK and dV per query head, as the checker hands them to the kernel when GROUP > 1 (fp32)
    dk, dv = ((torch.empty_like(k), torch.empty_like(v)) if G == 1 else
              (torch.empty(B, H, N, D, device="cuda") for _ in range(2)))
    fwd_warps, kv, dqt = (8, (32, 64, 4, 4), (128, 64, 8, 3)) if D == 128 else (4, (64, 64, 4, 3), (64, 64, 4, 3))

    def ours(q=q, k=k, v=v, do=do, o=o, lse=lse, delta=delta, dq=dq, dk=dk, dv=dv, N=N, B=B, H=H, D=D, G=G,
             causal=causal, fwd_warps=fwd_warps, kv=kv, dqt=dqt):
        f.attn_fwd_kernel[(triton.cdiv(N, 128), B * H)](q, k, v, o, lse, N, N, D ** -0.5, G, D=D, BLOCK_Q=128,
                                                       BLOCK_K=64, BLOCK_D=D, CAUSAL=causal, num_warps=fwd_warps,
                                                       num_stages=3)
        b.attn_bwd_preprocess[(triton.cdiv(N, kv[0]), B * H)](o, do, delta, N, D=D, BLOCK_Q=kv[0], BLOCK_D=D)
        b.attn_bwd_dkdv_kernel[(triton.cdiv(N, kv[1]), B * H)](q, k, v, do, lse, delta, dq, dk, dv, N, N, D ** -0.5,
                                                               G, D=D, BLOCK_Q=kv[0], BLOCK_K=kv[1], BLOCK_D=D,
                                                               CAUSAL=causal, num_warps=kv[2], num_stages=kv[3])
        b.attn_bwd_dq_kernel[(triton.cdiv(N, dqt[0]), B * H)](q, k, v, do, lse, delta, dq, N, N, D ** -0.5, G, D=D,
                                                             BLOCK_Q=dqt[0], BLOCK_K=dqt[1], BLOCK_D=D,
                                                             CAUSAL=causal, num_warps=dqt[2], num_stages=dqt[3])

    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(*leaves, is_causal=causal, enable_gqa=G > 1)

    def cudnn(q=q, k=k, v=v, do=do, out=out, leaves=leaves, causal=causal, G=G):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=G > 1)
        torch.autograd.grad(out, leaves, do, retain_graph=True)

    for fn in (ours, cudnn):
        fn()
        fn()
    work.append((ours, cudnn))
torch.cuda.synchronize()
torch.cuda.profiler.start()
for ours, cudnn in work:
    ours()
    cudnn()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("profiled", len(work), "sizes")
