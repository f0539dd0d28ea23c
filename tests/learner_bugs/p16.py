"""Learner bugs for puzzle 16 (Linear backward), and correct kernels written differently."""
from entries import Bug, Kernel, Right

DY = "dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :],"
X = "x = tl.load(x_ptr + ms[:, None] * K + ks[None, :], mask=m_ok[:, None] & k_ok[None, :],"
DB_STORE = "    if pid_k == 0:\n        tl.store(db_ptr + outs, db, mask=out_ok)"

BUGS = [
    Bug("dy_rows_k_long", "dx",
        ((DY, DY.replace("rows[:, None] * N", "rows[:, None] * K"), 1),),
        "address", "dy's row m read at m * K instead of m * N"),
    Bug("dx_accumulator_inside_the_loop", "dx",
        (("    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)\n    for n0 in range(0, N, BLOCK_N):\n",
          "    for n0 in range(0, N, BLOCK_N):\n        acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)\n", 1),),
        "accumulate", "dx's accumulator created inside the loop over N: only the last step's product is kept"),
    Bug("n_masked_with_m", "dx",
        (("n_ok = ns < N\n        dy = tl.load", "n_ok = ns < M\n        dy = tl.load", 1),),
        "mask", "the N mask of the dx loop compares with M"),
    Bug("db_atomic_added_by_every_k_tile", "dw",
        ((DB_STORE, "    tl.atomic_add(db_ptr + outs, db, mask=out_ok)", 1),),
        "accumulate", "db added with tl.atomic_add by every program of a column of tiles, into an output "
        "nobody zeroed (and once per K tile)", accept=("atomic",)),
    Bug("x_rows_n_long", "dw",
        ((X, X.replace("ms[:, None] * K", "ms[:, None] * N"), 1),),
        "address", "x's row m read at m * N instead of m * K"),
    Bug("db_sums_x", "dw",
        (("db += tl.sum(dyt.to(tl.float32), axis=1)", "db += tl.sum(x.to(tl.float32), axis=0)", 1),),
        "formula", "db summed from x's tile instead of dy's"),
    Bug("m_loop_steps_by_block_n", "dw",
        (("for m0 in range(0, M, BLOCK_M):", "for m0 in range(0, M, BLOCK_N):", 1),),
        "loop", "the loop over the rows steps by BLOCK_N while each step reads BLOCK_M rows"),
    Bug("dx_loop_bound_k", "dx",
        (("for n0 in range(0, N, BLOCK_N):", "for n0 in range(0, K, BLOCK_N):", 1),),
        "loop", "dx's loop over N bounded by K"),
]

RIGHT = [
    Right("dx_w_tile_transposed_twice", (
        ("w = tl.load(w_ptr + ns[:, None] * K + ks[None, :], mask=n_ok[:, None] & k_ok[None, :], other=0.0)",
         "wt = tl.load(w_ptr + ns[None, :] * K + ks[:, None], mask=n_ok[None, :] & k_ok[:, None], other=0.0)\n"
         "        w = tl.trans(wt)", 1),), "W's tile read as [BLOCK_K, BLOCK_N], then tl.trans"),
    Right("dx_pointers_advance", (Kernel("linear_bwd_dx_kernel", '''
        @triton.jit
        def linear_bwd_dx_kernel(dy_ptr, w_ptr, dx_ptr, M, N, K,
                                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
            lanes = tl.arange(0, BLOCK_N)
            dy_ptrs = dy_ptr + rows[:, None] * N + lanes[None, :]
            w_ptrs = w_ptr + lanes[:, None] * K + ks[None, :]
            acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
            for n0 in range(0, N, BLOCK_N):
                left = N - n0
                dy = tl.load(dy_ptrs, mask=(rows[:, None] < M) & (lanes[None, :] < left), other=0.0)
                w = tl.load(w_ptrs, mask=(lanes[:, None] < left) & (ks[None, :] < K), other=0.0)
                acc = tl.dot(dy, w, acc)
                dy_ptrs += BLOCK_N
                w_ptrs += BLOCK_N * K
            tl.store(dx_ptr + rows[:, None] * K + ks[None, :], acc, mask=(rows[:, None] < M) & (ks[None, :] < K))
        '''),), "dx with pointer tiles advanced each step and tl.dot accumulating in place"),
]
