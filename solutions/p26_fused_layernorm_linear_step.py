"""Puzzle 26 reference kernels: LayerNorm + Linear, a fast training step (forward and backward).

Shapes (contiguous):  x, dx: [M, H]   gamma, beta: [H]   W: [N, H] (PyTorch Linear layout)   b: [N]
    y, dy: [M, N]   mean, rstd: [M] fp32 (saved by the forward for the backward)
    wg: [N, H] (W's dtype)   wg_sum, bias: [N] fp32   dz, z: [M, H] scratch (x's dtype)
    dgamma_part, dbeta_part: [P, H] fp32   dW, db, dgamma, dbeta: x's dtype

    z = gamma * x_hat + beta,  x_hat = (x - mean) * rstd            y = z W^T + b
    dz = dy W      dW = dy^T z      db = sum_rows dy
    dgamma = sum_rows dz * x_hat    dbeta = sum_rows dz
    dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat)),  g = dz * gamma

Three matrix products do almost all the work (2 * M * N * H flops each), so the step is as fast as
its three tl.dot loops. What keeps them fast (measured on an H100, bf16, M=8192, H=N=4096):
  * both operands of every tl.dot go from memory to the tensor cores untouched. The LayerNorm is
    folded into the forward product's epilogue instead of its prologue (normalising each x tile in
    registers before tl.dot ran at ~460 TFLOP/s, the plain product at ~650):
        y[m, n] = rstd[m] * (sum_k x[m, k] wg[n, k] - mean[m] * wg_sum[n]) + bias[n]
    with wg = W * gamma, wg_sum = the row sums of the rounded wg, bias = W beta + b. z is never
    formed in the forward;
  * the operands' tiles come through tensor descriptors: the GPU's copy engine (TMA on Hopper)
    moves a whole block per instruction, with zeros past the edges, so the loops need no masks
    (the forward product and dz took 0.39-0.41 ms this way, 0.42-0.46 ms with pointer loads);
  * dW = dy^T z as a plain product on z written by the backward's row kernel (recomputing z
    inside the product ran at ~350 TFLOP/s, the plain product at ~740);
  * 128 x 256 tiles, 3 pipeline stages, 8 warps, and a grouped tile order (neighbouring
    programs share tiles of x and W in the L2 cache);
  * persistent products: one program per SM walks the tiles pid, pid + P, ..., and the tile loop
    is flattened into the K loop (tl.range(..., flatten=True)), so the next tile's loads are in
    flight while this tile's epilogue stores. A program per tile paid each tile's pipeline fill and
    its epilogue alone: the dz product (8192 x 4096 x 4096) took 0.47 ms, 0.39 ms persistent;
  * bf16 operands, fp32 accumulation: tl.dot runs on the tensor cores;
  * no atomics: every tile of dW has one owner that walks all M rows, and dgamma, dbeta and db
    come from partial rows added in a fixed order (puzzles 23 and 25): the same bits every run;
  * the memory-bound kernels read each row once: the statistics keep a whole row in registers
    (BLOCK_H >= H), the row kernel is persistent, and the column sums spread over enough programs
    to keep every SM busy.

The checker launches, in this order (see `python -m checker p26 --solution`); blocks_of(t, r, c) is
a descriptor of t in [r, c] blocks (TensorDescriptor.from_tensor; rows must be 16-byte aligned):
    forward:  fold_weight_kernel[(N,)](W, gamma, beta, b, wg, wg_sum, bias, N, H, BLOCK_H=..)
              ln_stats_kernel[(cdiv(M, ROWS),)](x, mean, rstd, M, H, eps, ROWS=.., BLOCK_H=..)
              ln_epilogue_linear_kernel[(P_mm,)](      # P_mm: one program per SM (a few on the CPU)
                  blocks_of(x, BLOCK_M, BLOCK_K), blocks_of(wg, BLOCK_N, BLOCK_K), mean, rstd, wg_sum, bias,
                  y, M, N, H, BLOCK_M=.., BLOCK_N=.., BLOCK_K=.., GROUP_M=..)
    backward: linear_dz_kernel[(P_mm,)](
                  blocks_of(dy, BLOCK_M, BLOCK_K), blocks_of(W, BLOCK_K, BLOCK_N), dz, M, N, H, ...)
              ln_dx_kernel[(P,)](x, mean, rstd, gamma, beta, dz, dx, z, dgamma_part, dbeta_part, M, H, ROWS=1, BLOCK_H=..)
              fixed_order_sum_kernel (dgamma, dbeta from the partial rows; db from dy in row slabs, then the slabs)
              linear_dw_kernel[(P_mm,)](
                  blocks_of(dy, BLOCK_K, BLOCK_M), blocks_of(z, BLOCK_K, BLOCK_N), dW, M, N, H, ...)
"""
import triton
import triton.language as tl


