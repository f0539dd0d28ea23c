"""Fourth blind corpus, puzzle 28 (Linear + cross-entropy, chunked): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_COUNT = "    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)\n"
_TILE_M = "    tile_m = first_m + (pid % per_group) % group_m\n"
_PART = "    part = rows * tiles_n + tile_n\n"
_MAX_STORE = "    tl.store(tile_max_ptr + part, m, mask=row_ok)\n"
_SUM_STORE = "    tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)\n"
_TARGET_STORE = "    tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok)\n"
_M_T = "    m_t = tl.load(tile_max_ptr + row * TILES + t, mask=t < TILES, other=-float(\"inf\"))\n"
_LSE = "    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))\n"
_SCALE = "    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)\n"
_Z_TARGET = "    z_target = tl.sum(tl.load(tile_target_ptr + row * TILES + t, mask=t < TILES, other=0.0), axis=0)\n"
_LOSS = "    tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / n, 0.0))\n"
_WALK_HEAD = "    for first in range(0, TILES, TILES_PER_STEP):\n"
_WALK_M = "        m = tl.load(tile_max_ptr + row * TILES + tiles, mask=tiles < TILES, other=-float(\"inf\"))\n"
_WALK_P = "        p = tl.exp(stored + (m - lse)[:, None])\n"
_GRAD = "        grad = tl.where(cols == target, p - 1.0, p) * scale\n"
_K_LOOP = "    for start in range(0, K, BLOCK_K):\n"
_C_MASK = "    mask = (rows[:, None] < M) & (cols[None, :] < N)\n"
_C_TAIL = "        acc += tl.load(c_ptrs, mask=mask)\n    tl.store(c_ptrs, acc, mask=mask)\n"

MEASURED = [
    Bug("count_rows_documented_20", "step",
        ((_COUNT, _COUNT.replace("mask=rows < M", "mask=rows < 20"), 1),),
        "hardcoded", "the count kernel's mask rows < 20 (the documented N) instead of rows < N: with other batch sizes n counts the wrong rows",
        notes="shows only where N != 20"),
    Bug("tile_m_without_group_offset", "step",
        ((_TILE_M, "    tile_m = (pid % per_group) % group_m\n", 1),),
        "address", "the grouped order's row tile leaves out the group's first row tile first_m: every group computes the first group's rows, the later row tiles are never computed",
        notes="shows only where a product has more row tiles than GROUP_M"),
    Bug("partials_at_row_tile_slot", "step",
        ((_PART, "    part = rows * tiles_n + tile_m\n", 1),),
        "address", "the partials' slot uses tile_m (the row tile) where the column tile tile_n belongs: every column tile of a row writes the same slot"),
    Bug("tile_max_rounded_to_bf16", "step",
        ((_MAX_STORE, "    tl.store(tile_max_ptr + part, m.to(tl.bfloat16), mask=row_ok)\n", 1),),
        "precision", "each tile's max rounded to bf16 before it is stored in the fp32 buffer: z − m was shifted by the exact m, so z = stored + m comes back off by m's rounding",
        notes="fp32 cases only, where the maxima are not small"),
    Bug("tile_sum_as_ratio_of_exps", "step",
        ((_SUM_STORE, "    tl.store(tile_sum_ptr + part, tl.sum(tl.exp(z), axis=1) / tl.exp(m), mask=row_ok)\n", 1),),
        "stability", "the tile's sum written Σ exp(z) / exp(m): logits above about 88 overflow (inf / inf), below about −100 underflow (0 / 0), NaN either way",
        notes="shows only with logits far from 0"),
    Bug("maxima_pad_with_zero", "step",
        ((_M_T, _M_T.replace("other=-float(\"inf\")", "other=0.0"), 1),),
        "fill", "the tile maxima's padded lanes load 0.0: where every logit is far below 0 the row max becomes 0, exp(m_t − 0) underflows and lse is −inf",
        notes="shows only with all logits far below 0 and a tile count that is not a power of two"),
    Bug("target_shares_combined_by_max", "step",
        ((_Z_TARGET, _Z_TARGET.replace("z_target = tl.sum(", "z_target = tl.max("), 1),),
        "formula", "the tiles' target shares combined with max instead of sum: the other tiles' 0 wins wherever the target's logit is negative"),
    Bug("mean_over_the_chunk_rows", "step",
        ((_SCALE, "    scale = tl.where(valid, tl.load(dloss_ptr) / tl.num_programs(0), 0.0)\n", 1),
         (_LOSS, "    tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / tl.num_programs(0), 0.0))\n", 1)),
        "formula", "the mean divided by the chunk's row count (the grid size) instead of n, the counted rows of the whole batch"),
    Bug("lse_cached_in_tile_max", "step",
        ((_LSE, _LSE + "    tl.store(tile_max_ptr + row * TILES, lse)  # kept in the row's first slot for later\n", 1),),
        "inplace", "the row's lse stored over its first tile's max: the walk then reads lse as tile 0's max, and its gradients come out as exp(stored) instead of exp(stored + m − lse)"),
    Bug("step_uses_first_tiles_max", "step",
        ((_WALK_M, "        m = tl.load(tile_max_ptr + row * TILES + first) + tl.zeros([TILES_PER_STEP], dtype=tl.float32)\n", 1),),
        "address", "the walk loads one max per step (the step's first tile's) and gives it to every tile of the step: the other tiles' shifted logits are restored with the wrong max",
        notes="shows only where a step holds more than one real tile"),
    Bug("p_normalised_per_tile", "step",
        ((_WALK_P, "        s = tl.load(tile_sum_ptr + row * TILES + tiles, mask=tiles < TILES, other=1.0)\n"
                   "        p = tl.exp(stored) / s[:, None]\n", 1),),
        "formula", "p = exp(z − m_t) / s_t, each tile's own softmax, instead of exp(z − lse), the softmax over the whole row",
        notes="shows only where V spans more than one column tile"),
    Bug("walk_steps_one_tile", "step",
        ((_WALK_HEAD, "    for first in range(0, TILES):\n", 1),),
        "loop", "the gradient walk steps one tile while each step covers TILES_PER_STEP tiles: the walk writes in place, so the overlapping steps read gradients back as logits",
        notes="shows only where there are more tiles than one step"),
    Bug("walk_steps_documented_2", "step",
        ((_WALK_HEAD, "    for first in range(0, TILES, 2):\n", 1),),
        "hardcoded", "the gradient walk steps 2 tiles (the default TILES_PER_STEP) while each step covers TILES_PER_STEP: with more tiles a step, tiles are turned into gradients twice",
        notes="shows only where TILES_PER_STEP != 2"),
    Bug("walk_maxima_load_unmasked", "step",
        ((_WALK_M, "        m = tl.load(tile_max_ptr + row * TILES + tiles)\n", 1),),
        "mask", "the walk loads the tile maxima without the tiles < TILES mask: the last step's padded tiles read the next row's maxima, and past the buffer on the last row",
        notes="the stray maxima meet masked-off columns: the out-of-bounds read itself is the fault (TILES not a multiple of TILES_PER_STEP)"),
    Bug("matmul_store_mask_swapped", "step",
        ((_C_MASK, "    mask = (rows[:, None] < N) & (cols[None, :] < M)\n", 1),),
        "mask", "the product's mask compares rows with N and columns with M (swapped): edge tiles drop real elements or write past the rows"),
    Bug("matmul_k_loop_starts_at_block_k", "step",
        ((_K_LOOP, "    for start in range(BLOCK_K, K, BLOCK_K):\n", 1),),
        "loop", "the gradient products' K loop starts at BLOCK_K: the first BLOCK_K terms of every dot product (the first chunk rows of dw, the first vocabulary columns of dx) are left out"),
    Bug("dx_accumulated_too", "step",
        ((_C_TAIL, "        pass\n    acc += tl.load(c_ptrs, mask=mask)  # add to what c holds\n    tl.store(c_ptrs, acc, mask=mask)\n", 1),),
        "accumulate", "the product always adds what c holds, whatever ACCUMULATE says: dx and the first chunk's dw add to uninitialised memory"),
    Bug("dw_share_rounded_to_bf16", "step",
        (("    tl.store(c_ptrs, acc, mask=mask)\n", "    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=mask)\n", 1),),
        "precision", "the product's fp32 tile rounded to bf16 before the store: fp32 dx and the fp32 dw sum keep 8 bits at every chunk",
        notes="fp32 dx and dw; in bf16 cases dw only"),
]

_COLUMN_GROUPS = '''
@triton.jit
def grouped_tile(pid, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Groups of GROUP_M column tiles, the row tiles walked inside each group (a bijection too)."""
    per_group = GROUP_M * tiles_m
    first_n = (pid // per_group) * GROUP_M
    group_n = tl.minimum(tiles_n - first_n, GROUP_M)
    tile_n = first_n + (pid % per_group) % group_n
    tile_m = (pid % per_group) // group_n
    return tile_m, tile_n
'''

RIGHT = [
    Right("column_grouped_tiles", (Kernel("grouped_tile", _COLUMN_GROUPS),),
          "the tile order grouped by GROUP_M column tiles instead of row tiles"),
    Right("walk_last_step_first",
          ((_WALK_HEAD, "    steps = tl.cdiv(TILES, TILES_PER_STEP)\n"
                        "    for j in range(0, steps):\n"
                        "        first = (steps - 1 - j) * TILES_PER_STEP\n", 1),),
          "the gradient walk takes its steps last first"),
    Right("epilogue_masks_the_exponentials",
          (("    shifted = z - m[:, None]\n", "    shifted = acc - m[:, None]  # the padded columns: masked in the sum and the store\n", 1),
           (_SUM_STORE, "    tl.store(tile_sum_ptr + part, tl.sum(tl.where(col_ok[None, :], tl.exp(shifted), 0.0), axis=1), mask=row_ok)\n", 1)),
          "the epilogue shifts the raw tile and masks the padded columns' exponentials to 0 in the sum (the max still from the -inf-masked tile)"),
    Right("one_hot_subtracted_scaled",
          ((_GRAD, "        grad = p * scale - tl.where(cols == target, scale, 0.0)\n", 1),),
          "the gradient as p · scale minus scale at the target"),
    Right("target_share_by_masked_max",
          ((_TARGET_STORE, "    share = tl.max(tl.where(hit, acc, -float(\"inf\")), axis=1)\n"
                           "    tl.store(tile_target_ptr + part, tl.where(share == -float(\"inf\"), 0.0, share), mask=row_ok)\n", 1),),
          "the target's share picked with a max over -inf elsewhere, 0 where the tile does not hold it"),
]
