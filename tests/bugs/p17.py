"""Every known kernel of puzzle 17 (histogram): the bugs tests/test_contract.py pins (PINNED) and the
correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py measures
(MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right

ATOMIC = "    tl.atomic_add(hist_ptr + bins, 1, mask=mask)\n"

PINNED = [
    Bug("plain_load_add_store", "forward",
        ((ATOMIC, "    count = tl.load(hist_ptr + bins, mask=mask)\n"
                  "    tl.store(hist_ptr + bins, count + 1, mask=mask)\n", 1),),
        cause="atomic",
        reasons=(("Data race on `hist_ptr`",), ("tl.atomic_add",)),
        reasons_unsanitized=(("were lost", "overwrote"), ("tl.atomic_add",)),
        not_causes=("mask",), not_words=("belongs to exactly one program",),
        notes="the classic: lanes of one block that share a bin all store count + 1 (wrong even in the "
              "plain interpreter), and programs race on a GPU; the sanitizer names the race", code='fault.race'),
    Bug("no_mask", "forward",
        (("bins = tl.load(x_ptr + offsets, mask=mask)", "bins = tl.load(x_ptr + offsets)", 1),
         ("tl.atomic_add(hist_ptr + bins, 1, mask=mask)", "tl.atomic_add(hist_ptr + bins, 1)", 1)),
        cause="mask",
        reasons=(("Out-of-bounds load from `x_ptr`",), ("mask = offsets < N",)),
        not_causes=("atomic",), code='fault.oob'),
    Bug("atomic_without_mask", "forward",
        (("tl.atomic_add(hist_ptr + bins, 1, mask=mask)", "tl.atomic_add(hist_ptr + bins, 1)", 1),),
        cause="mask",
        reasons=(("lanes a load's mask switched off",),),
        not_causes=("atomic",),
        notes="the load is masked without other=, so the padded lanes hold garbage on a GPU and the "
              "interpreter's loud integer pattern: their bins land far past the histogram", code='fault.oob'),
    Bug("element_index_as_bin", "forward",
        (("tl.atomic_add(hist_ptr + bins, 1", "tl.atomic_add(hist_ptr + offsets, 1", 1),),
        cause="address",
        reasons=(("Out-of-bounds atomic update of `hist_ptr`",), ("not its offset i",)),
        not_causes=("atomic", "loop"),
        notes="counts at the element's position instead of its bin: past the end of hist once N > B", code='variant.offset_as_bin'),
    Bug("no_program_id", "forward",
        (("offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)", 1),),
        cause="address",
        reasons=(("no offset depends on tl.program_id",),),
        not_causes=("atomic",),
        notes="every program counts the first block again", code='addr.program_id_unused'),
]

PASSING = [
    Right("add_zero_on_padded_lanes",
                (("bins = tl.load(x_ptr + offsets, mask=mask)",
                  "bins = tl.load(x_ptr + offsets, mask=mask, other=0)", 1),
                 (ATOMIC, "    tl.atomic_add(hist_ptr + bins, mask.to(tl.int32))\n", 1)),
                notes="no mask on the atomic: padded lanes point at bin 0 (other=0) and add 0 there"),
    Right("relaxed_ordering",
                ((ATOMIC, "    tl.atomic_add(hist_ptr + bins, 1, mask=mask, sem=\"relaxed\")\n", 1),),
                notes="no memory ordering is needed around a count: the cheapest atomic will do"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
ADD = "tl.atomic_add(hist_ptr + bins, 1, mask=mask)"

MEASURED = [
    Bug("bins_in_bytes", "forward",
        ((ADD, "tl.atomic_add(hist_ptr + bins * 4, 1, mask=mask)", 1),),
        "address", "the bin's offset multiplied by 4 (the bytes of an int32)"),
    Bug("bins_counted_from_one", "forward",
        ((ADD, "tl.atomic_add(hist_ptr + bins - 1, 1, mask=mask)", 1),),
        "address", "bin b counted at b - 1, as if bins were numbered from 1"),
    Bug("mask_le", "forward",
        (("mask = offsets < N", "mask = offsets <= N", 1),),
        "mask", "mask = offsets <= N: lane N reads past x and counts a bin that does not exist"),
    Bug("blocks_one_apart", "forward",
        (("offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.program_id(0) + tl.arange(0, BLOCK)", 1),),
        "address", "program p starts at element p instead of p * BLOCK: the blocks overlap, elements are counted "
        "several times"),
    Bug("store_one", "forward",
        ((ADD, "tl.store(hist_ptr + bins, 1, mask=mask)", 1),),
        "atomic", "each hit stores 1 into its bin instead of adding 1"),
    Bug("size_hard_coded", "forward",
        (("mask = offsets < N", "mask = offsets < 20", 1),),
        "hardcoded", "the mask written with 20, the documented N"),
]

RIGHT = [
    Right("block_in_two_halves", (Kernel("histogram_kernel", '''
        @triton.jit
        def histogram_kernel(x_ptr, hist_ptr, N, BLOCK: tl.constexpr):
            for h in tl.static_range(2):  # (a `for` over a tuple of blocks does not compile for a GPU)
                offsets = tl.program_id(0) * BLOCK + h * (BLOCK // 2) + tl.arange(0, BLOCK // 2)
                ok = offsets < N
                tl.atomic_add(hist_ptr + tl.load(x_ptr + offsets, mask=ok, other=0), 1, mask=ok)
        '''),), "each program's block counted in two halves (a static loop over two offset blocks)"),
    Right("ones_as_a_block", ((ADD, "tl.atomic_add(hist_ptr + bins, tl.full([BLOCK], 1, dtype=tl.int32), mask=mask)", 1),),
          "the ones added as an int32 block instead of a scalar"),
]
