"""Puzzle 6 reference kernels: SiLU, forward and backward.

    x, y, dy, dx: [N], contiguous, all of one dtype (float32, or bfloat16 on a GPU)
    y  = x · s                       s = sigmoid(x) = 1 / (1 + exp(-x))
    dx = dy · s · (1 + x · (1 − s))  (dy: the gradient of the loss with respect to y)

The checker launches one program per block of BLOCK elements:
    silu_fwd_kernel[(triton.cdiv(N, BLOCK),)](x, y, N, BLOCK=BLOCK)
    silu_bwd_kernel[(triton.cdiv(N, BLOCK),)](x, dy, dx, N, BLOCK=BLOCK)

The backward kernel gets x, not s: it recomputes the sigmoid. An exp per element is cheap next to
reading another N-element tensor from memory, and nothing has to be kept between the two passes.
"""
import triton
import triton.language as tl


@triton.jit
def silu_fwd_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    """y[i] = x[i] * sigmoid(x[i]) for i in [0, N). Grid: (cdiv(N, BLOCK),)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N  # the last block sticks out past N when BLOCK does not divide it
    # compute in fp32 whatever the input dtype: Triton's exp accepts only fp32 and fp64, and a
    # sigmoid kept in 16 bits loses the digits that 1 - s needs in the backward pass
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(x)  # 1 / (1 + exp(-x)): exp(-x) overflows to inf for x < -88, and 1 / inf = 0 is right
    tl.store(y_ptr + offsets, x * s, mask=mask)  # the store casts to y's dtype


@triton.jit
def silu_bwd_kernel(x_ptr, dy_ptr, dx_ptr, N, BLOCK: tl.constexpr):
    """dx[i] = dy[i] * s * (1 + x[i] * (1 - s)), s = sigmoid(x[i]). Grid: (cdiv(N, BLOCK),)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(x)  # recomputed from x, as the forward kernel did: no s saved between the passes
    # the product rule on x · s, with s' = s (1 - s)
    tl.store(dx_ptr + offsets, dy * s * (1.0 + x * (1.0 - s)), mask=mask)
