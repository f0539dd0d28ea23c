"""Blind corpus (round 6 for p27-p32), puzzle 28 (fused Linear + cross-entropy, chunked): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_Z_INF = "    z = tl.where(col_ok[None, :], acc, -float(\"inf\"))\n"
_X_LOAD = "        x = x_desc.load([tile_m * BLOCK_M, start])\n"
_PART = "    part = rows * tiles_n + tile_n\n"
_TGT = "    target = tl.load(target_ptr + rows, mask=row_ok, other=-1)  # padded rows store nothing\n"
_HIT = "    hit = cols[None, :] == target[:, None]\n"
_SHARE = "    tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok)\n"
_Z_STORE = ("    tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,\n"
            "             mask=row_ok[:, None] & col_ok[None, :])\n")
_LSE = "    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))\n"
_SCALE = "    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)\n"
_ZROW = "    z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)\n"
_P = "        p = tl.exp(stored + (m - lse)[:, None])\n"
_CE_LOOP = ("    for first in range(0, TILES, TILES_PER_STEP):\n"
            "        tiles = first + tl.arange(0, TILES_PER_STEP)\n")
_ACC_LOAD = "        acc += tl.load(c_ptrs, mask=mask)\n"
_MM_MASK = "    mask = (rows[:, None] < M) & (cols[None, :] < N)\n"
_A_T = "            a = a_desc.load([start, tile_m * BLOCK_M]).T\n"

_CE_TILE_BY_TILE = '''
@triton.jit
def chunk_ce_kernel(z_ptr, tile_max_ptr, tile_sum_ptr, tile_target_ptr, target_ptr, dloss_ptr, n_valid_ptr,
                    loss_rows_ptr, V, TILES, ignore_index, TILE_N: tl.constexpr, BLOCK_T: tl.constexpr,
                    TILES_PER_STEP: tl.constexpr):
    """lse from the partials with a running max over the tiles one at a time; the gradient written one
    column tile per step, its max a plain number; the one-hot folded into the scale."""
    row = tl.program_id(0)
    M_run = -float("inf")
    S_run = 0.0
    z_target = 0.0
    for t in range(0, TILES):
        m_t = tl.load(tile_max_ptr + row * TILES + t)
        s_t = tl.load(tile_sum_ptr + row * TILES + t)
        z_target += tl.load(tile_target_ptr + row * TILES + t)
        M_new = tl.maximum(M_run, m_t)
        S_run = S_run * tl.exp(M_run - M_new) + s_t * tl.exp(m_t - M_new)
        M_run = M_new
    lse = M_run + tl.log(S_run)
    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    n = tl.load(n_valid_ptr)
    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)
    tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / n, 0.0))
    z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)
    j = tl.arange(0, TILE_N)
    for t in range(0, TILES):
        m = tl.load(tile_max_ptr + row * TILES + t)
        cols = t * TILE_N + j
        ok = cols < V
        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)
        p = tl.exp(stored + m - lse)
        grad = p * scale - tl.where(cols == target, scale, 0.0)
        tl.store(z_row + cols, grad, mask=ok)
'''

_MM_PLAIN = '''
@triton.jit
def chunk_matmul_kernel(a_desc, b_desc, c_ptr, M, N, K, A_T: tl.constexpr, ACCUMULATE: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    """Row-major tile order (no grouping); with ACCUMULATE the accumulator starts from what c holds."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tile_m = pid // tiles_n
    tile_n = pid % tiles_n
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
        acc += tl.dot(a, b)
    tl.store(c_ptrs, acc, mask=mask)
