"""Puzzle 27 reference kernels: softmax cross-entropy, its loss and its gradient, a few programs
walking the rows.

    logits: [M, V], row r at logits + r * stride (stride >= V)     dlogits: [M, V], the same layout
    target: [M] int32 (ignore_index marks a row that does not count)   dloss: [1], the loss's upstream gradient
    n = the number of rows whose target is not ignore_index
    loss = (1 / n) Σ_r (lse_r − logits[r, target_r]),   lse_r = log Σ_j exp(logits[r, j])   (counted rows only)
    dlogits[r, j] = dloss / n · (softmax(logits[r])_j − [j = target_r])   (zero on ignored rows)
    n = 0 (every target ignored): loss = 0 and dlogits = 0, where PyTorch's mean gives NaN

The checker launches (and sums the M partial losses in PyTorch, loss = loss_rows.sum()):
    ce_count_kernel[(1,)](target, n_valid, M, ignore_index, BLOCK_M=BLOCK_M)
    ce_fwd_bwd_kernel[(P,)](logits, target, dloss, n_valid, loss_rows, dlogits, M, V, stride, ignore_index,
                            BLOCK_V=BLOCK_V)
with P programs: eight per SM on a GPU, three with the widest rows' blocks (never more than M), 3 in the
interpreter, 2 or 5 in some cases: a kernel reads P with tl.num_programs(0).
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
                      M, V, stride, ignore_index, BLOCK_V: tl.constexpr):
    """Rows pid, pid + P, pid + 2P, ... (P programs), each row's loss share and gradient row,
    BLOCK_V columns at a time, in two passes. Grid: (P,).

    Why a few programs and not one per row: pass 2 reads the row again, and that read is free only
    if it comes from L2 (50 MB on an H100). One program per row keeps as many rows in flight as fit
    on the SMs, over a thousand, and pass 2 goes back to memory. A few programs per SM (two fit at a
    time, 16 warps each) keep about 264 rows in flight: 17 MB of 64 KB rows (V = 32000) fit; 256 KB
    rows (V = 128256) fit only in part, so pass 2 walks its row backwards, starting with the blocks
    pass 1 read last, and the loads and stores say which bytes are worth keeping in L2
    (eviction_policy; a hint: the interpreter ignores it)."""
    # the mean counts only the rows that count; dloss scales the whole gradient (the chain rule)
    n = tl.load(n_valid_ptr)
    dloss = tl.load(dloss_ptr)
    blocks = tl.cdiv(V, BLOCK_V)
    for row in range(tl.program_id(0), M, tl.num_programs(0)):
        # row * stride in int32 wraps past 2**31 elements (8192 rows of a 262144-wide vocabulary, or a
        # strided view of fewer rows): make the row's offset int64 before the product
        base = tl.cast(row, tl.int64) * stride
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
            # evict_last: keep these bytes in L2 for pass 2
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf"),
                        eviction_policy="evict_last").to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            # the terms so far were exp(x − m); exp(m − m_new) <= 1 moves them to exp(x − m_new).
            # (On the first block m = -inf: 0 · exp(-inf) = 0, and every block holds a real column.)
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        lse = m + tl.log(s)

        scale = tl.where(valid, dloss / n, 0.0)
        # an ignored row's target (-100) is no column: read the target's logit only for a counted row
        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)
        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))

        # pass 2: the row again, last block first (the blocks pass 1 read most recently are the likeliest
        # to be in L2), p = exp(x − lse), and the one-hot subtracted in fp32. A confident row has
        # p_target = 1 − 1e-4: rounded to bf16 first it is 1.0, and the target's gradient, the one that
        # teaches the model, becomes 0.
        g_row = dlogits_ptr + base
        for back in range(0, blocks):
            cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)
            mask = cols < V
            # evict_first: neither these bytes nor the gradient are read again
            x = tl.load(x_row + cols, mask=mask, eviction_policy="evict_first").to(tl.float32)
            p = tl.exp(x - lse)
            grad = tl.where(cols == target, p - 1.0, p) * scale
            tl.store(g_row + cols, grad, mask=mask, eviction_policy="evict_first")  # rounded once, to dlogits' dtype
