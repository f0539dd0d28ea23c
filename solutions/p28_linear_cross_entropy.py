"""Puzzle 28 reference kernels: Linear + cross-entropy, chunk by chunk, the [N, V] logits never made.

    x: [N, H]   w: [V, H] (the vocabulary projection, no bias)   target: [N] int32   dloss: [1]
    logits = x wᵀ   loss = cross_entropy(logits, target), the mean over counted rows (puzzle 27)
    dlogits = dloss / n · (softmax − one_hot)      dx = dlogits w      dw = dlogitsᵀ x

The checker's launch walks the rows CHUNK at a time; a chunk's logits are an fp32 [CHUNK, V] scratch
buffer, and its gradient is written in their place (nothing else needs them: puzzle 27's warning
about in-place gradients does not apply to a buffer the loss owns):
    chunk_count_kernel[(1,)](target, n_valid, N, ignore_index, BLOCK_M=BLOCK_M)     # BLOCK_M >= N
    for start in range(0, N, CHUNK):                                             # C rows: start .. start + C
        chunk_matmul_kernel[grid(C, V)](x_c, w, g, C, V, H, ...strides of x_c, of wᵀ, of g...)     # g = x_c wᵀ
        chunk_ce_kernel[(C,)](g, target_c, dloss, n_valid, loss_rows_c, g, V, V, ignore_index, BLOCK_V=BLOCK_V)
        chunk_matmul_kernel[grid(C, H)](g, w, dx_c, C, H, V, ...)                        # dx_c = g w
        chunk_matmul_kernel[grid(V, H)](g, x_c, dw, V, H, C, ..., ACCUMULATE=True)      # dw += gᵀ x_c
    loss = loss_rows.sum()
chunk_matmul_kernel's grid is (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N)) for its c[M, N]; dw is fp32 and starts at 0.
"""
import triton
import triton.language as tl


@triton.jit
def chunk_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                  ACCUMULATE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """c[M, N] = a[M, K] b[K, N], or c += a b when ACCUMULATE, one [BLOCK_M, BLOCK_N] tile per program.
    a and b are read through their strides: a transposed operand (wᵀ, gᵀ) is the same memory with its
    two strides swapped, never a copy. Grid: (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        ks = start + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        # the gradient chunk is fp32 (p − 1 kept exact); it meets a bf16 x or w at the tensor cores
        # in bf16, as PyTorch's bf16 matmul would. The sum stays fp32.
        acc += tl.dot(a.to(b.dtype), b)
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if ACCUMULATE:
        # dw += this chunk's share: this program is the tile's only writer in this launch, and the
        # chunks' launches run one after another on one stream, so a plain read, add and write is
        # safe (no atomics), and the order of the sum is fixed (the same bits every run)
        acc += tl.load(c_ptrs, mask=mask)
    tl.store(c_ptrs, acc, mask=mask)


@triton.jit
def chunk_count_kernel(target_ptr, n_valid_ptr, M, ignore_index, BLOCK_M: tl.constexpr):
    """n_valid = how many rows count (target != ignore_index): the mean's denominator. One block of
    BLOCK_M >= M targets (8192 rows are 32 KiB: one program reads them at once). Grid: (1,)."""
    rows = tl.arange(0, BLOCK_M)
    # padded lanes load ignore_index: a row that is not there does not count
    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)
    tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))


@triton.jit
def chunk_ce_kernel(logits_ptr, target_ptr, dloss_ptr, n_valid_ptr, loss_rows_ptr, dlogits_ptr,
                      V, stride, ignore_index, BLOCK_V: tl.constexpr):
    """Row r's loss share and gradient row, BLOCK_V columns at a time, in two passes. Grid: (M,)."""
    row = tl.program_id(0)
    # row * stride in int32 wraps past 2**31 elements (8192 rows of a 262144-wide vocabulary, or a
    # strided view of fewer rows): make the row's offset int64 before the product
    base = row.to(tl.int64) * stride
    x_row = logits_ptr + base
    target = tl.load(target_ptr + row)
    valid = target != ignore_index

    # pass 1: lse = m + log s with a running max m and s = Σ exp(x − m) (puzzle 11's online softmax,
    # one number per row). Padded lanes load -inf: they cannot win the max, and exp(-inf − m) = 0
    # adds nothing to s (0.0 would add exp(0 − m) per padded lane: a phantom vocabulary entry).
    m = -float("inf")
    s = 0.0
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        # the terms so far were exp(x − m); exp(m − m_new) <= 1 moves them to exp(x − m_new).
        # (On the first block m = -inf: 0 · exp(-inf) = 0, and every block holds a real column.)
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    lse = m + tl.log(s)

    # the mean counts only the rows that count; dloss scales the whole gradient (the chain rule)
    n = tl.load(n_valid_ptr)
    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)
    # an ignored row's target (-100) is no column: read the target's logit only for a counted row
    x_target = tl.load(x_row + target, mask=valid).to(tl.float32)
    tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))

    # pass 2: the row again (from L2 when it was read recently), p = exp(x − lse), and the one-hot
    # subtracted in fp32. A confident row has p_target = 1 − 1e-4: rounded to bf16 first it is 1.0,
    # and the target's gradient, the one that teaches the model, becomes 0.
    g_row = dlogits_ptr + base
    for start in range(0, V, BLOCK_V):
        cols = start + tl.arange(0, BLOCK_V)
        mask = cols < V
        x = tl.load(x_row + cols, mask=mask).to(tl.float32)
        p = tl.exp(x - lse)
        grad = tl.where(cols == target, p - 1.0, p) * scale
        tl.store(g_row + cols, grad, mask=mask)  # rounded once, to dlogits' dtype
