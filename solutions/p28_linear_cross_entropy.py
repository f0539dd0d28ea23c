"""Puzzle 28 reference kernels: Linear + cross-entropy, chunk by chunk, the [N, V] logits never made.

    x: [N, H]   w: [V, H] (the vocabulary projection, no bias)   target: [N] int32   dloss: [1]
    logits = x wᵀ   loss = cross_entropy(logits, target), the mean over counted rows (puzzle 27)
    dlogits = dloss / n · (softmax − one_hot)      dx = dlogits w      dw = dlogitsᵀ x

The checker's launch walks the rows CHUNK at a time (C rows: start .. start + C). Four launches per
chunk, in order on one stream; blocks_of(t, r, c) is a descriptor of t in [r, c] blocks
(TensorDescriptor.from_tensor: t's base and row stride must be multiples of 16 bytes, so H·esize is;
z's rows are whole tiles, so V may be anything):
    chunk_count_kernel[(1,)](target, n_valid, N, ignore_index, BLOCK_M=BLOCK_M)       # BLOCK_M >= N
    for start in range(0, N, CHUNK):
        # z = x_c wᵀ, stored as z − (its tile's row max) in x's dtype, with each (row, column tile)'s
        # max, sum of exp and share of the target's logit, from the fp32 accumulator
        chunk_logits_kernel[(cdiv(C, BLOCK_M) * TILES,)](blocks_of(x_c, BLOCK_M, BLOCK_K),
            blocks_of(w, BLOCK_N, BLOCK_K), target_c, z_c, tile_max, tile_sum, tile_target, C, V, H, ...)
        # lse from the partials, the loss share, then the gradient in place of z, one pass
        chunk_ce_kernel[(C,)](z_c, tile_max, tile_sum, tile_target, target_c, dloss, n_valid, loss_rows_c, V,
            TILES, ignore_index, TILE_N=BLOCK_N, BLOCK_T=next_pow2(TILES), TILES_PER_STEP=...)
        chunk_matmul_kernel[(cdiv(C, BLOCK_M) * cdiv(H, BLOCK_N),)](blocks_of(g, BLOCK_M, BLOCK_K),
            blocks_of(w, BLOCK_K, BLOCK_N), dx_c, C, H, V, A_T=False, ACCUMULATE=False, ...)      # dx_c = g w
        chunk_matmul_kernel[(cdiv(V, BLOCK_M) * cdiv(H, BLOCK_N),)](blocks_of(g, BLOCK_K, BLOCK_M),
            blocks_of(x_c, BLOCK_K, BLOCK_N), dw, V, H, C, A_T=True, ACCUMULATE=start > 0, ...)  # dw (+)= gᵀ x_c
    loss = loss_rows.sum()
TILES = cdiv(V, BLOCK_N). z: [min(CHUNK, N), TILES, BLOCK_N] in x's dtype, row r's column tile t at
z[r, t, :] (each row padded to whole tiles; the columns past V are never written); z_c = z[:C];
g = z_c seen as [C, V] (its first V columns). tile_max, tile_sum, tile_target: [min(CHUNK, N), TILES] fp32.
dw is fp32 and is not zeroed: the first chunk stores its share, the later ones add theirs.

What keeps it fast (bf16 on an H100: N = 8192, H = 4096, V = 128256, CHUNK = 2048): the three
products are puzzle 26's (descriptors, grouped tiles, 128 x 256 x 64, fp32 accumulators) and do
almost all the work; the softmax's statistics come from the logits product's epilogue, while its
fp32 tile is still in registers, so the cross-entropy reads and writes each logit once; the logits
are kept in bf16 (half of fp32's traffic and memory), which the shift by the tile's max makes
accurate enough (see chunk_logits_kernel).
"""
import triton
import triton.language as tl


