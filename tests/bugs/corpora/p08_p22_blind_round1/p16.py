"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 16 (Linear backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_W_LOAD = "        w = tl.load(w_ptr + ns[:, None] * K + ks[None, :], mask=n_ok[:, None] & k_ok[None, :], other=0.0)\n"
_DX_STORE = "    tl.store(dx_ptr + rows[:, None] * K + ks[None, :], acc, mask=row_ok[:, None] & k_ok[None, :])\n"
_DYT = ("        dyt = tl.load(dy_ptr + ms[None, :] * N + outs[:, None], mask=out_ok[:, None] & m_ok[None, :],\n"
        "                      other=0.0)\n")

_DX_PTRS = '''
@triton.jit
def linear_bwd_dx_kernel(dy_ptr, w_ptr, dx_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """Pointer blocks built once and moved BLOCK_N along N each step (dy right, W down)."""
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    nn = tl.arange(0, BLOCK_N)
    dy_ptrs = dy_ptr + rows[:, None] * N + nn[None, :]
    w_ptrs = w_ptr + nn[:, None] * K + ks[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)
    n0 = 0
    while n0 < N:
        left = N - n0
        a = tl.load(dy_ptrs, mask=(rows[:, None] < M) & (nn[None, :] < left), other=0.0)
        b = tl.load(w_ptrs, mask=(nn[:, None] < left) & (ks[None, :] < K), other=0.0)
        acc = acc + tl.dot(a, b)
        dy_ptrs += BLOCK_N
        w_ptrs += BLOCK_N * K
        n0 += BLOCK_N
    out = dx_ptr + rows[:, None] * K + ks[None, :]
    tl.store(out, acc.to(dx_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (ks[None, :] < K))
'''

_DW_TRANS = '''
@triton.jit
def linear_bwd_dw_kernel(dy_ptr, x_ptr, dw_ptr, db_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """dy's tile loaded as stored, [BLOCK_M, BLOCK_N], and turned with tl.trans for the dot;
    db summed over axis 0 of the untransposed tile."""
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    outs = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    for i in range(0, tl.cdiv(M, BLOCK_M)):
        ms = i * BLOCK_M + tl.arange(0, BLOCK_M)
        dy = tl.load(dy_ptr + ms[:, None] * N + outs[None, :],
                     mask=(ms[:, None] < M) & (outs[None, :] < N), other=0.0)
        x = tl.load(x_ptr + ms[:, None] * K + ks[None, :],
                    mask=(ms[:, None] < M) & (ks[None, :] < K), other=0.0)
        acc += tl.dot(tl.trans(dy), x)
        db += tl.sum(dy.to(tl.float32), axis=0)
    tl.store(dw_ptr + outs[:, None] * K + ks[None, :], acc, mask=(outs[:, None] < N) & (ks[None, :] < K))
    if pid_k == 0:
        tl.store(db_ptr + outs, db, mask=outs < N)
'''

MEASURED = [
    # part dx
    Bug("dx_w_row_stride_n", "dx",
        ((_W_LOAD, "        w = tl.load(w_ptr + ns[:, None] * N + ks[None, :], mask=n_ok[:, None] & k_ok[None, :], other=0.0)\n", 1),),
        "address", "W's rows stepped by N instead of K: W is [N, K], so row n starts n * K elements in"),
    Bug("dx_w_transposed_tile", "dx",
        ((_W_LOAD, "        w = tl.load(w_ptr + ks[None, :] * N + ns[:, None], mask=n_ok[:, None] & k_ok[None, :], other=0.0)\n", 1),),
        "address", "the forward pass's W^T offsets reused: dx = dy W needs W as stored, element (n, k) at n * K + k"),
    Bug("dx_store_mask_rows_only", "dx",
        ((_DX_STORE, "    tl.store(dx_ptr + rows[:, None] * K + ks[None, :], acc, mask=row_ok[:, None])\n", 1),),
        "mask", "the store of dx masks the rows but not the columns: the last column tile writes past K into the next row"),
    Bug("dx_loop_counts_blocks", "dx",
        (("    for n0 in range(0, N, BLOCK_N):\n        ns = n0 + tl.arange(0, BLOCK_N)\n        n_ok = ns < N\n        dy = tl.load(dy_ptr + rows",
          "    for n0 in range(0, tl.cdiv(N, BLOCK_N)):\n        ns = n0 + tl.arange(0, BLOCK_N)\n        n_ok = ns < N\n        dy = tl.load(dy_ptr + rows", 1),),
        "loop", "the loop counts blocks (0, 1, ...) but uses the counter as an element offset: the steps overlap and the tail of N is never reached"),
    Bug("dx_acc_overwritten", "dx",
        (("        acc += tl.dot(dy, w)\n", "        acc = tl.dot(dy, w)\n", 1),),
        "accumulate", "acc = tl.dot(...) replaces the running sum each step: only the last block of N survives"),
    Bug("dx_loop_bound_hardcoded", "dx",
        (("    for n0 in range(0, N, BLOCK_N):\n", "    for n0 in range(0, 24, BLOCK_N):\n", 1),),
        "hardcoded", "the sum over N runs to the documented N = 24, not to the N passed in"),
    # part dw
    Bug("dw_dyt_strides_not_swapped", "dw",
        ((_DYT, "        dyt = tl.load(dy_ptr + ms[None, :] + outs[:, None] * M, mask=out_ok[:, None] & m_ok[None, :],\n"
                "                      other=0.0)\n", 1),),
        "address", "the tile of dy^T read as if dy^T were stored ([N, M], element (n, m) at n * M + m): dy is [M, N], (n, m) is at m * N + n"),
    Bug("dw_dyt_rows_unmasked", "dw",
        ((_DYT, "        dyt = tl.load(dy_ptr + ms[None, :] * N + outs[:, None], mask=out_ok[:, None],\n"
                "                      other=0.0)\n", 1),),
        "mask", "the dy^T tile masks only the output columns: rows past M are read (past the end of dy) and land in db"),
    Bug("dw_acc_input_dtype", "dw",
        (("    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)\n    db = tl.zeros([BLOCK_N], dtype=tl.float32)\n",
          "    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=x_ptr.dtype.element_ty)\n    db = tl.zeros([BLOCK_N], dtype=dy_ptr.dtype.element_ty)\n", 1),),
        "precision", "dW and db accumulated in the input dtype: with bf16 inputs every step's running sum is rounded to 8 bits"),
    Bug("dw_db_writer_wrong_axis", "dw",
        (("    if pid_k == 0:\n", "    if tl.program_id(0) == 0:\n", 1),),
        "address", "the single db writer chosen by program_id(0) instead of program_id(1): only the first block of outputs gets db (and its programs race)"),
    Bug("dw_db_sum_wrong_axis", "dw",
        (("        db += tl.sum(dyt.to(tl.float32), axis=1)\n", "        db += tl.sum(dyt.to(tl.float32), axis=0)\n", 1),),
        "formula", "db summed over axis 0 of the transposed tile (over the outputs) instead of axis 1 (over the rows)"),
]

RIGHT = [
    Right("dx_pointer_increments_while", (Kernel("linear_bwd_dx_kernel", _DX_PTRS),),
          "pointer blocks advanced each step in a while loop, the mask from the elements left; same sum over N"),
    Right("dw_trans_of_stored_tile", (Kernel("linear_bwd_dw_kernel", _DW_TRANS),),
          "dy's tile loaded in its own layout and turned with tl.trans (the book's alternative); db summed over the rows axis 0; loop over block indices"),
]
