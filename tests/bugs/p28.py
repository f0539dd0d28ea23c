"""Every known kernel of puzzle 28 (fused Linear + cross-entropy, chunked): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING), the mutants no
check can catch (EQUIVALENT). What each list means: tests/bugs/__init__.py."""
from bugs.reasons import RESCALE_DROPPED
from bugs import Bug, Kernel, Right, ignore_index_written_in
from bugs.reasons import MASKED_OUT, PROMOTED

EPILOGUE_MASK = '    z = tl.where(col_ok[None, :], acc, -float("inf"))\n'
TARGET_SUM = "tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok)"
SHIFTED_STORE = "    tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,\n"
P = "        p = tl.exp(stored + (m - lse)[:, None])\n"
GRAD = "        grad = tl.where(cols == target, p - 1.0, p) * scale\n"
LSE = "    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))\n"
SCALE = "    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)\n"
ADD = "        acc += tl.load(c_ptrs, mask=mask)\n"
A_T_LOAD = "            a = a_desc.load([start, tile_m * BLOCK_M]).T\n"
COUNT = "tl.sum((target != ignore_index).to(tl.int32), axis=0)"
# the walk of chunk_ce_kernel over a row, replaced by the alternatives below
WALK = """    for first in range(0, TILES, TILES_PER_STEP):
        tiles = first + tl.arange(0, TILES_PER_STEP)
        m = tl.load(tile_max_ptr + row * TILES + tiles, mask=tiles < TILES, other=-float("inf"))
        cols = tiles[:, None] * TILE_N + tl.arange(0, TILE_N)[None, :]
        ok = cols < V  # also false in every tile past the last
        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)
"""
NOT_ATOMICS = ("atomic", "race", "lost")
# lse from the tiles' partials in one block, and the same combined step by step with each step's own max
PARTIALS = """    m_t = tl.load(tile_max_ptr + row * TILES + t, mask=t < TILES, other=-float("inf"))
    s_t = tl.load(tile_sum_ptr + row * TILES + t, mask=t < TILES, other=0.0)
    m_row = tl.max(m_t, axis=0)
""" + LSE
PARTIALS_PER_STEP = """    m_row = -float("inf")
    s_row = 0.0
    for first in range(0, TILES, TILES_PER_STEP):
        step = first + tl.arange(0, TILES_PER_STEP)
        m_t = tl.load(tile_max_ptr + row * TILES + step, mask=step < TILES, other=-float("inf"))
        s_t = tl.load(tile_sum_ptr + row * TILES + step, mask=step < TILES, other=0.0)
        m_new = tl.max(m_t, axis=0)
        s_row = s_row * tl.exp(m_row - m_new) + tl.sum(s_t * tl.exp(m_t - m_new), axis=0)
        m_row = m_new
    lse = m_row + tl.log(s_row)
"""

