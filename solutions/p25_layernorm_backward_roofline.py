"""Puzzle 25 reference kernels: the LayerNorm backward at the memory roofline.

Shapes (contiguous):  x, dz, dx: [M, H] (fp32 or bf16)   gamma: [H]   dgamma, dbeta: [H] fp32
    partial buffers dgamma_part, dbeta_part: [P, H] fp32, one row per program

The work is memory-bound: per element it reads x and dz and writes dx (3 * M * H elements), and
does a few dozen flops. A kernel reaches the roofline when the memory system never waits for it:
  * a persistent grid: P programs (one or two per SM) each walk rows pid, pid + P, ... so the whole
    GPU stays busy and every program's dgamma/dbeta share stays in registers until the end;
  * those shares are one row wide: each step adds its ROWS rows into them at once (tl.sum over the
    rows, inside each thread), so the accumulators cost the same registers whatever ROWS is and
    the registers go to loads in flight instead;
  * no atomics on the hot path: each program stores one partial row (as in puzzle 23), and a
    small second kernel adds the P rows (P * H * 8 bytes: a few percent of the traffic);
  * ROWS rows per step when rows are short, so each step moves enough bytes to hide latency;
  * rows whose start is 16-byte aligned (H a multiple of 8 in bf16, of 4 in fp32): only then can
    the compiler use 16-byte loads and stores and the asynchronous copies that pipeline the loop;
  * no lanes wasted on padding: a row is a power-of-two head plus a small tail block, not one block
    of the next power of two (at H = 8462 that block would be 16384 lanes: the registers spill);
  * statistics recomputed from x (cheaper than reading saved ones), all arithmetic in fp32;
  * the row loop pipelined (tl.range(..., num_stages=STAGES)): the next rows' loads are in flight
    while this row is reduced, so the memory system never waits for the arithmetic. STAGES copies of
    a step's loads sit in shared memory: 1 (no pipelining) where a step does not fit three times.

The checker launches (P from the GPU's SM count; a handful on the CPU):
    ln_bwd_roofline_kernel[(P,)](x, gamma, dz, dx, dgamma_part, dbeta_part, M, H, eps,
                                 ROWS=ROWS, BLOCK_H=BLOCK_H, TAIL=TAIL, STAGES=..., num_warps=...)
        # BLOCK_H: the largest power of two <= H; TAIL: 0, or the next power of two >= H - BLOCK_H
    ln_bwd_partials_reduce_kernel[(cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, P, H,
                                                          BLOCK_P=..., BLOCK_COLS=...)
"""
import triton
import triton.language as tl


