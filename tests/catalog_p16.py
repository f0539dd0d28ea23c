"""Known-buggy kernels for puzzle 16 (Linear backward), each the reference solution with one bug
patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

DB_STORE = "    if pid_k == 0:\n        tl.store(db_ptr + outs, db, mask=out_ok)\n"
DYT_LOAD = ("dyt = tl.load(dy_ptr + ms[None, :] * N + outs[:, None], mask=out_ok[:, None] & m_ok[None, :],\n"
            "                      other=0.0)")

BUGS = [
    Bug("db_stored_by_every_program", "dw",
        ((DB_STORE, "    tl.store(db_ptr + outs, db, mask=out_ok)\n", 1),),
        reasons=(("data race",), ("db_ptr",), ("exactly one program",)),
        gpu_blind=True,
        misleading=("atomic",),
        cpu_blind_without_sanitizer=True,
        notes="every program of a column of tiles stores the same db: the values are right, but several "
              "plain stores to one element race (a GPU gives no order); one writer per element"),
    Bug("dx_reads_w_transposed_as_in_the_forward", "dx",
        (("w = tl.load(w_ptr + ns[:, None] * K + ks[None, :],",
          "w = tl.load(w_ptr + ks[None, :] * N + ns[:, None],", 1),),
        reasons=(("W read transposed",),),
        misleading=("atomic", "mask", "race")),
    Bug("dw_stored_in_the_k_by_n_layout", "dw",
        (("tl.store(dw_ptr + outs[:, None] * K + ks[None, :], acc,",
          "tl.store(dw_ptr + ks[None, :] * N + outs[:, None], acc,", 1),),
        reasons=(("wrong shape",), ("transposed",)),
        misleading=("atomic", "were lost", "overwr", "race"),
        notes="a wrong layout, not a sharing problem: no hint may mention lost or overwritten updates"),
    Bug("dw_first_m_step_only", "dw",
        (("for m0 in range(0, M, BLOCK_M):", "for m0 in range(0, BLOCK_M, BLOCK_M):", 1),),
        reasons=(("more rows than one BLOCK_M",),),
        misleading=("atomic", "were lost", "race", "one tile along K")),
    Bug("dy_tile_without_m_mask", "dw",
        ((DYT_LOAD, "dyt = tl.load(dy_ptr + ms[None, :] * N + outs[:, None], mask=out_ok[:, None],\n"
                    "                      other=0.0)", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("dy_ptr",)),
        misleading=("atomic",),
        notes="the last M step reads rows of dy past its end: dW may survive (x's rows are masked to 0), "
              "db adds them"),
    Bug("db_summed_over_the_wrong_axis", "dw",
        (("db += tl.sum(dyt.to(tl.float32), axis=1)", "db += tl.sum(tl.sum(dyt.to(tl.float32), axis=0), axis=0)", 1),),
        reasons=(("db",),),
        misleading=("atomic", "were lost", "overwr", "race"),
        notes="a wrong formula (all of dy summed into every element): no hint may blame lost updates"),
    Bug("db_summed_in_bf16", "dw",
        (("    db = tl.zeros([BLOCK_N], dtype=tl.float32)", "    db = tl.zeros([BLOCK_N], dtype=dy_ptr.dtype.element_ty)", 1),
         ("        db += tl.sum(dyt.to(tl.float32), axis=1)", "        db += tl.sum(dyt, axis=1)", 1)),
        reasons=(("db:",), ("bfloat16",)),
        misleading=("atomic", "race", "out of bounds"),
        notes="right for fp32 inputs; with bf16 dy the 40 rows are summed in bf16 (8 bits) and db, kept in "
              "fp32 to 1e-4, is off by a bf16 rounding: the CPU's small bf16 case shows it"),
]

ALTERNATIVES = [
    Alternative("dy_tile_loaded_as_stored_then_tl_trans", (
        (DYT_LOAD, "dy = tl.load(dy_ptr + ms[:, None] * N + outs[None, :], mask=m_ok[:, None] & out_ok[None, :],\n"
                   "                     other=0.0)  # [BLOCK_M, BLOCK_N], dy's own layout\n"
                   "        dyt = tl.trans(dy)", 1),),
        notes="dy's tile read in its own layout and transposed in registers"),
    Alternative("db_only_where_stored", (
        ("        db += tl.sum(dyt.to(tl.float32), axis=1)\n",
         "        if pid_k == 0:  # only the program that stores db sums it\n"
         "            db += tl.sum(dyt.to(tl.float32), axis=1)\n", 1),),
        notes="the programs that never store db skip its sum"),
]
