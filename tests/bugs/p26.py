"""Every known kernel of puzzle 26 (a fast LayerNorm + Linear training step): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING), the learner bugs
and rewrites tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch
(EQUIVALENT). What each list means: tests/bugs/__init__.py. A slow kernel is not a wrong one:
--bench, not the tests, judges speed."""
from bugs import Bug, Kernel, Right
from bugs.reasons import MASKED_OUT, ZERO_PARTNER, WHERE_ZEROES

EPILOGUE = "    y = rstd[:, None] * (acc - mean[:, None] * wg_sum[None, :]) + bias[None, :]\n"

PINNED = [
    Bug("epilogue_without_the_mean", "forward",
        ((EPILOGUE, "    y = rstd[:, None] * acc + bias[None, :]\n", 1),),
        cause="formula",
        reasons=(("y",), ("without the mean",)),
        not_causes=("atomic",),
        notes="the product was taken on x itself, not on x - mean: the epilogue must take mean * wg_sum off", code='variant.no_mean_in_epilogue'),
    Bug("variance_from_uncentred_squares", "forward",
        (("    diff = tl.where(ok, x - mean[:, None], 0.0)  # padded lanes would add mean^2\n"
          "    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=1) / H + eps)\n",
          "    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / H - mean * mean + eps)\n", 1),),
        cause="stability", named="none",
        reasons=(("y",), ("rows near 1000",)),
        not_causes=("atomic",),
        notes="E[x^2] - E[x]^2 in fp32: right for centred rows, digits cancel when the mean is 1000"),
    Bug("wg_sum_before_rounding", "forward",
        (("        sum_wg += wg.to(tl.float32)\n", "        sum_wg += w * gamma\n", 1),),
        cause="precision", named="none",
        reasons=(("y",),),
        interpreter_blind=True,
        gpu_reasons=(("y",), ("rows near 1000",)),
        notes="in fp32 wg is not rounded, so the interpreter cannot tell; in bf16 mean * wg_sum no longer "
              "cancels the rounded product's share of the mean"),
    Bug("dz_descriptor_coordinates_in_tiles", "step",
        (("            dy = dy_desc.load([tile_m * BLOCK_M, start])\n", "            dy = dy_desc.load([tile_m, start])\n", 1),),
        cause="address", named="candidates",
        reasons=(("dx",), ("more rows than one row tile",)),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="a descriptor's load takes element coordinates: tile_m is a tile number, so every row tile "
              "but the first reads dy's rows from the wrong place; one-tile cases pass"),
    Bug("dgamma_from_x_not_x_hat", "step",
        (("        dgamma_acc += dz * x_hat\n", "        dgamma_acc += dz * x\n", 1),),
        cause="formula", named="none",
        reasons=(("dgamma",),),
        not_causes=("atomic",)),
    Bug("db_row_slabs_all_start_at_row_0", "step",
        (("    first = tl.program_id(1) * ROWS_PER_PROGRAM\n", "    first = 0 * ROWS_PER_PROGRAM\n", 1),),
        cause="address", named="none",
        reasons=(("db",),),
        not_causes=("atomic",),
        notes="dgamma and dbeta use one row of programs and stay right; db's slabs all add up dy's first rows"),
    Bug("dx_programs_overlap", "step",
        (("    for first in range(pid * ROWS, M, programs * ROWS):", "    for first in range(pid * ROWS, M, ROWS):", 1),),
        cause="loop", named="none",
        reasons=(("Data race on `dx_ptr`", "Data race on `z_ptr`"), ("belongs to exactly one program",)),
        not_causes=("atomic",),
        notes="every program walks every later row: dx and z are written by several programs"),
    Bug("product_tiles_stepped_by_three", "forward",
        (("    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0), flatten=True):",
          "    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, 3, flatten=True):", 1),),
        cause="hardcoded", named="candidates",
        reasons=(("tl.num_programs(0)",), ("PROGRAMS = 2",)),
        not_causes=("atomic",),
        notes="the interpreter's 3 programs written into the forward product's walk over its tiles: right "
              "where 3 or more programs walk them, tiles never written where the launch starts 2 (one per SM "
              "on a GPU)", code='values.unwritten'),
    Bug("wg_sum_added_into_an_uncleared_buffer", "forward",
        (("    tl.store(wg_sum_ptr + n, tl.sum(sum_wg, axis=0))\n", "    tl.atomic_add(wg_sum_ptr + n, tl.sum(sum_wg, axis=0))\n", 1),),
        cause="accumulate", named="candidates",
        reasons=(("y",), ("NaN",)),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="wg_sum is scratch (torch.empty's, poisoned by the checker), not zeros: adding into it keeps "
              "whatever it held; before the poison some cases passed by the luck of the allocator", code='values.nonfinite'),
    Bug("epilogue_product_steps_by_block_n", "forward",
        (("        for start in range(0, H, BLOCK_K):  # descriptor", "        for start in range(0, H, BLOCK_N):  # descriptor", 1),),
        cause="loop", named="none",
        reasons=(("y",), ("M=40, H=40, N=36",)),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="right while BLOCK_N = BLOCK_K (16 by default); the cases with BLOCK_K = 32 add tiles twice"),
]

