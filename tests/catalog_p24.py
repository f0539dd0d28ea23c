"""Known-buggy kernels for puzzle 24 (lock-grouped accumulation), and correct ones written differently."""
from catalog import Alternative, Bug

SPIN = "    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass\n"

BUGS = [
    Bug("lock_never_released", "backward",
        (("    tl.debug_barrier()\n    tl.atomic_xchg(lock, 0)\n", "    tl.debug_barrier()\n", 1),),
        reasons=(("still running after",), ("lock taken is released",), ("`ln_bwd_locked_kernel`",),
                 ("while tl.atomic_cas(lock, 0, 1) == 1",), ("documented configuration",)),
        timeout=3.0,
        notes="the group's next program spins forever: a hang, stopped at the time limit, kernel, line "
              "and case named"),
    Bug("no_lock_at_all", "backward",
        ((SPIN, "", 1),),
        reasons=(("Data race on `dgamma_part_ptr`",), ("atomic",)),
        misleading=("belongs to exactly one program",),
        cpu_blind_without_sanitizer=True,
        notes="right in the plain interpreter (one program at a time), lost updates on a GPU"),
    Bug("count_never_set", "backward",
        (("        tl.atomic_xchg(count, 1)\n", "", 1),),
        reasons=(("dgamma",), ("dbeta",)),
        misleading=("race", "atomic"),
        notes="every program thinks it is its group's first and stores: each partial row keeps the last share"),
    Bug("first_program_adds_garbage", "backward",
        (("    if tl.load(count) == 0:\n        tl.atomic_xchg(count, 1)\n"
          "        tl.store(dgamma_part_ptr + partial, dz * x_hat, mask=col_ok)\n"
          "        tl.store(dbeta_part_ptr + partial, dz, mask=col_ok)\n    else:\n",
          "    if True:\n", 1),
         ("        dgamma = tl.load(", "        dgamma = tl.load(", 1)),
        reasons=(("dgamma",),),
        notes="always load + add: the first program adds its share to whatever the empty buffer held"),
    # the lock protocol: right in the interpreter's one-program-at-a-time order, so right without the
    # sanitizer (tests/test_locks.py shows that in small, cheaper than a worker process per bug);
    # updates lost on a GPU. checker/interpreter/locks.py makes each visible
    Bug("swap_result_ignored", "backward",
        ((SPIN, "    tl.atomic_cas(lock, 0, 1)\n", 1),),
        reasons=(("Lock not held",), ("found the lock taken",), ("result of tl.atomic_cas ignored",),
                 ("while tl.atomic_cas(lock, 0, 1) == 1",)),
        misleading=("race", "out-of-bounds", "barrier"),
        notes="one try at the lock, taken or not: every program goes on, as if no lock were there"),
    Bug("spin_while_the_swap_succeeds", "backward",
        ((SPIN, SPIN.replace("== 1:", "== 0:"), 1),),
        reasons=(("Lock not held",), ("found the lock taken",), ("== 0",)),
        misleading=("race", "out-of-bounds", "barrier"),
        notes="a free lock is taken and then swapped again (it returns 1: out of the loop, holding it); a "
              "taken lock lets the program straight through"),
    Bug("count_read_before_the_lock", "backward",
        ((SPIN + "    # the buffers start as garbage: the group's first program stores, the others add\n"
          "    if tl.load(count) == 0:\n",
          "    first = tl.load(count) == 0\n" + SPIN + "    if first:\n", 1),),
        reasons=(("Lock not held",), ("has not taken the lock yet",), ("the count",)),
        misleading=("race", "out-of-bounds", "barrier"),
        notes="two programs of a group can both read 0 before either holds the lock: both store, one share "
              "is lost"),
    Bug("released_by_plain_store", "backward",
        (("    tl.atomic_xchg(lock, 0)\n", "    tl.store(lock, 0)\n", 1),),
        reasons=(("Lock written with a plain store",), ("tl.atomic_xchg(lock, 0)",)),
        misleading=("race", "out-of-bounds", "Lock not held"), gpu_by_chance=True,
        notes="the plain store may become visible before the partial row's stores; passed on an H100 in "
              "2 runs of 2"),
    Bug("released_without_a_barrier", "backward",
        (("    tl.debug_barrier()\n", "", 1),),
        reasons=(("Lock released before the stores it guards",), ("tl.debug_barrier()",)),
        misleading=("race", "out-of-bounds", "Lock not held"), gpu_by_chance=True,
        notes="some threads may still be storing the partial row when the next program reads it; "
              "passed on an H100 in 2 runs of 2"),
    Bug("reduce_skips_the_last_group", "backward",
        (("        ok = (rows[:, None] < G) & col_ok[None, :]", "        ok = (rows[:, None] < G - 1) & col_ok[None, :]", 1),),
        reasons=(("dgamma",), ("dbeta",)),
        misleading=("race", "still running")),
    Bug("one_pass_variance", "backward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)",
          "rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / H - mean * mean + eps)", 1),),
        reasons=(("mean near 1000",), ("dx",)),
        misleading=("race", "lost", "Lock not held", "Lock released"),
        notes="E[x²] − E[x]² in fp32: right for centred rows, digits cancel when the mean is 1000"),
    Bug("reduce_steps_by_block_cols", "backward",
        (("    for start in range(0, G, BLOCK_G):", "    for start in range(0, G, BLOCK_COLS):", 1),),
        reasons=(("dgamma",), ("dbeta",), ("M=64, H=24",)),
        misleading=("race", "Lock not held", "out-of-bounds"),
        notes="steps of 32 over blocks of 4 partial rows: with 16 groups, rows 4 to 15 are never added"),
]

ALTERNATIVES = [
    Alternative("contiguous_groups", (("    group = row % G\n", "    group = row * G // M\n", 1),),
                notes="rows split into G contiguous groups instead of round robin"),
]
