"""Every known kernel of puzzle 18 (embedding forward and backward): the bugs tests/test_contract.py
pins (PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right

ATOMIC = "    tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)\n"

PINNED = [
    # -- forward -------------------------------------------------------------------------------
    Bug("fwd_no_column_mask", "forward",
        (("values = tl.load(weight_ptr + row * D + cols, mask=mask)",
          "values = tl.load(weight_ptr + row * D + cols)", 1),
         ("tl.store(y_ptr + t * D + cols, values, mask=mask)", "tl.store(y_ptr + t * D + cols, values)", 1)),
        cause="mask", named="candidates",
        reasons=(("Out-of-bounds load from `weight_ptr`",), ("mask",)),
        not_causes=("atomic",),
        notes="the last column block of the table's last row reads past the table", code='fault.oob'),
    Bug("fwd_token_as_row", "forward",
        (("values = tl.load(weight_ptr + row * D + cols, mask=mask)",
          "values = tl.load(weight_ptr + t * D + cols, mask=mask)", 1),),
        cause="address",
        reasons=(("Out-of-bounds load from `weight_ptr`",), ("not the token's position t",)),
        not_causes=("atomic",),
        notes="reads row t instead of row ids[t]: past the table when T > V, the variant hint otherwise", code='variant.token_as_row'),
    Bug("fwd_one_column_block", "forward",
        (("cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)\n    mask = cols < D  # the last",
          "cols = tl.arange(0, BLOCK_D)\n    mask = cols < D  # the last", 1),),
        cause="address",
        reasons=(("Data race on `y_ptr`",), ("belongs to exactly one program",)),
        not_causes=("atomic",),
        notes="every column block's program copies block 0: they all store to the same elements of y", code='fault.race'),
    # -- backward ------------------------------------------------------------------------------
    Bug("bwd_plain_store", "backward",
        ((ATOMIC, "    tl.store(dweight_ptr + row * D + cols, dy, mask=mask)\n", 1),),
        cause="atomic",
        reasons=(("Data race on `dweight_ptr`",), ("tl.atomic_add",)),
        reasons_unsanitized=(("overwr",), ("tl.atomic_add",)),
        not_words=("belongs to exactly one program",),
        notes="the classic: tokens that share an id overwrite each other's row", code='fault.race'),
    Bug("bwd_load_add_store", "backward",
        ((ATOMIC, "    old = tl.load(dweight_ptr + row * D + cols, mask=mask)\n"
                  "    tl.store(dweight_ptr + row * D + cols, old + dy, mask=mask)\n", 1),),
        cause="atomic",
        reasons=(("Data race on `dweight_ptr`",), ("tl.atomic_add",)),
        not_words=("belongs to exactly one program",),
        cpu_blind_without_sanitizer=True,
        notes="right in the plain interpreter (one program at a time), lost updates on a GPU", code='fault.race'),
    Bug("bwd_no_column_mask", "backward",
        (("dy = tl.load(dy_ptr + t * D + cols, mask=mask).to(tl.float32)",
          "dy = tl.load(dy_ptr + t * D + cols).to(tl.float32)", 1),
         (ATOMIC, "    tl.atomic_add(dweight_ptr + row * D + cols, dy)\n", 1)),
        cause="mask",
        reasons=(("Out-of-bounds",),),
        not_causes=("atomic",),
        notes="lanes past D read the next token's dy and add it into the next row of dweight; past the "
              "end of dy for the last token", code='fault.oob'),
    Bug("bwd_token_as_row", "backward",
        ((ATOMIC, "    tl.atomic_add(dweight_ptr + t * D + cols, dy, mask=mask)\n", 1),),
        cause="address",
        reasons=(("Out-of-bounds atomic update of `dweight_ptr`",), ("not the token's position t",)),
        not_causes=("atomic",),
        notes="adds dy[t] into row t: past the table when T > V, the variant hint otherwise", code='variant.token_as_row'),
    Bug("bwd_negated_gradient", "backward",
        ((ATOMIC, "    tl.atomic_add(dweight_ptr + row * D + cols, -dy, mask=mask)\n", 1),),
        cause="formula", named="candidates",
        reasons=(("dweight",), ("elements off",)),
        not_causes=("atomic",),
        notes="a wrong formula (the update direction, not the gradient): no lost-update or atomics hint, "
              "even on the equal-shares case", code='values.sign'),
]

PASSING = [
    Right("int32_row_offsets", (("row = tl.load(ids_ptr + t).to(tl.int64)", "row = tl.load(ids_ptr + t)", 2),),
                notes="int32 offsets: right while V * D < 2**31, as in every case here"),
    Right("relaxed_atomics", ((ATOMIC, "    tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask, "
                                             "sem=\"relaxed\")\n", 1),),
                notes="no ordering is needed between the adds of a sum"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
GATHER = "values = tl.load(weight_ptr + row * D + cols, mask=mask)"
PUT = "tl.store(y_ptr + t * D + cols, values, mask=mask)"
DY = "dy = tl.load(dy_ptr + t * D + cols, mask=mask).to(tl.float32)"
SCATTER = "tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)"
BWD_HEAD = ("    t = tl.program_id(0)\n    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)\n    mask = cols < D\n"
            "    row = tl.load(ids_ptr + t).to(tl.int64)\n    # The forward pass")

MEASURED = [
    Bug("fwd_rows_block_apart", "forward",
        ((GATHER, GATHER.replace("row * D", "row * BLOCK_D"), 1),),
        "address", "the table's row read at id * BLOCK_D instead of id * D"),
    Bug("fwd_stored_at_the_id_row", "forward",
        ((PUT, PUT.replace("t * D", "row * D"), 1),),
        "address", "y's row chosen by the id instead of the token: y[ids[t]] = weight[ids[t]]"),
    Bug("fwd_id_from_the_column_program", "forward",
        (("row = tl.load(ids_ptr + t).to(tl.int64)\n    # Each (t, column block)",
          "row = tl.load(ids_ptr + tl.program_id(1)).to(tl.int64)\n    # Each (t, column block)", 1),),
        "address", "the id loaded with program_id(1), the column block, instead of the token"),
    Bug("bwd_dy_read_at_the_id_row", "backward",
        ((DY, DY.replace("t * D", "row * D"), 1),),
        "address", "dy's row read at the id instead of the token"),
    Bug("bwd_column_blocks_from_program_0", "backward",
        ((BWD_HEAD, BWD_HEAD.replace("cols = tl.program_id(1) * BLOCK_D", "cols = tl.program_id(0) * BLOCK_D"), 1),),
        "address", "the backward's column block taken from program_id(0), the token axis"),
    Bug("bwd_share_rounded_to_bf16", "backward",
        ((SCATTER, "tl.atomic_add(dweight_ptr + row * D + cols, dy.to(tl.bfloat16), mask=mask)", 1),),
        "precision", "each token's row rounded to bf16 before the fp32 atomic add"),
    Bug("fwd_width_hard_coded", "forward",
        ((GATHER, GATHER.replace("row * D", "row * 16"), 1),),
        "hardcoded", "the table's rows 16 apart, the documented D"),
]

RIGHT = [
    Right("fwd_id_broadcast_over_the_lanes", (
        ("row = tl.load(ids_ptr + t).to(tl.int64)\n    # Each (t, column block)",
         "row = tl.load(ids_ptr + t + tl.zeros([BLOCK_D], dtype=tl.int32)).to(tl.int64)\n    # Each (t, column block)", 1),),
          "the id loaded once per lane (the same address BLOCK_D times): a block of equal ids"),
    Right("bwd_row_pointer_first", ((SCATTER, "dst = dweight_ptr + row * D\n    tl.atomic_add(dst + cols, dy, mask=mask)", 1),),
          "the row's pointer computed first, the columns added to it"),
]
