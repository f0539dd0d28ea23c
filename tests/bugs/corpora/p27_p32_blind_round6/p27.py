"""Blind corpus (round 6 for p27-p32), puzzle 27 (fused cross-entropy, forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_COUNT_LOAD = "    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)\n"
_P1_LOAD = ("            x = tl.load(x_row + cols, mask=cols < V, other=-float(\"inf\"),\n"
            "                        eviction_policy=\"evict_last\").to(tl.float32)\n")
_RESCALE = "            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\n"
_SCALE = "        scale = tl.where(valid, dloss / n, 0.0)\n"
_LOSS_STORE = "        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))\n"
_XT = "        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)\n"
_P2_COLS = "            cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)\n"
_P2_LOAD = "            x = tl.load(x_row + cols, mask=mask, eviction_policy=\"evict_first\").to(tl.float32)\n"
_GRAD = "            grad = tl.where(cols == target, p - 1.0, p) * scale\n"
_G_STORE = "            tl.store(g_row + cols, grad, mask=mask, eviction_policy=\"evict_first\")"
_ROWS = "    for row in range(tl.program_id(0), M, tl.num_programs(0)):\n"
_BASE = "        base = tl.cast(row, tl.int64) * stride\n"

_THREE_PASS = '''
@triton.jit
def ce_fwd_bwd_kernel(logits_ptr, target_ptr, dloss_ptr, n_valid_ptr, loss_rows_ptr, dlogits_ptr,
                      M, V, stride, ignore_index, BLOCK_V: tl.constexpr):
    """Three walks per row: the max, then the sum of exp(x - max), then the gradient (front to back)."""
    n = tl.load(n_valid_ptr)
    dloss = tl.load(dloss_ptr)
    pid = tl.program_id(0)
    P = tl.num_programs(0)
    for row in range(pid, M, P):
        x_row = logits_ptr + tl.cast(row, tl.int64) * stride
        g_row = dlogits_ptr + tl.cast(row, tl.int64) * stride
        target = tl.load(target_ptr + row)
        valid = target != ignore_index
        mvec = tl.full((BLOCK_V,), -float("inf"), tl.float32)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            mvec = tl.maximum(mvec, x)
        m = tl.max(mvec, axis=0)
        svec = tl.zeros((BLOCK_V,), tl.float32)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            svec += tl.exp(x - m)
        lse = m + tl.log(tl.sum(svec, axis=0))
        x_target = tl.load(x_row + target, mask=valid, other=0.0).to(tl.float32)
        share = tl.where(valid, lse - x_target, 0.0)
        tl.store(loss_rows_ptr + row, tl.where(valid, share / n, 0.0))
        scale = tl.where(valid, dloss / n, 0.0)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            mask = cols < V
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            p = tl.exp(x - lse)
            onehot = (cols == target).to(tl.float32)
            tl.store(g_row + cols, (p - onehot) * scale, mask=mask)
'''

_WHILE_ROWS = '''
@triton.jit
def ce_fwd_bwd_kernel(logits_ptr, target_ptr, dloss_ptr, n_valid_ptr, loss_rows_ptr, dlogits_ptr,
                      M, V, stride, ignore_index, BLOCK_V: tl.constexpr):
    """Rows walked by a while loop; the row's blocks walked by block index; the gradient as
    p * scale minus scale at the target (the one-hot folded into the scale)."""
    n = tl.load(n_valid_ptr)
    dloss = tl.load(dloss_ptr)
    blocks = tl.cdiv(V, BLOCK_V)
    row = tl.program_id(0)
    while row < M:
        base = tl.cast(row, tl.int64) * stride
        target = tl.load(target_ptr + row)
        valid = target != ignore_index
        m = -float("inf")
        s = 0.0
        for b in range(0, blocks):
            cols = b * BLOCK_V + tl.arange(0, BLOCK_V)
            x = tl.load(logits_ptr + base + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            m_blk = tl.max(x, axis=0)
            m_new = tl.maximum(m, m_blk)
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        lse = m + tl.log(s)
        if valid:
            x_target = tl.load(logits_ptr + base + target).to(tl.float32)
            tl.store(loss_rows_ptr + row, (lse - x_target) / n)
            scale = dloss / n
        else:
            tl.store(loss_rows_ptr + row, 0.0)
            scale = 0.0
        for b in range(0, blocks):
            cols = b * BLOCK_V + tl.arange(0, BLOCK_V)
            mask = cols < V
            x = tl.load(logits_ptr + base + cols, mask=mask, other=-float("inf")).to(tl.float32)
            p = tl.exp(x - lse)
            grad = p * scale - tl.where(cols == target, scale, 0.0)
            tl.store(dlogits_ptr + base + cols, grad, mask=mask)
        row += tl.num_programs(0)
'''

_COUNT_CHUNKS = '''
@triton.jit
def ce_count_kernel(target_ptr, n_valid_ptr, M, ignore_index, BLOCK_M: tl.constexpr):
    """The targets counted 64 at a time, the running total kept in int32."""
    total = 0
    for start in range(0, M, 64):
        rows = start + tl.arange(0, 64)
        target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)
        total += tl.sum((target != ignore_index).to(tl.int32), axis=0)
    tl.store(n_valid_ptr, total.to(tl.float32))
'''

MEASURED = [
    # the count
    Bug("count_pad_loads_zero", "step",
        ((_COUNT_LOAD, "    target = tl.load(target_ptr + rows, mask=rows < M, other=0)\n", 1),),
        "fill", "the count's padded lanes load 0, a real column, so every lane past M counts as a row and n is too large"),
    Bug("count_without_mask", "step",
        ((_COUNT_LOAD, "    target = tl.load(target_ptr + rows)\n", 1),),
        "mask", "the count reads the whole BLOCK_M block of targets with no mask: lanes past M read beyond the target tensor"),
    # pass 1
    Bug("pass1_pad_zero", "step",
        ((_P1_LOAD, _P1_LOAD.replace("other=-float(\"inf\")", "other=0.0"), 1),),
        "fill", "pass 1's padded lanes load 0.0: each adds exp(0 - m) to the sum, a phantom vocabulary entry"),
    Bug("sum_not_rescaled", "step",
        ((_RESCALE, "            s = s + tl.sum(tl.exp(x - m_new), axis=0)\n", 1),),
        "accumulate", "the running sum is not moved to the new max (exp(m - m_new) factor forgotten) when a later block raises the max"),
    Bug("sum_overwritten_per_block", "step",
        ((_RESCALE, "            s = tl.sum(tl.exp(x - m_new), axis=0)\n", 1),),
        "accumulate", "the sum is overwritten by each block's share instead of carried: only the last block's columns reach lse"),
    Bug("lse_without_max", "step",
        ((_RESCALE, "            s = s + tl.sum(tl.exp(x), axis=0)\n", 1),
         ("        lse = m + tl.log(s)\n", "        lse = tl.log(s)\n", 1)),
        "stability", "lse = log Σ exp(x) summed raw, without the running max: large logits overflow exp"),
    Bug("pass1_mask_le", "step",
        ((_P1_LOAD, _P1_LOAD.replace("mask=cols < V", "mask=cols <= V"), 1),),
        "mask", "pass 1 masks with cols <= V: the column just past the row is read and joins the max and the sum"),
    # the loss share
    Bug("loss_share_not_divided", "step",
        ((_LOSS_STORE, "        tl.store(loss_rows_ptr + row, tl.where(valid, lse - x_target, 0.0))\n", 1),),
        "formula", "the row's loss share is lse - x_target, not divided by n: the loss is a sum, not a mean"),
    Bug("target_logit_without_row", "step",
        ((_XT, "        x_target = tl.load(logits_ptr + target, mask=valid).to(tl.float32)\n", 1),),
        "address", "the target's logit read at logits_ptr + target, row 0's entry, the row's offset forgotten"),
    # pass 2
    Bug("grad_no_onehot", "step",
        ((_GRAD, "            grad = p * scale\n", 1),),
        "formula", "the gradient is softmax times the scale, the one-hot [j = target] never subtracted"),
    Bug("scale_not_mean", "step",
        ((_SCALE, "        scale = tl.where(valid, dloss, 0.0)\n", 1),),
        "formula", "the gradient is scaled by dloss, not dloss / n: the mean's 1/n forgotten in the backward"),
    Bug("scale_nan_when_none_count", "step",
        ((_SCALE, "        scale = valid.to(tl.float32) * (dloss / n)\n", 1),),
        "formula", "ignored rows zeroed by multiplying with valid: with n = 0 the factor dloss / n is inf and 0 · inf gives NaN gradients"),
    Bug("p_rounded_before_onehot", "step",
        (("            p = tl.exp(x - lse)\n",
          "            p = tl.exp(x - lse).to(dlogits_ptr.dtype.element_ty)\n", 1),),
        "precision", "p cast to dlogits' dtype before the one-hot is subtracted: in bf16 a confident target's p is 1.0 and its gradient vanishes"),
    Bug("pass2_block_off_by_one", "step",
        ((_P2_COLS, "            cols = (blocks - back) * BLOCK_V + tl.arange(0, BLOCK_V)\n", 1),),
        "loop", "walking backwards, the block index is blocks - back instead of blocks - 1 - back: the first block is never written and the walk starts past the row"),
    Bug("grad_store_no_mask", "step",
        ((_G_STORE, "            tl.store(g_row + cols, grad, eviction_policy=\"evict_first\")", 1),),
        "mask", "the gradient store has no mask: the last block's padded lanes write past the row's V columns"),
    Bug("row_offset_uses_V", "step",
        ((_BASE, "        base = tl.cast(row, tl.int64) * V\n", 1),),
        "address", "the row's offset is row * V, not row * stride: a strided view (stride > V) reads and writes the wrong rows"),
    Bug("programs_hardcoded_three", "step",
        ((_ROWS, "    for row in range(tl.program_id(0), M, 3):\n", 1),),
        "hardcoded", "the row step is 3 (the interpreter's grid) written in, not tl.num_programs(0): a launch of 2 or 5 programs skips or repeats rows"),
]

RIGHT = [
    Right("pass2_forward_order",
          ((_P2_COLS, "            cols = back * BLOCK_V + tl.arange(0, BLOCK_V)\n", 1),),
          "pass 2 walks the row front to back: only the L2 reuse changes, the values are the same"),
    Right("three_walks", (Kernel("ce_fwd_bwd_kernel", _THREE_PASS),),
          "three walks per row (max, then sum of exp(x - max) in a block-wide vector, then gradient) instead of the online rescaled sum"),
    Right("while_rows_onehot_in_scale", (Kernel("ce_fwd_bwd_kernel", _WHILE_ROWS),),
          "rows walked by a while loop, the ignored row branched on, the gradient written p*scale - scale·[j = t]: the same numbers"),
    Right("count_in_chunks", (Kernel("ce_count_kernel", _COUNT_CHUNKS),),
          "the count walks the targets in chunks of 64 with an int32 running total instead of one BLOCK_M block: the same n"),
]
