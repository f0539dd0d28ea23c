"""Learner bugs for puzzle 21 (LayerNorm backward), and correct kernels written differently."""
from entries import Bug, Right

DX = "dx = rstd * (dz * gamma - mean_g - x_hat * mean_gxhat)"
SWEEP3 = ("    for start in range(0, H, BLOCK_H):\n        cols = start + tl.arange(0, BLOCK_H)\n        mask = cols < H\n"
          "        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        dz = tl.load(dz_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        gamma = tl.load(gamma_ptr + cols, mask=mask, other=0.0).to(tl.float32)\n        x_hat")

BUGS = [
    Bug("dx_without_the_mean_of_g", "backward",
        ((DX, "dx = rstd * (dz * gamma - x_hat * mean_gxhat)", 1),),
        "formula", "dx drops the − mean(g) term"),
    Bug("mean_over_the_block", "backward",
        (("mean = tl.sum(sum_x, axis=0) / H", "mean = tl.sum(sum_x, axis=0) / BLOCK_H", 1),),
        "formula", "the mean divided by BLOCK_H instead of H"),
    Bug("dz_rows_block_apart", "backward",
        (("dz_row = dz_ptr + row * H", "dz_row = dz_ptr + row * BLOCK_H", 1),),
        "address", "dz's row read at row * BLOCK_H instead of row * H"),
    Bug("dgamma_indexed_like_x", "backward",
        (("tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)", "tl.atomic_add(dgamma_ptr + row * H + cols, dz * x_hat, mask=mask)", 1),),
        "address", "dgamma addressed like a row of x (row * H + cols): it is one [H] vector"),
    Bug("sum_gd_starts_from_sum_g", "backward",
        (("sum_gd = tl.zeros([BLOCK_H], dtype=tl.float32)", "sum_gd = sum_g", 1),),
        "accumulate", "sweep 2's sum of g·(x − mean) started from sweep 1's sum of g instead of zero"),
    Bug("sweep3_mask_le", "backward",
        ((SWEEP3, SWEEP3.replace("mask = cols < H", "mask = cols <= H"), 1),),
        "mask", "the last sweep's mask is cols <= H"),
    Bug("sweep3_first_chunk_only", "backward",
        ((SWEEP3, SWEEP3.replace("range(0, H, BLOCK_H)", "range(0, BLOCK_H, BLOCK_H)"), 1),),
        "loop", "the last sweep (dx and the parameter shares) covers only the first chunk"),
    Bug("x_hat_in_bf16", "backward",
        (("        x_hat = (x - mean) * rstd\n", "        x_hat = ((x - mean) * rstd).to(tl.bfloat16)\n", 1),),
        "precision", "x̂ kept in bf16 for the last sweep (dx and dgamma's shares lose 16 bits)"),
    Bug("dx_written_into_dz", "backward",
        (("tl.store(dx_ptr + row * H + cols, dx, mask=mask)", "tl.store(dz_row + cols, dx, mask=mask)", 1),),
        "inplace", "dx stored into dz's row (the upstream gradient, an input); dx never written",
        accept=("address",)),
]

RIGHT = [
    Right("rsqrt_and_dx_distributed", (
        ("rstd = 1.0 / tl.sqrt(tl.sum(sum_d2, axis=0) / H + eps)", "rstd = tl.rsqrt(tl.sum(sum_d2, axis=0) / H + eps)", 1),
        (DX, "dx = rstd * (dz * gamma - mean_g) - rstd * x_hat * mean_gxhat", 1)),
          "rstd with tl.rsqrt, dx with rstd distributed"),
    Right("dbeta_before_dgamma_with_relaxed_atomics", (
        ("        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask)\n        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask)",
         "        tl.atomic_add(dbeta_ptr + cols, dz, mask=mask, sem=\"relaxed\")\n"
         "        tl.atomic_add(dgamma_ptr + cols, dz * x_hat, mask=mask, sem=\"relaxed\")", 1),),
          "the two parameter shares added in the other order, with relaxed atomics"),
]
