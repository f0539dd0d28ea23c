"""Puzzle 29 reference kernels: rotary position embedding (RoPE), forward and backward.

Shapes (contiguous):
    q, q_out, dq_out, dq: [B, T, HQ, D]    k, k_out, dk_out, dk: [B, T, HK, D]   (HK may differ from HQ)
    pos: [B, T] int32, the position of each token (each batch row its own: packed or padded rows)
    cos, sin: [P, D/2] float32 tables, cos[p, i] = cos(p * theta_i), theta_i = base ** (-2i / D)

The half-split convention (Llama, GPT-NeoX, Hugging Face): element i of a head's first half pairs
with element i + D/2 of its second half, and the pair turns by the angle pos * theta_i:
    out[i]       = x[i] * cos - x[i + D/2] * sin
    out[i + D/2] = x[i + D/2] * cos + x[i] * sin
The backward turns the gradient back by the same angle (the rotation's transpose: sin's sign flips).

The checker launches one program per token, each handling every head of q and of k (4 warps;
the benchmark at D = 128: 16 heads a step and 8 warps):
    rope_fwd_kernel[(B * T,)](q, k, pos, cos, sin, q_out, k_out, HQ, HK, D, BLOCK_H=..., BLOCK_HALF=...)
    rope_bwd_kernel[(B * T,)](dq_out, dk_out, pos, cos, sin, dq, dk, HQ, HK, D, BLOCK_H=..., BLOCK_HALF=...)
"""
import triton
import triton.language as tl


@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """Rotate every head of q and of k for token pid = b * T + t, BLOCK_H heads at a time.
    Grid: (B * T,)."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half  # D/2 need not be a power of two (D = 96: 48 of 64 lanes)
    # the token's own position, not t: rows of a batch may start at different positions
    pos = tl.load(pos_ptr + token)
    # one row of the tables serves every head of q and k: loaded once per token, kept in fp32
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head
        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)
    # k has its own head count (grouped-query attention: fewer key heads than query heads)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(k_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)


@triton.jit
def rope_bwd_kernel(dq_out_ptr, dk_out_ptr, pos_ptr, cos_ptr, sin_ptr, dq_ptr, dk_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """dq, dk: the upstream gradients turned back by each pair's angle (the rotation's transpose).
    Grid: (B * T,)."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    # the transpose of [[cos, -sin], [sin, cos]] is [[cos, sin], [-sin, cos]]: the forward with -sin
    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)
        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)
        tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)
