"""Every known kernel of puzzle 7 (broadcast multiply + ReLU, backward): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING), the learner bugs
and rewrites tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch
(EQUIVALENT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
from bugs.reasons import MASKED_OUT, PROMOTED

ATOMIC = "    tl.atomic_add(dx_ptr + cols, g * y, mask=mask)\n"
RELU = "    g = tl.where(x * y > 0, dz, 0.0)\n"

PINNED = [
    Bug("dx_plain_store", "backward",
        ((ATOMIC, "    tl.store(dx_ptr + cols, g * y, mask=mask)\n", 1),),
        cause="atomic",
        reasons=(("data race",), ("dx_ptr",)),
        reasons_unsanitized=(("overwritten", "overwrote"),),
        not_words=("program_id", "were lost"),
        notes="each program stores its own share: the last one to store wins. Sanitized: a race on dx; "
              "unsanitized (programs in order), dx holds the last row's share alone", code='fault.race'),
    Bug("dx_load_add_store", "backward",
        ((ATOMIC, "    total = tl.load(dx_ptr + cols, mask=mask)\n"
                  "    tl.store(dx_ptr + cols, total + g * y, mask=mask)\n", 1),),
        cause="atomic",
        reasons=(("data race",), ("dx_ptr",)),
        not_words=("program_id",),
        cpu_blind_without_sanitizer=True,
        notes="right in the interpreter, which runs the programs one after another; on a GPU two programs "
              "load the same total and one share is lost", code='fault.race'),
    Bug("dx_uses_its_own_factor", "backward",
        ((ATOMIC, "    tl.atomic_add(dx_ptr + cols, g * x, mask=mask)\n", 1),),
        cause="formula",
        reasons=(("the other factor, y[i]",),),
        not_causes=("atomic", "mask"),
        notes="a wrong formula: on the identical-shares case the total is not a whole number of shares, so "
              "no hint may blame lost or overwritten updates", code='variant.dx_times_x'),
    Bug("dx_share_without_y", "backward",
        ((ATOMIC, "    tl.atomic_add(dx_ptr + cols, g, mask=mask)\n", 1),),
        cause="formula", named="none",
        reasons=(("elements off",), ("dx",)),
        not_causes=("atomic",),
        notes="a wrong formula no variant names: on the identical-shares case dx is 1.3 M, not a whole number "
              "k < M of shares 0.481, so the lost-update hint must stay away (and there is no other hint)"),
    Bug("relu_gradient_one_at_zero", "backward",
        ((RELU, "    g = tl.where(x * y >= 0, dz, 0.0)\n", 1),),
        cause="formula",
        reasons=(("not >= 0",),),
        not_causes=("atomic",),
        notes="fails only where x[j] * y[i] is exactly 0; the masked lanes (x = 0) pass the test too, but "
              "their atomic_add is masked and their x is 0 in dy's sum, so only the zeros case fails", code='variant.relu_grad_one_at_zero'),
    Bug("backward_without_relu", "backward",
        ((RELU, "    g = dz\n", 1),),
        cause="formula",
        reasons=(("without the ReLU",),),
        not_causes=("atomic",), code='variant.no_relu_mask'),
    Bug("dx_atomic_without_mask", "backward",
        ((ATOMIC, "    tl.atomic_add(dx_ptr + cols, g * y)\n", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("dx_ptr",)),
        not_words=("program_id",), gpu_by_chance=True,
        notes="the lanes past N add 0 past the end of dx: still a write outside the tensor (on a GPU, "
              "visible only when those bytes belong to something the check reads)", code='fault.oob'),
    Bug("forward_ignores_the_row", "forward",
        (("    y = tl.load(y_ptr + row).to(tl.float32)  # one scalar",
          "    y = tl.load(y_ptr).to(tl.float32)  # one scalar", 1),),
        cause="address",
        reasons=(("every row matches y[0]",),),
        not_causes=("atomic", "mask"),
        notes="every row uses y[0]", code='variant.every_row_uses_y0'),
]

PASSING = [
    Right("relu_mask_from_the_recomputed_output", (
        (RELU, "    z = tl.maximum(x * y, 0.0)  # the forward's output, recomputed\n"
               "    g = tl.where(z > 0, dz, 0.0)\n", 1),),
        notes="tests the recomputed z instead of the product"),
    Right("forward_with_where_and_dx_masked_share", (
        ("tl.store(z_ptr + row * N + cols, tl.maximum(x * y, 0.0), mask=mask)",
         "tl.store(z_ptr + row * N + cols, tl.where(x * y > 0, x * y, 0.0), mask=mask)", 1),
        (ATOMIC, "    share = tl.where(mask, g * y, 0.0)\n    tl.atomic_add(dx_ptr + cols, share, mask=mask)\n", 1)),
        notes="ReLU as a where, and the share zeroed on masked lanes before the atomic"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
FWD_STORE = "tl.store(z_ptr + row * N + cols, tl.maximum(x * y, 0.0), mask=mask)"
DZ = "dz = tl.load(dz_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)"
DY = "tl.store(dy_ptr + row, tl.sum(g * x, axis=0))"
DX = "tl.atomic_add(dx_ptr + cols, g * y, mask=mask)"

MEASURED = [
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


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "precision.cast:bcast_relu_fwd_kernel:7d8ff1f0:0": PROMOTED,
    "fill.other:bcast_relu_fwd_kernel:873c43b4:0": MASKED_OUT,
    "fill.other:bcast_relu_bwd_kernel:873c43b4:0": "dz loads 0 on the padded lanes, so g = where(x * y > 0, dz, 0) "
                                                    "is 0 there whatever x holds",
    "fill.other:bcast_relu_bwd_kernel:b1ae9142:0": "x loads 0 on the padded lanes, so x * y > 0 fails there and "
                                                    "g = 0 whatever dz holds",
}
