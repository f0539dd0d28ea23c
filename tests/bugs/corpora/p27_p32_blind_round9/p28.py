"""Blind corpus (round 9 for p27-p32), puzzle 28 (Linear + cross-entropy, chunked): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("phantom_columns", "step",
        (('    z = tl.where(col_ok[None, :], acc, -float("inf"))\n', "    z = acc\n", 1),),
        "mask", "the last tile's columns past V (zeros) are kept as logits: each adds exp(0 - m) to the tile's sum", ("fill",)),
    Bug("x_desc_tile_number", "step",
        (("x = x_desc.load([tile_m * BLOCK_M, start])", "x = x_desc.load([tile_m, start])", 1),),
        "address", "the descriptor given the tile number, not the element offset tile_m * BLOCK_M"),
    Bug("w_desc_coords_swapped", "step",
        (("w = w_desc.load([tile_n * BLOCK_N, start])", "w = w_desc.load([start, tile_n * BLOCK_N])", 1),),
        "address", "w's block coordinates in (k, n) order: w is stored [V, H], its rows are the vocabulary"),
    Bug("logits_acc_overwritten", "step",
        (("        acc = tl.dot(x, w.T, acc)\n", "        acc = tl.dot(x, w.T)\n", 1),),
        "accumulate", "the logits tile overwritten by each K block's product instead of accumulated"),
    Bug("tile_sum_not_shifted", "step",
        (("tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)",
          "tl.store(tile_sum_ptr + part, tl.sum(tl.exp(z), axis=1), mask=row_ok)", 1),),
        "formula", "the tile's sum is Σ exp(z), not Σ exp(z - m): it no longer matches the max it is combined with"),
    Bug("partial_index_row_stride", "step",
        (("    part = rows * tiles_n + tile_n\n", "    part = rows * BLOCK_N + tile_n\n", 1),),
        "address", "the partials' row stride taken as BLOCK_N instead of the number of tiles"),
    Bug("z_row_stride_V", "step",
        (("tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,",
          "tl.store(z_ptr + rows[:, None].to(tl.int64) * V + cols[None, :], shifted,", 1),),
        "address", "z's rows stored V apart, but z's rows are padded to whole tiles (TILES * BLOCK_N)"),
    Bug("target_share_shifted", "step",
        (("tl.sum(tl.where(hit, acc, 0.0), axis=1)", "tl.sum(tl.where(hit, shifted, 0.0), axis=1)", 1),),
        "formula", "the target's share taken from z - m, the tile's max subtracted, while lse is absolute"),
    Bug("lse_tiles_not_rescaled", "step",
        (("lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))", "lse = m_row + tl.log(tl.sum(s_t, axis=0))", 1),),
        "accumulate", "the tiles' sums added without exp(m_t - M): each is relative to its own max"),
    Bug("tile_sums_unmasked", "step",
        (("s_t = tl.load(tile_sum_ptr + row * TILES + t, mask=t < TILES, other=0.0)", "s_t = tl.load(tile_sum_ptr + row * TILES + t)", 1),),
        "mask", "the tile sums loaded without t < TILES: the padded lanes read the next row's partials"),
    Bug("loss_not_averaged", "step",
        (("tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / n, 0.0))", "tl.store(loss_rows_ptr + row, tl.where(valid, lse - z_target, 0.0))", 1),),
        "formula", "the row's loss share not divided by n: the loss is a sum, not the mean"),
    Bug("p_without_tile_max", "step",
        (("p = tl.exp(stored + (m - lse)[:, None])", "p = tl.exp(stored - lse)", 1),),
        "formula", "p = exp(stored - lse): the stored logits are z - m, the tile's max not added back"),
    Bug("grad_tiles_step_one", "step",
        (("for first in range(0, TILES, TILES_PER_STEP):", "for first in range(0, TILES):", 1),),
        "loop", "the gradient loop steps by one tile while handling TILES_PER_STEP: tiles are turned into gradients twice"),
    Bug("ce_row_stride_V", "step",
        (("z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)", "z_row = z_ptr + row.to(tl.int64) * V", 1),),
        "address", "the cross-entropy finds row r of z at r * V, not r * TILES * TILE_N"),
    Bug("dw_not_accumulated", "step",
        (("        acc += tl.load(c_ptrs, mask=mask)\n", "        pass\n", 1),),
        "accumulate", "ACCUMULATE ignored: each chunk's dw share overwrites the earlier chunks'"),
    Bug("a_t_coords_unswapped", "step",
        (("a = a_desc.load([start, tile_m * BLOCK_M]).T", "a = a_desc.load([tile_m * BLOCK_M, start]).T", 1),),
        "address", "with A_T the stored tensor is [K, M]: its block coordinates are (k, m), not (m, k)"),
    Bug("c_row_stride_K", "step",
        (("c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]", "c_ptrs = c_ptr + rows[:, None].to(tl.int64) * K + cols[None, :]", 1),),
        "address", "the output's row stride taken as K instead of N"),
]

RIGHT = [
    Right("target_from_shifted_plus_max",
          (("tl.sum(tl.where(hit, acc, 0.0), axis=1)", "tl.sum(tl.where(hit, shifted + m[:, None], 0.0), axis=1)", 1),),
          "the target's logit rebuilt as (z - m) + m from the shifted tile"),
    Right("epilogue_masks_sum",
          (('    z = tl.where(col_ok[None, :], acc, -float("inf"))\n    m = tl.max(z, axis=1)\n    shifted = z - m[:, None]\n',
            '    m = tl.max(tl.where(col_ok[None, :], acc, -float("inf")), axis=1)\n    shifted = acc - m[:, None]\n', 1),
           ("tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)",
            "tl.store(tile_sum_ptr + part, tl.sum(tl.where(col_ok[None, :], tl.exp(shifted), 0.0), axis=1), mask=row_ok)", 1)),
          "the columns past V masked in the max and in the sum instead of set to -inf (never stored anyway)"),
    Right("ce_one_tile_at_a_time",
          (("""    for first in range(0, TILES, TILES_PER_STEP):
        tiles = first + tl.arange(0, TILES_PER_STEP)
        m = tl.load(tile_max_ptr + row * TILES + tiles, mask=tiles < TILES, other=-float("inf"))
        cols = tiles[:, None] * TILE_N + tl.arange(0, TILE_N)[None, :]
        ok = cols < V  # also false in every tile past the last
        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)
        p = tl.exp(stored + (m - lse)[:, None])
""", """    for tile in range(0, TILES):
        m = tl.load(tile_max_ptr + row * TILES + tile)
        cols = tile * TILE_N + tl.arange(0, TILE_N)
        ok = cols < V
        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)
        p = tl.exp(stored + (m - lse))
""", 1),),
          "the gradient pass walks one column tile at a time, its max a scalar"),
    Right("matmul_starts_from_c", (Kernel("chunk_matmul_kernel", '''
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
        acc = tl.load(c_ptrs, mask=mask, other=0.0).to(tl.float32)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    k = 0
    while k < K:
        if A_T:
            a = tl.trans(a_desc.load([k, tile_m * BLOCK_M]))
        else:
            a = a_desc.load([tile_m * BLOCK_M, k])
        b = b_desc.load([k, tile_n * BLOCK_N])
        acc += tl.dot(a, b)
        k += BLOCK_K
    tl.store(c_ptrs, acc, mask=mask)
'''),),
          "the accumulator starts from c's tile when ACCUMULATE, a while loop over K, the product added with +="),
]
