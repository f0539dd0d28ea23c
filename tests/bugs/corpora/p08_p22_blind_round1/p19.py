"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 19 (Split-M weight gradient): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_XT = "    xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)\n"
_DY = "    dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)\n"
_ADD = "    tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])\n"
_PIDS = ("    ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)\n"
         "    ns = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)\n")

_WALKS_REST = '''
@triton.jit
def splitm_dw_kernel(x_ptr, dy_ptr, dw_ptr, M, K, N,
                     BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    """Each program starts at its row block and walks on to the end of M, as in puzzle 16."""
    ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    ns = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_ok = ks < K
    n_ok = ns < N
    share = tl.zeros([BLOCK_K, BLOCK_N], dtype=tl.float32)
    for m0 in range(tl.program_id(0) * BLOCK_M, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        row_ok = rows < M
        xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)
        dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)
        share += tl.dot(xt, dy)
    tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])
'''

_TRANS = '''
@triton.jit
def splitm_dw_kernel(x_ptr, dy_ptr, dw_ptr, M, K, N,
                     BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    """X's tile loaded as stored, [BLOCK_M, BLOCK_K], and transposed with tl.trans for the dot."""
    pm = tl.program_id(0)
    pk = tl.program_id(1)
    pn = tl.program_id(2)
    rows = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = pk * BLOCK_K + tl.arange(0, BLOCK_K)
    ns = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
    g = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=(rows[:, None] < M) & (ns[None, :] < N), other=0.0)
    part = tl.dot(tl.trans(x), g)
    tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], part, mask=(ks[:, None] < K) & (ns[None, :] < N))
'''

_HALVES = '''
@triton.jit
def splitm_dw_kernel(x_ptr, dy_ptr, dw_ptr, M, K, N,
                     BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_N: tl.constexpr):
    """The row block taken in two halves of BLOCK_M // 2 rows, each half's share added atomically."""
    HALF: tl.constexpr = BLOCK_M // 2
    ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    ns = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)
    k_ok = ks < K
    n_ok = ns < N
    for h in tl.static_range(2):
        rows = tl.program_id(0) * BLOCK_M + h * HALF + tl.arange(0, HALF)
        row_ok = rows < M
        xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)
        dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)
        share = tl.sum(xt[:, :, None] * dy[None, :, :], axis=1)
        tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])
'''

MEASURED = [
    Bug("store_transposed_p16_layout", "dw",
        ((_ADD, "    tl.atomic_add(dw_ptr + ns[None, :] * K + ks[:, None], share, mask=k_ok[:, None] & n_ok[None, :])\n", 1),),
        "address", "puzzle 16's dW layout copied: element (k, n) added at n * K + k, but this dw is [K, N], at k * N + n"),
    Bug("plain_store", "dw",
        ((_ADD, "    tl.store(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])\n", 1),),
        "atomic", "each row block's share stored with tl.store: the blocks overwrite each other, only one share survives"),
    Bug("xt_read_as_stored_transpose", "dw",
        ((_XT, "    xt = tl.load(x_ptr + rows[None, :] + ks[:, None] * M, mask=k_ok[:, None] & row_ok[None, :], other=0.0)\n", 1),),
        "address", "the X^T tile read as if X^T were in memory (k * M + m): X is [M, K], element (k, m) of X^T is at m * K + k"),
    Bug("rows_unmasked", "dw",
        ((_XT, "    xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None], other=0.0)\n", 1),
         (_DY, "    dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=n_ok[None, :], other=0.0)\n", 1)),
        "mask", "the loads mask K and N but not the rows: the last row block reads past M and adds those rows into dw"),
    Bug("m_hardcoded", "dw",
        (("    row_ok = rows < M  # the last", "    row_ok = rows < 40  # the last", 1),),
        "hardcoded", "the row bound written as the documented M = 40"),
    Bug("k_n_program_axes_swapped", "dw",
        ((_PIDS, "    ks = tl.program_id(2) * BLOCK_K + tl.arange(0, BLOCK_K)\n"
                 "    ns = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)\n", 1),),
        "address", "the K block taken from program_id(2) and the N block from program_id(1): the grid is (M, K, N) blocks"),
    Bug("each_program_walks_rest_of_m", "dw",
        (Kernel("splitm_dw_kernel", _WALKS_REST),),
        "loop", "puzzle 16's loop over M kept inside a split-M program: each program sums from its own block to the end, so later blocks are counted several times"),
    Bug("dy_row_stride_k", "dw",
        ((_DY, "    dy = tl.load(dy_ptr + rows[:, None] * K + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)\n", 1),),
        "address", "dy's rows stepped by K (x's row length) instead of N"),
]

RIGHT = [
    Right("trans_of_stored_tile", (Kernel("splitm_dw_kernel", _TRANS),),
          "X's tile loaded in its own layout and turned with tl.trans before the dot: the same share"),
    Right("two_half_blocks_broadcast_sum", (Kernel("splitm_dw_kernel", _HALVES),),
          "the row block split into two halves, each half's product taken as a broadcast multiply and sum over rows and added atomically"),
]
