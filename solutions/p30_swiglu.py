"""Puzzle 30 reference kernels: the SwiGLU gate of a gated MLP, forward and backward.

Shapes (contiguous, one dtype: float32, or bfloat16 as in training):
    a, b, h, dh, da, db: [M, N]   (a = x W_gateᵀ, b = x W_upᵀ: the two projections of x)
    h  = silu(a) * b                          silu(a) = a * s, s = sigmoid(a)
    da = dh * b * s * (1 + a * (1 - s))       (silu'(a), recomputed from a in fp32)
    db = dh * silu(a)

The checker launches one program per block of BLOCK elements of the flattened [M, N] tensors
(num_warps=4; the benchmark: BLOCK = 2048, 16 warps):
    swiglu_fwd_kernel[(triton.cdiv(M * N, BLOCK),)](a, b, h, M * N, BLOCK=BLOCK, num_warps=...)
    swiglu_bwd_kernel[(triton.cdiv(M * N, BLOCK),)](a, b, dh, da, db, M * N, BLOCK=BLOCK, num_warps=...)
The MLP's products (x W_gateᵀ, dh = dy W_down, dx = da W_gate + db W_up, ...) are matmuls of the
kind puzzles 15 and 16 wrote; the check's launch does them with PyTorch, around these two kernels.
"""
import triton
import triton.language as tl


@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """h = silu(a) * b, BLOCK elements per program. Grid: (cdiv(n_elements, BLOCK),)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    # fp32 inside whatever the storage: the sigmoid and the products rounded once, at the store
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)


@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """da = dh * b * silu'(a), db = dh * silu(a). Grid: (cdiv(n_elements, BLOCK),).

    Nothing is saved from the forward but a and b (the projections autograd keeps anyway): the
    sigmoid is recomputed here, in fp32. A saved bf16 copy of s or silu(a) would cost another
    M x N read and lose the digits that 1 - s needs.
    """
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    silu = a * s
    # h = silu(a) * b: the product rule gives each factor the other one, times dh
    tl.store(db_ptr + offsets, dh * silu, mask=mask)
    # silu'(a) = s + a * s * (1 - s) = s * (1 + a * (1 - s))
    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)
