"""Learner bugs for puzzle 26 (a fast LayerNorm + Linear training step), and correct kernels written differently."""
from entries import Bug, Kernel, Right

STATS_X = "x = tl.load(x_ptr + rows[:, None] * H + cols[None, :], mask=ok, other=0.0).to(tl.float32)\n    mean = tl.sum(x, axis=1) / H"
EPILOGUE = "y = rstd[:, None] * (acc - mean[:, None] * wg_sum[None, :]) + bias[None, :]"
DZ_STORE = "tl.store(dz_ptr + rows[:, None] * H + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < H))"

BUGS = [
    Bug("folded_bias_without_b", "forward",
        (("tl.store(bias_ptr + n, tl.sum(w_beta, axis=0) + tl.load(b_ptr + n).to(tl.float32))",
          "tl.store(bias_ptr + n, tl.sum(w_beta, axis=0))", 1),),
        "formula", "the folded bias is W·β alone: the Linear's own b forgotten"),
    Bug("stats_rows_block_apart", "forward",
        ((STATS_X, STATS_X.replace("rows[:, None] * H", "rows[:, None] * BLOCK_H"), 1),),
        "address", "the statistics read row m at m * BLOCK_H instead of m * H"),
    Bug("epilogue_parentheses_dropped", "forward",
        ((EPILOGUE, "y = rstd[:, None] * acc - mean[:, None] * wg_sum[None, :] + bias[None, :]", 1),),
        "formula", "y = rstd·acc − mean·wg_sum + bias: the mean term is not scaled by rstd"),
    Bug("forward_tile_coordinates_swapped", "forward",
        (("    tile_m, tile_n = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)",
          "    tile_n, tile_m = grouped_tile(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)", 1),),
        "address", "grouped_tile's (row tile, column tile) unpacked the other way round"),
    Bug("dw_dy_tile_not_transposed", "step",
        (("acc = tl.dot(dy.T, z, acc)", "acc = tl.dot(dy, z, acc)", 1),),
        "address", "dW's product uses dy's [BLOCK_K, BLOCK_M] block as loaded, without .T",
        accept=("formula",)),
    Bug("dx_mean_g_over_the_block", "step",
        (("mean_g = tl.sum(g, axis=1) / H", "mean_g = tl.sum(g, axis=1) / BLOCK_H", 1),),
        "formula", "mean(g) divided by BLOCK_H instead of H"),
    Bug("column_sums_bound_not_clamped", "step",
        (("last = tl.minimum(first + ROWS_PER_PROGRAM, R)", "last = first + ROWS_PER_PROGRAM", 1),),
        "mask", "the last slab's end not clamped to R: its rows past the end are read", accept=("loop",)),
    Bug("dz_rows_n_long", "step",
        ((DZ_STORE, DZ_STORE.replace("rows[:, None] * H", "rows[:, None] * N"), 1),),
        "address", "dz's row m stored at m * N instead of m * H"),
    Bug("stats_padded_lanes_load_one", "forward",
        ((STATS_X, STATS_X.replace("other=0.0", "other=1.0"), 1),),
        "fill", "the statistics' padded lanes load 1.0: each adds 1 to the row sum, the mean is off"),
    Bug("dz_loop_over_h", "step",
        (("for start in range(0, N, BLOCK_K):", "for start in range(0, H, BLOCK_K):", 1),),
        "loop", "dz = dy W's loop over N bounded by H"),
]

RIGHT = [
    Right("epilogue_distributed", ((EPILOGUE, "y = rstd[:, None] * acc - (rstd * mean)[:, None] * wg_sum[None, :] + bias[None, :]", 1),),
          "the epilogue with rstd distributed over the two terms"),
    Right("column_sums_row_by_row", (Kernel("fixed_order_sum_kernel", '''
        @triton.jit
        def fixed_order_sum_kernel(src_ptr, dst_ptr, R, C, ROWS_PER_PROGRAM, BLOCK_R: tl.constexpr, BLOCK_COLS: tl.constexpr):
            cols = tl.program_id(0) * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
            ok = cols < C
            first = tl.program_id(1) * ROWS_PER_PROGRAM
            last = tl.minimum(first + ROWS_PER_PROGRAM, R)
            acc = tl.zeros([BLOCK_COLS], dtype=tl.float32)
            for r in range(first, last):
                acc += tl.load(src_ptr + r * C + cols, mask=ok, other=0.0).to(tl.float32)
            tl.store(dst_ptr + tl.program_id(1) * C + cols, acc, mask=ok)
        '''),), "the column sums add one row at a time, in order"),
]
