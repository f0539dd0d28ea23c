"""Every known kernel of puzzle 27 (fused cross-entropy, forward and backward): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING). What each list
means: tests/bugs/__init__.py."""
from pathlib import Path

from bugs import Bug, Right

PASS1_LOAD = 'x = tl.load(x_row + cols, mask=cols < V, other=-float("inf"),'
RESCALE = "            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)\n"
SCALE = "        scale = tl.where(valid, dloss / n, 0.0)\n"
GRAD = "            grad = tl.where(cols == target, p - 1.0, p) * scale\n"
P = "            p = tl.exp(x - lse)\n"
ROWS = "    for row in range(tl.program_id(0), M, tl.num_programs(0)):\n"
STORE = '            tl.store(g_row + cols, grad, mask=mask, eviction_policy="evict_first")'
PASS2_WALK = ("        for back in range(0, blocks):\n"
              "            cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)\n")
COUNT = "tl.sum((target != ignore_index).to(tl.int32), axis=0)"
NOT_ATOMICS = ("atomic", "race", "lost")

PINNED = [
    Bug("padded_lanes_load_zero", "step",
        ((PASS1_LOAD, PASS1_LOAD.replace('other=-float("inf")', "other=0.0"), 1),),
        cause="fill",
        reasons=(("padded lane",), ('other=-float("inf")',)),
        not_causes=("atomic",),
        notes="each padded lane of the last block adds exp(0 - m) to the row's sum: a phantom vocabulary entry "
              "of logit 0; right wherever BLOCK_V divides V"),
    Bug("p_rounded_to_bf16_before_minus_one", "step",
        ((P, "            p = tl.exp(x - lse).to(dlogits_ptr.dtype.element_ty).to(tl.float32)\n", 1),),
        cause="precision",
        reasons=(("rounded to bfloat16 before the − 1",), ("bf16 confident rows",)),
        not_causes=("atomic",),
        notes="Liger-Kernel #1329: p stored in the gradient's dtype, then 1 subtracted; 1 − 1e-4 is 1.0 in bf16, "
              "so a confident row's target gradient is 0. Invisible in fp32 and with random logits"),
    Bug("mean_over_all_rows", "step",
        ((COUNT, "tl.sum((rows < M).to(tl.int32), axis=0)", 1),),
        cause="formula",
        reasons=(("mean over all M rows",), ("ignored rows",)),
        not_causes=("atomic",)),
    Bug("padded_targets_counted", "step",
        (("mask=rows < M, other=ignore_index)", "mask=rows < M, other=0)", 1),),
        cause="fill",
        reasons=(("padded lanes of the targets' block",),),
        not_causes=("atomic",),
        notes="the count's padded lanes load class 0 and count as rows: wherever M is not a power of two"),
    Bug("no_upstream_gradient", "step",
        ((SCALE, "        scale = tl.where(valid, 1.0 / n, 0.0)\n", 1),),
        cause="formula",
        reasons=(("without the upstream gradient",),),
        not_causes=("atomic",)),
    Bug("sign_reversed", "step",
        ((GRAD, "            grad = tl.where(cols == target, 1.0 - p, -p) * scale\n", 1),),
        cause="formula",
        reasons=(("the sign is reversed",),),
        not_causes=("atomic",)),
    Bug("max_not_subtracted", "step",
        ((RESCALE, "            s = s + tl.sum(tl.exp(x), axis=0)\n", 1),
         ("        lse = m + tl.log(s)\n", "        lse = tl.log(s)\n", 1)),
        cause="stability", named="candidates",
        reasons=(("large logits",), ("overflows",)),
        not_causes=("atomic",),
        notes="exp(x) overflows fp32 above 88.7: inf, then NaN"),
    Bug("running_sum_never_rescaled", "step",
        ((RESCALE, "            s = s + tl.sum(tl.exp(x - m_new), axis=0)\n", 1),),
        cause="formula",
        reasons=(("not rescaled",),),
        not_causes=("atomic",)),
    Bug("ignored_rows_keep_their_gradient", "step",
        ((SCALE, "        scale = dloss / n\n", 1),),
        cause="mask", named="candidates",
        reasons=(("ignored rows",),),
        not_causes=("atomic",),
        notes="the loss skips the row, but its gradient row is softmax · dloss / n instead of 0"),
    Bug("gradient_stored_without_mask", "step",
        ((STORE, STORE.replace("mask=mask, ", ""), 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),),
        not_causes=("atomic",), gpu_by_chance=True,
        notes="the padded lanes write into the next row's first columns, which that row's program may write "
              "after (right) or before (wrong), and past the last row's end"),
    Bug("log_s_dropped", "step",
        (("        lse = m + tl.log(s)\n", "        lse = m\n", 1),),
        cause="formula", named="none",
        reasons=(("elements off",),),
        not_causes=("atomic", "precision"),
        notes="lse without its log Σ: every p too large, and on confident rows p_target rounds to 1 as if p "
              "were rounded to bf16 before the − 1; the loss, which that bug leaves right, says otherwise"),
    Bug("one_row_per_program", "step",
        ((ROWS, "    for row in range(tl.program_id(0), tl.program_id(0) + 1):\n", 1),),
        cause="loop", named="candidates",
        reasons=(("never written",), ("tl.program_id",)),
        not_causes=("atomic",),
        notes="the kernel of the first version of this page, launched on a grid of fewer programs than "
              "rows: rows P, P + 1, ... are never done"),
    Bug("reversed_walk_off_by_one", "step",
        ((PASS2_WALK, PASS2_WALK.replace("(blocks - 1 - back)", "(blocks - back)"), 1),),
        cause="address", named="candidates",
        reasons=(("never written",),),
        not_causes=("atomic",),
        notes="pass 2 starts one block past the row (all lanes masked off) and never reaches block 0"),
    Bug("int32_row_offsets", "step",
        (("        base = tl.cast(row, tl.int64) * stride\n", "        base = row * stride\n", 1),),
        cause="address", named="none",
        reasons=(), interpreter_blind=True,
        notes="row * stride wraps past 2**31 in int32: only the GPU case whose rows lie 1.1e9 elements apart "
              "reaches it (an illegal address there)"),
]