'''

MEASURED = [
    # the logits kernel and its epilogue
    Bug("pad_columns_not_neg_inf", "step",
        ((_Z_INF, "    z = acc\n", 1),),
        "fill", "the last tile's columns past V keep the product's 0: each is a phantom logit adding exp(0 − m) to the tile's sum"),
    Bug("desc_coords_tile_numbers", "step",
        ((_X_LOAD, "        x = x_desc.load([tile_m, start])\n", 1),),
        "address", "x's block loaded at [tile_m, start]: descriptor coordinates are elements, not tile numbers"),
    Bug("partials_row_stride_block_n", "step",
        ((_PART, "    part = rows * BLOCK_N + tile_n\n", 1),),
        "address", "the partials' slot uses BLOCK_N as the row width of tile_max / tile_sum / tile_target, not TILES"),
    Bug("target_share_local_column", "step",
        ((_HIT, "    hit = tl.arange(0, BLOCK_N)[None, :] == target[:, None]\n", 1),),
        "address", "the target compared with the tile's local column index, not the global column tile_n * BLOCK_N + j"),
    Bug("target_share_from_shifted", "step",
        ((_SHARE, _SHARE.replace("tl.where(hit, acc, 0.0)", "tl.where(hit, shifted, 0.0)"), 1),),
        "formula", "the target's share taken from the shifted tile z − m: the loss misses the tile's max"),
    Bug("target_load_no_mask", "step",
        ((_TGT, "    target = tl.load(target_ptr + rows)\n", 1),),
        "mask", "the chunk's targets loaded for the whole row tile with no mask: rows past C read past target_c"),
    Bug("z_stored_unshifted", "step",
        ((_Z_STORE, _Z_STORE.replace(" shifted,\n", " acc,\n"), 1),),
        "formula", "z stored as the raw logits, not z − m: the cross-entropy adds m back and every p is off by exp(m)"),
    # the cross-entropy kernel
    Bug("tile_sums_not_rescaled", "step",
        ((_LSE, "    lse = m_row + tl.log(tl.sum(s_t, axis=0))\n", 1),),
        "accumulate", "the tiles' sums added as they are: each is relative to its own tile max and is not moved to the row's max by exp(m_t − M)"),
    Bug("p_without_tile_max", "step",
        ((_P, "        p = tl.exp(stored - lse)\n", 1),),
        "formula", "p = exp(stored − lse): the tile's max subtracted in the epilogue is never added back"),
    Bug("scale_without_dloss", "step",
        ((_SCALE, "    scale = tl.where(valid, 1.0 / n, 0.0)\n", 1),),
        "formula", "the gradient scaled by 1/n only: the upstream dloss is dropped from the chain rule"),
    Bug("z_row_width_V", "step",
        ((_ZROW, "    z_row = z_ptr + row.to(tl.int64) * V\n", 1),),
        "address", "row r of z taken at r·V, as if g's [C, V] view were contiguous: z's rows are TILES·TILE_N wide"),
    Bug("ce_steps_floor", "step",
        ((_CE_LOOP, "    for step in range(0, TILES // TILES_PER_STEP):\n"
                    "        first = step * TILES_PER_STEP\n"
                    "        tiles = first + tl.arange(0, TILES_PER_STEP)\n", 1),),
        "loop", "the number of steps is TILES // TILES_PER_STEP, rounded down: the last partial step of tiles never gets its gradient"),
    Bug("p_rounded_before_onehot", "step",
        ((_P, "        p = tl.exp(stored + (m - lse)[:, None]).to(z_ptr.dtype.element_ty)\n", 1),),
        "precision", "p rounded to z's dtype before the 1 is subtracted: in bf16 a confident target's gradient becomes 0"),
    # the products
    Bug("dw_not_accumulated", "step",
        ((_ACC_LOAD, "        acc = acc\n", 1),),
        "accumulate", "with ACCUMULATE the tile is stored without adding what dw already holds: only the last chunk's share survives"),
    Bug("matmul_store_row_mask_only", "step",
        ((_MM_MASK, "    mask = rows[:, None] < M\n", 1),),
        "mask", "the product's store masks only rows: a tile past N's edge writes into the next row of dx / dw"),
    Bug("a_t_coords_swapped", "step",
        ((_A_T, "            a = a_desc.load([tile_m * BLOCK_M, start]).T\n", 1),),
        "address", "the transposed operand's block loaded at [m, k] coordinates: the stored tensor is [K, M], its block is at [k, m]"),
    Bug("partials_load_no_mask", "step",
        (("    m_t = tl.load(tile_max_ptr + row * TILES + t, mask=t < TILES, other=-float(\"inf\"))\n"
          "    s_t = tl.load(tile_sum_ptr + row * TILES + t, mask=t < TILES, other=0.0)\n",
          "    m_t = tl.load(tile_max_ptr + row * TILES + t)\n"
          "    s_t = tl.load(tile_sum_ptr + row * TILES + t)\n", 1),),
        "mask", "the row's partials loaded for all BLOCK_T lanes with no mask: lanes past TILES read the next row's maxima and sums into this row's lse"),
    Bug("logits_k_loop_stops_early", "step",
        (("    for start in range(0, H, BLOCK_K):  # descriptor", "    for start in range(0, H - BLOCK_K, BLOCK_K):  # descriptor", 1),),
        "loop", "the logits product's K loop stops one block early (H − BLOCK_K): the last BLOCK_K columns of x and w never enter the dot"),
]

RIGHT = [
    Right("ce_tile_by_tile", (Kernel("chunk_ce_kernel", _CE_TILE_BY_TILE),),
          "lse from a running max over the tiles one at a time, the gradient one tile per step: the same numbers"),
    Right("matmul_plain_order_acc_from_c", (Kernel("chunk_matmul_kernel", _MM_PLAIN),),
          "plain row-major tile order, and with ACCUMULATE the accumulator starts from c instead of adding c at the end"),
    Right("share_via_max", ((_SHARE, "    share = tl.max(tl.where(hit, acc, -float(\"inf\")), axis=1)\n"
                                     "    share = tl.where(tl.sum(hit.to(tl.int32), axis=1) > 0, share, 0.0)\n"
                                     "    tl.store(tile_target_ptr + part, share, mask=row_ok)\n", 1),),
          "the target's share picked by a max over the hit lanes, 0 where the tile holds no target: the same share"),
    Right("sum_exp_from_masked_acc",
          (("    tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)\n",
            "    e = tl.where(col_ok[None, :], tl.exp(acc - m[:, None]), 0.0)\n"
            "    tl.store(tile_sum_ptr + part, tl.sum(e, axis=1), mask=row_ok)\n", 1),),
          "the tile's sum of exp taken from the raw accumulator with the padded columns zeroed by a where, not via -inf: the same sum"),
]