@triton.jit
def grouped_tile(pid, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Program pid's (row tile, column tile), in groups of GROUP_M row tiles: the programs running
    at the same time then share a few row tiles and a few column tiles, which stay in L2."""
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_m = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_m
    tile_n = (pid % per_group) // group_m
    return tile_m, tile_n


@triton.jit
def ln_stats_kernel(x_ptr, mean_ptr, rstd_ptr, M, H, eps, ROWS: tl.constexpr, BLOCK_H: tl.constexpr):
    """mean and rstd of ROWS rows, each row read once into registers (BLOCK_H >= H): the mean first,
    then the mean of the centred squares from the same registers. Grid: (cdiv(M, ROWS),)."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_H)
    row_ok = rows < M
    ok = row_ok[:, None] & (cols[None, :] < H)
    x = tl.load(x_ptr + rows[:, None] * H + cols[None, :], mask=ok, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=1) / H
    diff = tl.where(ok, x - mean[:, None], 0.0)  # padded lanes would add mean^2
    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=1) / H + eps)
    tl.store(mean_ptr + rows, mean, mask=row_ok)
    tl.store(rstd_ptr + rows, rstd, mask=row_ok)


@triton.jit
def fold_weight_kernel(w_ptr, gamma_ptr, beta_ptr, b_ptr, wg_ptr, wg_sum_ptr, bias_ptr, N, H,
                       BLOCK_H: tl.constexpr):
    """LayerNorm's gamma and beta folded into the Linear, one row n of W per program:
        wg[n] = W[n] * gamma (rounded to W's dtype)   wg_sum[n] = sum of the rounded wg[n]
        bias[n] = W[n] . beta + b[n]
    Grid: (N,). wg_sum adds up the rounded values: the forward subtracts mean * wg_sum from a sum of
    x * wg, and the two cancel exactly only if both use the very same wg."""
    n = tl.program_id(0)
    sum_wg = tl.zeros([BLOCK_H], dtype=tl.float32)
    w_beta = tl.zeros([BLOCK_H], dtype=tl.float32)
    for start in range(0, H, BLOCK_H):
        cols = start + tl.arange(0, BLOCK_H)
        ok = cols < H
        w = tl.load(w_ptr + n * H + cols, mask=ok, other=0.0).to(tl.float32)
        gamma = tl.load(gamma_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        beta = tl.load(beta_ptr + cols, mask=ok, other=0.0).to(tl.float32)
        wg = (w * gamma).to(wg_ptr.dtype.element_ty)
        tl.store(wg_ptr + n * H + cols, wg, mask=ok)
        sum_wg += wg.to(tl.float32)
        w_beta += w * beta
    tl.store(wg_sum_ptr + n, tl.sum(sum_wg, axis=0))
    tl.store(bias_ptr + n, tl.sum(w_beta, axis=0) + tl.load(b_ptr + n).to(tl.float32))


@triton.jit
def ln_epilogue_linear_kernel(x_desc, wg_desc, mean_ptr, rstd_ptr, wg_sum_ptr, bias_ptr, y_ptr, M, N, H,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                              GROUP_M: tl.constexpr):
    """A [BLOCK_M, BLOCK_N] tile of y = LayerNorm(x) W^T + b with the LayerNorm in the epilogue:
        y[m, n] = rstd[m] * (sum_k x[m, k] wg[n, k] - mean[m] * wg_sum[n]) + bias[n]
    The loop is a plain x wg^T product whose tiles the copy engine brings (x_desc: [BLOCK_M, BLOCK_K]
    blocks of x, wg_desc: [BLOCK_N, BLOCK_K] blocks of wg; what lies past an edge arrives as 0, so the
    loop needs no masks); z is never formed. Persistent: program pid computes the tiles pid, pid + P,
    ... (P programs, one per SM on a GPU). Grid: (P,)."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # flatten: the compiler pipelines the two loops as one, so the next tile's first loads are in
    # flight while this tile's epilogue runs
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0), flatten=True):
        tile_m, tile_n = grouped_tile(tile, tiles_m, tiles_n, GROUP_M)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in range(0, H, BLOCK_K):  # descriptor coordinates are elements, not tile numbers
            x = x_desc.load([tile_m * BLOCK_M, start])
            wg = wg_desc.load([tile_n * BLOCK_N, start])
            acc = tl.dot(x, wg.T, acc)
        rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        outs = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        row_ok = rows < M
        out_ok = outs < N
        mean = tl.load(mean_ptr + rows, mask=row_ok, other=0.0)
        rstd = tl.load(rstd_ptr + rows, mask=row_ok, other=0.0)
        wg_sum = tl.load(wg_sum_ptr + outs, mask=out_ok, other=0.0)
        bias = tl.load(bias_ptr + outs, mask=out_ok, other=0.0)
        y = rstd[:, None] * (acc - mean[:, None] * wg_sum[None, :]) + bias[None, :]
        tl.store(y_ptr + rows[:, None] * N + outs[None, :], y, mask=row_ok[:, None] & out_ok[None, :])


@triton.jit
def linear_dz_kernel(dy_desc, w_desc, dz_ptr, M, N, H, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """A [BLOCK_M, BLOCK_N] tile of dz = dy W ([M, N] x [N, H]; BLOCK_N runs along H, BLOCK_K along N).
    dy_desc: [BLOCK_M, BLOCK_K] blocks of dy; w_desc: [BLOCK_K, BLOCK_N] blocks of W.
    Persistent, as the forward's product. Grid: (P,)."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_h = tl.cdiv(H, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_h, tl.num_programs(0), flatten=True):
        tile_m, tile_h = grouped_tile(tile, tiles_m, tiles_h, GROUP_M)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_K):
            dy = dy_desc.load([tile_m * BLOCK_M, start])
            w = w_desc.load([start, tile_h * BLOCK_N])
            acc = tl.dot(dy, w, acc)
        rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tile_h * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(dz_ptr + rows[:, None] * H + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < H))