PINNED = [
    ignore_index_written_in("step"),
    Bug("shift_not_added_back", "step",
        ((P, "        p = tl.exp(stored - lse)\n", 1),),
        cause="formula",
        reasons=(("must add m_t back",),),
        not_causes=("atomic",),
        notes="the epilogue stores z − m_t, and the cross-entropy takes exp(stored − lse): every tile's p is "
              "exp(−m_t) off; the loss (from the partials) stays right", code='variant.shift_not_added'),
    Bug("logits_stored_unshifted", "step",
        ((SHIFTED_STORE, SHIFTED_STORE.replace("shifted,", "acc,"), 1),),
        cause="formula",
        reasons=(("Store z − m_t",),),
        not_causes=("atomic",),
        notes="the lab's first version: z stored as it is, but the cross-entropy still adds m_t back", code='variant.shift_added_twice'),
    Bug("padded_columns_in_the_tile_statistics", "step",
        ((EPILOGUE_MASK, "    z = acc\n", 1),),
        cause="fill",
        reasons=(("padded column",),),
        not_causes=("atomic",),
        notes="the columns past V hold the product's 0 (w's rows past V arrive as zeros): each adds exp(0 − m) "
              "to the last tile's sum, and 0 may become its max", code='variant.padded_zero'),
    Bug("target_compared_with_the_tile_local_column", "step",
        (("    hit = cols[None, :] == target[:, None]\n",
          "    hit = tl.arange(0, BLOCK_N)[None, :] == target[:, None]\n", 1),),
        cause="address", named="none",
        reasons=(("loss max difference",),),
        not_causes=("atomic",),
        notes="the target's column looked for at the tile-local index: every tile adds its own column `target` "
              "(where target < BLOCK_N), none holds a larger target; only the loss is wrong"),
    Bug("target_logit_after_the_shift", "step",
        ((TARGET_SUM, TARGET_SUM.replace("acc, 0.0", "shifted, 0.0"), 1),),
        cause="formula",
        reasons=(("after the shift",),),
        not_causes=("atomic",),
        notes="the target's logit read from z − m_t: the loss is off by m_t per row; dx and dW stay right", code='variant.target_logit_shifted'),
    Bug("dw_overwritten_per_chunk", "step",
        ((ADD, "        acc = acc * 1.0\n", 1),),
        cause="accumulate",
        reasons=(("last chunk's share alone",),),
        not_causes=("atomic",),
        notes="each chunk stores its share of dW over the previous ones: right while N fits one chunk", code='variant.dw_last_chunk'),
    Bug("dw_added_from_the_first_chunk", "step",
        (("    if ACCUMULATE:\n", "    if True:\n", 1),),
        cause="accumulate", named="candidates",
        reasons=(("where nothing had been written",), ("dw",)),
        not_causes=("atomic",),
        notes="the product adds to what c holds whatever ACCUMULATE says: dw is not zeroed (the checker hands it "
              "over as NaN, as a GPU's torch.empty holds garbage), and dx, never added to, is NaN too", code='values.nonfinite'),
    Bug("minus_one_after_rounding_to_bf16", "step",
        ((GRAD, "        grad = tl.where(cols == target, p.to(z_ptr.dtype.element_ty).to(tl.float32) - 1.0, p) * scale\n",
          1),),
        cause="precision",
        reasons=(("bf16 confident rows",), ("before the − 1",)),
        not_causes=("atomic",),
        notes="puzzle 27's lesson: p_target = 1 − 1e-4 rounds to 1.0 in bf16 and the target's gradient to 0; "
              "in fp32 the cast changes nothing, so only the bf16 confident case fails", code='variant.p_rounded'),
    Bug("ignored_rows_not_zeroed", "step",
        ((SCALE, "    scale = tl.load(dloss_ptr) / n\n", 1),),
        cause="mask",
        reasons=(("ignored rows",),),
        not_causes=("atomic",),
        notes="an ignored row's gradient row keeps softmax · dloss / n; its loss share is still 0", code='variant.ignored_not_zeroed'),
    Bug("transposed_operand_coordinates_swapped", "step",
        ((A_T_LOAD, "            a = a_desc.load([tile_m * BLOCK_M, start]).T\n", 1),),
        cause="address", named="none",
        reasons=(("dw",),),
        not_causes=("atomic",),
        notes="gᵀ's block at (m, k) is g's [BLOCK_K, BLOCK_M] block at (k, m): loaded at (m, k), it is "
              "another part of g (or the zeros past its edge)"),
    Bug("partials_not_rescaled", "step",
        ((LSE, "    lse = m_row + tl.log(tl.sum(s_t, axis=0))\n", 1),),
        cause="accumulate",
        reasons=(("bring it to the row's max",),),
        not_causes=("atomic",),
        notes="each tile's s_t is relative to its own max: right only where every tile's max is the row's", code='variant.partials_not_rescaled'),
    Bug("running_max_per_step", "step",
        ((PARTIALS, PARTIALS_PER_STEP, 1),),
        cause="accumulate", named="candidates",
        not_causes=("atomic", "mask"),
        notes="the partials combined step by step with each step's own max instead of the max kept from step to "
              "step: exact while the steps' maxima stay within 88 of each other, overflows where the first "
              "column tile's logits stand 200 above the rest", code='values.nonfinite'),
    Bug("mean_over_all_rows", "step",
        ((COUNT, "tl.sum((rows < M).to(tl.int32), axis=0)", 1),),
        cause="formula", named="candidates",
        reasons=(("mean over all N rows",), ("ignored rows",)),
        not_causes=("atomic",), code='variant.several'),
]

