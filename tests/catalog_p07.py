"""Known-buggy kernels for puzzle 7 (broadcast multiply + ReLU, backward), each the reference solution
with one bug patched in (tests/test_contract.py rejects each for its stated reason), and correct
kernels written differently (which must pass)."""
from catalog import Alternative, Bug

ATOMIC = "    tl.atomic_add(dx_ptr + cols, g * y, mask=mask)\n"
RELU = "    g = tl.where(x * y > 0, dz, 0.0)\n"

BUGS = [
    Bug("dx_plain_store", "backward",
        ((ATOMIC, "    tl.store(dx_ptr + cols, g * y, mask=mask)\n", 1),),
        reasons=(("data race",), ("dx_ptr",), ("atomic",)),
        reasons_unsanitized=(("overwritten", "overwrote"),),
        misleading=("program_id", "were lost"),
        notes="each program stores its own share: the last one to store wins. Sanitized: a race on dx; "
              "unsanitized (programs in order), dx holds the last row's share alone"),
    Bug("dx_load_add_store", "backward",
        ((ATOMIC, "    total = tl.load(dx_ptr + cols, mask=mask)\n"
                  "    tl.store(dx_ptr + cols, total + g * y, mask=mask)\n", 1),),
        reasons=(("data race",), ("dx_ptr",), ("atomic",)),
        misleading=("program_id",),
        cpu_blind_without_sanitizer=True,
        notes="right in the interpreter, which runs the programs one after another; on a GPU two programs "
              "load the same total and one share is lost"),
    Bug("dx_uses_its_own_factor", "backward",
        ((ATOMIC, "    tl.atomic_add(dx_ptr + cols, g * x, mask=mask)\n", 1),),
        reasons=(("the other factor, y[i]",),),
        misleading=("were lost", "overwr", "race", "mask"),
        notes="a wrong formula: on the identical-shares case the total is not a whole number of shares, so "
              "no hint may blame lost or overwritten updates"),
    Bug("dx_share_without_y", "backward",
        ((ATOMIC, "    tl.atomic_add(dx_ptr + cols, g, mask=mask)\n", 1),),
        reasons=(("elements off",), ("dx",)),
        misleading=("were lost", "overwr", "race", "atomic"),
        notes="a wrong formula no variant names: on the identical-shares case dx is 1.3 M, not a whole number "
              "k < M of shares 0.481, so the lost-update hint must stay away (and there is no other hint)"),
    Bug("relu_gradient_one_at_zero", "backward",
        ((RELU, "    g = tl.where(x * y >= 0, dz, 0.0)\n", 1),),
        reasons=(("not >= 0",),),
        misleading=("were lost", "overwr", "race", "atomic"),
        notes="fails only where x[j] * y[i] is exactly 0; the masked lanes (x = 0) pass the test too, but "
              "their atomic_add is masked and their x is 0 in dy's sum, so only the zeros case fails"),
    Bug("backward_without_relu", "backward",
        ((RELU, "    g = dz\n", 1),),
        reasons=(("without the ReLU",),),
        misleading=("were lost", "overwr", "race", "atomic")),
    Bug("dx_atomic_without_mask", "backward",
        ((ATOMIC, "    tl.atomic_add(dx_ptr + cols, g * y)\n", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("dx_ptr",)),
        misleading=("program_id",), gpu_by_chance=True,
        notes="the lanes past N add 0 past the end of dx: still a write outside the tensor (on a GPU, "
              "visible only when those bytes belong to something the check reads)"),
    Bug("forward_ignores_the_row", "forward",
        (("    y = tl.load(y_ptr + row).to(tl.float32)  # one scalar",
          "    y = tl.load(y_ptr).to(tl.float32)  # one scalar", 1),),
        reasons=(("every row matches y[0]",),),
        misleading=("atomic", "race", "mask"),
        notes="every row uses y[0]"),
]

ALTERNATIVES = [
    Alternative("relu_mask_from_the_recomputed_output", (
        (RELU, "    z = tl.maximum(x * y, 0.0)  # the forward's output, recomputed\n"
               "    g = tl.where(z > 0, dz, 0.0)\n", 1),),
        notes="tests the recomputed z instead of the product"),
    Alternative("forward_with_where_and_dx_masked_share", (
        ("tl.store(z_ptr + row * N + cols, tl.maximum(x * y, 0.0), mask=mask)",
         "tl.store(z_ptr + row * N + cols, tl.where(x * y > 0, x * y, 0.0), mask=mask)", 1),
        (ATOMIC, "    share = tl.where(mask, g * y, 0.0)\n    tl.atomic_add(dx_ptr + cols, share, mask=mask)\n", 1)),
        notes="ReLU as a where, and the share zeroed on masked lanes before the atomic"),
]
