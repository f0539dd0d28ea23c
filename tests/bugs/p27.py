"""Every known kernel of puzzle 27 (fused cross-entropy, forward and backward): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING). What each list
means: tests/bugs/__init__.py."""
from pathlib import Path

from bugs.reasons import RESCALE_DROPPED
from bugs import Bug, Kernel, Right, ignore_index_written_in

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
    ignore_index_written_in("step"),
    Bug("padded_lanes_load_zero", "step",
        ((PASS1_LOAD, PASS1_LOAD.replace('other=-float("inf")', "other=0.0"), 1),),
        cause="fill",
        reasons=(("padded lane",), ('other=-float("inf")',)),
        not_causes=("atomic",),
        notes="each padded lane of the last block adds exp(0 - m) to the row's sum: a phantom vocabulary entry "
              "of logit 0; right wherever BLOCK_V divides V", code='variant.padded_zero'),
    Bug("p_rounded_to_bf16_before_minus_one", "step",
        ((P, "            p = tl.exp(x - lse).to(dlogits_ptr.dtype.element_ty).to(tl.float32)\n", 1),),
        cause="precision",
        reasons=(("rounded to bfloat16 before the − 1",), ("bf16 confident rows",)),
        not_causes=("atomic",),
        notes="Liger-Kernel #1329: p stored in the gradient's dtype, then 1 subtracted; 1 − 1e-4 is 1.0 in bf16, "
              "so a confident row's target gradient is 0. Invisible in fp32 and with random logits", code='variant.p_rounded'),
    Bug("mean_over_all_rows", "step",
        ((COUNT, "tl.sum((rows < M).to(tl.int32), axis=0)", 1),),
        cause="formula",
        reasons=(("mean over all M rows",), ("ignored rows",)),
        not_causes=("atomic",), code='variant.mean_all_rows'),
    Bug("gradient_not_divided_by_n", "step",
        (("scale = tl.where(valid, dloss / n, 0.0)", "scale = tl.where(valid, dloss, 0.0)", 1),),
        cause="formula", named="candidates",
        reasons=(("times the expected value",),),
        not_words=("wider than one block",),
        not_causes=("atomic", "loop"),
        notes="the gradient's 1/n missing: every element n times too large; the one-row cases pass because n = 1 "
              "there, which once made the summary blame the rows wider than one block (issue 35, item 2)", code='values.factor'),
    Bug("padded_targets_counted", "step",
        (("mask=rows < M, other=ignore_index)", "mask=rows < M, other=0)", 1),),
        cause="fill",
        reasons=(("padded lanes of the targets' block",),),
        not_causes=("atomic",),
        notes="the count's padded lanes load class 0 and count as rows: wherever M is not a power of two", code='variant.padded_rows_counted'),
    Bug("no_upstream_gradient", "step",
        ((SCALE, "        scale = tl.where(valid, 1.0 / n, 0.0)\n", 1),),
        cause="formula",
        reasons=(("without the upstream gradient",),),
        not_causes=("atomic",), code='variant.no_upstream'),
    Bug("sign_reversed", "step",
        ((GRAD, "            grad = tl.where(cols == target, 1.0 - p, -p) * scale\n", 1),),
        cause="formula",
        reasons=(("the sign is reversed",),),
        not_causes=("atomic",), code='variant.sign'),
    Bug("max_not_subtracted", "step",
        ((RESCALE, "            s = s + tl.sum(tl.exp(x), axis=0)\n", 1),
         ("        lse = m + tl.log(s)\n", "        lse = tl.log(s)\n", 1)),
        cause="stability", named="candidates",
        reasons=(("large logits",), ("overflows",)),
        not_causes=("atomic",),
        notes="exp(x) overflows fp32 above 88.7: inf, then NaN", code='values.nonfinite'),
    Bug("running_sum_never_rescaled", "step",
        ((RESCALE, "            s = s + tl.sum(tl.exp(x - m_new), axis=0)\n", 1),),
        cause="accumulate",
        reasons=(("not rescaled",),),
        not_causes=("atomic",), code='variant.never_rescaled'),
    Bug("ignored_rows_keep_their_gradient", "step",
        ((SCALE, "        scale = dloss / n\n", 1),),
        cause="mask", named="candidates",
        reasons=(("ignored rows",),),
        not_causes=("atomic",),
        notes="the loss skips the row, but its gradient row is softmax · dloss / n instead of 0", code='values.nonfinite'),
    Bug("gradient_stored_without_mask", "step",
        ((STORE, STORE.replace("mask=mask, ", ""), 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),),
        not_causes=("atomic",), gpu_by_chance=True,
        notes="the padded lanes write into the next row's first columns, which that row's program may write "
              "after (right) or before (wrong), and past the last row's end", code='fault.oob'),
    Bug("log_s_dropped", "step",
        (("        lse = m + tl.log(s)\n", "        lse = m\n", 1),),
        cause="formula", named="none",
        reasons=(("elements off",),),
        not_causes=("atomic", "precision"),
        notes="lse without its log Σ: every p too large, and on confident rows p_target rounds to 1 as if p "
              "were rounded to bf16 before the − 1; the loss, which that bug leaves right, says otherwise", code='values.zero'),
    Bug("one_row_per_program", "step",
        ((ROWS, "    for row in range(tl.program_id(0), tl.program_id(0) + 1):\n", 1),),
        cause="loop", named="candidates",
        reasons=(("never written",), ("tl.program_id",)),
        not_causes=("atomic",),
        notes="the kernel of the first version of this page, launched on a grid of fewer programs than "
              "rows: rows P, P + 1, ... are never done", code='values.nonfinite'),
    Bug("rows_stepped_by_three", "step",
        ((ROWS, "    for row in range(tl.program_id(0), M, 3):\n", 1),),
        cause="hardcoded", named="candidates",
        reasons=(("tl.num_programs(0)",), ("PROGRAMS = 2",)),
        not_causes=("atomic",),
        notes="the interpreter's 3 programs written in: right wherever 3 or more programs walk the rows (each "
              "row done, some twice with the same values), rows never written where the launch starts 2", code='values.nonfinite'),
    Bug("running_max_per_block", "step",
        (("            m_new = tl.maximum(m, tl.max(x, axis=0))\n", "            m_new = tl.max(x, axis=0)\n", 1),),
        cause="accumulate", named="candidates",
        not_causes=("atomic", "mask"),
        notes="each block's own max instead of the max kept from block to block: exact while the blocks' maxima "
              "stay within 88 of each other (the rescale works both ways), overflows where a later block's max "
              "is 200 below the first's", code='values.nonfinite'),
    Bug("reversed_walk_off_by_one", "step",
        ((PASS2_WALK, PASS2_WALK.replace("(blocks - 1 - back)", "(blocks - back)"), 1),),
        cause="address", named="candidates",
        reasons=(("never written",),),
        not_causes=("atomic",),
        notes="pass 2 starts one block past the row (all lanes masked off) and never reaches block 0", code='values.unwritten'),
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

