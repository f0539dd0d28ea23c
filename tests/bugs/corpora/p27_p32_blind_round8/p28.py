"""Blind corpus (round 8 for p27-p32), puzzle 28 (Linear + cross-entropy): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

Z_STORE = """    tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,
             mask=row_ok[:, None] & col_ok[None, :])"""
LSE = "lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))"
ZT = "z_target = tl.sum(tl.load(tile_target_ptr + row * TILES + t, mask=t < TILES, other=0.0), axis=0)"
P = "p = tl.exp(stored + (m - lse)[:, None])"

MEASURED = [
    Bug("phantom_columns", "step",
        (('z = tl.where(col_ok[None, :], acc, -float("inf"))', "z = acc", 1),),
        "mask", "the last tile's columns past V are not switched off: their 0 logits enter the max and the sum",
        accept=("fill",)),
    Bug("x_desc_tile_coords", "step",
        (("x = x_desc.load([tile_m * BLOCK_M, start])", "x = x_desc.load([tile_m, start])", 1),),
        "address", "the descriptor is given the tile number, not the element coordinate, for x's rows"),
    Bug("w_desc_swapped", "step",
        (("w = w_desc.load([tile_n * BLOCK_N, start])", "w = w_desc.load([start, tile_n * BLOCK_N])", 1),),
        "address", "w's block coordinates are swapped (k first): the wrong block of w is read"),
    Bug("partials_transposed", "step",
        (("part = rows * tiles_n + tile_n", "part = tile_n * C + rows", 1),),
        "address", "the tile partials are written [TILES, C] but read as [C, TILES]"),
    Bug("target_share_shifted", "step",
        (("tl.sum(tl.where(hit, acc, 0.0), axis=1)", "tl.sum(tl.where(hit, shifted, 0.0), axis=1)", 1),),
        "formula", "the target's share is its shifted logit z - m, not z: the tile's max is lost from the loss"),
    Bug("z_stored_unshifted", "step",
        ((Z_STORE, Z_STORE.replace(", shifted,", ", z,"), 1),),
        "formula", "z is stored as is, but the cross-entropy kernel adds the tile's max back to it"),
    Bug("z_row_stride_V", "step",
        ((Z_STORE, Z_STORE.replace("* (tiles_n * BLOCK_N)", "* V"), 1),),
        "address", "z's row stride written as V, but z's rows are padded to whole tiles (TILES * BLOCK_N)"),
    Bug("tile_sums_not_rescaled", "step",
        ((LSE, "lse = m_row + tl.log(tl.sum(s_t, axis=0))", 1),),
        "accumulate", "the tiles' sums are added without bringing each from its own max m_t to the row's max"),
    Bug("target_shares_fill_inf", "step",
        ((ZT, ZT.replace("other=0.0", 'other=-float("inf")'), 1),),
        "fill", "the target shares' padded lanes load -inf (copied from the max's load): the sum of shares becomes -inf"),
    Bug("grad_forgets_tile_max", "step",
        ((P, "p = tl.exp(stored - lse)", 1),),
        "formula", "p = exp(stored - lse) forgets that stored is z - m: the tile's max is not added back"),
    Bug("ce_row_stride_V", "step",
        (("z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)", "z_row = z_ptr + row.to(tl.int64) * V", 1),),
        "address", "the cross-entropy kernel's row offset uses V instead of the padded row width TILES * TILE_N"),
    Bug("ce_tiles_from_floor", "step",
        (("for first in range(0, TILES, TILES_PER_STEP):", "for first in range(0, V // TILE_N, TILES_PER_STEP):", 1),),
        "loop", "the gradient walk counts V // TILE_N tiles: the last, partial tile is never turned into a gradient"),
    Bug("matmul_k_overwrites", "step",
        (("acc = tl.dot(a, b, acc)", "acc = tl.dot(a, b)", 1),),
        "accumulate", "the product's K loop overwrites acc instead of adding each block's product"),
    Bug("matmul_AT_coords", "step",
        (("a = a_desc.load([start, tile_m * BLOCK_M]).T", "a = a_desc.load([tile_m * BLOCK_M, start]).T", 1),),
        "address", "for the transposed a (gᵀ), the block is read at (m, k) instead of the stored tensor's (k, m)"),
    Bug("matmul_mask_cols_only", "step",
        (("mask = (rows[:, None] < M) & (cols[None, :] < N)", "mask = cols[None, :] < N", 1),),
        "mask", "the output tile's mask drops the row bound: rows past M are stored"),
    Bug("ignored_row_loss", "step",
        (("tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / n, 0.0))",
          "tl.store(loss_rows_ptr + row, (lse - z_target) / n)", 1),),
        "mask", "an ignored row's loss share is stored too: it adds lse / n to the loss", accept=("formula",)),
    Bug("p_rounded_before_onehot", "step",
        ((P, P + ".to(z_ptr.dtype.element_ty).to(tl.float32)", 1),),
        "precision", "p is rounded to z's dtype before the one-hot is subtracted: a confident target's p - 1 vanishes"),
]

RIGHT = [
    Right("ce_while_loop",
          (("""    for first in range(0, TILES, TILES_PER_STEP):
        tiles = first + tl.arange(0, TILES_PER_STEP)""", """    first = 0
    while first < TILES:
        tiles = first + tl.arange(0, TILES_PER_STEP)""", 1),
           ("        tl.store(z_row + cols, grad, mask=ok)\n", "        tl.store(z_row + cols, grad, mask=ok)\n        first += TILES_PER_STEP\n", 1)),
          "the gradient's tile walk as a while loop"),
    Right("lse_via_log_sums",
          ((LSE, "lse = m_row + tl.log(tl.sum(tl.exp(m_t - m_row + tl.log(s_t)), axis=0))", 1),),
          "each tile's sum moved into the exponent (log s_t); padded tiles give exp(-inf) = 0"),
    Right("target_share_from_shifted",
          (("tl.sum(tl.where(hit, acc, 0.0), axis=1)", "tl.sum(tl.where(hit, shifted + m[:, None], 0.0), axis=1)", 1),),
          "the target's share as (z - m) + m in fp32: the same logit to a rounding"),
    Right("matmul_k_while",
          (("""    for start in range(0, K, BLOCK_K):
        if A_T:""", """    start = 0
    while start < K:
        if A_T:""", 1),
           ("        acc = tl.dot(a, b, acc)\n", "        acc = tl.dot(a, b, acc)\n        start += BLOCK_K\n", 1)),
          "the product's K loop as a while loop"),
]