PASSING = [
    Right("ce_gathers_each_columns_tile_max",
                ((WALK, """    for first in range(0, TILES, TILES_PER_STEP):
        cols = first * TILE_N + tl.arange(0, TILES_PER_STEP * TILE_N)
        ok = cols < V
        m = tl.load(tile_max_ptr + row * TILES + cols // TILE_N, mask=ok, other=0.0)
        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)
""", 1), ("        p = tl.exp(stored + (m - lse)[:, None])\n", "        p = tl.exp(stored + (m - lse))\n", 1)),
                notes="a 1-D walk: each column gathers its tile's max (cols // TILE_N), one load per column "
                      "instead of one per tile"),
    Right("ce_recomputes_lse_online",
                (("    m_row = tl.max(m_t, axis=0)\n    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))\n",
                  """    z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)
    # lse again, from the stored logits: an online max and sum over the row (puzzle 11)
    run_max = -float("inf")
    run_sum = 0.0
    for first in range(0, TILES, TILES_PER_STEP):
        tiles = first + tl.arange(0, TILES_PER_STEP)
        m = tl.load(tile_max_ptr + row * TILES + tiles, mask=tiles < TILES, other=0.0)
        cols = tiles[:, None] * TILE_N + tl.arange(0, TILE_N)[None, :]
        logit = tl.load(z_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32) + m[:, None]
        new_max = tl.maximum(run_max, tl.max(tl.max(logit, axis=1), axis=0))
        run_sum = run_sum * tl.exp(run_max - new_max) + tl.sum(tl.sum(tl.exp(logit - new_max), axis=1), axis=0)
        run_max = new_max
    lse = run_max + tl.log(run_sum)
""", 1),),
                notes="a second pass over the row instead of the partial sums (more traffic, the same values "
                      "within rounding): the tile maxima still undo the shift"),
    Right("dw_added_with_atomics",
                ((ADD + "    tl.store(c_ptrs, acc, mask=mask)\n",
                  "        tl.atomic_add(c_ptrs, acc, mask=mask)\n    else:\n        tl.store(c_ptrs, acc, mask=mask)\n", 1),),
                notes="puzzle 19's atomics: right, but the order of the adds may change from run to run"),
    Right("tiles_in_row_major_order",
                (("    tile_m = first_m + (pid % per_group) % group_m\n    tile_n = (pid % per_group) // group_m\n"
                  "    return tile_m, tile_n\n", "    return pid // tiles_n, pid % tiles_n\n", 1),),
                notes="no grouping: slower on a GPU (less reuse in L2), the same values"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.start:chunk_logits_kernel:ba61d0d7:0": "every real logit of the tile is 1 more (its columns past V still "
                                                 "become -inf): a row's softmax, its loss lse − z_target and the "
                                                 "stored z − m_t do not change when all its logits move together",
    "fill.other:chunk_logits_kernel:a7441054:0": MASKED_OUT,
    "mask.keep_one:chunk_logits_kernel:dfbe5afb:0": "without col_ok the store also writes the columns past V, which "
                                                    "lie in each row's padding of z to whole tiles: the "
                                                    "cross-entropy masks them off and the products' descriptors end "
                                                    "at V, so nothing reads them",
    "fill.other:chunk_ce_kernel:6f623683:0": "a padded tile's s_t is multiplied by exp(m_t − M), and its m_t loads "
                                             "-inf: exp(-inf) = 0 whatever s_t holds",
    "fill.other:chunk_ce_kernel:43a5875f:0": MASKED_OUT,
    "fill.other:chunk_ce_kernel:d3ccd747:0": MASKED_OUT,
    "precision.cast:chunk_count_kernel:e602c088:0": "the int32 count is stored into n_valid's fp32 slot: the store "
                                                    "converts it as the cast does (exactly, below 2**24 rows)",
    "precision.cast:chunk_ce_kernel:03b49769:0": PROMOTED,
}

# MEASURED and RIGHT: the first blind corpus, bugs and correct rewrites written from the solution, the
# page and the notebook alone, by someone who had not read the hint code; scored untouched on the
# checker it was written against before any hint was tuned to it (tests/bugs/measure.py).
_BLIND_Z_MASKED = 'z = tl.where(col_ok[None, :], acc, -float("inf"))'
_BLIND_TILE_SUM = "tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)"
_BLIND_HIT = "hit = cols[None, :] == target[:, None]"
_BLIND_TARGET_SHARE = "tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok)"
_BLIND_Z_STORE = "tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,"
_BLIND_S_T = "s_t = tl.load(tile_sum_ptr + row * TILES + t, mask=t < TILES, other=0.0)"
_BLIND_LSE = "lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))"
_BLIND_SCALE = "scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)"
_BLIND_LOSS = "tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / n, 0.0))"
_BLIND_P = "p = tl.exp(stored + (m - lse)[:, None])"
_BLIND_GRAD = "grad = tl.where(cols == target, p - 1.0, p) * scale"
_BLIND_CE_LOOP = "for first in range(0, TILES, TILES_PER_STEP):"
_BLIND_ACCUM = "    if ACCUMULATE:\n"

MEASURED = [
    Bug("phantom_columns_left_in", "step",
        ((_BLIND_Z_MASKED, "z = acc", 1),),
        "fill", "the last tile's columns past V keep the product's 0: phantom logits in the tile's max and sum",
        accept=("mask",)),
    Bug("tile_sum_pads_with_minus_inf", "step",
        ((_BLIND_S_T, _BLIND_S_T.replace("other=0.0", 'other=-float("inf")'), 1),),
        "fill", "the padded lanes of the tile sums load -inf (copied from the maxima): -inf · 0 is NaN"),
    Bug("tile_sum_of_unshifted_logits", "step",
        ((_BLIND_TILE_SUM, _BLIND_TILE_SUM.replace("tl.exp(shifted)", "tl.exp(z)"), 1),),
        "formula", "the tile's sum taken of exp(z), not exp(z − m_t), while the combine assumes the shift"),
    Bug("lse_ignores_tile_maxima", "step",
        ((_BLIND_LSE, "lse = tl.log(tl.sum(s_t, axis=0))", 1),),
        "formula", "lse = log Σ_t s_t: each tile's sum is relative to its own max, and the maxima are dropped"),
    Bug("lse_combined_unshifted", "step",
        ((_BLIND_LSE, "lse = tl.log(tl.sum(s_t * tl.exp(m_t), axis=0))", 1),),
        "stability", "lse = log Σ_t s_t e^{m_t} without the row's max taken out: large logits overflow"),
    Bug("max_not_added_back", "step",
        ((_BLIND_P, "p = tl.exp(stored - lse)", 1),),
        "formula", "the cross-entropy reads the stored z − m_t as z: m_t never added back"),
    Bug("logits_stored_unshifted", "step",
        ((_BLIND_Z_STORE, _BLIND_Z_STORE.replace("shifted,", "z,"), 1),),
        "formula", "the epilogue stores z, not z − m_t, while the cross-entropy adds m_t back"),
    Bug("target_hit_with_local_columns", "step",
        ((_BLIND_HIT, "hit = tl.arange(0, BLOCK_N)[None, :] == target[:, None]", 1),),
        "address", "the target compared with the tile's local column numbers: every tile finds a 'target'",
        accept=("formula",)),
    Bug("target_share_from_shifted", "step",
        ((_BLIND_TARGET_SHARE, _BLIND_TARGET_SHARE.replace("tl.where(hit, acc, 0.0)", "tl.where(hit, shifted, 0.0)"), 1),),
        "formula", "the target's share taken from z − m_t: the loss misses the tile's max"),
    Bug("partials_rows_block_t_apart", "step",
        (("row * TILES + t", "row * BLOCK_T + t", 4),),
        "address", "the cross-entropy reads row r's partials at r * BLOCK_T instead of r * TILES"),
    Bug("z_rows_v_apart", "step",
        (("z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)", "z_row = z_ptr + row.to(tl.int64) * V", 1),),
        "address", "the cross-entropy takes z's rows V apart; they are TILES * TILE_N apart (whole tiles)"),
    Bug("dw_share_stored_every_chunk", "step",
        (("        acc += tl.load(c_ptrs, mask=mask)\n", "        acc = acc\n", 1),),
        "accumulate", "dW's tile stored by every chunk instead of added to: only the last chunk's share is left"),
    Bug("dw_added_from_the_first_chunk", "step",
        ((_BLIND_ACCUM, "    if A_T:\n", 1),),
        "accumulate", "dW added into from the first chunk on: dw is not zeroed (it starts as NaN)"),
    Bug("ce_mask_le", "step",
        (("ok = cols < V  # also false", "ok = cols <= V  # also false", 1),),
        "mask", "the cross-entropy's mask cols <= V: column V (the next row's first when V fills its tiles) written"),
    Bug("p_rounded_before_one_hot", "step",
        ((_BLIND_P, "p = tl.exp(stored + (m - lse)[:, None]).to(z_ptr.dtype.element_ty)", 1),),
        "precision", "p rounded to z's dtype before p − 1: a confident row's target gradient vanishes in bf16"),
    Bug("descriptor_at_tile_numbers", "step",
        (("x = x_desc.load([tile_m * BLOCK_M, start])", "x = x_desc.load([tile_m, start])", 1),),
        "address", "x's descriptor loaded at the tile number, not the element coordinate tile_m * BLOCK_M"),
    Bug("matmul_skips_partial_k_block", "step",
        (("    for start in range(0, K, BLOCK_K):\n        if A_T:",
          "    for start in range(0, (K // BLOCK_K) * BLOCK_K, BLOCK_K):\n        if A_T:", 1),),
        "loop", "the product's K loop stops before the last partial block (V or C not a multiple of BLOCK_K)"),
    Bug("transposed_block_at_untransposed_coords", "step",
        (("a = a_desc.load([start, tile_m * BLOCK_M]).T", "a = a_desc.load([tile_m * BLOCK_M, start]).T", 1),),
        "address", "gᵀ's block loaded at (m, k) coordinates: the stored tensor is [K, M]"),
    Bug("loss_share_not_divided", "step",
        ((_BLIND_LOSS, _BLIND_LOSS.replace("(lse - z_target) / n", "lse - z_target"), 1),),
        "formula", "each row's loss share is lse − z_t, not divided by n"),
    Bug("ignored_rows_get_a_gradient", "step",
        ((_BLIND_SCALE, "scale = tl.load(dloss_ptr) / n", 1),),
        "formula", "the gradient's scale not zeroed on ignored rows: their gradient rows are softmax · dloss / n",
        accept=("mask",)),
    Bug("ce_walks_one_tile_at_a_time", "step",
        ((_BLIND_CE_LOOP, "for first in range(0, TILES):", 1),),
        "loop", "the walk steps one tile but covers TILES_PER_STEP: tiles are turned into gradients twice, in place"),
    Bug("group_column_by_group_m", "step",
        (("    tile_n = (pid % per_group) // group_m\n", "    tile_n = (pid % per_group) // GROUP_M\n", 1),),
        "address", "the column tile divided by GROUP_M: in the last, smaller group tiles are repeated and others skipped"),
]

RIGHT = [
    Right("tile_sum_in_base_2",
          ((_BLIND_TILE_SUM, "tl.store(tile_sum_ptr + part, tl.sum(tl.exp2(shifted * 1.4426950408889634), axis=1), mask=row_ok)", 1),),
          "the tile's sum of exponentials with exp2 and log2(e) folded in"),
    Right("p_as_two_factors",
          ((_BLIND_P, "p = tl.exp(stored) * tl.exp(m - lse)[:, None]", 1),),
          "p = exp(stored) · exp(m_t − lse), the tile's factor computed once per tile"),
    Right("one_hot_as_float",
          ((_BLIND_GRAD, "grad = (p - (cols == target).to(tl.float32)) * scale", 1),),
          "the one-hot subtracted as a float"),
    Right("accumulator_starts_from_dw",
          (Kernel("chunk_matmul_kernel", '''
@triton.jit
def chunk_matmul_kernel(a_desc, b_desc, c_ptr, M, N, K, A_T: tl.constexpr, ACCUMULATE: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if ACCUMULATE:
        acc = tl.load(c_ptrs, mask=mask, other=0.0)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        if A_T:
            a = tl.trans(a_desc.load([start, tile_m * BLOCK_M]))
        else:
            a = a_desc.load([tile_m * BLOCK_M, start])
        b = b_desc.load([start, tile_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptrs, acc, mask=mask)
'''),),
          "dW's accumulator starts from the tile dW holds (or zeros on the first chunk)"),
    Right("row_major_tile_order",
          (Kernel("grouped_tile", '''
@triton.jit
def grouped_tile(pid, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    return pid // tiles_n, pid % tiles_n
'''),),
          "plain row-major tile order instead of groups (slower in L2, the same numbers)"),
    Right("lse_online_over_tiles",
          ((_BLIND_LSE, "m_run = -float(\"inf\")\n"
                 "    s_run = 0.0\n"
                 "    for tt in range(0, TILES):\n"
                 "        m_one = tl.load(tile_max_ptr + row * TILES + tt)\n"
                 "        s_one = tl.load(tile_sum_ptr + row * TILES + tt)\n"
                 "        m_next = tl.maximum(m_run, m_one)\n"
                 "        s_run = s_run * tl.exp(m_run - m_next) + s_one * tl.exp(m_one - m_next)\n"
                 "        m_run = m_next\n"
                 "    lse = m_run + tl.log(s_run)", 1),),
          "lse combined tile by tile with a scalar running max, as puzzle 27's pass 1"),
    Right("two_masks_in_the_walk",
          (("ok = cols < V  # also false in every tile past the last",
            "ok = (tiles[:, None] < TILES) & (cols < V)", 1),),
          "the cross-entropy's mask written as tile-in-range and column-in-range"),
]

SAME_BUG = {
    "formula.drop:chunk_ce_kernel:a9dd4a2b:0": ("accumulate", RESCALE_DROPPED),
}

# the second blind corpus (tests/bugs/corpora/p27_p32_blind_round2/p28.py), measured beside the first
from bugs.corpora.p27_p32_blind_round2 import p28 as _second  # noqa: E402
MEASURED = MEASURED + _second.MEASURED
RIGHT = RIGHT + _second.RIGHT
