"""One launch of each kernel to profile (after two warm-ups), between cudaProfilerStart and Stop:
the reference forward and backward at B=4, H=16, N=4096, D=128 (bf16, not causal), and cuDNN's.
On a GPU, from this folder (book/data/attention_ncu.json came from this command):

    ncu --profile-from-start off --kernel-name regex:'attn|cudnn' --section SpeedOfLight \
        --section ComputeWorkloadAnalysis --section WarpStateStats --section LaunchStats \
        --section Occupancy --page raw --csv python ncu_run.py ../.. > ncu_raw.csv"""
import sys

import torch
import triton
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from check import load

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
f = load(f"{ROOT}/solutions/p31_flash_attention_forward.py", "f")
b = load(f"{ROOT}/solutions/p32_flash_attention_backward.py", "b")
B, H, N, D = 4, 16, 4096, 128
torch.manual_seed(0)
q, k, v, do = (torch.randn(B, H, N, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
o = torch.empty_like(q); lse = torch.empty(B, H, N, device="cuda")
delta = torch.empty_like(lse); dq = torch.zeros(q.shape, device="cuda"); dk = torch.empty_like(k); dv = torch.empty_like(v)
def ours_fwd():
    f.attn_fwd_kernel[(triton.cdiv(N, 128), B * H)](q, k, v, o, lse, N, N, D ** -0.5, 1, D=D, BLOCK_Q=128, BLOCK_K=64,
                                                   BLOCK_D=D, CAUSAL=False, num_warps=8, num_stages=3)
def ours_bwd():
    b.attn_bwd_preprocess[(triton.cdiv(N, 32), B * H)](o, do, delta, N, D=D, BLOCK_Q=32, BLOCK_D=D)
    b.attn_bwd_dkdv_kernel[(triton.cdiv(N, 64), B * H)](q, k, v, do, lse, delta, dq, dk, dv, N, N, D ** -0.5, 1, D=D,
                                                        BLOCK_Q=32, BLOCK_K=64, BLOCK_D=D, CAUSAL=False, num_warps=4, num_stages=4)
    b.attn_bwd_dq_kernel[(triton.cdiv(N, 128), B * H)](q, k, v, do, lse, delta, dq, N, N, D ** -0.5, 1, D=D,
                                                      BLOCK_Q=128, BLOCK_K=64, BLOCK_D=D, CAUSAL=False, num_warps=8, num_stages=3)
leaves = [t.detach().requires_grad_() for t in (q, k, v)]
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    out = F.scaled_dot_product_attention(*leaves)
def cudnn_fwd():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, k, v)
def cudnn_bwd():
    torch.autograd.grad(out, leaves, do, retain_graph=True)
work = [ours_fwd, ours_bwd, cudnn_fwd, cudnn_bwd]
for w in work:
    w(); w()
torch.cuda.synchronize()
torch.cuda.profiler.start()
for w in work:
    w()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("profiled")
