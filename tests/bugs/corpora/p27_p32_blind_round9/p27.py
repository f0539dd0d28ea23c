"""Blind corpus (round 9 for p27-p32), puzzle 27 (softmax cross-entropy, loss and gradient): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_S = "            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\n"
_SCALE = "        scale = tl.where(valid, dloss / n, 0.0)\n"

MEASURED = [
    Bug("pass1_pad_zero", "step",
        (('x = tl.load(x_row + cols, mask=cols < V, other=-float("inf"),', 'x = tl.load(x_row + cols, mask=cols < V, other=0.0,', 1),),
        "fill", "pass 1's padded lanes load 0.0: each adds exp(0 - m) to the sum, a phantom vocabulary entry"),
    Bug("sum_not_rescaled", "step",
        ((_S, "            s = s + tl.sum(tl.exp(x - m_new), axis=0)\n", 1),),
        "accumulate", "the running sum is not rescaled by exp(m - m_new) when the max grows"),
    Bug("sum_overwritten", "step",
        ((_S, "            s = tl.sum(tl.exp(x - m_new), axis=0)\n", 1),),
        "accumulate", "the running sum is overwritten by each block's sum: only the last block counts"),
    Bug("lse_without_max", "step",
        (("        lse = m + tl.log(s)\n", "        lse = tl.log(s)\n", 1),),
        "formula", "lse = log s, the max m that s was taken relative to not added back"),
    Bug("no_max_at_all", "step",
        ((_S, "            s = s + tl.sum(tl.exp(x), axis=0)\n", 1),
         ("        lse = m + tl.log(s)\n", "        lse = tl.log(s)\n", 1)),
        "stability", "log Σ exp(x) summed without subtracting the max: exp overflows for large logits"),
    Bug("row_offset_times_V", "step",
        (("base = tl.cast(row, tl.int64) * stride", "base = tl.cast(row, tl.int64) * V", 1),),
        "address", "the row offset is row * V: the logits' row stride may be wider than V"),
    Bug("programs_hardcoded", "step",
        (("for row in range(tl.program_id(0), M, tl.num_programs(0)):", "for row in range(tl.program_id(0), M, 3):", 1),),
        "hardcoded", "the row step is 3 (the interpreter's program count) instead of tl.num_programs(0)"),
    Bug("pass2_skips_a_block", "step",
        (("for back in range(0, blocks):", "for back in range(0, blocks - 1):", 1),),
        "loop", "pass 2 walks blocks - 1 blocks: the row's first block of the gradient is never written"),
    Bug("pass2_reverse_off_by_one", "step",
        (("cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)", "cols = (blocks - back) * BLOCK_V + tl.arange(0, BLOCK_V)", 1),),
        "loop", "the backward walk starts one block past the end: block 0 never covered"),
    Bug("mean_over_all_rows", "step",
        ((_SCALE, "        scale = tl.where(valid, dloss / M, 0.0)\n", 1),
         ("tl.where(valid, (lse - x_target) / n, 0.0)", "tl.where(valid, (lse - x_target) / M, 0.0)", 1)),
        "formula", "the mean divides by M, every row, instead of n, the rows that count"),
    Bug("ignored_rows_get_gradient", "step",
        ((_SCALE, "        scale = dloss / n\n", 1),),
        "formula", "an ignored row's gradient is not zeroed: it gets dloss/n · softmax", ("mask",)),
    Bug("count_pads_as_rows", "step",
        (("    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)\n    tl.store(n_valid_ptr",
          "    target = tl.load(target_ptr + rows, mask=rows < M, other=0)\n    tl.store(n_valid_ptr", 1),),
        "fill", "the count's padded lanes load target 0, a real class: the padding counts as rows"),
    Bug("no_upstream_gradient", "step",
        ((_SCALE, "        scale = tl.where(valid, 1.0 / n, 0.0)\n", 1),),
        "formula", "dloss dropped from the gradient's scale: the chain rule's upstream factor forgotten"),
    Bug("grad_store_unmasked", "step",
        (('tl.store(g_row + cols, grad, mask=mask, eviction_policy="evict_first")', 'tl.store(g_row + cols, grad, eviction_policy="evict_first")', 1),),
        "mask", "the gradient's store has no mask: the last block writes past the row's V columns"),
    Bug("target_logit_unmasked", "step",
        (("x_target = tl.load(x_row + target, mask=valid)", "x_target = tl.load(x_row + target)", 1),),
        "mask", "the target's logit is read on an ignored row too: column -100 lies before the row"),
    Bug("target_logit_no_row", "step",
        (("x_target = tl.load(x_row + target, mask=valid)", "x_target = tl.load(logits_ptr + target, mask=valid)", 1),),
        "address", "the target's logit read from row 0 (logits_ptr + target), not from this row"),
    Bug("onehot_sign", "step",
        (("grad = tl.where(cols == target, p - 1.0, p) * scale", "grad = tl.where(cols == target, 1.0 - p, p) * scale", 1),),
        "formula", "the target's gradient written 1 - p instead of p - 1"),
]

_WHILE = '''
@triton.jit
def ce_fwd_bwd_kernel(logits_ptr, target_ptr, dloss_ptr, n_valid_ptr, loss_rows_ptr, dlogits_ptr,
                      M, V, stride, ignore_index, BLOCK_V: tl.constexpr):
    n = tl.load(n_valid_ptr)
    dloss = tl.load(dloss_ptr)
    row = tl.program_id(0)
    while row < M:
        base = row.to(tl.int64) * stride
        target = tl.load(target_ptr + row)
        valid = target != ignore_index
        # pass 1a: the row's max
        m = -float("inf")
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(logits_ptr + base + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            m = tl.maximum(m, tl.max(x, axis=0))
        # pass 1b: the sum of exp(x - m), and the target's logit picked out of its block
        s = 0.0
        x_t = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(logits_ptr + base + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            s += tl.sum(tl.exp(x - m), axis=0)
            x_t += tl.sum(tl.where(cols == target, x, 0.0), axis=0)
        lse = m + tl.log(s)
        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_t) / n, 0.0))
        scale = tl.where(valid, dloss / n, 0.0)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            mask = cols < V
            x = tl.load(logits_ptr + base + cols, mask=mask, other=0.0).to(tl.float32)
            p = tl.exp(x - lse)
            one_hot = (cols == target).to(tl.float32)
            tl.store(dlogits_ptr + base + cols, (p - one_hot) * scale, mask=mask)
        row += tl.num_programs(0)
'''

RIGHT = [
    Right("pass2_forward_order",
          (("cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)", "cols = back * BLOCK_V + tl.arange(0, BLOCK_V)", 1),),
          "pass 2 walks the row front to back: only the L2 reuse differs"),
    Right("while_rows_three_passes", (Kernel("ce_fwd_bwd_kernel", _WHILE),),
          "a while loop over the rows, the max and the sum in two separate passes, the target's logit picked from its block"),
    Right("count_with_where",
          (("    tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))\n\n\n@triton.jit\ndef ce_fwd_bwd_kernel",
            "    tl.store(n_valid_ptr, tl.sum(tl.where((rows < M) & (target != ignore_index), 1.0, 0.0), axis=0))\n\n\n@triton.jit\ndef ce_fwd_bwd_kernel", 1),),
          "the count sums 1.0 where the row is real and counts, in fp32 directly"),
    Right("lse_base2",
          ((_S, "            s = s * tl.exp2((m - m_new) * 1.4426950408889634) + tl.sum(tl.exp2((x - m_new) * 1.4426950408889634), axis=0)\n", 1),
           ("        lse = m + tl.log(s)\n", "        lse = m + tl.log2(s) * 0.6931471805599453\n", 1)),
          "pass 1's exponentials and log in base 2, converted back to natural units"),
]
