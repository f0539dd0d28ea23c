"""Learner bugs for puzzle 18 (embedding forward and backward), and correct kernels written differently."""
from entries import Bug, Right

GATHER = "values = tl.load(weight_ptr + row * D + cols, mask=mask)"
PUT = "tl.store(y_ptr + t * D + cols, values, mask=mask)"
DY = "dy = tl.load(dy_ptr + t * D + cols, mask=mask).to(tl.float32)"
SCATTER = "tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)"
BWD_HEAD = ("    t = tl.program_id(0)\n    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)\n    mask = cols < D\n"
            "    row = tl.load(ids_ptr + t).to(tl.int64)\n    # The forward pass")

BUGS = [
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
