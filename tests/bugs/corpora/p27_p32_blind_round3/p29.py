"""Third blind corpus, puzzle 29 (RoPE forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_TABLES = ("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
               "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n")
_FWD_Q_LOOP = ("    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
               "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element")
_FWD_K_LOOP = ("    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n"
               "        first = (token * HK + h0 + heads) * D + i[None, :]\n        x1")
_BWD_Q_LOOP = ("    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
               "        first = (token * HQ + h0 + heads) * D + i[None, :]\n        g1")
_BWD_K_LOOP = ("    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n"
               "        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1")
_DQ_STORES = ("        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
              "        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n")
_DK_STORES = ("        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
              "        tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n")

MEASURED = [
    # forward
    Bug("table_rows_block_half_apart", "forward",
        ((_FWD_TABLES, _FWD_TABLES.replace("pos * half", "pos * BLOCK_HALF"), 1),),
        "address", "the forward reads the angle tables with rows BLOCK_HALF apart (the padded lane count) instead of D/2: wrong angles once D/2 is no power of two",
        notes='shows only where D/2 is not a power of two'),
    Bug("second_half_cos_sin_swapped", "forward",
        (("tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)",
          "tl.store(q_out_ptr + first + half, x2 * sin + x1 * cos, mask=mask)", 1),),
        "formula", "q's second half written x2·sin + x1·cos: cos and sin traded places in the second row of the rotation"),
    Bug("q_head_mask_without_block_start", "forward",
        ((_FWD_Q_LOOP, _FWD_Q_LOOP.replace("mask = (h0 + heads < HQ)", "mask = (heads < HQ)"), 1),),
        "mask", "q's head mask compares the lane (heads < HQ) without the block's start h0: a later, partial head block turns heads past HQ",
        notes='shows only where HQ > BLOCK_H and HQ is not a multiple of it'),
    Bug("k_loaded_in_bf16", "forward",
        (("        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
          "        x2 = tl.load(k_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n",
          "        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.bfloat16)\n"
          "        x2 = tl.load(k_ptr + first + half, mask=mask, other=0.0).to(tl.bfloat16)\n", 1),),
        "precision", "k's halves converted to bf16 after the load (instead of fp32): fp32 keys lose their low digits before the turn",
        notes='fp32 cases only'),
    Bug("lane_mask_against_full_d", "forward",
        (("    cols = i < half  # D/2 need not", "    cols = i < D  # D/2 need not", 1),),
        "mask", "the forward's lane mask i < D instead of i < D/2: with D/2 no power of two the padded lanes turn elements of the second half and the next head",
        notes='shows only where D/2 is not a power of two'),
    Bug("k_heads_as_half_of_q", "forward",
        ((_FWD_K_LOOP, _FWD_K_LOOP.replace("HK", "(HQ // 2)"), 1),),
        "hardcoded", "k's head count taken as HQ // 2 (the documented 4 query heads to 2 key heads) instead of the HK argument",
        notes='shows only where HK != HQ // 2'),
    Bug("k_second_half_operands_swapped", "forward",
        (("tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)",
          "tl.store(k_out_ptr + first + half, x1 * cos + x2 * sin, mask=mask)", 1),),
        "formula", "k's second half written x1·cos + x2·sin: the two halves' roles swapped in the second row of the rotation"),
    Bug("q_head_mask_le", "forward",
        ((_FWD_Q_LOOP, _FWD_Q_LOOP.replace("(h0 + heads < HQ)", "(h0 + heads <= HQ)"), 1),),
        "mask", "q's head mask h0 + heads <= HQ: one head past the last is turned, in the next token's row (past the end for the last token)",
        notes='shows only where HQ is not a multiple of BLOCK_H'),
    Bug("token_rows_of_fused_qk", "forward",
        (("        first = (token * HQ + h0 + heads) * D + i[None, :]  # element",
          "        first = (token * (HQ + HK) + h0 + heads) * D + i[None, :]  # element", 1),),
        "address", "q's token offset counts HQ + HK heads per token (as in a fused qk buffer): q is its own tensor, HQ heads per token"),
    # backward
    Bug("backward_second_half_sign_kept", "backward",
        (("    sin = -tl.load(sin_ptr", "    sin = tl.load(sin_ptr", 1),
         ("tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)", "tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1),
         ("tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)", "tl.store(dk_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1)),
        "formula", "the backward flips sin's sign in the first half only: the second half keeps the forward's g2·cos + g1·sin, which the transpose turns to g2·cos − g1·sin"),
    Bug("backward_drops_cross_terms", "backward",
        ((_DQ_STORES, "        tl.store(dq_ptr + first, g1 * cos, mask=mask)\n        tl.store(dq_ptr + first + half, g2 * cos, mask=mask)\n", 1),
         (_DK_STORES, "        tl.store(dk_ptr + first, g1 * cos, mask=mask)\n        tl.store(dk_ptr + first + half, g2 * cos, mask=mask)\n", 1)),
        "formula", "the backward multiplies each half by cos alone, as if RoPE were an elementwise scale: the partner terms with sin are dropped"),
    Bug("dk_turned_in_place", "backward",
        ((_DK_STORES, _DK_STORES.replace("dk_ptr", "dk_out_ptr"), 1),),
        "inplace", "dk written back into dk_out (the upstream gradient, turned in place): an input overwritten, dk never written",
        accept=("address",)),
    Bug("dk_head_blocks_counted_from_one", "backward",
        ((_BWD_K_LOOP, _BWD_K_LOOP.replace("    for h0 in range(0, HK, BLOCK_H):\n",
                                           "    for hb in range(1, tl.cdiv(HK, BLOCK_H) + 1):\n        h0 = hb * BLOCK_H\n"), 1),),
        "loop", "dk's head blocks numbered from 1 to their count: the block at heads 0 .. BLOCK_H − 1 is never turned back, one past the end is"),
    Bug("dk_step_written_as_4", "backward",
        ((_BWD_K_LOOP, _BWD_K_LOOP.replace("range(0, HK, BLOCK_H)", "range(0, HK, 4)"), 1),),
        "hardcoded", "dk's head loop steps 4 (the documented BLOCK_H) instead of BLOCK_H: with smaller head blocks heads are skipped",
        notes='shows only where BLOCK_H < 4 and HK > BLOCK_H'),
    Bug("angles_one_position_back", "backward",
        (("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose",
          "    cos = tl.load(cos_ptr + (pos - 1) * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose", 1),
         ("    sin = -tl.load(sin_ptr + pos * half + i,", "    sin = -tl.load(sin_ptr + (pos - 1) * half + i,", 1)),
        "address", "the backward reads the tables at row pos − 1 (positions taken as 1-based): every token turned back by its neighbour's angle, position 0 reads before the table"),
    Bug("dq_loop_stops_one_block_early", "backward",
        ((_BWD_Q_LOOP, _BWD_Q_LOOP.replace("range(0, HQ, BLOCK_H)", "range(0, HQ - BLOCK_H, BLOCK_H)"), 1),),
        "loop", "dq's head loop ends at HQ − BLOCK_H: the last head block (the only one where HQ <= BLOCK_H) is never turned back"),
]

_ONE_RANGE_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """q's heads and k's numbered as one range 0 .. HQ + HK − 1: heads below HQ are q's, the rest k's."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, HQ + HK, BLOCK_H):
        h = h0 + heads
        is_q = h < HQ
        is_k = (h >= HQ) & (h < HQ + HK)
        qm = is_q & cols[None, :]
        km = is_k & cols[None, :]
        qf = (token * HQ + h) * D + i[None, :]
        kf = (token * HK + (h - HQ)) * D + i[None, :]
        x1 = tl.where(is_q, tl.load(q_ptr + qf, mask=qm, other=0.0).to(tl.float32),
                      tl.load(k_ptr + kf, mask=km, other=0.0).to(tl.float32))
        x2 = tl.where(is_q, tl.load(q_ptr + qf + half, mask=qm, other=0.0).to(tl.float32),
                      tl.load(k_ptr + kf + half, mask=km, other=0.0).to(tl.float32))
        o1 = x1 * cos - x2 * sin
        o2 = x2 * cos + x1 * sin
        tl.store(q_out_ptr + qf, o1, mask=qm)
        tl.store(q_out_ptr + qf + half, o2, mask=qm)
        tl.store(k_out_ptr + kf, o1, mask=km)
        tl.store(k_out_ptr + kf + half, o2, mask=km)
