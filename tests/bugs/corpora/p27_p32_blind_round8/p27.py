"""Blind corpus (round 8 for p27-p32), puzzle 27 (cross-entropy): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("pass1_fill_zero", "step",
        (('mask=cols < V, other=-float("inf"),', 'mask=cols < V, other=0.0,', 1),),
        "fill", "pass 1's padded lanes load 0.0 instead of -inf: each adds exp(0 - m) to the sum"),
    Bug("grad_store_unmasked", "step",
        (('tl.store(g_row + cols, grad, mask=mask, eviction_policy="evict_first")',
          'tl.store(g_row + cols, grad, eviction_policy="evict_first")', 1),),
        "mask", "the gradient's store has no mask: the last block writes past the row's V columns"),
    Bug("row_base_uses_V", "step",
        (("base = tl.cast(row, tl.int64) * stride", "base = tl.cast(row, tl.int64) * V", 1),),
        "address", "the row's offset uses V instead of the row stride: a strided view reads the wrong rows"),
    Bug("row_step_three", "step",
        (("for row in range(tl.program_id(0), M, tl.num_programs(0)):", "for row in range(tl.program_id(0), M, 3):", 1),),
        "hardcoded", "the row stride of the persistent loop is 3 (the interpreter's program count) instead of tl.num_programs(0)"),
    Bug("pass2_skips_last_block", "step",
        (("for back in range(0, blocks):", "for back in range(1, blocks):", 1),),
        "loop", "the backwards walk starts at 1: the row's last block of the gradient is never written"),
    Bug("sum_not_rescaled", "step",
        (("s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)",
          "s = s + tl.sum(tl.exp(x - m_new), axis=0)", 1),),
        "accumulate", "the running sum is not rescaled by exp(m - m_new) when the max grows"),
    Bug("mean_over_all_rows", "step",
        (("scale = tl.where(valid, dloss / n, 0.0)", "scale = tl.where(valid, dloss / M, 0.0)", 1),
         ("tl.where(valid, (lse - x_target) / n, 0.0)", "tl.where(valid, (lse - x_target) / M, 0.0)", 1)),
        "formula", "the mean divides by M, every row, instead of the count of rows that are not ignored"),
    Bug("loss_not_divided", "step",
        (("tl.where(valid, (lse - x_target) / n, 0.0)", "tl.where(valid, lse - x_target, 0.0)", 1),),
        "formula", "each row's loss share is not divided by n: the loss is a sum, not a mean"),
    Bug("grad_without_dloss", "step",
        (("scale = tl.where(valid, dloss / n, 0.0)", "scale = tl.where(valid, 1.0 / n, 0.0)", 1),),
        "formula", "the gradient forgets the upstream dloss (chain rule)"),
    Bug("count_fill_zero", "step",
        (("target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)",
          "target = tl.load(target_ptr + rows, mask=rows < M, other=0)", 1),),
        "fill", "the count's padded lanes load 0, a real class: they are counted as rows"),
    Bug("ignored_rows_get_grad", "step",
        (("scale = tl.where(valid, dloss / n, 0.0)", "scale = dloss / n", 1),),
        "mask", "ignored rows are not switched off in the gradient: they get softmax - onehot too",
        accept=("formula",)),
    Bug("onehot_sign", "step",
        (("grad = tl.where(cols == target, p - 1.0, p) * scale", "grad = tl.where(cols == target, 1.0 - p, p) * scale", 1),),
        "formula", "the target's gradient is 1 - p instead of p - 1"),
    Bug("lse_without_max", "step",
        (("s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)", "s = s + tl.sum(tl.exp(x), axis=0)", 1),
         ("lse = m + tl.log(s)", "lse = tl.log(s)", 1)),
        "stability", "lse summed as log Σ exp(x) without subtracting the max: large logits overflow"),
    Bug("target_logit_no_row", "step",
        (("x_target = tl.load(x_row + target, mask=valid)", "x_target = tl.load(logits_ptr + target, mask=valid)", 1),),
        "address", "the target's logit is read from row 0, not this row"),
    Bug("p_rounded_before_onehot", "step",
        (("p = tl.exp(x - lse)\n", "p = tl.exp(x - lse).to(dlogits_ptr.dtype.element_ty)\n", 1),),
        "precision", "p is rounded to the output dtype before the one-hot is subtracted: a confident target's gradient vanishes"),
    Bug("pass1_loop_short", "step",
        (("for start in range(0, V, BLOCK_V):", "for start in range(0, V - BLOCK_V, BLOCK_V):", 1),),
        "loop", "pass 1 stops a block early: the row's last columns never enter the max and the sum"),
]

RIGHT = [
    Right("pass2_forward_order",
          (("cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)", "cols = back * BLOCK_V + tl.arange(0, BLOCK_V)", 1),),
          "pass 2 walks the row front to back: only the L2 reuse changes, not the values"),
    Right("two_loop_lse",
          (("""        m = -float("inf")
        s = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            # evict_last: keep these bytes in L2 for pass 2
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf"),
                        eviction_policy="evict_last").to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))""",
            """        m = -float("inf")
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            m = tl.maximum(m, tl.max(x, axis=0))
        s = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            s += tl.sum(tl.exp(x - m), axis=0)""", 1),
           ("""
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
""", "\n", 1)),
          "the max in one walk, then the sum of exp(x - m) in a second: three passes, same lse"),
    Right("grad_split_onehot",
          (("grad = tl.where(cols == target, p - 1.0, p) * scale",
            "grad = p * scale - tl.where(cols == target, scale, 0.0)", 1),),
          "p·scale minus scale at the target: the same product distributed"),
    Right("count_with_where",
          (("tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))",
            "tl.store(n_valid_ptr, tl.sum(tl.where(target != ignore_index, 1.0, 0.0), axis=0))", 1),),
          "the count summed as floats from a where: exact for any M this small"),
]
