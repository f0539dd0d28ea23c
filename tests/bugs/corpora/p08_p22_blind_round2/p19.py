"""Blind corpus (round 2 for p08-p22), puzzle 19 (Split-M weight gradient): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("plain_store_share", "dw",
        (("tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share,", "tl.store(dw_ptr + ks[:, None] * N + ns[None, :], share,", 1),),
        "atomic", "stores each row block's share with a plain store: the row blocks overwrite each other instead of summing"),
    Bug("dw_stored_p16_layout", "dw",
        (("tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :]", "tl.atomic_add(dw_ptr + ks[:, None] + ns[None, :] * K", 1),),
        "address", "adds into dw with puzzle 16's [N, K] layout instead of this puzzle's [K, N]"),
    Bug("xt_row_stride_N", "dw",
        (("xt = tl.load(x_ptr + rows[None, :] * K", "xt = tl.load(x_ptr + rows[None, :] * N", 1),),
        "address", "steps between rows of x by N (dy's row length) instead of K"),
    Bug("dy_mask_no_rows", "dw",
        (("dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)",
          "dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=n_ok[None, :], other=0.0)", 1),),
        "mask", "leaves the row mask off the dy tile, trusting x's zeros: the last row block reads past the end of dy"),
    Bug("atomic_unmasked", "dw",
        (("share, mask=k_ok[:, None] & n_ok[None, :])", "share)", 1),),
        "mask", "adds the whole tile without a mask: the edge tiles add into elements past K and N"),
    Bug("k_bound_is_N", "dw",
        (("k_ok = ks < K ", "k_ok = ks < N ", 1),),
        "mask", "bounds the K lanes by N: with K < N lanes past K read and write outside their rows"),
    Bug("x_stride_hardcoded", "dw",
        (("xt = tl.load(x_ptr + rows[None, :] * K", "xt = tl.load(x_ptr + rows[None, :] * 20", 1),),
        "hardcoded", "writes the documented K = 20 as x's row length instead of the argument K"),
    Bug("pid_axes_k_n_swapped", "dw",
        (("ks = tl.program_id(1) * BLOCK_K", "ks = tl.program_id(2) * BLOCK_K", 1),
         ("ns = tl.program_id(2) * BLOCK_N", "ns = tl.program_id(1) * BLOCK_N", 1)),
        "address", "takes the K block from grid axis 2 and the N block from axis 1, the launch's other way round"),
    Bug("loops_all_rows_too", "dw",
        (Kernel("splitm_dw_kernel", '''@triton.jit
def splitm_dw_kernel(x_ptr, dy_ptr, dw_ptr, M, K, N,
                     BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    ns = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_ok = ks < K
    n_ok = ns < N
    share = tl.zeros([BLOCK_K, BLOCK_N], dtype=tl.float32)
    # walk the rows as in puzzle 16
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        row_ok = rows < M
        xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)
        dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)
        share += tl.dot(xt, dy)
    tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])
'''),),
        "loop", "every program walks all M rows although the grid already splits M: each row is added once per row block"),
]

RIGHT = [
    Right("load_x_then_trans",
          (("xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)",
            "x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)\n    xt = tl.trans(x)", 1),),
          "loads x's tile in its own layout and transposes it in registers: the same X^T tile"),
    Right("broadcast_sum_instead_of_dot",
          (("share = tl.dot(xt, dy)  # [BLOCK_K, BLOCK_N]",
            "share = tl.sum(xt.to(tl.float32)[:, :, None] * dy.to(tl.float32)[None, :, :], axis=1)", 1),),
          "forms the product as a broadcast multiply and a sum over the row axis instead of tl.dot: same fp32 sum"),
]
