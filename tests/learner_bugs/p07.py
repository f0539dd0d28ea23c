"""Learner bugs for puzzle 7 (broadcast multiply + ReLU, backward), and correct kernels written differently."""
from entries import Bug, Right

FWD_STORE = "tl.store(z_ptr + row * N + cols, tl.maximum(x * y, 0.0), mask=mask)"
DZ = "dz = tl.load(dz_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)"
DY = "tl.store(dy_ptr + row, tl.sum(g * x, axis=0))"
DX = "tl.atomic_add(dx_ptr + cols, g * y, mask=mask)"

BUGS = [
    Bug("forward_rows_block_apart", "forward",
        ((FWD_STORE, FWD_STORE.replace("row * N", "row * BLOCK_N"), 1),),
        "address", "row i of z stored at i * BLOCK_N (the padded block) instead of i * N"),
    Bug("forward_y_loaded_as_a_vector", "forward",
        (("y = tl.load(y_ptr + row).to(tl.float32)  # one scalar", "y = tl.load(y_ptr + cols, mask=mask).to(tl.float32)  # one scalar", 1),),
        "address", "y loaded at the column offsets (y[j]) instead of the row's scalar y[i]"),
    Bug("backward_dz_rows_block_apart", "backward",
        ((DZ, DZ.replace("row * N", "row * BLOCK_N"), 1),),
        "address", "dz's row i read at i * BLOCK_N instead of i * N"),
    Bug("dy_weighted_by_y", "backward",
        ((DY, "tl.store(dy_ptr + row, tl.sum(g * y, axis=0))", 1),),
        "formula", "dy[i] sums g * y[i] instead of g * x[j]"),
    Bug("atomic_on_dy_store_on_dx", "backward",
        ((DY, "tl.atomic_add(dy_ptr + row, tl.sum(g * x, axis=0))", 1),
         (DX, "tl.store(dx_ptr + cols, g * y, mask=mask)", 1)),
        "atomic", "the atomic put on dy (one writer) and a plain store on dx (M writers)"),
    Bug("dx_share_rounded_to_bf16", "backward",
        ((DX, "tl.atomic_add(dx_ptr + cols, (g * y).to(tl.bfloat16), mask=mask)", 1),),
        "precision", "each row's share of dx rounded to bf16 before the fp32 atomic add"),
    Bug("relu_gate_on_dz", "backward",
        (("g = tl.where(x * y > 0, dz, 0.0)", "g = tl.where(dz > 0, dz, 0.0)", 1),),
        "formula", "ReLU's gate tested on the upstream gradient dz instead of on x * y"),
]

RIGHT = [
    Right("forward_times_the_gate", ((FWD_STORE, "p = x * y\n    tl.store(z_ptr + row * N + cols, p * (p > 0), mask=mask)", 1),),
          "z = p * (p > 0): the product times its own boolean gate"),
    Right("dx_added_only_where_it_passes", ((DX, "tl.atomic_add(dx_ptr + cols, dz * y, mask=mask & (x * y > 0))", 1),),
          "the atomic add masked to the lanes ReLU let through, with dz * y as the share"),
]
