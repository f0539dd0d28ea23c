"""Known-buggy kernels for puzzle 26 (a fast LayerNorm + Linear training step), and correct ones
written differently. A slow kernel is not a wrong one: --bench, not the catalog, judges speed."""
from catalog import Alternative, Bug

EPILOGUE = "    y = rstd[:, None] * (acc - mean[:, None] * wg_sum[None, :]) + bias[None, :]\n"

BUGS = [
    Bug("epilogue_without_the_mean", "forward",
        ((EPILOGUE, "    y = rstd[:, None] * acc + bias[None, :]\n", 1),),
        reasons=(("y",), ("without the mean",)),
        misleading=("atomic", "race"),
        notes="the product was taken on x itself, not on x - mean: the epilogue must take mean * wg_sum off"),
    Bug("variance_from_uncentred_squares", "forward",
        (("    diff = tl.where(ok, x - mean[:, None], 0.0)  # padded lanes would add mean^2\n"
          "    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=1) / H + eps)\n",
          "    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / H - mean * mean + eps)\n", 1),),
        reasons=(("y",), ("rows near 1000",)),
        misleading=("atomic", "race"),
        notes="E[x^2] - E[x]^2 in fp32: right for centred rows, digits cancel when the mean is 1000"),
    Bug("wg_sum_before_rounding", "forward",
        (("        sum_wg += wg.to(tl.float32)\n", "        sum_wg += w * gamma\n", 1),),
        reasons=(("y",),),
        interpreter_blind=True,
        gpu_reasons=(("y",), ("rows near 1000",)),
        notes="in fp32 wg is not rounded, so the interpreter cannot tell; in bf16 mean * wg_sum no longer "
              "cancels the rounded product's share of the mean"),
    Bug("dz_descriptor_coordinates_in_tiles", "step",
        (("            dy = dy_desc.load([tile_m * BLOCK_M, start])\n", "            dy = dy_desc.load([tile_m, start])\n", 1),),
        reasons=(("dx",), ("more rows than one row tile",)),
        misleading=("atomic", "race", "out-of-bounds"),
        notes="a descriptor's load takes element coordinates: tile_m is a tile number, so every row tile "
              "but the first reads dy's rows from the wrong place; one-tile cases pass"),
    Bug("dgamma_from_x_not_x_hat", "step",
        (("        dgamma_acc += dz * x_hat\n", "        dgamma_acc += dz * x\n", 1),),
        reasons=(("dgamma",),),
        misleading=("atomic", "lost", "race")),
    Bug("db_row_slabs_all_start_at_row_0", "step",
        (("    first = tl.program_id(1) * ROWS_PER_PROGRAM\n", "    first = 0 * ROWS_PER_PROGRAM\n", 1),),
        reasons=(("db",),),
        misleading=("atomic", "race"),
        notes="dgamma and dbeta use one row of programs and stay right; db's slabs all add up dy's first rows"),
    Bug("dx_programs_overlap", "step",
        (("    for first in range(pid * ROWS, M, programs * ROWS):", "    for first in range(pid * ROWS, M, ROWS):", 1),),
        reasons=(("Data race on `dx_ptr`", "Data race on `z_ptr`"), ("belongs to exactly one program",)),
        misleading=("atomic_add",),
        notes="every program walks every later row: dx and z are written by several programs"),
    Bug("wg_sum_added_into_an_uncleared_buffer", "forward",
        (("    tl.store(wg_sum_ptr + n, tl.sum(sum_wg, axis=0))\n", "    tl.atomic_add(wg_sum_ptr + n, tl.sum(sum_wg, axis=0))\n", 1),),
        reasons=(("y",), ("NaN",)),
        misleading=("race", "out-of-bounds", "lost"),
        notes="wg_sum is scratch (torch.empty's, poisoned by the checker), not zeros: adding into it keeps "
              "whatever it held; before the poison some cases passed by the luck of the allocator"),
    Bug("epilogue_product_steps_by_block_n", "forward",
        (("        for start in range(0, H, BLOCK_K):  # descriptor", "        for start in range(0, H, BLOCK_N):  # descriptor", 1),),
        reasons=(("y",), ("M=40, H=40, N=36",)),
        misleading=("atomic", "race", "out-of-bounds"),
        notes="right while BLOCK_N = BLOCK_K (16 by default); the cases with BLOCK_K = 32 add tiles twice"),
]

ALTERNATIVES = [
    Alternative("rsqrt", (("    rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=1) / H + eps)\n",
                           "    rstd = tl.rsqrt(tl.sum(diff * diff, axis=1) / H + eps)\n", 1),),
                notes="tl.rsqrt instead of 1 / sqrt: a different rounding, within the tolerance"),
    Alternative("tiles_in_row_major_order",
                (("    tile_m = first_m + (pid % per_group) % group_m\n    tile_n = (pid % per_group) // group_m\n"
                  "    return tile_m, tile_n\n", "    return pid // tiles_n, pid % tiles_n\n", 1),),
                notes="no grouping: slower on a GPU (less reuse in L2), the same values"),
]
