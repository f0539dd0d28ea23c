"""Blind corpus (round 10 for p27-p32), puzzle 28 (fused Linear + cross-entropy, chunked): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("phantom_columns_kept", "step",
        (("    z = tl.where(col_ok[None, :], acc, -float(\"inf\"))", "    z = acc", 1),),
        "fill", "the last tile's columns past V keep the product's 0: each adds e^(0 - m) to the tile's sum",
        accept=("mask",)),
    Bug("tile_sum_not_shifted", "step",
        (("    tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)",
          "    tl.store(tile_sum_ptr + part, tl.sum(tl.exp(z), axis=1), mask=row_ok)", 1),),
        "formula", "the tile's sum taken of exp(z), not exp(z - m): the cross-entropy multiplies it by e^(m_t - M) again"),
    Bug("partial_index_without_tile_count", "step",
        (("    part = rows * tiles_n + tile_n", "    part = rows + tile_n", 1),),
        "address", "the partials' slot written rows + tile_n: row r's column tiles collide with row r+1's, [C, TILES] not strided by TILES"),
    Bug("target_share_from_shifted", "step",
        (("    tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok)",
          "    tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, shifted, 0.0), axis=1), mask=row_ok)", 1),),
        "formula", "the target's share taken from the shifted tile z - m: the loss's target logit is short by its tile's max"),
    Bug("z_rows_V_wide", "step",
        (("    tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,",
          "    tl.store(z_ptr + rows[:, None].to(tl.int64) * V + cols[None, :], shifted,", 1),),
        "address", "the shifted logits stored with a row stride of V: z's rows are whole tiles wide (TILES · BLOCK_N)"),
    Bug("tile_sums_not_brought_to_row_max", "step",
        (("    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))", "    lse = m_row + tl.log(tl.sum(s_t, axis=0))", 1),),
        "accumulate", "the tiles' sums added as they are: each is relative to its own tile's max and is not rescaled by e^(m_t - M)"),
    Bug("count_pads_with_zero", "step",
        (("    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)",
          "    target = tl.load(target_ptr + rows, mask=rows < M, other=0)", 1),),
        "fill", "the count's padded lanes load target 0 (a real column), so the lanes past N count as rows: n too large"),
    Bug("tile_max_not_added_back", "step",
        (("        p = tl.exp(stored + (m - lse)[:, None])", "        p = tl.exp(stored - lse)", 1),),
        "formula", "p taken as exp(stored - lse): the stored logits are z - m_t, and the tile's max is not added back"),
    Bug("dloss_left_out", "step",
        (("    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)", "    scale = tl.where(valid, 1.0 / n, 0.0)", 1),),
        "formula", "the gradient scaled by 1/n only, the upstream dloss dropped (dx and dw off by dloss)"),
    Bug("dw_stored_not_added", "step",
        (("    if ACCUMULATE:\n        # dw += this chunk's share: this program is the tile's only writer in this launch, and the\n"
          "        # chunks' launches run one after another on one stream, so a plain read, add and store is\n"
          "        # safe (no atomics), and the order of the sum is fixed (the same bits every run)\n"
          "        acc += tl.load(c_ptrs, mask=mask)\n", "", 1),),
        "accumulate", "the ACCUMULATE branch left out: every chunk stores its dw share over the last one's instead of adding to it"),
    Bug("transposed_operand_coords_not_swapped", "step",
        (("            a = a_desc.load([start, tile_m * BLOCK_M]).T", "            a = a_desc.load([tile_m * BLOCK_M, start]).T", 1),),
        "address", "for gᵀ the block is asked at (row tile, k) as for g: the stored tensor is [K, M], its coordinates are (k, m)"),
    Bug("output_row_stride_K", "step",
        (("    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]",
          "    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * K + cols[None, :]", 1),),
        "address", "the product's output rows strided by K (the reduction length) instead of N, c's width"),
    Bug("descriptor_coords_in_tiles", "step",
        (("        x = x_desc.load([tile_m * BLOCK_M, start])\n        w = w_desc.load([tile_n * BLOCK_N, start])",
          "        x = x_desc.load([tile_m, start // BLOCK_K])\n        w = w_desc.load([tile_n, start // BLOCK_K])", 1),),
        "address", "the logits product asks its descriptors for blocks by tile number: the coordinates are elements"),
    Bug("last_group_not_clamped", "step",
        (("    group_m = tl.minimum(tiles_m - first_m, GROUP_M)", "    group_m = GROUP_M", 1),),
        "address", "the last group of row tiles taken as GROUP_M tall: where fewer are left, programs map to tiles past the end and some tiles are never computed",
        accept=("loop",)),
    Bug("partials_read_past_tiles", "step",
        (("    m_t = tl.load(tile_max_ptr + row * TILES + t, mask=t < TILES, other=-float(\"inf\"))\n"
          "    s_t = tl.load(tile_sum_ptr + row * TILES + t, mask=t < TILES, other=0.0)",
          "    m_t = tl.load(tile_max_ptr + row * TILES + t)\n"
          "    s_t = tl.load(tile_sum_ptr + row * TILES + t)", 1),),
        "mask", "the row's partials loaded on all BLOCK_T lanes: past TILES they are the next row's partials (past the end on the last row)"),
    Bug("gradient_tiles_floor", "step",
        (("    for first in range(0, TILES, TILES_PER_STEP):", "    for first in range(0, V // TILE_N, TILES_PER_STEP):", 1),),
        "loop", "the gradient walk counts V // TILE_N tiles: the partial last column tile of each row keeps its shifted logits"),
    Bug("z_unshifted_in_bf16", "step",
        (("    tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,",
          "    tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], z,", 1),
         ("        p = tl.exp(stored + (m - lse)[:, None])", "        p = tl.exp(stored - lse)", 1)),
        "precision", "the raw logits z stored in x's dtype and p = exp(z - lse): in bf16 a logit near 7 keeps too few digits"),
]

RIGHT = [
    Right("row_major_tiles",
          (Kernel("grouped_tile", '''
@triton.jit
def grouped_tile(pid, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Program pid's (row tile, column tile), row by row (no grouping: slower in L2, the same tiles)."""
    return pid // tiles_n, pid % tiles_n