'''

RIGHT = [
    Right("token_index_in_int64",
          (("    token = tl.program_id(0)\n", "    token = tl.program_id(0).to(tl.int64)\n", 2),),
          "both kernels take the token index as int64, so every offset is computed in 64 bits"),
    Right("q_and_k_heads_as_one_range", (Kernel("rope_fwd_kernel", _ONE_RANGE_FWD),),
          "the forward walks q's and k's heads as one range, a where picking each lane's tensor"),
    Right("pair_as_complex_product",
          (("        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
            "        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n",
            "        re = x1 * cos - x2 * sin  # (x1 + i x2) · (cos + i sin)\n"
            "        im = x1 * sin + x2 * cos\n"
            "        tl.store(q_out_ptr + first + half, im, mask=mask)\n"
            "        tl.store(q_out_ptr + first, re, mask=mask)\n", 1),),
          "q's pair turned as a complex product, the imaginary part stored first"),
    Right("backward_q_while_loop",
          ((_BWD_Q_LOOP, _BWD_Q_LOOP.replace("    for h0 in range(0, HQ, BLOCK_H):\n", "    h0 = 0\n    while h0 < HQ:\n"), 1),
           ("        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n",
            "        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n        h0 += BLOCK_H\n", 1)),
          "the backward's q head blocks walked by a while loop with an explicit step"),
    Right("half_by_shift",
          (("    half = D // 2\n", "    half = D >> 1\n", 2),),
          "D/2 computed as a shift in both kernels"),
    Right("positions_in_int64",
          (("    pos = tl.load(pos_ptr + token)\n", "    pos = tl.load(pos_ptr + token).to(tl.int64)\n", 2),),
          "the position widened to int64 before it indexes the tables"),
]
