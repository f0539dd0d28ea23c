"""Third blind corpus, puzzle 27 (fused cross-entropy): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_LOSS = "tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))"
_GRAD = "grad = tl.where(cols == target, p - 1.0, p) * scale"
_PASS1_HEAD = "        for start in range(0, V, BLOCK_V):\n            cols = start + tl.arange(0, BLOCK_V)\n"
_PASS1_STEP = ("            m_new = tl.maximum(m, tl.max(x, axis=0))\n"
               "            # the terms so far were exp(x − m); exp(m − m_new) <= 1 moves them to exp(x − m_new).\n"
               "            # (On the first block m = -inf: 0 · exp(-inf) = 0, and every block holds a real column.)\n"
               "            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\n"
               "            m = m_new\n")
_STORE = 'tl.store(g_row + cols, grad, mask=mask, eviction_policy="evict_first")'

MEASURED = [
    Bug("loss_sign_flipped", "step",
        ((_LOSS, "tl.store(loss_rows_ptr + row, tl.where(valid, (x_target - lse) / n, 0.0))", 1),),
        "formula", "each row's loss share written (x_target − lse) / n: the negative log-likelihood's sign lost, the loss comes out negative"),
    Bug("target_gradient_one_minus_p", "step",
        ((_GRAD, "grad = tl.where(cols == target, 1.0 - p, p) * scale", 1),),
        "formula", "the target column's gradient written 1 − p instead of p − 1: every target entry has the wrong sign"),
    Bug("count_targets_above_zero", "step",
        (("tl.sum((target != ignore_index).to(tl.int32), axis=0)", "tl.sum((target > 0).to(tl.int32), axis=0)", 1),),
        "formula", "the count of rows that count tests target > 0: rows whose class is 0 are left out of n, the mean divides by too few",
        notes='shows in the cases where some target is class 0 (small V)'),
    Bug("pass2_reversed_off_by_one", "step",
        (("            cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)\n",
          "            cols = (blocks - back) * BLOCK_V + tl.arange(0, BLOCK_V)\n", 1),),
        "loop", "the backwards walk of pass 2 counts blocks from `blocks` down to 1: a block past the row is visited, block 0 never gets its gradient",
        accept=("address",)),
    Bug("loss_share_misparenthesised", "step",
        ((_LOSS, "tl.store(loss_rows_ptr + row, tl.where(valid, lse - x_target / n, 0.0))", 1),),
        "formula", "the loss share written lse − x_target / n: only the target's logit divided by n, lse added whole for every row"),
    Bug("blocks_for_documented_v", "step",
        (("    blocks = tl.cdiv(V, BLOCK_V)\n", "    blocks = tl.cdiv(40, BLOCK_V)\n", 1),),
        "hardcoded", "pass 2's block count computed from 40, the documented V, instead of the V argument: wider rows keep part of their gradient unwritten",
        notes='shows only where cdiv(V, BLOCK_V) differs from cdiv(40, BLOCK_V)'),
    Bug("padded_lanes_load_plus_inf", "step",
        (("mask=cols < V, other=-float(\"inf\"),", "mask=cols < V, other=float(\"inf\"),", 1),),
        "fill", "pass 1's padded lanes load +inf instead of -inf: they win the max, inf − inf gives NaN in the last partial block",
        notes='shows only where V is not a multiple of BLOCK_V'),
    Bug("target_of_the_program", "step",
        (("        target = tl.load(target_ptr + row)\n", "        target = tl.load(target_ptr + tl.program_id(0))\n", 1),),
        "address", "the target read at the program's index, not the row's: every row a program walks uses the target of its first row"),
    Bug("rows_start_at_zero", "step",
        (("for row in range(tl.program_id(0), M, tl.num_programs(0)):", "for row in range(0, M, tl.num_programs(0)):", 1),),
        "loop", "every program walks rows 0, P, 2P, ...: the rows between are never computed and the same rows are done P times",
        accept=("address",)),
    Bug("pass2_misses_first_block", "step",
        (("        for back in range(0, blocks):\n", "        for back in range(0, blocks - 1):\n", 1),),
        "loop", "pass 2 runs blocks − 1 times: walking backwards, the last step (block 0, the row's first columns) is dropped"),
    Bug("block_index_as_column", "step",
        ((_PASS1_HEAD, "        for start in range(0, blocks):\n            cols = start + tl.arange(0, BLOCK_V)\n", 1),),
        "address", "pass 1 loops over block numbers but uses them as column offsets (start + arange, no · BLOCK_V): the blocks overlap, columns past the first block are never read",
        notes='shows only where a row is wider than one block'),
    Bug("loss_as_minus_log_p", "step",
        ((_LOSS, "tl.store(loss_rows_ptr + row, tl.where(valid, -tl.log(tl.exp(x_target - lse)) / n, 0.0))", 1),),
        "stability", "the loss share taken as −log(p_target) with p_target = exp(x_target − lse): a target far below the row's max underflows p to 0 and the loss to inf",
        notes='shows only where a target logit lies ~100 or more below lse (the spread rows)'),
    Bug("max_updated_before_rescale", "step",
        ((_PASS1_STEP,
          "            m = tl.maximum(m, tl.max(x, axis=0))\n"
          "            m_old = m\n"
          "            s = s * tl.exp(m_old - m) + tl.sum(tl.exp(x - m), axis=0)\n", 1),),
        "accumulate", "the running max is updated before the old one is saved, so the rescale factor is always exp(0) = 1: the sum is never moved to the new max",
        notes='shows only where a later block raises the row max'),
    Bug("pass2_store_unmasked", "step",
        ((_STORE, 'tl.store(g_row + cols, grad, eviction_policy="evict_first")', 1),),
        "mask", "pass 2 stores its gradient block without the mask: the last block's padded lanes write past the row's V columns",
        notes='shows only where V is not a multiple of BLOCK_V'),
    Bug("count_mask_to_block", "step",
        (("mask=rows < M, other=ignore_index", "mask=rows < BLOCK_M, other=ignore_index", 1),),
        "mask", "the count kernel's mask compares with BLOCK_M (the padded block) instead of M: targets past the end are read and counted",
        notes='shows only where M is not a power of two'),
    Bug("block_terms_shifted_by_old_max", "step",
        (("tl.sum(tl.exp(x - m_new), axis=0)", "tl.sum(tl.exp(x - m), axis=0)", 1),),
        "formula", "each block's terms shifted by the old max m instead of m_new: on the first block m = -inf and exp(x + inf) is inf",
        accept=("stability",)),
    Bug("one_hot_on_the_diagonal", "step",
        ((_GRAD, "grad = tl.where(cols == row, p - 1.0, p) * scale", 1),),
        "formula", "the one-hot placed at column == row (the row index) instead of column == target: the −1 lands on the wrong column"),
    Bug("loss_uses_max_not_lse", "step",
        ((_LOSS, "tl.store(loss_rows_ptr + row, tl.where(valid, (m - x_target) / n, 0.0))", 1),),
        "formula", "the loss share uses the running max m where the logsumexp belongs: the log of the sum (log s) is left out of the loss"),
    Bug("ignored_targets_clamped_in_place", "step",
        (("        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)\n",
          "        tl.store(target_ptr + row, tl.where(valid, target, 0))  # a safe column for the gather\n"
          "        x_target = tl.load(x_row + tl.load(target_ptr + row)).to(tl.float32)\n", 1),),
        "inplace", "ignored rows' targets overwritten with 0 in the target tensor to make the gather safe: the loss and gradient are right, but an input is changed",
        notes='outputs right; only the write to an input shows it'),
    # written as a correct rewrite; the case with every target ignored (n = 0, added after this round)
    # shows it is not: dloss / 0 is inf, and inf · 0 is NaN where tl.where gives 0
    Bug("scale_by_multiplying_valid", "step",
        (("        scale = tl.where(valid, dloss / n, 0.0)\n", "        scale = dloss / n * valid.to(tl.float32)\n", 1),),
        "formula", "the gradient's scale zeroed on ignored rows by multiplying with valid: with n = 0, inf · 0 = NaN",
        accept=("stability",)),
]

RIGHT = [
    Right("contiguous_row_chunks",
          (("    for row in range(tl.program_id(0), M, tl.num_programs(0)):\n",
            "    per = tl.cdiv(M, tl.num_programs(0))\n"
            "    for row in range(tl.program_id(0) * per, tl.minimum(M, (tl.program_id(0) + 1) * per)):\n", 1),),
          "each program takes a contiguous chunk of cdiv(M, P) rows instead of every P-th row"),
    Right("target_logit_gathered_in_pass1",
          (('        m = -float("inf")\n        s = 0.0\n', '        m = -float("inf")\n        s = 0.0\n        x_target = 0.0\n', 1),
           ("            m = m_new\n        lse = m + tl.log(s)\n",
            "            m = m_new\n            x_target += tl.sum(tl.where(cols == target, x, 0.0), axis=0)\n        lse = m + tl.log(s)\n", 1),
           ("        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)\n", "", 1)),
          "the target's logit picked out of pass 1's blocks with a where and a sum instead of a separate load"),
    Right("count_with_float_where",
          (("tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32)",
            "tl.sum(tl.where(target != ignore_index, 1.0, 0.0), axis=0)", 1),),
          "the count kernel sums 1.0 / 0.0 from a where, in float, instead of casting the comparison to int"),
    Right("one_hot_scaled_separately",
          ((_GRAD, "grad = p * scale - tl.where(cols == target, scale, 0.0)", 1),),
          "the gradient as p · scale minus scale at the target, the one-hot subtracted after scaling"),
    Right("pass1_counted_blocks",
          ((_PASS1_HEAD, "        for b in range(0, blocks):\n            cols = b * BLOCK_V + tl.arange(0, BLOCK_V)\n", 1),),
          "pass 1 counts blocks b = 0 .. blocks − 1 and computes the columns as b · BLOCK_V + arange"),
]
