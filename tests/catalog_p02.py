"""Known-buggy kernels for puzzle 2 (blocks and masks), each the reference solution with one bug
patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

BUGS = [
    Bug("no_mask", "forward",
        (("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)", 1),
         ("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(y_ptr + offsets)", 1),
         ("tl.store(z_ptr + offsets, x + y, mask=mask)", "tl.store(z_ptr + offsets, x + y)", 1)),
        reasons=(("out of bounds", "out-of-bounds", "past the end"), ("x_ptr", "`x`"), ("mask",)),
        misleading=("atomic", "data race", "hard-coded"),
        # without the sanitizer (as on a GPU) z's own elements come out right: the store past its end
        # is seen in the band after z (checker/evidence/guards.py)
        reasons_unsanitized=(("past the end of `z`",), ("mask",)),
        notes="the last block reads x past its end: the sanitizer stops at the first load"),
    Bug("program_id_forgotten", "forward",
        (("offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)", 1),),
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",), ("tl.program_id(0)",)),
        misleading=("atomic",),
        notes="every program handles block 0: the programs store the same elements of z (a race), and "
              "the elements past the first block are never written"),
    Bug("program_id_not_times_block", "forward",
        (("offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = pid + tl.arange(0, BLOCK)", 1),),
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",),),
        misleading=("atomic",),
        notes="program p starts at element p, not p * BLOCK: neighbouring programs' blocks overlap"),
    Bug("mask_off_by_one", "forward",
        (("mask = offsets < N", "mask = offsets <= N", 1),),
        reasons=(("out of bounds", "out-of-bounds", "past the end"), ("offsets < ",)),
        gpu_reasons=(("past the end of `z`",), ("mask",)),
        misleading=("atomic", "data race"),
        notes="offset N itself passes the mask: one element past the end of x, y and z. z's own values are "
              "right on a GPU; the stray store shows in the band of known bits after z (checker/evidence/guards.py, "
              "seen on an H100)"),
    Bug("tail_block_dropped", "forward",
        (("mask = offsets < N", "mask = offsets < N // BLOCK * BLOCK", 1),),
        reasons=(("never written",), ("last block",)),
        misleading=("atomic", "data race"),
        notes="what a grid of N // BLOCK programs leaves undone: the partial last block is never written "
              "(for N < BLOCK, nothing is)"),
    Bug("x_loaded_twice", "forward",
        (("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(x_ptr + offsets, mask=mask)", 1),),
        reasons=(("x + x",), ("y_ptr",)),
        misleading=("atomic", "data race", "never written", "offsets < N", "program_id"),
        notes="a copied load line: z = 2 x"),
]

ALTERNATIVES = [
    Alternative("clamped_loads_masked_store", (
        ("    x = tl.load(x_ptr + offsets, mask=mask)\n    y = tl.load(y_ptr + offsets, mask=mask)\n",
         "    safe = tl.minimum(offsets, N - 1)  # lanes past the end re-read the last element\n"
         "    x = tl.load(x_ptr + safe)\n    y = tl.load(y_ptr + safe)\n", 1),),
        notes="no mask on the loads: offsets clamped into [0, N), only the store is masked"),
    Alternative("pointer_blocks_and_other", (
        ("    x = tl.load(x_ptr + offsets, mask=mask)\n    y = tl.load(y_ptr + offsets, mask=mask)\n"
         "    # Masked-off lanes hold garbage (their load did nothing); the masked store drops them.\n"
         "    tl.store(z_ptr + offsets, x + y, mask=mask)",
         "    total = tl.load(x_ptr + offsets, mask=mask, other=0.0) + tl.load(y_ptr + offsets, mask=mask, other=0.0)\n"
         "    tl.store(z_ptr + offsets, total, mask=offsets < N)", 1),),
        notes="masked lanes load 0.0 explicitly; one expression"),
]
