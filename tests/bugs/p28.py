"""Every known kernel of puzzle 28 (fused Linear + cross-entropy, chunked): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING), the mutants no
check can catch (EQUIVALENT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
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

PINNED = [
    Bug("shift_not_added_back", "step",
        ((P, "        p = tl.exp(stored - lse)\n", 1),),
        cause="formula",
        reasons=(("must add m_t back",),),
        not_causes=("atomic",),
        notes="the epilogue stores z − m_t, and the cross-entropy takes exp(stored − lse): every tile's p is "
              "exp(−m_t) off; the loss (from the partials) stays right"),
    Bug("logits_stored_unshifted", "step",
        ((SHIFTED_STORE, SHIFTED_STORE.replace("shifted,", "acc,"), 1),),
        cause="formula",
        reasons=(("Store z − m_t",),),
        not_causes=("atomic",),
        notes="the lab's first version: z stored as it is, but the cross-entropy still adds m_t back"),
    Bug("padded_columns_in_the_tile_statistics", "step",
        ((EPILOGUE_MASK, "    z = acc\n", 1),),
        cause="fill",
        reasons=(("padded column",),),
        not_causes=("atomic",),
        notes="the columns past V hold the product's 0 (w's rows past V arrive as zeros): each adds exp(0 − m) "
              "to the last tile's sum, and 0 may become its max"),
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
        notes="the target's logit read from z − m_t: the loss is off by m_t per row; dx and dW stay right"),
    Bug("dw_overwritten_per_chunk", "step",
        ((ADD, "        acc = acc * 1.0\n", 1),),
        cause="accumulate",
        reasons=(("last chunk's share alone",),),
        not_causes=("atomic",),
        notes="each chunk stores its share of dW over the previous ones: right while N fits one chunk"),
    Bug("dw_added_from_the_first_chunk", "step",
        (("    if ACCUMULATE:\n", "    if True:\n", 1),),
        cause="accumulate", named="candidates",
        reasons=(("where nothing had been written",), ("dw",)),
        not_causes=("atomic",),
        notes="the product adds to what c holds whatever ACCUMULATE says: dw is not zeroed (the checker hands it "
              "over as NaN, as a GPU's torch.empty holds garbage), and dx, never added to, is NaN too"),
    Bug("minus_one_after_rounding_to_bf16", "step",
        ((GRAD, "        grad = tl.where(cols == target, p.to(z_ptr.dtype.element_ty).to(tl.float32) - 1.0, p) * scale\n",
          1),),
        cause="precision",
        reasons=(("bf16 confident rows",), ("before the − 1",)),
        not_causes=("atomic",),
        notes="puzzle 27's lesson: p_target = 1 − 1e-4 rounds to 1.0 in bf16 and the target's gradient to 0; "
              "in fp32 the cast changes nothing, so only the bf16 confident case fails"),
    Bug("ignored_rows_not_zeroed", "step",
        ((SCALE, "    scale = tl.load(dloss_ptr) / n\n", 1),),
        cause="mask",
        reasons=(("ignored rows",),),
        not_causes=("atomic",),
        notes="an ignored row's gradient row keeps softmax · dloss / n; its loss share is still 0"),
    Bug("transposed_operand_coordinates_swapped", "step",
        ((A_T_LOAD, "            a = a_desc.load([tile_m * BLOCK_M, start]).T\n", 1),),
        cause="address", named="none",
        reasons=(("dw",),),
        not_causes=("atomic",),
        notes="gᵀ's block at (m, k) is g's [BLOCK_K, BLOCK_M] block at (k, m): loaded at (m, k), it is "
              "another part of g (or the zeros past its edge)"),
    Bug("partials_not_rescaled", "step",
        ((LSE, "    lse = m_row + tl.log(tl.sum(s_t, axis=0))\n", 1),),
        cause="formula",
        reasons=(("bring it to the row's max",),),
        not_causes=("atomic",),
        notes="each tile's s_t is relative to its own max: right only where every tile's max is the row's"),
    Bug("mean_over_all_rows", "step",
        ((COUNT, "tl.sum((rows < M).to(tl.int32), axis=0)", 1),),
        cause="formula", named="candidates",
        reasons=(("mean over all N rows",), ("ignored rows",)),
        not_causes=("atomic",)),
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