_TEXT = (Path(__file__).resolve().parents[2] / "solutions" / "p27_cross_entropy.py").read_text(encoding="utf-8")
PASS1 = _TEXT[_TEXT.index('        m = -float("inf")\n'):_TEXT.index("        lse = m + tl.log(s)\n")]
PER_LANE = """        m_lane = tl.full([BLOCK_V], -float("inf"), dtype=tl.float32)
        s_lane = tl.zeros([BLOCK_V], dtype=tl.float32)
        for start in range(0, V, BLOCK_V):
            cols = start + tl.arange(0, BLOCK_V)
            x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)
            m_new = tl.maximum(m_lane, x)
            seen = m_new > -float("inf")
            s_lane = tl.where(seen, s_lane * tl.exp(m_lane - m_new) + tl.exp(x - m_new), 0.0)
            m_lane = m_new
        m = tl.max(m_lane, axis=0)
        s = tl.sum(tl.where(m_lane > -float("inf"), s_lane * tl.exp(m_lane - m), 0.0), axis=0)
"""
TARGET_LOAD = "        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)\n"
LOSS_STORE = "        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))\n"
PASSING = [
    Right("running_max_per_lane", ((PASS1, PER_LANE, 1),),
                notes="puzzle 11's lanes: a max and a sum per lane, merged after the loop"),
    Right("target_logit_picked_in_pass_2",
                ((TARGET_LOAD, "", 1),
                 (LOSS_STORE, "", 1),
                 ("        g_row = dlogits_ptr + base\n", "        g_row = dlogits_ptr + base\n        picked = 0.0\n", 1),
                 (GRAD, GRAD + "            picked += tl.sum(tl.where(cols == target, x, 0.0), axis=0)\n", 1),
                 (STORE + "  # rounded once, to dlogits' dtype\n",
                  STORE + "\n" + LOSS_STORE.replace("x_target", "picked"), 1)),
                notes="the target's logit summed out of the block that holds it, no scalar load"),
    Right("count_with_where",
                ((COUNT, "tl.sum(tl.where(target == ignore_index, 0, 1), axis=0)", 1),),
                notes="the same count, 1 or 0 picked per lane"),
    Right("pass_2_front_to_back",
                ((PASS2_WALK, "        for start in range(0, V, BLOCK_V):\n"
                              "            cols = start + tl.arange(0, BLOCK_V)\n", 1),),
                notes="the first version of the page: right, and slower on a GPU (pass 2 starts with the "
                      "blocks pass 1 read longest ago, the likeliest to have left L2)"),
    Right("one_row_per_program_loop_by_hand",
                ((ROWS, "    row = tl.program_id(0)\n    while row < M:\n", 1),
                 (STORE + "  # rounded once, to dlogits' dtype\n",
                  STORE + "  # rounded once, to dlogits' dtype\n        row += tl.num_programs(0)\n", 1)),
                notes="the same walk over rows as a while loop"),
]
