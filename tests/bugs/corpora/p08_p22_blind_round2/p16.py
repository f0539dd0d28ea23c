"""Blind corpus (round 2 for p08-p22), puzzle 16 (Linear backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("w_read_as_transpose", "dx",
        (("w = tl.load(w_ptr + ns[:, None] * K + ks[None, :]", "w = tl.load(w_ptr + ns[:, None] + ks[None, :] * N", 1),),
        "address", "reads W with the forward pass's transposed strides although dx = dy W uses W as stored"),
    Bug("dx_dy_mask_rows_only", "dx",
        (("mask=row_ok[:, None] & n_ok[None, :],\n                     other=0.0)  # [BLOCK_M, BLOCK_N]",
          "mask=row_ok[:, None],\n                     other=0.0)  # [BLOCK_M, BLOCK_N]", 1),),
        "mask", "masks the dy tile by rows only: the last N step reads past the end of each dy row"),
    Bug("dx_loop_counts_blocks", "dx",
        (("for n0 in range(0, N, BLOCK_N):", "for n0 in range(0, tl.cdiv(N, BLOCK_N)):", 1),),
        "loop", "loops over the number of N blocks but uses the counter as an offset: steps of 1 instead of BLOCK_N"),
    Bug("dx_acc_overwritten", "dx",
        (("acc += tl.dot(dy, w)", "acc = tl.dot(dy, w)", 1),),
        "accumulate", "assigns each step's product instead of adding it: only the last N block survives"),
    Bug("dx_store_row_stride_N", "dx",
        (("tl.store(dx_ptr + rows[:, None] * K", "tl.store(dx_ptr + rows[:, None] * N", 1),),
        "address", "stores dx rows with dy's row length N instead of dx's K"),
    Bug("dyt_read_as_stored_transpose", "dw",
        (("dy_ptr + ms[None, :] * N + outs[:, None]", "dy_ptr + outs[:, None] * M + ms[None, :]", 1),),
        "address", "reads dy^T as if it were stored transposed ([N, M]) instead of swapping dy's strides"),
    Bug("db_overwritten", "dw",
        (("db += tl.sum(dyt.to(tl.float32), axis=1)", "db = tl.sum(dyt.to(tl.float32), axis=1)", 1),),
        "accumulate", "db keeps only the last block of rows' sums instead of adding every step's"),
    Bug("x_mask_no_rows", "dw",
        (("mask=m_ok[:, None] & k_ok[None, :],\n                    other=0.0)  # [BLOCK_M, BLOCK_K]",
          "mask=k_ok[None, :],\n                    other=0.0)  # [BLOCK_M, BLOCK_K]", 1),),
        "mask", "drops the row mask on x: the last M step reads rows past the end of x"),
    Bug("dw_pid_axes_swapped", "dw",
        (("outs = tl.program_id(0) * BLOCK_N", "outs = tl.program_id(1) * BLOCK_N", 1),
         ("pid_k = tl.program_id(1)", "pid_k = tl.program_id(0)", 1)),
        "address", "takes the N block from program axis 1 and the K block from axis 0, the grid's other way round"),
    Bug("dw_m_loop_stops_early", "dw",
        (("for m0 in range(0, M, BLOCK_M):", "for m0 in range(0, M - BLOCK_M, BLOCK_M):", 1),),
        "loop", "stops the row loop one block early: the last rows never reach dW or db"),
    Bug("db_sums_x_tile", "dw",
        (("db += tl.sum(dyt.to(tl.float32), axis=1)", "db += tl.sum(x.to(tl.float32), axis=1)", 1),),
        "formula", "sums the x tile instead of the dy tile for db"),
]

RIGHT = [
    Right("dx_while_loop_transposed_load",
          (Kernel("linear_bwd_dx_kernel", '''@triton.jit
def linear_bwd_dx_kernel(dy_ptr, w_ptr, dx_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
    n0 = 0
    while n0 < N:
        ns = n0 + tl.arange(0, BLOCK_N)
        dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :],
                     mask=(rows[:, None] < M) & (ns[None, :] < N), other=0.0)
        # W^T tile [BLOCK_K, BLOCK_N], then transposed back
        wt = tl.load(w_ptr + ks[:, None] + ns[None, :] * K,
                     mask=(ks[:, None] < K) & (ns[None, :] < N), other=0.0)
        acc = acc + tl.dot(dy, tl.trans(wt))
        n0 += BLOCK_N
    tl.store(dx_ptr + rows[:, None] * K + ks[None, :], acc,
             mask=(rows[:, None] < M) & (ks[None, :] < K))
'''),),
          "a while loop, and W's tile loaded as W^T then tl.trans'd: same products, same sum"),
    Right("dw_two_loops_db_separate",
          (Kernel("linear_bwd_dw_kernel", '''@triton.jit
def linear_bwd_dw_kernel(dy_ptr, x_ptr, dw_ptr, db_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    outs = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for i in range(0, tl.cdiv(M, BLOCK_M)):
        ms = i * BLOCK_M + tl.arange(0, BLOCK_M)
        dy = tl.load(dy_ptr + ms[:, None] * N + outs[None, :],
                     mask=(ms[:, None] < M) & (outs[None, :] < N), other=0.0)  # [BLOCK_M, BLOCK_N]
        x = tl.load(x_ptr + ms[:, None] * K + ks[None, :],
                    mask=(ms[:, None] < M) & (ks[None, :] < K), other=0.0)
        acc += tl.dot(tl.trans(dy), x)
    tl.store(dw_ptr + outs[:, None] * K + ks[None, :], acc, mask=(outs[:, None] < N) & (ks[None, :] < K))
    if pid_k == 0:
        # db in a second pass over dy, only by the programs that store it
        db = tl.zeros([BLOCK_N], dtype=tl.float32)
        for m0 in range(0, M, BLOCK_M):
            ms = m0 + tl.arange(0, BLOCK_M)
            dy = tl.load(dy_ptr + ms[:, None] * N + outs[None, :],
                         mask=(ms[:, None] < M) & (outs[None, :] < N), other=0.0).to(tl.float32)
            db += tl.sum(dy, axis=0)
        tl.store(db_ptr + outs, db, mask=outs < N)
'''),),
          "loads dy in its own layout and transposes with tl.trans; db in a separate pass only where pid_k == 0"),
]
