"""Fifth blind corpus, puzzle 28 (fused Linear + cross-entropy): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_PER_GROUP = "    per_group = GROUP_M * tiles_n\n"
_MM_TILE = "    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)\n"
_LOGITS_DOT = "        acc = tl.dot(x, w.T, acc)\n"
_LOGITS_LOOP = "    for start in range(0, H, BLOCK_K):  # descriptor coordinates are elements, not tile numbers\n"
_LOGITS_ROWS = ("    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)\n"
                "    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)\n"
                "    row_ok = rows < C\n")
_TILE_STATS = ("    tl.store(tile_max_ptr + part, m, mask=row_ok)\n"
               "    tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)\n")
_LSE = "    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))\n"
_GRAD = "        grad = tl.where(cols == target, p - 1.0, p) * scale\n"
_WALK_STORE = "        tl.store(z_row + cols, grad, mask=ok)\n"
_Z_ROW = "    z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)\n"
_WALK = "    for first in range(0, TILES, TILES_PER_STEP):\n"
_ACCUM = "    if ACCUMULATE:\n"
_SCALE = "    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)\n"
_ZT = "    z_target = tl.sum(tl.load(tile_target_ptr + row * TILES + t, mask=t < TILES, other=0.0), axis=0)\n"
_MM_MASK = "    mask = (rows[:, None] < M) & (cols[None, :] < N)\n"

MEASURED = [
    # the tile order
    Bug("group_size_over_row_tiles", "step",
        ((_PER_GROUP, "    per_group = GROUP_M * tiles_m\n", 1),),
        "address", "a group's program count taken as GROUP_M · tiles_m (row tiles) instead of GROUP_M · tiles_n: where the two differ tiles are computed twice and others never"),
    Bug("matmul_row_tiles_by_block_n", "step",
        ((_MM_TILE, "    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_N), tl.cdiv(N, BLOCK_N), GROUP_M)\n", 1),),
        "address", "the products count their row tiles with BLOCK_N (cdiv(M, BLOCK_N)) instead of BLOCK_M: with BLOCK_N > BLOCK_M the tile order maps too few row tiles, the last rows of dx and dW are never computed"),
    # the logits and their epilogue
    Bug("logits_operands_rounded_to_bf16", "step",
        ((_LOGITS_DOT, "        acc = tl.dot(x.to(tl.bfloat16), w.T.to(tl.bfloat16), acc)  # the tensor cores' dtype\n", 1),),
        "precision", "the logits' operands cast to bf16 before the dot whatever x's dtype: fp32 logits keep 8 bits of each input, the loss and the gradients follow",
        notes="fp32 cases only"),
    Bug("logits_k_loop_starts_at_block_k", "step",
        ((_LOGITS_LOOP, "    for start in range(BLOCK_K, H, BLOCK_K):  # descriptor coordinates are elements, not tile numbers\n", 1),),
        "loop", "the logits' K loop starts at BLOCK_K: the first BLOCK_K hidden dimensions never enter z = x wᵀ"),
    Bug("logits_columns_by_block_m", "step",
        ((_LOGITS_ROWS, _LOGITS_ROWS.replace("tile_n * BLOCK_N", "tile_n * BLOCK_M"), 1),),
        "address", "the epilogue's column numbers tile_n · BLOCK_M + lane (the row tile's size): where BLOCK_M != BLOCK_N the tile's columns are mislabelled for the mask, the target test and the store"),
    Bug("logits_tiles_of_documented_32", "step",
        (("    tiles_n = tl.cdiv(V, BLOCK_N)\n", "    tiles_n = tl.cdiv(V, 32)\n", 1),),
        "hardcoded", "the logits kernel counts its column tiles as cdiv(V, 32) (the documented TILE_N) instead of cdiv(V, BLOCK_N): with other tile widths the tile order, the partials' slots and z's row width are wrong",
        notes="shows where TILE_N != 32"),
    Bug("tile_sums_over_rows_axis", "step",
        ((_TILE_STATS, _TILE_STATS.replace("tl.sum(tl.exp(shifted), axis=1)", "tl.sum(tl.exp(shifted), axis=0)"), 1),),
        "formula", "the tile's sum of exponentials taken over axis 0 (the tile's rows, per column) instead of axis 1: each row's partial sum is some column's sum"),
    Bug("partials_stored_without_row_mask", "step",
        ((_TILE_STATS, _TILE_STATS.replace(", mask=row_ok)", ")"), 1),),
        "mask", "the tile maxima and sums stored without the row mask: a last, partial row tile writes its padded rows past the chunk's partials"),
    # the cross-entropy
    Bug("p_as_product_of_exps", "step",
        (("        p = tl.exp(stored + (m - lse)[:, None])\n", "        p = tl.exp(stored + m[:, None]) * tl.exp(-lse)\n", 1),),
        "stability", "the walk's p = exp(stored + m_t) · exp(−lse): the logit itself exponentiated, so large logits overflow to inf and inf · 0 is NaN",
        notes="shows on the large logits"),
    Bug("tile_target_pads_minus_one", "step",
        ((_ZT, _ZT.replace("other=0.0", "other=-1.0"), 1),),
        "fill", "the per-tile target shares load −1 in their padded lanes (the 'no target' marker of the logits kernel): summed, each padded lane takes 1 off the target's logit",
        notes="shows where BLOCK_T > TILES"),
    Bug("one_hot_without_scale", "step",
        ((_GRAD, "        grad = tl.where(cols == target, p - 1.0, p * scale)\n", 1),),
        "formula", "the gradient scaled off the target only: the target's p − 1 is stored without dloss / n (and on ignored rows no target matches, so they look right)"),
    Bug("walk_rounded_to_bf16", "step",
        ((_WALK_STORE, "        tl.store(z_row + cols, grad.to(tl.bfloat16), mask=ok)\n", 1),),
        "precision", "the gradient rounded to bf16 before it is stored over z whatever z's dtype: fp32 cases' dx and dW keep 8 bits of dlogits",
        notes="fp32 cases only"),
    Bug("z_rows_documented_32", "step",
        ((_Z_ROW, "    z_row = z_ptr + row.to(tl.int64) * (TILES * 32)\n", 1),),
        "hardcoded", "the cross-entropy's z rows taken TILES · 32 apart (the documented TILE_N) instead of TILES · TILE_N: with other tile widths every row past the first reads and writes the wrong logits",
        notes="shows where TILE_N != 32"),
    Bug("walk_to_tiles_minus_one", "step",
        ((_WALK, "    for first in range(0, TILES - 1, TILES_PER_STEP):\n", 1),),
        "loop", "the gradient walk runs range(0, TILES − 1, ...) (the last tile's index as the bound): with a single tile, or a last step of one tile, those logits are never turned into gradients"),
    Bug("dloss_overwritten_with_scale", "step",
        ((_SCALE, _SCALE + "    tl.store(dloss_ptr, tl.load(dloss_ptr) / n)  # cache dloss / n for the next rows\n", 1),),
        "inplace", "each row stores dloss / n back into dloss to 'cache' the scale: the upstream gradient is an input, and every later row divides it by n again"),
    # the products
    Bug("accumulate_flag_inverted", "step",
        ((_ACCUM, "    if not ACCUMULATE:\n", 1),),
        "accumulate", "the ACCUMULATE test inverted: dx and the first chunk's dW add to buffers that were never zeroed, while the later chunks overwrite dW with their own share"),
    Bug("matmul_mask_columns_against_k", "step",
        ((_MM_MASK, "    mask = (rows[:, None] < M) & (cols[None, :] < K)\n", 1),),
        "mask", "the products' store mask compares the columns with K (the reduction length) instead of N: where K > N the last column tile writes past c's rows, where K < N the last columns are never written"),
]

_LOGITS_TWO_K = ('''    for start in range(0, H, 2 * BLOCK_K):
        x = x_desc.load([tile_m * BLOCK_M, start])
        w = w_desc.load([tile_n * BLOCK_N, start])
        acc = tl.dot(x, w.T, acc)
        if start + BLOCK_K < H:
            x = x_desc.load([tile_m * BLOCK_M, start + BLOCK_K])
            w = w_desc.load([tile_n * BLOCK_N, start + BLOCK_K])
            acc = tl.dot(x, w.T, acc)
''')
_LOGITS_LOOP_REF = ('''    for start in range(0, H, BLOCK_K):  # descriptor coordinates are elements, not tile numbers
        x = x_desc.load([tile_m * BLOCK_M, start])
        w = w_desc.load([tile_n * BLOCK_N, start])
        acc = tl.dot(x, w.T, acc)
''')

_SNAKE = '''
@triton.jit
def grouped_tile(pid, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """A snake order instead of groups: row tile by row tile, every other row tile's columns walked backwards."""
    tile_m = pid // tiles_n
    j = pid % tiles_n
    tile_n = tl.where(tile_m % 2 == 1, tiles_n - 1 - j, j)
    return tile_m, tile_n