@triton.jit
def ln_bwd_roofline_kernel(x_ptr, gamma_ptr, dz_ptr, dx_ptr,
                           dgamma_part_ptr, dbeta_part_ptr, M, H, eps,
                           ROWS: tl.constexpr, BLOCK_H: tl.constexpr, TAIL: tl.constexpr,
                           STAGES: tl.constexpr):
    """Program pid handles the row blocks pid, pid + P, ... (ROWS rows each); dx for each row, and
    its dgamma/dbeta shares summed in registers, stored once into partial row pid. Grid: (P,).

    A row is a head of BLOCK_H columns (the largest power of two <= H: always inside the row, no
    column mask) and, when H is not a power of two, a tail block of TAIL columns (a power of two
    >= H - BLOCK_H, masked). H = 8462 then takes 8192 + 512 lanes instead of 16384: half the
    registers, no spilling."""
    pid = tl.program_id(0)
    programs = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_H)
    gamma = tl.load(gamma_ptr + cols).to(tl.float32)
    dgamma_acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    dbeta_acc = tl.zeros([BLOCK_H], dtype=tl.float32)
    if TAIL > 0:  # compile-time: kernels for power-of-two widths have no tail code at all
        t_cols = BLOCK_H + tl.arange(0, TAIL)
        t_col_ok = t_cols < H
        t_gamma = tl.load(gamma_ptr + t_cols, mask=t_col_ok, other=0.0).to(tl.float32)
        t_dgamma_acc = tl.zeros([TAIL], dtype=tl.float32)
        t_dbeta_acc = tl.zeros([TAIL], dtype=tl.float32)
    for first in tl.range(pid * ROWS, M, programs * ROWS, num_stages=STAGES):
        rows = first + tl.arange(0, ROWS)
        row_ok = rows[:, None] < M
        offsets = rows[:, None] * H + cols[None, :]
        x = tl.load(x_ptr + offsets, mask=row_ok, other=0.0).to(tl.float32)
        dz = tl.load(dz_ptr + offsets, mask=row_ok, other=0.0).to(tl.float32)
        sum_x = tl.sum(x, axis=1)
        if TAIL > 0:
            t_ok = row_ok & t_col_ok[None, :]
            t_offsets = rows[:, None] * H + t_cols[None, :]
            t_x = tl.load(x_ptr + t_offsets, mask=t_ok, other=0.0).to(tl.float32)
            t_dz = tl.load(dz_ptr + t_offsets, mask=t_ok, other=0.0).to(tl.float32)
            sum_x += tl.sum(t_x, axis=1)
        mean = sum_x / H
        diff = x - mean[:, None]
        sum_sq = tl.sum(diff * diff, axis=1)
        if TAIL > 0:
            t_diff = tl.where(t_ok, t_x - mean[:, None], 0.0)  # padded lanes would add mean^2
            sum_sq += tl.sum(t_diff * t_diff, axis=1)
        rstd = 1.0 / tl.sqrt(sum_sq / H + eps)
        x_hat = diff * rstd[:, None]
        g = dz * gamma[None, :]
        sum_g = tl.sum(g, axis=1)
        sum_g_xhat = tl.sum(g * x_hat, axis=1)
        if TAIL > 0:
            t_x_hat = t_diff * rstd[:, None]
            t_g = t_dz * t_gamma[None, :]
            sum_g += tl.sum(t_g, axis=1)
            sum_g_xhat += tl.sum(t_g * t_x_hat, axis=1)
        mean_g = sum_g / H
        mean_g_xhat = sum_g_xhat / H
        dx = rstd[:, None] * (g - mean_g[:, None] - x_hat * mean_g_xhat[:, None])
        tl.store(dx_ptr + offsets, dx, mask=row_ok)  # cast to dx's dtype on store
        # the step's rows summed at once (rows past M loaded dz = 0: they add nothing)
        dgamma_acc += tl.sum(dz * x_hat, axis=0)
        dbeta_acc += tl.sum(dz, axis=0)
        if TAIL > 0:
            t_dx = rstd[:, None] * (t_g - mean_g[:, None] - t_x_hat * mean_g_xhat[:, None])
            tl.store(dx_ptr + t_offsets, t_dx, mask=t_ok)
            t_dgamma_acc += tl.sum(t_dz * t_x_hat, axis=0)
            t_dbeta_acc += tl.sum(t_dz, axis=0)
    tl.store(dgamma_part_ptr + pid * H + cols, dgamma_acc)
    tl.store(dbeta_part_ptr + pid * H + cols, dbeta_acc)
    if TAIL > 0:
        tl.store(dgamma_part_ptr + pid * H + t_cols, t_dgamma_acc, mask=t_col_ok)
        tl.store(dbeta_part_ptr + pid * H + t_cols, t_dbeta_acc, mask=t_col_ok)


@triton.jit
def ln_bwd_partials_reduce_kernel(dgamma_part_ptr, dbeta_part_ptr, dgamma_ptr, dbeta_ptr, P, H,
                                  BLOCK_P: tl.constexpr, BLOCK_COLS: tl.constexpr):
    """dgamma[c] = sum over the P partial rows (dbeta alike), for a block of columns, in a fixed
    order. Grid: (cdiv(H, BLOCK_COLS),)."""
    cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    col_ok = cols < H
    dgamma = tl.zeros([BLOCK_COLS], dtype=tl.float32)
    dbeta = tl.zeros([BLOCK_COLS], dtype=tl.float32)
    for start in range(0, P, BLOCK_P):
        rows = start + tl.arange(0, BLOCK_P)
        tile = rows[:, None] * H + cols[None, :]
        ok = (rows[:, None] < P) & col_ok[None, :]
        dgamma += tl.sum(tl.load(dgamma_part_ptr + tile, mask=ok, other=0.0), axis=0)
        dbeta += tl.sum(tl.load(dbeta_part_ptr + tile, mask=ok, other=0.0), axis=0)
    tl.store(dgamma_ptr + cols, dgamma, mask=col_ok)
    tl.store(dbeta_ptr + cols, dbeta, mask=col_ok)