# MEASURED and RIGHT: the first blind corpus, bugs and correct rewrites written from the solution, the
# page and the notebook alone, by someone who had not read the hint code; scored untouched on the
# checker it was written against before any hint was tuned to it (tests/bugs/measure.py).
_BLIND_PASS1_LOAD = ('x = tl.load(x_row + cols, mask=cols < V, other=-float("inf"),\n'
              '                        eviction_policy="evict_last").to(tl.float32)')
_BLIND_S_UPDATE = "s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)"
_BLIND_LSE = "lse = m + tl.log(s)"
_BLIND_SCALE = "scale = tl.where(valid, dloss / n, 0.0)"
_BLIND_LOSS = "tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))"
_BLIND_GRAD = "grad = tl.where(cols == target, p - 1.0, p) * scale"
_BLIND_P2 = "p = tl.exp(x - lse)"
_BLIND_COUNT_LOAD = "target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)"
_BLIND_ROWS = "for row in range(tl.program_id(0), M, tl.num_programs(0)):"
_BLIND_BASE = "base = tl.cast(row, tl.int64) * stride"

MEASURED = [
    Bug("pass1_pads_with_zero", "step",
        ((_BLIND_PASS1_LOAD, _BLIND_PASS1_LOAD.replace('other=-float("inf")', "other=0.0"), 1),),
        "fill", "pass 1's padded lanes load 0.0: each is a phantom vocabulary entry adding exp(0 − m) to s",
        accept=("mask",)),
    Bug("count_pads_with_zero", "step",
        ((_BLIND_COUNT_LOAD, _BLIND_COUNT_LOAD.replace("other=ignore_index", "other=0"), 1),),
        "fill", "the count's padded lanes load target 0: rows that do not exist are counted in n"),
    Bug("mean_over_all_rows", "step",
        (("n = tl.load(n_valid_ptr)", "n = M", 1),),
        "formula", "the mean divides by M, all rows, instead of n, the rows that count"),
    Bug("sum_not_rescaled", "step",
        ((_BLIND_S_UPDATE, "s = s + tl.sum(tl.exp(x - m_new), axis=0)", 1),),
        "accumulate", "the online sum is not rescaled by exp(m − m_new) when the max grows"),
    Bug("sum_overwritten_per_block", "step",
        ((_BLIND_S_UPDATE, "s = tl.sum(tl.exp(x - m_new), axis=0)", 1),),
        "accumulate", "s overwritten by each block's sum: only the last block of the row counts"),
    Bug("running_max_not_updated", "step",
        (("            m = m_new\n", "", 1),),
        "accumulate", "m = m_new forgotten: the running max stays -inf, lse is -inf"),
    Bug("lse_without_its_max", "step",
        ((_BLIND_LSE, "lse = tl.log(s)", 1),),
        "formula", "lse = log s: the running max m is not added back"),
    Bug("lse_without_any_shift", "step",
        ((_BLIND_S_UPDATE, "s = s + tl.sum(tl.exp(x), axis=0)", 1), (_BLIND_LSE, "lse = tl.log(s)", 1)),
        "stability", "lse = log Σ exp(x) unshifted: logits near 1000 overflow exp"),
    Bug("p_rounded_before_one_hot", "step",
        ((_BLIND_P2, "p = tl.exp(x - lse).to(dlogits_ptr.dtype.element_ty)", 1),),
        "precision", "p rounded to dlogits' dtype before p − 1: a confident row's target gradient vanishes in bf16"),
    Bug("target_logit_read_unmasked", "step",
        (("x_target = tl.load(x_row + target, mask=valid).to(tl.float32)",
          "x_target = tl.load(x_row + target).to(tl.float32)", 1),),
        "mask", "the target's logit read on ignored rows too: x_row − 100 lies before the row",
        accept=("address",)),
    Bug("ignored_rows_get_a_gradient", "step",
        ((_BLIND_SCALE, "scale = dloss / n", 1),),
        "formula", "the gradient's scale is not zeroed on ignored rows: they get softmax(x) · dloss / n",
        accept=("mask",)),
    Bug("loss_share_not_divided", "step",
        ((_BLIND_LOSS, _BLIND_LOSS.replace("(lse - x_target) / n", "lse - x_target"), 1),),
        "formula", "each row's loss share is lse − x_t, not divided by n"),
    Bug("gradient_without_dloss", "step",
        ((_BLIND_SCALE, "scale = tl.where(valid, 1.0 / n, 0.0)", 1),),
        "formula", "the upstream gradient dloss left out of the gradient's scale"),
    Bug("one_hot_minus_p", "step",
        ((_BLIND_GRAD, "grad = tl.where(cols == target, 1.0 - p, -p) * scale", 1),),
        "formula", "the gradient written one_hot − p: its sign flipped"),
    Bug("rows_v_apart", "step",
        ((_BLIND_BASE, "base = tl.cast(row, tl.int64) * V", 1),),
        "address", "rows taken V apart instead of stride apart (the logits may be a strided view)"),
    Bug("gradient_rows_v_apart", "step",
        (("g_row = dlogits_ptr + base", "g_row = dlogits_ptr + tl.cast(row, tl.int64) * V", 1),),
        "address", "dlogits assumed contiguous: its rows written V apart, not stride apart"),
    Bug("rows_stepped_by_four", "step",
        ((_BLIND_ROWS, "for row in range(tl.program_id(0), M, 4):", 1),),
        "hardcoded", "the row step is 4 (four programs per SM) instead of tl.num_programs(0)",
        accept=("loop",)),
    Bug("pass1_skips_the_partial_block", "step",
        (("for start in range(0, V, BLOCK_V):", "for start in range(0, (V // BLOCK_V) * BLOCK_V, BLOCK_V):", 1),),
        "loop", "pass 1 stops before the last, partial block: its columns are left out of lse"),
    Bug("pass2_blocks_floored", "step",
        (("blocks = tl.cdiv(V, BLOCK_V)", "blocks = V // BLOCK_V", 1),),
        "loop", "pass 2 walks V // BLOCK_V blocks: the last partial block of the gradient is never written"),
    Bug("pass2_mask_le", "step",
        (("mask = cols < V", "mask = cols <= V", 1),),
        "mask", "pass 2's mask cols <= V: one column past the row read and written"),
    Bug("pass1_load_unmasked", "step",
        ((_BLIND_PASS1_LOAD, 'x = tl.load(x_row + cols, eviction_policy="evict_last").to(tl.float32)', 1),),
        "mask", "pass 1 loads without a mask: the last block reads past the row into lse"),
    Bug("p_without_the_sum", "step",
        ((_BLIND_P2, "p = tl.exp(x - m)", 1),),
        "formula", "p = exp(x − m): the softmax is not divided by its sum (lse, not m)"),
    Bug("running_max_starts_at_zero", "step",
        (('        m = -float("inf")\n', "        m = 0.0\n", 1),),
        "fill", "the running max starts at 0, not -inf: rows of very negative logits underflow s to 0",
        accept=("stability",)),
    Bug("ignore_index_written_in", "step",
        (("valid = target != ignore_index", "valid = target != -100", 1),
         (_BLIND_COUNT_LOAD, _BLIND_COUNT_LOAD.replace("other=ignore_index", "other=-100"), 1),
         ("tl.sum((target != ignore_index)", "tl.sum((target != -100)", 1)),
        "hardcoded", "ignore_index written in as -100 instead of the argument"),
    Bug("row_offset_in_int32", "step",
        ((_BLIND_BASE, "base = row * stride", 1),),
        "precision", "row * stride in int32: past 2**31 elements the offset wraps",
        accept=("address",), interpreter_blind=True),
]

