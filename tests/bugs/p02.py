"""Every known kernel of puzzle 2 (blocks and masks): the bugs tests/test_contract.py pins (PINNED) and
the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right

PINNED = [
    Bug("no_mask", "forward",
        (("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)", 1),
         ("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(y_ptr + offsets)", 1),
         ("tl.store(z_ptr + offsets, x + y, mask=mask)", "tl.store(z_ptr + offsets, x + y)", 1)),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds", "past the end"), ("x_ptr", "`x`")),
        not_causes=("atomic", "hardcoded"),
        # without the sanitizer (as on a GPU) z's own elements come out right: the store past its end
        # is seen in the band after z (checker/evidence/guards.py)
        reasons_unsanitized=(("past the end of `z`",), ("mask",)),
        notes="the last block reads x past its end: the sanitizer stops at the first load", code='fault.oob'),
    Bug("program_id_forgotten", "forward",
        (("offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)", 1),),
        cause="address",
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",), ("tl.program_id(0)",)),
        not_causes=("atomic",),
        notes="every program handles block 0: the programs store the same elements of z (a race), and "
              "the elements past the first block are never written", code='fault.race'),
    Bug("program_id_not_times_block", "forward",
        (("offsets = pid * BLOCK + tl.arange(0, BLOCK)", "offsets = pid + tl.arange(0, BLOCK)", 1),),
        cause="address",
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",),),
        not_causes=("atomic",),
        notes="program p starts at element p, not p * BLOCK: neighbouring programs' blocks overlap", code='fault.race'),
    Bug("mask_off_by_one", "forward",
        (("mask = offsets < N", "mask = offsets <= N", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds", "past the end"), ("offsets < N",), ("`<` for `<=`",),
                 ("up to index 7 = N",)),
        # the mask's own words, not a mask to add after the `<=` sentence, in the kernel's own names
        # (issue 35, item 4); N = 7 in a block of 8 lets every lane through, and is still `<=`
        not_words=("A mask would only hide", "n_elements"),
        gpu_reasons=(("past the end of `z`",), ("mask",)),
        not_causes=("atomic",),
        notes="offset N itself passes the mask: one element past the end of x, y and z. z's own values are "
              "right on a GPU; the stray store shows in the band of known bits after z (checker/evidence/guards.py, "
              "seen on an H100)", code='fault.oob'),
    Bug("tail_block_dropped", "forward",
        (("mask = offsets < N", "mask = offsets < N // BLOCK * BLOCK", 1),),
        cause="mask", named="candidates",
        reasons=(("never written",), ("last block",)),
        not_causes=("atomic",),
        notes="what a grid of N // BLOCK programs leaves undone: the partial last block is never written "
              "(for N < BLOCK, nothing is)", code='values.unwritten'),
    Bug("x_loaded_twice", "forward",
        (("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(x_ptr + offsets, mask=mask)", 1),),
        cause="address",
        reasons=(("x + x",), ("y_ptr",)),
        not_causes=("atomic",), not_words=("never written", "offsets < N", "program_id"),
        notes="a copied load line: z = 2 x", code='variant.x_twice'),
]

PASSING = [
    Right("clamped_loads_masked_store", (
        ("    x = tl.load(x_ptr + offsets, mask=mask)\n    y = tl.load(y_ptr + offsets, mask=mask)\n",
         "    safe = tl.minimum(offsets, N - 1)  # lanes past the end re-read the last element\n"
         "    x = tl.load(x_ptr + safe)\n    y = tl.load(y_ptr + safe)\n", 1),),
        notes="no mask on the loads: offsets clamped into [0, N), only the store is masked"),
    Right("pointer_blocks_and_other", (
        ("    x = tl.load(x_ptr + offsets, mask=mask)\n    y = tl.load(y_ptr + offsets, mask=mask)\n"
         "    # Masked-off lanes hold garbage (their load did nothing); the masked store drops them.\n"
         "    tl.store(z_ptr + offsets, x + y, mask=mask)",
         "    total = tl.load(x_ptr + offsets, mask=mask, other=0.0) + tl.load(y_ptr + offsets, mask=mask, other=0.0)\n"
         "    tl.store(z_ptr + offsets, total, mask=offsets < N)", 1),),
        notes="masked lanes load 0.0 explicitly; one expression"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
OFFSETS = "offsets = pid * BLOCK + tl.arange(0, BLOCK)"

MEASURED = [
    Bug("program_id_of_axis_1", "forward",
        (("pid = tl.program_id(0)", "pid = tl.program_id(1)", 1),),
        "address", "the program id of axis 1, always 0 on a 1-D grid: every program takes block 0"),
    Bug("blocks_n_apart", "forward",
        ((OFFSETS, "offsets = pid * N + tl.arange(0, BLOCK)", 1),),
        "address", "program p starts at p * N instead of p * BLOCK"),
    Bug("block_start_in_bytes", "forward",
        ((OFFSETS, "offsets = pid * BLOCK * 4 + tl.arange(0, BLOCK)", 1),),
        "address", "the block's start in bytes (4 per float32) instead of elements"),
    Bug("mask_against_the_block", "forward",
        (("mask = offsets < N", "mask = offsets < BLOCK", 1),),
        "mask", "the mask compares with the block size instead of N"),
    Bug("loads_unmasked", "forward",
        (("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)", 1),
         ("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(y_ptr + offsets)", 1)),
        "mask", "the store is masked, the loads are not: the last block reads past the end"),
    Bug("difference_not_sum", "forward",
        (("tl.store(z_ptr + offsets, x + y, mask=mask)", "tl.store(z_ptr + offsets, x - y, mask=mask)", 1),),
        "formula", "x - y instead of x + y"),
    Bug("mask_with_the_documented_size", "forward",
        (("mask = offsets < N", "mask = offsets < 10", 1),),
        "hardcoded", "mask = offsets < 10, the documented N"),
]

RIGHT = [
    Right("mask_from_what_is_left", ((OFFSETS, "start = pid * BLOCK\n    lanes = tl.arange(0, BLOCK)\n"
                                      "    offsets = start + lanes", 1),
                                     ("mask = offsets < N", "mask = lanes < N - start", 1)),
          "the mask as lanes < N - start: how many elements are left for this program"),
    Right("base_pointers_per_block", (Kernel("add_vectors_kernel", '''
        @triton.jit
        def add_vectors_kernel(x_ptr, y_ptr, z_ptr, N, BLOCK: tl.constexpr):
            start = tl.program_id(0) * BLOCK
            lanes = tl.arange(0, BLOCK)
            ok = start + lanes < N
            x_block, y_block, z_block = x_ptr + start, y_ptr + start, z_ptr + start
            a = tl.load(x_block + lanes, mask=ok, other=1.0)
            b = tl.load(y_block + lanes, mask=ok, other=-1.0)
            tl.store(z_block + lanes, a + b, mask=ok)
        '''),), "each program moves the base pointers to its block first; padded lanes load +1 and -1"),
]