'''),),
          "the products' programs mapped row-major instead of in groups"),
    Right("target_share_from_shifted_plus_max",
          (("    tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok)",
            "    tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, shifted + m[:, None], 0.0), axis=1), mask=row_ok)", 1),),
          "the target's share taken from the fp32 shifted tile plus its max (the same fp32 value, to rounding)"),
    Right("accumulate_into_start",
          (("    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)\n    for start in range(0, K, BLOCK_K):",
            "    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)\n    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
            "    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]\n"
            "    mask = (rows[:, None] < M) & (cols[None, :] < N)\n"
            "    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)\n"
            "    if ACCUMULATE:\n        acc += tl.load(c_ptrs, mask=mask, other=0.0)\n"
            "    for start in range(0, K, BLOCK_K):", 1),
           ("    if ACCUMULATE:\n        # dw += this chunk's share", "    if False:\n        # dw += this chunk's share", 1)),
          "the product starts its accumulator from c's current tile when ACCUMULATE, instead of adding it after the loop"),
    Right("gradient_tiles_while_loop",
          (("    for first in range(0, TILES, TILES_PER_STEP):\n", "    first = 0\n    while first < TILES:\n", 1),
           ("        tl.store(z_row + cols, grad, mask=ok)\n", "        tl.store(z_row + cols, grad, mask=ok)\n        first += TILES_PER_STEP\n", 1)),
          "the gradient walk over the column tiles written as a while loop"),
    Right("lse_via_exp_of_logs",
          (("    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))",
            "    lse = m_row + tl.log(tl.sum(tl.exp(m_t - m_row + tl.log(s_t)), axis=0))", 1),),
          "each tile's term written exp(m_t + log s_t - M): the same sum (padded tiles: exp(-inf) = 0)"),
]