RIGHT = [
    Right("base2_logsumexp",
          (('        m = -float("inf")\n', "        m = -float(\"inf\")\n        LOG2E = 1.4426950408889634\n", 1),
           ("m_new = tl.maximum(m, tl.max(x, axis=0))", "x2 = x * LOG2E\n            m_new = tl.maximum(m, tl.max(x2, axis=0))", 1),
           (_BLIND_S_UPDATE, "s = s * tl.exp2(m - m_new) + tl.sum(tl.exp2(x2 - m_new), axis=0)", 1),
           (_BLIND_LSE, "lse = (m + tl.log2(s)) * 0.6931471805599453", 1)),
          "pass 1 in base 2 (exp2 with log2(e) folded into the logits), lse brought back by ln 2"),
    Right("pass2_front_to_back",
          (("cols = (blocks - 1 - back) * BLOCK_V + tl.arange(0, BLOCK_V)",
            "cols = back * BLOCK_V + tl.arange(0, BLOCK_V)", 1),),
          "pass 2 walks the row front to back"),
    Right("max_then_sum_passes",
          ((_BLIND_S_UPDATE + "\n            m = m_new\n",
            "m = m_new\n"
            "        for start in range(0, V, BLOCK_V):\n"
            "            cols = start + tl.arange(0, BLOCK_V)\n"
            "            x = tl.load(x_row + cols, mask=cols < V, other=-float(\"inf\")).to(tl.float32)\n"
            "            s += tl.sum(tl.exp(x - m), axis=0)\n", 1),),
          "lse in three passes: the max first, then the sum of exp(x − max), no rescaling"),
    Right("one_hot_as_float",
          ((_BLIND_GRAD, "grad = (p - (cols == target).to(tl.float32)) * scale", 1),),
          "the one-hot subtracted as a float vector"),
    Right("count_in_blocks",
          (Kernel("ce_count_kernel", '''
@triton.jit
def ce_count_kernel(target_ptr, n_valid_ptr, M, ignore_index, BLOCK_M: tl.constexpr):
    count = tl.zeros([BLOCK_M], dtype=tl.int32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)
        count += tl.where((rows < M) & (target != ignore_index), 1, 0)
    tl.store(n_valid_ptr, tl.sum(count, axis=0).to(tl.float32))
'''),),
          "the count in a loop of blocks, per-lane counters, the mask repeated in the where"),
    Right("per_lane_running_sums",
          ((('        m = -float("inf")\n        s = 0.0\n'),
            '        m_v = tl.full([BLOCK_V], -float("inf"), dtype=tl.float32)\n'
            '        s_v = tl.zeros([BLOCK_V], dtype=tl.float32)\n', 1),
           ("            m_new = tl.maximum(m, tl.max(x, axis=0))\n"
            "            # the terms so far were exp(x − m); exp(m − m_new) <= 1 moves them to exp(x − m_new).\n"
            "            # (On the first block m = -inf: 0 · exp(-inf) = 0, and every block holds a real column.)\n"
            "            " + _BLIND_S_UPDATE + "\n            m = m_new\n"
            "        " + _BLIND_LSE,
            "            m_new = tl.maximum(m_v, x)\n"
            "            alive = m_new > -float(\"inf\")\n"
            "            s_v = tl.where(alive, s_v * tl.exp(m_v - m_new) + tl.exp(x - m_new), 0.0)\n"
            "            m_v = m_new\n"
            "        m = tl.max(m_v, axis=0)\n"
            "        s = tl.sum(s_v * tl.exp(m_v - m), axis=0)\n"
            "        " + _BLIND_LSE, 1)),
          "pass 1 with a running max and sum per lane, combined after the loop (lanes never reached guarded)"),
    Right("target_logit_from_pass2",
          (("        x_target = tl.load(x_row + target, mask=valid).to(tl.float32)\n"
            "        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))\n", "", 1),
           ("        g_row = dlogits_ptr + base\n", "        g_row = dlogits_ptr + base\n        x_target = 0.0\n", 1),
           ("            p = tl.exp(x - lse)\n",
            "            p = tl.exp(x - lse)\n            x_target += tl.sum(tl.where(cols == target, x, 0.0), axis=0)\n", 1),
           ('eviction_policy="evict_first")  # rounded once, to dlogits\' dtype',
            'eviction_policy="evict_first")  # rounded once, to dlogits\' dtype\n'
            "        tl.store(loss_rows_ptr + row, tl.where(valid, (lse - x_target) / n, 0.0))", 1)),
          "the target's logit picked up during pass 2 by a where-sum, the loss stored after it"),
]

SAME_BUG = {
    "formula.drop:ce_fwd_bwd_kernel:63b5ec90:0": ("accumulate", RESCALE_DROPPED),
}

# the second blind corpus (tests/bugs/corpora/p27_p32_blind_round2/p27.py), measured beside the first
from bugs.corpora.p27_p32_blind_round2 import p27 as _second  # noqa: E402
MEASURED = MEASURED + _second.MEASURED
RIGHT = RIGHT + _second.RIGHT
