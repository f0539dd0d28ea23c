"""Learner bugs for puzzle 19 (split-M weight gradient), and correct kernels written differently."""
from entries import Bug, Right

XT = "xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)"
DY = "dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)"
ADD = "tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])"

BUGS = [
    Bug("dy_rows_k_long", "dw",
        ((DY, DY.replace("rows[:, None] * N", "rows[:, None] * K"), 1),),
        "address", "dy's row m read at m * K instead of m * N"),
    Bug("x_rows_n_long", "dw",
        ((XT, XT.replace("rows[None, :] * K", "rows[None, :] * N"), 1),),
        "address", "x's row m read at m * N instead of m * K"),
    Bug("x_rows_not_masked", "dw",
        ((XT, XT.replace("mask=k_ok[:, None] & row_ok[None, :]", "mask=k_ok[:, None]"), 1),),
        "mask", "xᵀ's tile masked along K only: the last row block reads rows past M"),
    Bug("rows_and_n_axes_swapped", "dw",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(2) * BLOCK_M", 1),
         ("ns = tl.program_id(2) * BLOCK_N", "ns = tl.program_id(0) * BLOCK_N", 1)),
        "address", "row blocks from program_id(2) and N blocks from program_id(0): the grid's axes are the other way"),
    Bug("share_averaged_over_the_blocks", "dw",
        ((ADD, ADD.replace("share, mask", "share / tl.num_programs(0), mask"), 1),),
        "formula", "each row block's share divided by the number of row blocks"),
    Bug("product_in_bf16", "dw",
        (("share = tl.dot(xt, dy)", "share = tl.dot(xt.to(tl.bfloat16), dy.to(tl.bfloat16))", 1),),
        "precision", "the operands cast to bf16 for the tensor cores: fp32 inputs lose 16 bits"),
    # the interpreter cannot run tl.atomic_xchg on fp32 ("Unsupported data type"); a GPU can
    Bug("atomic_exchange_not_add", "dw",
        ((ADD, ADD.replace("tl.atomic_add(", "tl.atomic_xchg("), 1),),
        "atomic", "the share put in with tl.atomic_xchg: each row block replaces the others' shares instead of adding"),
]

RIGHT = [
    Right("share_by_broadcast_sum", (("share = tl.dot(xt, dy)", "share = tl.sum(xt[:, :, None] * dy[None, :, :], axis=1)", 1),),
          "the block's product as a broadcast multiply and a sum over the rows, no tl.dot"),
    Right("atomic_on_pointer_tile", ((ADD, "dst = dw_ptr + ks[:, None] * N + ns[None, :]\n"
                                      "    tl.atomic_add(dst, share.to(tl.float32), mask=(ks[:, None] < K) & (ns[None, :] < N), sem=\"relaxed\")", 1),),
          "the destination tile first, the mask written out, a relaxed atomic"),
]
