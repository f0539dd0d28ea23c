"""Known-buggy kernels for puzzle 17 (histogram), each the reference solution with one bug patched
in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

ATOMIC = "    tl.atomic_add(hist_ptr + bins, 1, mask=mask)\n"

BUGS = [
    Bug("plain_load_add_store", "forward",
        ((ATOMIC, "    count = tl.load(hist_ptr + bins, mask=mask)\n"
                  "    tl.store(hist_ptr + bins, count + 1, mask=mask)\n", 1),),
        reasons=(("Data race on `hist_ptr`",), ("tl.atomic_add",)),
        reasons_unsanitized=(("were lost", "overwrote"), ("tl.atomic_add",)),
        misleading=("belongs to exactly one program", "switch off the lanes", "mask the loads"),
        notes="the classic: lanes of one block that share a bin all store count + 1 (wrong even in the "
              "plain interpreter), and programs race on a GPU; the sanitizer names the race"),
    Bug("no_mask", "forward",
        (("bins = tl.load(x_ptr + offsets, mask=mask)", "bins = tl.load(x_ptr + offsets)", 1),
         ("tl.atomic_add(hist_ptr + bins, 1, mask=mask)", "tl.atomic_add(hist_ptr + bins, 1)", 1)),
        reasons=(("Out-of-bounds load from `x_ptr`",), ("mask = offsets < n_elements",)),
        misleading=("atomic_add", "Data race", "lost")),
    Bug("atomic_without_mask", "forward",
        (("tl.atomic_add(hist_ptr + bins, 1, mask=mask)", "tl.atomic_add(hist_ptr + bins, 1)", 1),),
        reasons=(("masked-off lanes were counted",),),
        misleading=("Data race", "were lost", "overwr"),
        notes="the load is masked, so the padded lanes hold 0 in the interpreter (garbage on a GPU) "
              "and count one hit each in bin 0"),
    Bug("element_index_as_bin", "forward",
        (("tl.atomic_add(hist_ptr + bins, 1", "tl.atomic_add(hist_ptr + offsets, 1", 1),),
        reasons=(("Out-of-bounds atomic update of `hist_ptr`",), ("not its offset i",)),
        misleading=("Data race", "lost", "Loop over the row"),
        notes="counts at the element's position instead of its bin: past the end of hist once N > B"),
    Bug("no_program_id", "forward",
        (("offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)", 1),),
        reasons=(("no offset depends on tl.program_id",),),
        misleading=("Data race", "were lost", "overwr"),
        notes="every program counts the first block again"),
]

ALTERNATIVES = [
    Alternative("add_zero_on_padded_lanes",
                (("bins = tl.load(x_ptr + offsets, mask=mask)",
                  "bins = tl.load(x_ptr + offsets, mask=mask, other=0)", 1),
                 (ATOMIC, "    tl.atomic_add(hist_ptr + bins, mask.to(tl.int32))\n", 1)),
                notes="no mask on the atomic: padded lanes point at bin 0 (other=0) and add 0 there"),
    Alternative("relaxed_ordering",
                ((ATOMIC, "    tl.atomic_add(hist_ptr + bins, 1, mask=mask, sem=\"relaxed\")\n", 1),),
                notes="no memory ordering is needed around a count: the cheapest atomic will do"),
]