'''

_MM_LOOP_REF = '''    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        if A_T:  # the stored tensor is [K, M]: its block at (k, m) holds a's (m, k) block, transposed
            a = a_desc.load([start, tile_m * BLOCK_M]).T
        else:
            a = a_desc.load([tile_m * BLOCK_M, start])
        b = b_desc.load([start, tile_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
'''
_MM_TWO_ACC = '''    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    acc_odd = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    step = 0
    for start in range(0, K, BLOCK_K):
        if A_T:
            a = a_desc.load([start, tile_m * BLOCK_M]).T
        else:
            a = a_desc.load([tile_m * BLOCK_M, start])
        b = b_desc.load([start, tile_n * BLOCK_N])
        if step % 2 == 0:
            acc = tl.dot(a, b, acc)
        else:
            acc_odd = tl.dot(a, b, acc_odd)
        step += 1
    acc = acc + acc_odd
'''

RIGHT = [
    Right("logits_two_k_blocks_a_step", ((_LOGITS_LOOP_REF, _LOGITS_TWO_K, 1),),
          "the logits' K loop takes two K blocks per step, the second guarded by a runtime if"),
    Right("snake_tile_order", (Kernel("grouped_tile", _SNAKE),),
          "the tiles in a snake order (row tile by row tile, every other one's column tiles backwards), no groups"),
    Right("matmul_even_odd_accumulators", ((_MM_LOOP_REF, _MM_TWO_ACC, 1),),
          "the products sum even and odd K blocks into two accumulators, added at the end"),
    Right("lse_in_fp64",
          ((_LSE, "    lse = (m_row.to(tl.float64) + tl.log(tl.sum(s_t.to(tl.float64) * tl.exp((m_t - m_row).to(tl.float64)), axis=0))).to(tl.float32)\n", 1),),
          "the row's lse combined from its tile partials in fp64, rounded to fp32 once"),
    Right("lse_as_logsumexp_of_log_sums",
          ((_LSE, "    lse = m_row + tl.log(tl.sum(tl.exp(m_t - m_row + tl.log(s_t)), axis=0))\n", 1),),
          "lse = M + log Σ_t exp(m_t − M + log s_t): each tile's sum moved into the exponent (padded tiles: log 0 = -inf adds 0)"),
]
