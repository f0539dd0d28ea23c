"""Every known kernel of puzzle 16 (Linear backward): the bugs tests/test_contract.py pins (PINNED) and
the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What each list means:
tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right
from bugs.reasons import ZERO_PARTNER

DB_STORE = "    if pid_k == 0:\n        tl.store(db_ptr + outs, db, mask=out_ok)\n"
DYT_LOAD = ("dyt = tl.load(dy_ptr + ms[None, :] * N + outs[:, None], mask=out_ok[:, None] & m_ok[None, :],\n"
            "                      other=0.0)")

PINNED = [
    Bug("db_stored_by_every_program", "dw",
        ((DB_STORE, "    tl.store(db_ptr + outs, db, mask=out_ok)\n", 1),),
        cause="address",
        reasons=(("data race",), ("db_ptr",), ("exactly one program",)),
        gpu_blind=True,
        not_causes=("atomic",),
        cpu_blind_without_sanitizer=True,
        notes="every program of a column of tiles stores the same db: the values are right, but several "
              "plain stores to one element race (a GPU gives no order); one writer per element", code='fault.race'),
    Bug("dx_reads_w_transposed_as_in_the_forward", "dx",
        (("w = tl.load(w_ptr + ns[:, None] * K + ks[None, :],",
          "w = tl.load(w_ptr + ks[None, :] * N + ns[:, None],", 1),),
        cause="address",
        reasons=(("W read transposed",),),
        not_causes=("atomic", "mask"), code='addr.step'),
    Bug("dw_stored_in_the_k_by_n_layout", "dw",
        (("tl.store(dw_ptr + outs[:, None] * K + ks[None, :], acc,",
          "tl.store(dw_ptr + ks[None, :] * N + outs[:, None], acc,", 1),),
        cause="address",
        reasons=(("wrong shape",), ("transposed",)),
        not_causes=("atomic",),
        notes="a wrong layout, not a sharing problem: no hint may mention lost or overwritten updates", code='addr.step'),
    Bug("dw_first_m_step_only", "dw",
        (("for m0 in range(0, M, BLOCK_M):", "for m0 in range(0, BLOCK_M, BLOCK_M):", 1),),
        cause="loop", named="candidates",
        reasons=(("more rows than one BLOCK_M",),),
        not_causes=("atomic",), not_words=("one tile along K",)),
    Bug("dy_tile_without_m_mask", "dw",
        ((DYT_LOAD, "dyt = tl.load(dy_ptr + ms[None, :] * N + outs[:, None], mask=out_ok[:, None],\n"
                    "                      other=0.0)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("dy_ptr",)),
        not_causes=("atomic",),
        notes="the last M step reads rows of dy past its end: dW may survive (x's rows are masked to 0), "
              "db adds them", code='fault.oob'),
    Bug("db_summed_over_the_wrong_axis", "dw",
        (("db += tl.sum(dyt.to(tl.float32), axis=1)", "db += tl.sum(tl.sum(dyt.to(tl.float32), axis=0), axis=0)", 1),),
        cause="formula", named="none",
        reasons=(("db",),),
        not_causes=("atomic",),
        notes="a wrong formula (all of dy summed into every element): no hint may blame lost updates", code='values.constant'),
    Bug("db_summed_in_bf16", "dw",
        (("    db = tl.zeros([BLOCK_N], dtype=tl.float32)", "    db = tl.zeros([BLOCK_N], dtype=dy_ptr.dtype.element_ty)", 1),
         ("        db += tl.sum(dyt.to(tl.float32), axis=1)", "        db += tl.sum(dyt, axis=1)", 1)),
        cause="precision", named="candidates",
        reasons=(("db:",), ("bfloat16",)),
        not_causes=("atomic",), not_words=("out of bounds",),
        notes="right for fp32 inputs; with bf16 dy the 40 rows are summed in bf16 (8 bits) and db, kept in "
              "fp32 to 1e-4, is off by a bf16 rounding: the CPU's small bf16 case shows it"),
]

PASSING = [
    Right("dy_tile_loaded_as_stored_then_tl_trans", (
        (DYT_LOAD, "dy = tl.load(dy_ptr + ms[:, None] * N + outs[None, :], mask=m_ok[:, None] & out_ok[None, :],\n"
                   "                     other=0.0)  # [BLOCK_M, BLOCK_N], dy's own layout\n"
                   "        dyt = tl.trans(dy)", 1),),
        notes="dy's tile read in its own layout and transposed in registers"),
    Right("db_only_where_stored", (
        ("        db += tl.sum(dyt.to(tl.float32), axis=1)\n",
         "        if pid_k == 0:  # only the program that stores db sums it\n"
         "            db += tl.sum(dyt.to(tl.float32), axis=1)\n", 1),),
        notes="the programs that never store db skip its sum"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
DY = "dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :],"
X = "x = tl.load(x_ptr + ms[:, None] * K + ks[None, :], mask=m_ok[:, None] & k_ok[None, :],"
DB_STORE_LINE = "    if pid_k == 0:\n        tl.store(db_ptr + outs, db, mask=out_ok)"

MEASURED = [
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
        ((DB_STORE_LINE, "    tl.atomic_add(db_ptr + outs, db, mask=out_ok)", 1),),
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


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:linear_bwd_dx_kernel:9436542e:0": ZERO_PARTNER,
    "fill.other:linear_bwd_dx_kernel:33d42ed0:0": ZERO_PARTNER,
    "fill.other:linear_bwd_dw_kernel:d7c0a10b:0": ZERO_PARTNER,
}
