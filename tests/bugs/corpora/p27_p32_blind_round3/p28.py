"""Third blind corpus, puzzle 28 (Linear + cross-entropy, chunked): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_LSE = "    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))\n"
_Z_TARGET = "    z_target = tl.sum(tl.load(tile_target_ptr + row * TILES + t, mask=t < TILES, other=0.0), axis=0)\n"
_GRAD = "        grad = tl.where(cols == target, p - 1.0, p) * scale\n"
_WALK = ("    for first in range(0, TILES, TILES_PER_STEP):\n"
         "        tiles = first + tl.arange(0, TILES_PER_STEP)\n"
         "        m = tl.load(tile_max_ptr + row * TILES + tiles, mask=tiles < TILES, other=-float(\"inf\"))\n"
         "        cols = tiles[:, None] * TILE_N + tl.arange(0, TILE_N)[None, :]\n"
         "        ok = cols < V  # also false in every tile past the last\n"
         "        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)\n"
         "        p = tl.exp(stored + (m - lse)[:, None])\n"
         "        grad = tl.where(cols == target, p - 1.0, p) * scale\n"
         "        tl.store(z_row + cols, grad, mask=ok)\n")

MEASURED = [
    Bug("epilogue_masks_rows_not_columns", "step",
        (("    z = tl.where(col_ok[None, :], acc, -float(\"inf\"))\n", "    z = tl.where(row_ok[:, None], acc, -float(\"inf\"))\n", 1),),
        "mask", "the epilogue's -inf mask uses the row mask instead of the column mask: the last tile's columns past V stay 0 and enter the max and the sum",
        notes='shows only where V is not a multiple of the column tile'),
    Bug("target_shares_padded_with_minus_inf", "step",
        ((_Z_TARGET, _Z_TARGET.replace("other=0.0", "other=-float(\"inf\")"), 1),),
        "fill", "the per-tile target shares load -inf in their padded lanes (copied from the maxima's load): summed, the target's logit becomes -inf",
        notes='shows only where the tile count is not a power of two'),
    Bug("walk_in_whole_steps_only", "step",
        (("    for first in range(0, TILES, TILES_PER_STEP):\n",
          "    for first in range(0, TILES - TILES_PER_STEP + 1, TILES_PER_STEP):\n", 1),),
        "loop", "the gradient walk stops where a whole step of TILES_PER_STEP tiles no longer fits: a last partial step's tiles keep their shifted logits instead of gradients",
        notes='shows only where TILES is not a multiple of TILES_PER_STEP'),
    Bug("lse_as_max_of_tile_lses", "step",
        ((_LSE, "    lse = tl.max(m_t + tl.log(s_t), axis=0)\n", 1),),
        "formula", "the row's lse taken as the largest of the tiles' logsumexps instead of the logsumexp of them: the other tiles' mass is dropped",
        notes='shows only where V spans more than one column tile'),
    Bug("dloss_read_per_row", "step",
        (("scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)", "scale = tl.where(valid, tl.load(dloss_ptr + row) / n, 0.0)", 1),),
        "address", "the upstream gradient read at dloss_ptr + row, as if it had one entry per row: dloss is one number, rows past 0 read past it"),
    Bug("accumulate_load_unmasked", "step",
        (("        acc += tl.load(c_ptrs, mask=mask)\n", "        acc += tl.load(c_ptrs)\n", 1),),
        "mask", "dW's earlier value loaded without the mask when adding the chunk's share: the edge tiles read past dW's rows and columns",
        notes='the stray values land in lanes the store masks off: the out-of-bounds read itself is the fault'),
    Bug("a_block_not_transposed", "step",
        (("            a = a_desc.load([start, tile_m * BLOCK_M]).T\n", "            a = a_desc.load([start, tile_m * BLOCK_M])\n", 1),),
        "address", "the [BLOCK_K, BLOCK_M] block of gᵀ used as it is loaded, without the .T: dW's product takes its operand transposed",
        notes='wrong values where BLOCK_M == BLOCK_K, a shape error otherwise'),
    Bug("group_start_not_scaled", "step",
        (("    first_m = (pid // per_group) * GROUP_M\n", "    first_m = pid // per_group\n", 1),),
        "address", "the group's first row tile is the group number itself, not group · GROUP_M: groups after the first overlap and the last row tiles are never computed",
        notes='shows only where a product has more row tiles than GROUP_M'),
    Bug("tiles_of_the_documented_v", "step",
        (("    tiles_n = tl.cdiv(V, BLOCK_N)\n    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(C, BLOCK_M), tiles_n, GROUP_M)\n    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)\n    for start in range(0, H, BLOCK_K):  # descriptor",
          "    tiles_n = tl.cdiv(40, BLOCK_N)\n    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(C, BLOCK_M), tiles_n, GROUP_M)\n    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)\n    for start in range(0, H, BLOCK_K):  # descriptor", 1),),
        "hardcoded", "the logits kernel's column tile count computed from 40, the documented V: other vocabularies get the wrong tiles, slots and row width",
        notes='shows only where cdiv(V, TILE_N) differs from cdiv(40, TILE_N)'),
    Bug("ignored_targets_zeroed_in_place", "step",
        (("    tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))\n",
          "    tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))\n"
          "    # ignored rows get class 0, so that later gathers stay inside the row\n"
          "    tl.store(target_ptr + rows, tl.where(target == ignore_index, 0, target), mask=rows < M)\n", 1),),
        "inplace", "the count kernel rewrites ignored targets as 0 in the target tensor: an input changed, and the ignored rows then count as class 0 in the loss and gradient",
        notes='only the cases with ignored rows change the values; the write to an input shows everywhere'),
    Bug("z_rounded_to_bf16_always", "step",
        (("cols[None, :], shifted,\n", "cols[None, :], shifted.to(tl.bfloat16),\n", 1),),
        "precision", "the shifted logits rounded to bf16 before the store whatever x's dtype (the book keeps them in x's dtype): fp32 cases lose digits in p and the gradient",
        notes='fp32 cases only (a no-op in bf16)'),
    Bug("tile_sum_shift_applied_after_exp", "step",
        (("tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)",
          "tl.store(tile_sum_ptr + part, tl.sum(tl.exp(z), axis=1) * tl.exp(-m), mask=row_ok)", 1),),
        "stability", "the tile's sum taken as Σ exp(z) · exp(−m), the shift applied after the exponential: large logits overflow to inf, very negative ones to 0 · inf",
        notes='shows only with large or very negative logits'),
    Bug("gradient_only_at_target", "step",
        ((_GRAD, "        grad = tl.where(cols == target, p - 1.0, 0.0) * scale\n", 1),),
        "formula", "the gradient kept at the target column only (p − 1) and zero elsewhere: softmax's p is the gradient of every other column"),
    Bug("shift_subtracted_the_wrong_way", "step",
        (("    shifted = z - m[:, None]\n", "    shifted = m[:, None] - z\n", 1),),
        "formula", "the epilogue shifts by m − z instead of z − m: the exponentials grow instead of staying at most 1, the sum and the stored logits are wrong"),
    Bug("matmul_k_steps_block_n", "step",
        (("    for start in range(0, K, BLOCK_K):\n        if A_T:", "    for start in range(0, K, BLOCK_N):\n        if A_T:", 1),),
        "loop", "the gradient products' reduction steps BLOCK_N while each load covers BLOCK_K: with BLOCK_N > BLOCK_K part of the reduction is skipped",
        notes='shows only where TILE_N != TILE_K'),
    Bug("accumulator_added_twice", "step",
        (("        acc = tl.dot(x, w.T, acc)\n", "        acc += tl.dot(x, w.T, acc)\n", 1),),
        "accumulate", "the logits' K loop writes acc += dot(x, wᵀ, acc): the dot already adds acc, so the earlier blocks are counted twice, then four times",
        notes='shows only where H spans more than one K block'),
    Bug("product_stored_transposed", "step",
        (("    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]\n",
          "    c_ptrs = c_ptr + cols[None, :].to(tl.int64) * M + rows[:, None]\n", 1),),
        "address", "the gradient products store c[r, c] at c · M + r (column-major): dx and dW come out transposed in memory"),
    Bug("x_block_at_column_tile", "step",
        (("        x = x_desc.load([tile_m * BLOCK_M, start])\n", "        x = x_desc.load([tile_n * BLOCK_M, start])\n", 1),),
        "address", "the logits kernel loads x's rows at the column tile's index (tile_n) instead of the row tile's: each column tile multiplies another block of rows",
        notes='shows only where V spans more than one column tile'),
]

_WALK_TILE_BY_TILE = (
    "    for t1 in range(0, TILES):\n"
    "        m = tl.load(tile_max_ptr + row * TILES + t1)\n"
    "        cols = t1 * TILE_N + tl.arange(0, TILE_N)\n"
    "        ok = cols < V\n"
    "        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)\n"
    "        p = tl.exp(stored + (m - lse))\n"
    "        grad = tl.where(cols == target, p - 1.0, p) * scale\n"
    "        tl.store(z_row + cols, grad, mask=ok)\n")

RIGHT = [
    Right("lse_of_tile_lses",
          ((_LSE, "    lse = m_row + tl.log(tl.sum(tl.exp(m_t + tl.log(s_t) - m_row), axis=0))\n", 1),),
          "lse combined from each tile's own logsumexp m_t + log s_t, shifted by the row's max"),
    Right("walk_tile_by_tile",
          ((_WALK, _WALK_TILE_BY_TILE, 1),),
          "the gradient walk takes one column tile per step, its max loaded as a single number"),
    Right("logits_k_loop_counts_blocks",
          (("    for start in range(0, H, BLOCK_K):  # descriptor coordinates are elements, not tile numbers\n",
            "    for kb in range(0, tl.cdiv(H, BLOCK_K)):\n        start = kb * BLOCK_K\n", 1),),
          "the logits' K loop counts K blocks and turns each into its element coordinate"),
    Right("target_hit_by_local_index",
          (("    hit = cols[None, :] == target[:, None]\n",
            "    hit = tl.arange(0, BLOCK_N)[None, :] == (target - tile_n * BLOCK_N)[:, None]\n", 1),),
          "the target's column found by its index inside the tile (target − tile_n · BLOCK_N) against the tile's lanes"),
    Right("p_in_base_2",
          (("        p = tl.exp(stored + (m - lse)[:, None])\n",
            "        p = tl.exp2((stored + (m - lse)[:, None]) * 1.4426950408889634)\n", 1),),
          "the gradient walk's exponential as exp2 with log2(e) folded in"),
]
