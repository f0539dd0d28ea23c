"""Fifth blind corpus, puzzle 27 (fused cross-entropy): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_M_NEW = "            m_new = tl.maximum(m, tl.max(x, axis=0))\n"
_LSE = "        lse = m + tl.log(s)\n"
_XT = "        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)\n"
_LOSS = "        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))\n"
_SCALE = "        scale = tl.where(valid, dloss / n, 0.0)\n"
_GRAD = "            grad = tl.where(cols == target, p - 1.0, p) * scale\n"
_P = "            p = tl.exp(x - lse)\n"
_PASS1_LOAD = ("            x = tl.load(x_row + cols, mask=cols < V, other=-float(\"inf\"),\n"
               "                        eviction_policy=\"evict_last\").to(tl.float32)\n")
_PASS1_LOOP = "        for start in range(0, V, BLOCK_V):\n"
_ROWS = "    for row in range(tl.program_id(0), M, tl.num_programs(0)):\n"
_G_ROW = "        g_row = dlogits_ptr + base\n"
_STORE2 = "            tl.store(g_row + cols, grad, mask=mask, eviction_policy=\"evict_first\")"
_BLOCKS = "    blocks = tl.cdiv(V, BLOCK_V)\n"
_COUNT = "    tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))\n"

_PASS1_REF = '''        m = -float("inf")
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
'''
_PASS1_FIRST_MAX = '''        cols = tl.arange(0, BLOCK_V)
        m = tl.max(tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32), axis=0)
        s = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            s += tl.sum(tl.exp(x - m), axis=0)
        lse = m + tl.log(s)
'''

MEASURED = [
    Bug("max_from_first_block_only", "step",
        ((_PASS1_REF, _PASS1_FIRST_MAX, 1),),
        "stability", "pass 1 shifts every block by the first block's max (taken once, never updated): a later block far above it overflows exp, one far below underflows",
        accept=("accumulate",), notes="shows where the row's max lies far above its first block's"),
    Bug("lse_log_s_minus_m", "step",
        ((_LSE, "        lse = tl.log(s) - m\n", 1),),
        "formula", "lse = log s − m: the running max subtracted where it must be added back"),
    Bug("target_logit_from_last_block", "step",
        ((_XT, "        x_target = tl.sum(tl.where(cols == target, x, 0.0), axis=0)  # picked from pass 1's block\n", 1),),
        "accumulate", "the target's logit picked from the block pass 1 loaded last (a where-sum after the loop): a target in an earlier block is read as 0",
        notes="shows where the row has more than one block"),
    Bug("contiguous_chunks_floored", "step",
        ((_ROWS, "    per = M // tl.num_programs(0)\n"
                 "    for row in range(tl.program_id(0) * per, tl.program_id(0) * per + per):\n", 1),),
        "loop", "each program takes a contiguous chunk of M // P rows (floored): when P does not divide M the last rows get no loss and no gradient"),
    Bug("padded_lanes_load_minus_100", "step",
        ((_PASS1_LOAD, _PASS1_LOAD.replace('other=-float("inf")', "other=-100.0"), 1),),
        "fill", "pass 1's padded lanes load −100 (a 'very negative' number, ignore_index's value) instead of -inf: rows of logits near or below −100 count the padding as vocabulary entries",
        notes="shows only on the far-below-zero rows"),
    Bug("scale_rounded_to_bf16", "step",
        ((_SCALE, "        scale = tl.where(valid, (dloss / n).to(tl.bfloat16), 0.0)\n", 1),),
        "precision", "the gradient's scale dloss / n rounded to bf16: every gradient of an fp32 case is off by up to 0.4 %",
        notes="fp32 cases only"),
    Bug("loss_stored_at_row_offset", "step",
        ((_LOSS, _LOSS.replace("loss_rows_ptr + row", "loss_rows_ptr + base"), 1),),
        "address", "each row's loss share stored at loss_rows + row · stride (the logits' row offset, copied) instead of at row: past row 0 it lands past the end of loss_rows"),
    Bug("gradient_row_without_stride", "step",
        ((_G_ROW, "        g_row = dlogits_ptr + row\n", 1),),
        "address", "the gradient's row pointer dlogits + row, the stride left out: the rows' gradients overlap, one element apart"),
    Bug("ignored_rows_gradient_not_stored", "step",
        ((_STORE2, _STORE2.replace("mask=mask,", "mask=mask & valid,"), 1),),
        "mask", "the gradient store masked with the row's valid flag: ignored rows' gradients are never written, where they must be 0 (dlogits is a fresh buffer)"),
    Bug("pass1_mask_v_minus_one", "step",
        ((_PASS1_LOAD, _PASS1_LOAD.replace("mask=cols < V,", "mask=cols < V - 1,"), 1),),
        "mask", "pass 1's mask cols < V − 1 (the last column's index as the bound): the last column never enters the max and the sum"),
    Bug("pass2_blocks_of_documented_16", "step",
        ((_BLOCKS, "    blocks = tl.cdiv(V, 16)\n", 1),),
        "hardcoded", "pass 2's block count tl.cdiv(V, 16) (the documented BLOCK_V) while its blocks are BLOCK_V wide: with larger blocks pass 2 walks blocks past the row (masked off) and its first blocks are never written",
        notes="shows where BLOCK_V != 16"),
    Bug("shifted_logits_written_back", "step",
        ((_PASS1_LOAD + _M_NEW,
          _PASS1_LOAD + _M_NEW + "            tl.store(x_row + cols, x - m_new, mask=cols < V)  # keep the shifted logits for pass 2\n", 1),),
        "inplace", "pass 1 stores x − m_new back into the logits to reuse them: the input is overwritten, and pass 2 and the target's logit read the shifted values"),
    Bug("off_target_gradient_p_one_minus_p", "step",
        ((_GRAD, "            grad = tl.where(cols == target, p - 1.0, p * (1.0 - p)) * scale\n", 1),),
        "formula", "the off-target gradient taken as p(1 − p), the diagonal of the softmax's Jacobian (a sigmoid's derivative): the cross-entropy's gradient is p − one_hot, plainly p off the target"),
    Bug("loss_lse_plus_target", "step",
        ((_LOSS, _LOSS.replace("(lse - x_target) / n", "(lse + x_target) / n"), 1),),
        "formula", "the loss share (lse + x_target) / n: the target's logit added to the logsumexp where it must be subtracted"),
    Bug("count_of_ignored_rows", "step",
        ((_COUNT, _COUNT.replace("target != ignore_index", "target == ignore_index"), 1),),
        "formula", "the count kernel counts the rows whose target is ignore_index (== for !=): n is the number of ignored rows (plus the padding), not of the rows that count"),
    Bug("pass1_loop_to_v_minus_one", "step",
        ((_PASS1_LOOP, "        for start in range(0, V - 1, BLOCK_V):\n", 1),),
        "loop", "pass 1's loop bound V − 1 (the last column's index): where the last block holds a single column (V = 1, or V = k·BLOCK_V + 1) it is never read"),
    Bug("p_as_product_of_exps", "step",
        ((_P, "            p = tl.exp(x) * tl.exp(-lse)\n", 1),),
        "stability", "pass 2's p = exp(x) · exp(−lse): logits near 1000 give inf · 0 = NaN, and logits far below 0 underflow both factors",
        notes="shows on the large and far-negative logits"),
]

_PASS1_FP64 = '''        m = tl.full((), float("-inf"), tl.float64)
        s = tl.zeros((), dtype=tl.float64)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float64)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        lse = (m + tl.log(s)).to(tl.float32)
'''
_PASS1_PEELED = '''        cols = tl.arange(0, BLOCK_V)
        x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
        m = tl.max(x, axis=0)
        s = tl.sum(tl.exp(x - m), axis=0)
        for start in range(BLOCK_V, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        lse = m + tl.log(s)
'''
_PASS1_TILE = '''        m = -float("inf")
        s = 0.0
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V // 8)[:, None] * 8 + tl.arange(0, 8)[None, :]
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m, tl.max(tl.max(x, axis=1), axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.sum(tl.exp(x - m_new), axis=1), axis=0)
            m = m_new
        lse = m + tl.log(s)
'''
_PASS2_REF = '''        for back in range(0, blocks):
            cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)
            mask = cols < V
            # evict_first: neither these bytes nor the gradient are read again
            x = tl.load(x_row + cols, mask=mask, eviction_policy="evict_first").to(tl.float32)
            p = tl.exp(x - lse)
            grad = tl.where(cols == target, p - 1.0, p) * scale
            tl.store(g_row + cols, grad, mask=mask, eviction_policy="evict_first")'''
_PASS2_HALVES = '''        HALF: tl.constexpr = BLOCK_V // 2
        for start in range(0, V, HALF):
            cols = start + tl.arange(0, HALF)
            mask = cols < V
            x = tl.load(x_row + cols, mask=mask).to(tl.float32)
            p = tl.exp(x - lse)
            grad = tl.where(cols == target, p - 1.0, p) * scale
            tl.store(g_row + cols, grad, mask=mask)'''

RIGHT = [
    Right("pass1_in_fp64", ((_PASS1_REF, _PASS1_FP64, 1),),
          "pass 1's running max and sum kept in fp64, lse rounded to fp32 once"),
    Right("pass1_first_block_peeled", ((_PASS1_REF, _PASS1_PEELED, 1),),
          "pass 1's first block taken before the loop (m and s start from it), the loop from the second block"),
    Right("pass1_blocks_as_2d_tiles", ((_PASS1_REF, _PASS1_TILE, 1),),
          "pass 1 loads each block as a [BLOCK_V / 8, 8] tile and reduces over both axes"),
    Right("pass2_half_width_steps", ((_PASS2_REF, _PASS2_HALVES, 1),),
          "pass 2 walks the row front to back in steps of BLOCK_V / 2 columns"),
    Right("count_as_m_minus_ignored",
          ((_COUNT, "    ignored = tl.sum(((target == ignore_index) & (rows < M)).to(tl.int32), axis=0)\n"
                    "    tl.store(n_valid_ptr, (M - ignored).to(tl.float32))\n", 1),),
          "n counted as M minus the ignored rows among the real ones"),
]