PASSING = [
    Right("rsqrt", (("    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=1) / H + eps)\n",
                           "    rstd = tl.rsqrt(tl.sum(diff * diff, axis=1) / H + eps)\n", 1),),
                notes="tl.rsqrt instead of 1 / sqrt: a different rounding, within the tolerance"),
    Right("tiles_in_row_major_order",
                (("    tile_m = first_m + (pid % per_group) % group_m\n    tile_n = (pid % per_group) // group_m\n"
                  "    return tile_m, tile_n\n", "    return pid // tiles_n, pid % tiles_n\n", 1),),
                notes="no grouping: slower on a GPU (less reuse in L2), the same values"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
STATS_X = "x = tl.load(x_ptr + rows[:, None] * H + cols[None, :], mask=ok, other=0.0).to(tl.float32)\n    mean = tl.sum(x, axis=1) / H"
EPILOGUE_LINE = "y = rstd[:, None] * (acc - mean[:, None] * wg_sum[None, :]) + bias[None, :]"
DZ_STORE = "tl.store(dz_ptr + rows[:, None] * H + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < H))"

MEASURED = [
    Bug("folded_bias_without_b", "forward",
        (("tl.store(bias_ptr + n, tl.sum(w_beta, axis=0) + tl.load(b_ptr + n).to(tl.float32))",
          "tl.store(bias_ptr + n, tl.sum(w_beta, axis=0))", 1),),
        "formula", "the folded bias is W·β alone: the Linear's own b forgotten"),
    Bug("stats_rows_block_apart", "forward",
        ((STATS_X, STATS_X.replace("rows[:, None] * H", "rows[:, None] * BLOCK_H"), 1),),
        "address", "the statistics read row m at m * BLOCK_H instead of m * H"),
    Bug("epilogue_parentheses_dropped", "forward",
        ((EPILOGUE_LINE, "y = rstd[:, None] * acc - mean[:, None] * wg_sum[None, :] + bias[None, :]", 1),),
        "formula", "y = rstd·acc − mean·wg_sum + bias: the mean term is not scaled by rstd"),
    Bug("forward_tile_coordinates_swapped", "forward",
        (("        tile_m, tile_n = grouped_tile(tile, tiles_m, tiles_n, GROUP_M)",
          "        tile_n, tile_m = grouped_tile(tile, tiles_m, tiles_n, GROUP_M)", 1),),
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
    Right("epilogue_distributed", ((EPILOGUE_LINE, "y = rstd[:, None] * acc - (rstd * mean)[:, None] * wg_sum[None, :] + bias[None, :]", 1),),
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


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
# ln_dx_kernel is launched with ROWS=1, and its loop starts every row block below M
ONE_ROW = "the launch passes ROWS=1, so every row block is one row below M: no lane is padded"
EQUIVALENT = {
    "fill.other:fold_weight_kernel:59979a89:0": ZERO_PARTNER,
    "fill.other:ln_epilogue_linear_kernel:b6066601:0": MASKED_OUT,
    "fill.other:ln_epilogue_linear_kernel:42116a0f:0": MASKED_OUT,
    "fill.other:ln_dx_kernel:a888557a:0": MASKED_OUT,
    # the launch passes ROWS=1 to ln_dx_kernel: its row blocks are single rows below M
    "mask.keep_one:ln_dx_kernel:7f2e86b7:0": "the launch passes ROWS=1, so every row block is one row below "
                                             "M and row_ok is always true",
    "fill.other:ln_dx_kernel:6e4e8848:0": ONE_ROW,
    "fill.other:fold_weight_kernel:d2910709:0": ZERO_PARTNER,
    "fill.other:fold_weight_kernel:a350de6a:0": ZERO_PARTNER,
    "fill.other:ln_epilogue_linear_kernel:6e4e8848:0": MASKED_OUT,
    "fill.other:ln_epilogue_linear_kernel:1d2e49b8:0": MASKED_OUT,
    "fill.other:ln_dx_kernel:3e2b28c1:0": ZERO_PARTNER,
    "mask.lt_le:ln_dx_kernel:82cf5080:0": "the launch passes ROWS=1, so every row block is one row below M: "
                                          "rows <= M holds wherever rows < M does",
    "mask.drop:ln_dx_kernel:673ff175:0": "the launch passes ROWS=1, so every row block is one row below M: the "
                                         "load of mean never reaches past it",
    "mask.drop:ln_dx_kernel:761fe6a8:0": "the launch passes ROWS=1, so every row block is one row below M: the "
                                         "load of rstd never reaches past it",
    "fill.other:ln_dx_kernel:1d2e49b8:0": ONE_ROW,
    "fill.other:ln_dx_kernel:5976519f:0": WHERE_ZEROES,
    "fill.other:ln_dx_kernel:22a2fe82:0": "dz's padded columns meet gamma's padded 0 in g and x_hat's 0 (the "
                                          "tl.where) in dgamma; in dbeta they reach only columns the masked "
                                          "store leaves out",
    "fill.where:ln_dx_kernel:79225438:0": "x_hat's padded lanes meet g's 0 (dz and gamma load 0 there) and dz's 0 "
                                          "in dgamma; dx and z are stored masked",
}
