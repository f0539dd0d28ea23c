"""Fourth blind corpus, puzzle 27 (fused cross-entropy, loss and gradient): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_COUNT = "    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)\n"
_PASS1_HEAD = "        for start in range(0, V, BLOCK_V):\n            cols = start + tl.arange(0, BLOCK_V)\n            # evict_last"
_PASS1_LOAD = ("            x = tl.load(x_row + cols, mask=cols < V, other=-float(\"inf\"),\n"
               "                        eviction_policy=\"evict_last\").to(tl.float32)\n")
_S_UPDATE = "            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\n"
_PASS1 = (_PASS1_HEAD + ": keep these bytes in L2 for pass 2\n" + _PASS1_LOAD
          + "            m_new = tl.maximum(m, tl.max(x, axis=0))\n"
          "            # the terms so far were exp(x − m); exp(m − m_new) <= 1 moves them to exp(x − m_new).\n"
          "            # (On the first block m = -inf: 0 · exp(-inf) = 0, and every block holds a real column.)\n"
          + _S_UPDATE + "            m = m_new\n")
_INIT = "        m = -float(\"inf\")\n        s = 0.0\n"
_LOSS = "        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))\n"
_X_TARGET = "        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)\n"
_PASS2_HEAD = ("        for back in range(0, blocks):\n"
               "            cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)\n")
_PASS2_LOAD = "            x = tl.load(x_row + cols, mask=mask, eviction_policy=\"evict_first\").to(tl.float32)\n"
_P = "            p = tl.exp(x - lse)\n"
_GRAD = "            grad = tl.where(cols == target, p - 1.0, p) * scale\n"
_SCALE = "        scale = tl.where(valid, dloss / n, 0.0)\n"
_ROWS = "    for row in range(tl.program_id(0), M, tl.num_programs(0)):\n"

MEASURED = [
    Bug("count_rows_documented_4", "step",
        ((_COUNT, _COUNT.replace("mask=rows < M", "mask=rows < 4"), 1),),
        "hardcoded", "the count kernel's mask rows < 4 (the documented M) instead of rows < M: with more rows n counts only the first four, with fewer it reads past the targets",
        notes="shows only where M != 4"),
    Bug("rescale_applied_after_adding_block", "step",
        ((_S_UPDATE, "            s = (s + tl.sum(tl.exp(x - m_new), axis=0)) * tl.exp(m - m_new)\n", 1),),
        "accumulate", "the running sum rescaled after the new block is added: the new terms are already relative to m_new and get rescaled again (on the first block, by exp(-inf) = 0)"),
    Bug("pass2_counter_from_one", "step",
        ((_PASS2_HEAD, "        for back in range(1, blocks + 1):\n"
                       "            cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)\n", 1),),
        "loop", "pass 2's counter runs 1 .. blocks instead of 0 .. blocks − 1: the last block is never written and the final step lands one block before the row (negative columns pass the < V mask)"),
    Bug("gradient_scaled_by_n", "step",
        ((_SCALE, "        scale = tl.where(valid, dloss * n, 0.0)\n", 1),),
        "formula", "the gradient's scale dloss · n instead of dloss / n: the mean's 1/n is inverted in the gradient (the loss itself is right)"),
    Bug("gradient_from_log_probabilities", "step",
        ((_P, "            p = x - lse\n", 1),),
        "formula", "pass 2 uses log softmax, x − lse, where the gradient needs softmax, exp(x − lse)"),
    Bug("pass2_reads_dlogits", "step",
        ((_PASS2_LOAD, "            x = tl.load(g_row + cols, mask=mask, eviction_policy=\"evict_first\").to(tl.float32)\n", 1),),
        "address", "pass 2 loads the logits from the gradient's row (g_row, the pointer beside it) instead of the logits' row: x is whatever dlogits held"),
    Bug("n_read_per_program", "step",
        (("    n = tl.load(n_valid_ptr)\n", "    n = tl.load(n_valid_ptr + tl.program_id(0))\n", 1),),
        "address", "the count read at n_valid_ptr + pid, as if each program had its own: n_valid is one number, programs past 0 read past it"),
    Bug("pass2_load_unmasked", "step",
        ((_PASS2_LOAD, "            x = tl.load(x_row + cols, eviction_policy=\"evict_first\").to(tl.float32)\n", 1),),
        "mask", "pass 2's load has no mask (the store does): the last block of the last row reads past the end of the logits",
        notes="the stray values land in masked-off lanes: the out-of-bounds read itself is the fault"),
    Bug("running_sum_rounded_to_bf16", "step",
        ((_S_UPDATE, "            s = (s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)).to(tl.bfloat16).to(tl.float32)\n", 1),),
        "precision", "the running sum rounded to bf16 after every block: lse loses its low digits, the loss is off by up to 0.4 % of s"),
    Bug("loss_rounded_to_bf16", "step",
        ((_LOSS, "        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target).to(tl.bfloat16) / n, 0.0))\n", 1),),
        "precision", "each row's lse − x_target rounded to bf16 before it is divided by n and stored in the fp32 buffer: the loss keeps 8 bits per row"),
    Bug("rescale_as_ratio_of_exps", "step",
        ((_S_UPDATE, "            s = s * (tl.exp(m) / tl.exp(m_new)) + tl.sum(tl.exp(x - m_new), axis=0)\n", 1),),
        "stability", "the rescale factor written exp(m) / exp(m_new): logits above about 88 overflow both to inf and inf / inf is NaN",
        notes="shows only with large logits, over more than one block"),
    Bug("pass1_steps_documented_16", "step",
        ((_PASS1_HEAD, _PASS1_HEAD.replace("range(0, V, BLOCK_V)", "range(0, V, 16)"), 1),),
        "hardcoded", "pass 1 steps 16 columns (the documented BLOCK_V) while it loads BLOCK_V: other block sizes skip columns or count them twice",
        notes="shows only where BLOCK_V != 16"),
    Bug("dloss_reset_after_reading", "step",
        (("    dloss = tl.load(dloss_ptr)\n",
          "    dloss = tl.load(dloss_ptr)\n"
          "    if tl.program_id(0) == 0:  # consumed: a second backward must not apply it again\n"
          "        tl.store(dloss_ptr, 0.0)\n", 1),),
        "inplace", "program 0 zeroes dloss after reading it: the upstream gradient is an input, and the programs that read it later take dloss = 0"),
    Bug("one_hot_added", "step",
        ((_GRAD, "            grad = tl.where(cols == target, p + 1.0, p) * scale\n", 1),),
        "formula", "the one-hot added, p + 1 at the target, where it must be subtracted: softmax − one_hot"),
    Bug("target_logit_mask_by_upper_bound", "step",
        ((_X_TARGET, "        x_target = tl.load(x_row + target, mask=target < V).to(tl.float32)\n", 1),),
        "mask", "the target's logit read under target < V instead of the row being counted: an ignored row's −100 passes the test and reads 100 elements before the row",
        notes="ignored rows only; the value is discarded by the where, the out-of-bounds read itself is the fault"),
    Bug("pass1_stops_a_block_early", "step",
        ((_PASS1_HEAD, _PASS1_HEAD.replace("range(0, V, BLOCK_V)", "range(0, V - BLOCK_V, BLOCK_V)"), 1),),
        "loop", "pass 1 walks range(0, V − BLOCK_V, BLOCK_V): the last block (whole or partial) never enters the max and the sum"),
    Bug("gradient_row_of_the_program", "step",
        (("        g_row = dlogits_ptr + base\n", "        g_row = dlogits_ptr + tl.program_id(0) * stride\n", 1),),
        "address", "the gradient's row taken at pid · stride (the program) instead of row · stride: each program writes all its rows' gradients over one row"),
]

_BLOCK_LSE = (_PASS1_HEAD + ": keep these bytes in L2 for pass 2\n" + _PASS1_LOAD
              + "            # the block's own logsumexp (mb, sb), merged into the running (m, s)\n"
              "            mb = tl.max(x, axis=0)\n"
              "            sb = tl.sum(tl.exp(x - mb), axis=0)\n"
              "            m_new = tl.maximum(m, mb)\n"
              "            s = s * tl.exp(m - m_new) + sb * tl.exp(mb - m_new)\n"
              "            m = m_new\n")

_TWO_BLOCKS = ("        for start in range(0, V, 2 * BLOCK_V):\n"
               "            cols_a = start + tl.arange(0, BLOCK_V)\n"
               "            cols_b = cols_a + BLOCK_V\n"
               "            xa = tl.load(x_row + cols_a, mask=cols_a < V, other=-float(\"inf\")).to(tl.float32)\n"
               "            xb = tl.load(x_row + cols_b, mask=cols_b < V, other=-float(\"inf\")).to(tl.float32)\n"
               "            m_new = tl.maximum(m, tl.maximum(tl.max(xa, axis=0), tl.max(xb, axis=0)))\n"
               "            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(xa - m_new), axis=0) + tl.sum(tl.exp(xb - m_new), axis=0)\n"
               "            m = m_new\n")

RIGHT = [
    Right("block_logsumexp_merged", ((_PASS1, _BLOCK_LSE, 1),),
          "pass 1 takes each block's own max and sum first and merges the pair into the running (m, s)"),
    Right("rows_walked_from_the_end",
          ((_ROWS, "    for i in range(tl.program_id(0), M, tl.num_programs(0)):\n        row = M - 1 - i\n", 1),),
          "each program's rows counted from the last row down (row = M − 1 − i)"),
    Right("pass1_walked_backwards",
          ((_PASS1_HEAD, "        for back1 in range(0, blocks):\n"
                         "            cols = (blocks - 1 - back1) * BLOCK_V + tl.arange(0, BLOCK_V)\n            # evict_last", 1),),
          "pass 1 walks the row's blocks last first (the online max does not care about the order)"),
    Right("pass1_two_blocks_a_step", ((_PASS1, _TWO_BLOCKS, 1),),
          "pass 1 loads two blocks per step and folds both into the running max and sum"),
    Right("target_gradient_fixed_after_the_walk",
          ((_GRAD, "            grad = p * scale\n", 1),
           ("            tl.store(g_row + cols, grad, mask=mask, eviction_policy=\"evict_first\")  # rounded once, to dlogits' dtype\n",
            "            tl.store(g_row + cols, grad, mask=mask, eviction_policy=\"evict_first\")\n"
            "        # the target's column again, now with the one-hot: (p_t − 1) · scale\n"
            "        tl.store(g_row + target, (tl.exp(x_target - lse) - 1.0) * scale, mask=valid)\n", 1)),
          "pass 2 stores p · scale everywhere, then one scalar store writes the target's (p_t − 1) · scale"),
]
