"""Puzzle 27 reference kernels: softmax cross-entropy, its loss and its gradient, one program per row.

    logits: [M, V], row r at logits + r * stride (stride >= V)     dlogits: [M, V], the same layout
    target: [M] int32 (ignore_index marks a row that does not count)   dloss: [1], the loss's upstream gradient
    n = the number of rows whose target is not ignore_index
    loss = (1 / n) Σ_r (lse_r − logits[r, target_r]),   lse_r = log Σ_j exp(logits[r, j])   (counted rows only)
    dlogits[r, j] = dloss / n · (softmax(logits[r])_j − [j = target_r])   (zero on ignored rows)

The checker launches (and sums the M partial losses in PyTorch, loss = loss_rows.sum()):
    ce_count_kernel[(1,)](target, n_valid, M, ignore_index, BLOCK_M=BLOCK_M)   # BLOCK_M >= M
    ce_fwd_bwd_kernel[(M,)](logits, target, dloss, n_valid, loss_rows, dlogits, V, stride, ignore_index,
                            BLOCK_V=BLOCK_V)
"""
import triton
import triton.language as tl


@triton.jit
def ce_count_kernel(target_ptr, n_valid_ptr, M, ignore_index, BLOCK_M: tl.constexpr):
    """n_valid = how many rows count (target != ignore_index): the mean's denominator. One block of
    BLOCK_M >= M targets (8192 rows are 32 KiB: one program reads them at once). Grid: (1,)."""
    rows = tl.arange(0, BLOCK_M)
    # padded lanes load ignore_index: a row that is not there does not count
    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)
    tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))


@triton.jit
def ce_fwd_bwd_kernel(logits_ptr, target_ptr, dloss_ptr, n_valid_ptr, loss_rows_ptr, dlogits_ptr,
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
