"""Known-buggy kernels for puzzle 18 (embedding forward and backward), each the reference solution
with one bug patched in (tests/test_contract.py rejects each for its stated reason), and correct
kernels written differently (which must pass)."""
from catalog import Alternative, Bug

ATOMIC = "    tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)\n"

BUGS = [
    # -- forward -------------------------------------------------------------------------------
    Bug("fwd_no_column_mask", "forward",
        (("values = tl.load(weight_ptr + row * D + cols, mask=mask)",
          "values = tl.load(weight_ptr + row * D + cols)", 1),
         ("tl.store(y_ptr + t * D + cols, values, mask=mask)", "tl.store(y_ptr + t * D + cols, values)", 1)),
        reasons=(("Out-of-bounds load from `weight_ptr`",), ("mask",)),
        misleading=("atomic", "were lost"),
        notes="the last column block of the table's last row reads past the table"),
    Bug("fwd_token_as_row", "forward",
        (("values = tl.load(weight_ptr + row * D + cols, mask=mask)",
          "values = tl.load(weight_ptr + t * D + cols, mask=mask)", 1),),
        reasons=(("Out-of-bounds load from `weight_ptr`",), ("not the token's position t",)),
        misleading=("atomic", "were lost"),
        notes="reads row t instead of row ids[t]: past the table when T > V, the variant hint otherwise"),
    Bug("fwd_one_column_block", "forward",
        (("cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)\n    mask = cols < D  # the last",
          "cols = tl.arange(0, BLOCK_D)\n    mask = cols < D  # the last", 1),),
        reasons=(("Data race on `y_ptr`",), ("belongs to exactly one program",)),
        misleading=("atomic_add",),
        notes="every column block's program copies block 0: they all store to the same elements of y"),
    # -- backward ------------------------------------------------------------------------------
    Bug("bwd_plain_store", "backward",
        ((ATOMIC, "    tl.store(dweight_ptr + row * D + cols, dy, mask=mask)\n", 1),),
        reasons=(("Data race on `dweight_ptr`",), ("tl.atomic_add",)),
        reasons_unsanitized=(("overwr",), ("tl.atomic_add",)),
        misleading=("belongs to exactly one program",),
        notes="the classic: tokens that share an id overwrite each other's row"),
    Bug("bwd_load_add_store", "backward",
        ((ATOMIC, "    old = tl.load(dweight_ptr + row * D + cols, mask=mask)\n"
                  "    tl.store(dweight_ptr + row * D + cols, old + dy, mask=mask)\n", 1),),
        reasons=(("Data race on `dweight_ptr`",), ("tl.atomic_add",)),
        misleading=("belongs to exactly one program",),
        cpu_blind_without_sanitizer=True,
        notes="right in the plain interpreter (one program at a time), lost updates on a GPU"),
    Bug("bwd_no_column_mask", "backward",
        (("dy = tl.load(dy_ptr + t * D + cols, mask=mask).to(tl.float32)",
          "dy = tl.load(dy_ptr + t * D + cols).to(tl.float32)", 1),
         (ATOMIC, "    tl.atomic_add(dweight_ptr + row * D + cols, dy)\n", 1)),
        reasons=(("Out-of-bounds",), ("mask",)),
        misleading=("were lost", "overwrote each other", "contributions were overwritten", "use tl.atomic_add"),
        notes="lanes past D read the next token's dy and add it into the next row of dweight; past the "
              "end of dy for the last token"),
    Bug("bwd_token_as_row", "backward",
        ((ATOMIC, "    tl.atomic_add(dweight_ptr + t * D + cols, dy, mask=mask)\n", 1),),
        reasons=(("Out-of-bounds atomic update of `dweight_ptr`",), ("not the token's position t",)),
        misleading=("were lost", "overwrote each other", "contributions were overwritten", "Data race"),
        notes="adds dy[t] into row t: past the table when T > V, the variant hint otherwise"),
    Bug("bwd_negated_gradient", "backward",
        ((ATOMIC, "    tl.atomic_add(dweight_ptr + row * D + cols, -dy, mask=mask)\n", 1),),
        reasons=(("dweight",), ("elements off",)),
        misleading=("were lost", "overwr", "Data race", "atomic"),
        notes="a wrong formula (the update direction, not the gradient): no lost-update or atomics hint, "
              "even on the equal-shares case"),
]

ALTERNATIVES = [
    Alternative("int32_row_offsets", (("row = tl.load(ids_ptr + t).to(tl.int64)", "row = tl.load(ids_ptr + t)", 2),),
                notes="int32 offsets: right while V * D < 2**31, as in every case here"),
    Alternative("relaxed_atomics", ((ATOMIC, "    tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask, "
                                             "sem=\"relaxed\")\n", 1),),
                notes="no ordering is needed between the adds of a sum"),
]