@triton.jit
def ln_dx_kernel(x_ptr, mean_ptr, rstd_ptr, gamma_ptr, beta_ptr, dz_ptr, dx_ptr, z_ptr, dgamma_part_ptr,
                 dbeta_part_ptr, M, H, ROWS: tl.constexpr, BLOCK_H: tl.constexpr):
    """Persistent, as in puzzle 25: program pid takes the row blocks pid, pid + P, ... and writes dx,
    and z for dW's product (the forward never formed it); its dgamma/dbeta shares stay in registers
    and go to partial row pid. BLOCK_H >= H. Grid: (P,)."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    col_ok = cols < H
    gamma = tl.load(gamma_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    beta = tl.load(beta_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)
    dgamma_acc = tl.zeros([ROWS, BLOCK_H], dtype=tl.float32)
    dbeta_acc = tl.zeros([ROWS, BLOCK_H], dtype=tl.float32)
    for first in range(pid * ROWS, M, programs * ROWS):
        rows = first + tl.arange(0, ROWS)
        row_ok = rows < M
        ok = row_ok[:, None] & col_ok[None, :]
        offsets = rows[:, None] * H + cols[None, :]
        mean = tl.load(mean_ptr + rows, mask=row_ok, other=0.0)
        rstd = tl.load(rstd_ptr + rows, mask=row_ok, other=0.0)
        x = tl.load(x_ptr + offsets, mask=ok, other=0.0).to(tl.float32)
        dz = tl.load(dz_ptr + offsets, mask=ok, other=0.0).to(tl.float32)
        x_hat = tl.where(ok, (x - mean[:, None]) * rstd[:, None], 0.0)
        g = dz * gamma[None, :]
        mean_g = tl.sum(g, axis=1) / H
        mean_g_xhat = tl.sum(g * x_hat, axis=1) / H
        dx = rstd[:, None] * (g - mean_g[:, None] - x_hat * mean_g_xhat[:, None])
        tl.store(dx_ptr + offsets, dx, mask=ok)
        tl.store(z_ptr + offsets, x_hat * gamma[None, :] + beta[None, :], mask=ok)
        dgamma_acc += dz * x_hat
        dbeta_acc += dz
    tl.store(dgamma_part_ptr + pid * H + cols, tl.sum(dgamma_acc, axis=0), mask=col_ok)
    tl.store(dbeta_part_ptr + pid * H + cols, tl.sum(dbeta_acc, axis=0), mask=col_ok)


@triton.jit
def fixed_order_sum_kernel(src_ptr, dst_ptr, R, C, ROWS_PER_PROGRAM, BLOCK_R: tl.constexpr, BLOCK_COLS: tl.constexpr):
    """Column sums of src [R, C] in a fixed order: program (i, j) adds rows j * ROWS_PER_PROGRAM ... of
    a block of columns and stores them in dst's row j. Grid: (cdiv(C, BLOCK_COLS), cdiv(R, ROWS_PER_PROGRAM)).
    One row of programs (ROWS_PER_PROGRAM >= R) sums the partial rows into dgamma and dbeta; dy's
    8192 rows are first split over many programs (partial rows of db), then summed the same way."""
    cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    col_ok = cols < C
    first = tl.program_id(1) * ROWS_PER_PROGRAM
    last = tl.minimum(first + ROWS_PER_PROGRAM, R)
    acc = tl.zeros([BLOCK_R, BLOCK_COLS], dtype=tl.float32)
    for start in range(first, last, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        ok = (rows[:, None] < last) & col_ok[None, :]
        acc += tl.load(src_ptr + rows[:, None] * C + cols[None, :], mask=ok, other=0.0).to(tl.float32)
    tl.store(dst_ptr + tl.program_id(1) * C + cols, tl.sum(acc, axis=0), mask=col_ok)


@triton.jit
def linear_dw_kernel(dy_desc, z_desc, dw_ptr, M, N, H, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """A [BLOCK_M, BLOCK_N] tile of dW = dy^T z ([N, M] x [M, H]; BLOCK_M runs along N, BLOCK_N along H,
    BLOCK_K along M). dy_desc: [BLOCK_K, BLOCK_M] blocks of dy, transposed after the load; z_desc:
    [BLOCK_K, BLOCK_N] blocks of z. One owner per tile walks all M rows, so no atomics.
    Persistent, as the forward's product. Grid: (P,)."""
    tiles_n = tl.cdiv(N, BLOCK_M)
    tiles_h = tl.cdiv(H, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles_n * tiles_h, tl.num_programs(0), flatten=True):
        tile_n, tile_h = grouped_tile(tile, tiles_n, tiles_h, GROUP_M)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start in range(0, M, BLOCK_K):
            dy = dy_desc.load([start, tile_n * BLOCK_M])
            z = z_desc.load([start, tile_h * BLOCK_N])
            acc = tl.dot(dy.T, z, acc)
        outs = tile_n * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tile_h * BLOCK_N + tl.arange(0, BLOCK_N)
        tl.store(dw_ptr + outs[:, None] * H + cols[None, :], acc, mask=(outs[:, None] < N) & (cols[None, :] < H))