@triton.jit
def grouped_tile(pid, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Program pid's (row tile, column tile), in groups of GROUP_M row tiles (puzzle 26): the
    programs running at the same time share a few row tiles and a few column tiles, kept in L2."""
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_m = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_m
    tile_n = (pid % per_group) // group_m
    return tile_m, tile_n


@triton.jit
def chunk_count_kernel(target_ptr, n_valid_ptr, M, ignore_index, BLOCK_M: tl.constexpr):
    """n_valid = how many rows count (target != ignore_index): the mean's denominator. One block of
    BLOCK_M >= M targets (8192 rows are 32 KiB: one program reads them at once). Grid: (1,)."""
    rows = tl.arange(0, BLOCK_M)
    # padded lanes load ignore_index: a row that is not there does not count
    target = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index)
    tl.store(n_valid_ptr, tl.sum((target != ignore_index).to(tl.int32), axis=0).to(tl.float32))


@triton.jit
def chunk_logits_kernel(x_desc, w_desc, target_ptr, z_ptr, tile_max_ptr, tile_sum_ptr, tile_target_ptr,
                        C, V, H, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    """A [BLOCK_M, BLOCK_N] tile of the chunk's logits z = x_c wᵀ ([C, H] x [H, V]), and its epilogue,
    from the fp32 tile, per row: the tile's max m, the sum of exp(z − m) over its real columns and its
    share of the target's logit (z[target] if the tile holds column target, else 0) into tile_max,
    tile_sum and tile_target ([C, TILES], column tile_n); then z − m into z ([C, TILES, BLOCK_N], in
    its own dtype).
    x_desc: [BLOCK_M, BLOCK_K] blocks of x_c; w_desc: [BLOCK_N, BLOCK_K] blocks of w, transposed
    after the load. Grid: (cdiv(C, BLOCK_M) * cdiv(V, BLOCK_N),)."""
    tiles_n = tl.cdiv(V, BLOCK_N)
    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(C, BLOCK_M), tiles_n, GROUP_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, H, BLOCK_K):  # descriptor coordinates are elements, not tile numbers
        x = x_desc.load([tile_m * BLOCK_M, start])
        w = w_desc.load([tile_n * BLOCK_N, start])
        acc = tl.dot(x, w.T, acc)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_ok = rows < C
    col_ok = cols < V
    # the last tile's columns past V hold 0 (w's rows past V arrive as zeros): as logits they would
    # be phantom vocabulary entries, each adding exp(0 − m) to the sum. -inf adds exp(-inf) = 0.
    z = tl.where(col_ok[None, :], acc, -float("inf"))
    m = tl.max(z, axis=1)
    shifted = z - m[:, None]
    part = rows * tiles_n + tile_n
    tl.store(tile_max_ptr + part, m, mask=row_ok)
    tl.store(tile_sum_ptr + part, tl.sum(tl.exp(shifted), axis=1), mask=row_ok)
    # the loss needs z[target] in fp32: exactly one tile holds column target, every other tile's
    # share is 0 (an ignored row's -100 lies in no tile), and the cross-entropy adds the shares.
    # One slot per tile: no two programs store to one element
    target = tl.load(target_ptr + rows, mask=row_ok, other=-1)  # padded rows store nothing
    hit = cols[None, :] == target[:, None]
    tl.store(tile_target_ptr + part, tl.sum(tl.where(hit, acc, 0.0), axis=1), mask=row_ok)
    # z − m, not z: a bf16 logit near 7 is off by up to 2**-6 (p = exp(z − lse) by 1.6 %), while
    # z − m is near 0 where exp(z − m) is large, and keeps its digits there. Rounded once, here.
    # z's rows are tiles_n * BLOCK_N wide (whole tiles); in int64: a chunk of 2048 rows of a
    # 2**20-wide vocabulary reaches 2**31 elements
    tl.store(z_ptr + rows[:, None].to(tl.int64) * (tiles_n * BLOCK_N) + cols[None, :], shifted,
             mask=row_ok[:, None] & col_ok[None, :])


@triton.jit
def chunk_ce_kernel(z_ptr, tile_max_ptr, tile_sum_ptr, tile_target_ptr, target_ptr, dloss_ptr, n_valid_ptr,
                    loss_rows_ptr, V, TILES, ignore_index, TILE_N: tl.constexpr, BLOCK_T: tl.constexpr,
                    TILES_PER_STEP: tl.constexpr):
    """Row r of the chunk: lse and the target's logit from its TILES partials (BLOCK_T >= TILES), its
    loss share, then its gradient in place of its shifted logits, in one pass of TILES_PER_STEP column
    tiles at a time. z: [C, TILES, TILE_N] (row r's tile t at z[r, t, :]); tile_max, tile_sum,
    tile_target: [C, TILES]. Grid: (C,)."""
    row = tl.program_id(0)
    # lse = M + log Σ_t s_t exp(m_t − M): each tile's sum is relative to its own max m_t; exp(m_t − M)
    # <= 1 brings it to the row's max M. Padded lanes: m = -inf, s = 0, they add nothing.
    t = tl.arange(0, BLOCK_T)
    m_t = tl.load(tile_max_ptr + row * TILES + t, mask=t < TILES, other=-float("inf"))
    s_t = tl.load(tile_sum_ptr + row * TILES + t, mask=t < TILES, other=0.0)
    m_row = tl.max(m_t, axis=0)
    lse = m_row + tl.log(tl.sum(s_t * tl.exp(m_t - m_row), axis=0))

    target = tl.load(target_ptr + row)
    valid = target != ignore_index
    # the mean counts only the rows that count; dloss scales the whole gradient (the chain rule)
    n = tl.load(n_valid_ptr)
    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)
    # one tile's share is the target's logit, the others' are 0 (all are, on an ignored row)
    z_target = tl.sum(tl.load(tile_target_ptr + row * TILES + t, mask=t < TILES, other=0.0), axis=0)
    tl.store(loss_rows_ptr + row, tl.where(valid, (lse - z_target) / n, 0.0))

    # one pass: p = exp(z − lse) = exp(stored + m − lse), each block row one column tile of z, so
    # that it takes its tile's m as one number. p − 1 at the target in fp32 (puzzle 27: a confident row's
    # p_target = 1 − 1e-4 is 1.0 in bf16, and its gradient would vanish), rounded once, at the store
    z_row = z_ptr + row.to(tl.int64) * (TILES * TILE_N)
    for first in range(0, TILES, TILES_PER_STEP):
        tiles = first + tl.arange(0, TILES_PER_STEP)
        m = tl.load(tile_max_ptr + row * TILES + tiles, mask=tiles < TILES, other=-float("inf"))
        cols = tiles[:, None] * TILE_N + tl.arange(0, TILE_N)[None, :]
        ok = cols < V  # also false in every tile past the last
        stored = tl.load(z_row + cols, mask=ok, other=0.0).to(tl.float32)
        p = tl.exp(stored + (m - lse)[:, None])
        grad = tl.where(cols == target, p - 1.0, p) * scale
        tl.store(z_row + cols, grad, mask=ok)


@triton.jit
def chunk_matmul_kernel(a_desc, b_desc, c_ptr, M, N, K, A_T: tl.constexpr, ACCUMULATE: tl.constexpr,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_M: tl.constexpr):
    """A [BLOCK_M, BLOCK_N] tile of c = a b ([M, K] x [K, N]; c: [M, N], contiguous), stored, or added
    to what c holds when ACCUMULATE. b_desc: [BLOCK_K, BLOCK_N] blocks of b. a_desc: [BLOCK_M, BLOCK_K]
    blocks of a, or with A_T, [BLOCK_K, BLOCK_M] blocks of aᵀ (a is the transpose of the tensor it
    describes: gᵀ for dw), transposed after the load. Grid: (cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N),)."""
    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        if A_T:  # the stored tensor is [K, M]: its block at (k, m) holds a's (m, k) block, transposed
            a = a_desc.load([start, tile_m * BLOCK_M]).T
        else:
            a = a_desc.load([tile_m * BLOCK_M, start])
        b = b_desc.load([start, tile_n * BLOCK_N])
        acc = tl.dot(a, b, acc)
    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if ACCUMULATE:
        # dw += this chunk's share: this program is the tile's only writer in this launch, and the
        # chunks' launches run one after another on one stream, so a plain read, add and store is
        # safe (no atomics), and the order of the sum is fixed (the same bits every run)
        acc += tl.load(c_ptrs, mask=mask)
    tl.store(c_ptrs, acc, mask=mask)
