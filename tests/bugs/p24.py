"""Every known kernel of puzzle 24 (lock-grouped accumulation): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
from bugs.reasons import MASKED_OUT, ZERO_PARTNER

SPIN = "    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass\n"

PINNED = [
    Bug("lock_never_released", "backward",
        (("    tl.debug_barrier()\n    tl.atomic_xchg(lock, 0)\n", "    tl.debug_barrier()\n", 1),),
        cause="lock", named="none",
        reasons=(("still running after",), ("lock taken is released",), ("`ln_bwd_locked_kernel`",),
                 ("while tl.atomic_cas(lock, 0, 1) == 1",), ("documented configuration",)),
        timeout=3.0,
        notes="the group's next program spins forever: a hang, stopped at the time limit, kernel, line "
              "and case named"),
    Bug("no_lock_at_all", "backward",
        ((SPIN, "", 1),),
        cause="lock", named="none",
        reasons=(("Data race on `dgamma_part_ptr`",), ("atomic",)),
        not_words=("belongs to exactly one program",),
        cpu_blind_without_sanitizer=True,
        notes="right in the plain interpreter (one program at a time), lost updates on a GPU"),
    Bug("count_never_set", "backward",
        (("        tl.atomic_xchg(count, 1)\n", "", 1),),
        cause="lock", named="none",
        reasons=(("dgamma",), ("dbeta",)),
        not_causes=("atomic",),
        notes="every program thinks it is its group's first and stores: each partial row keeps the last share"),
    Bug("first_program_adds_garbage", "backward",
        (("    if tl.load(count) == 0:\n        tl.atomic_xchg(count, 1)\n"
          "        tl.store(dgamma_part_ptr + partial, dz * x_hat, mask=col_ok)\n"
          "        tl.store(dbeta_part_ptr + partial, dz, mask=col_ok)\n    else:\n",
          "    if True:\n", 1),
         ("        dgamma = tl.load(", "        dgamma = tl.load(", 1)),
        cause="lock", named="none",
        reasons=(("dgamma",),),
        notes="always load + add: the first program adds its share to whatever the empty buffer held"),
    # the lock protocol: right in the interpreter's one-program-at-a-time order, so right without the
    # sanitizer (tests/test_locks.py shows that in small, cheaper than a worker process per bug);
    # updates lost on a GPU. checker/interpreter/locks.py makes each visible
    Bug("swap_result_ignored", "backward",
        ((SPIN, "    tl.atomic_cas(lock, 0, 1)\n", 1),),
        cause="lock",
        reasons=(("Lock not held",), ("found the lock taken",), ("result of tl.atomic_cas ignored",),
                 ("while tl.atomic_cas(lock, 0, 1) == 1",)),
        not_causes=("atomic",), not_words=("out-of-bounds", "barrier"),
        notes="one try at the lock, taken or not: every program goes on, as if no lock were there", code='lock.not_spinning'),
    Bug("spin_while_the_swap_succeeds", "backward",
        ((SPIN, SPIN.replace("== 1:", "== 0:"), 1),),
        cause="lock",
        reasons=(("Lock not held",), ("found the lock taken",), ("== 0",)),
        not_causes=("atomic",), not_words=("out-of-bounds", "barrier"),
        notes="a free lock is taken and then swapped again (it returns 1: out of the loop, holding it); a "
              "taken lock lets the program straight through", code='lock.not_spinning'),
    Bug("count_read_before_the_lock", "backward",
        ((SPIN + "    # the buffers start as garbage: the group's first program stores, the others add\n"
          "    if tl.load(count) == 0:\n",
          "    first = tl.load(count) == 0\n" + SPIN + "    if first:\n", 1),),
        cause="lock",
        reasons=(("Lock not held",), ("has not taken the lock yet",), ("the count",)),
        not_causes=("atomic",), not_words=("out-of-bounds", "barrier"),
        notes="two programs of a group can both read 0 before either holds the lock: both store, one share "
              "is lost", code='lock.not_taken'),
    Bug("released_by_plain_store", "backward",
        (("    tl.atomic_xchg(lock, 0)\n", "    tl.store(lock, 0)\n", 1),),
        cause="lock",
        reasons=(("Lock written with a plain store",), ("tl.atomic_xchg(lock, 0)",)),
        not_causes=("atomic",), not_words=("out-of-bounds", "Lock not held"), gpu_by_chance=True,
        notes="the plain store may become visible before the partial row's stores; passed on an H100 in "
              "2 runs of 2", code='lock.plain_release'),
    Bug("released_without_a_barrier", "backward",
        (("    tl.debug_barrier()\n", "", 1),),
        cause="lock",
        reasons=(("Lock released before the stores it guards",), ("tl.debug_barrier()",)),
        not_causes=("atomic",), not_words=("out-of-bounds", "Lock not held"), gpu_by_chance=True,
        notes="some threads may still be storing the partial row when the next program reads it; "
              "passed on an H100 in 2 runs of 2", code='lock.unfenced'),
    Bug("reduce_skips_the_last_group", "backward",
        (("        ok = (rows[:, None] < G) & col_ok[None, :]", "        ok = (rows[:, None] < G - 1) & col_ok[None, :]", 1),),
        cause="mask", named="candidates",
        reasons=(("dgamma",), ("dbeta",)),
        not_causes=("atomic",), not_words=("still running",), code='values.zero'),
    Bug("one_pass_variance", "backward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)",
          "rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / H - mean * mean + eps)", 1),),
        cause="stability", named="none",
        reasons=(("mean near 1000",), ("dx",)),
        not_causes=("atomic",), not_words=("Lock not held", "Lock released"),
        notes="E[x²] − E[x]² in fp32: right for centred rows, digits cancel when the mean is 1000"),
    Bug("reduce_steps_by_block_cols", "backward",
        (("    for start in range(0, G, BLOCK_G):", "    for start in range(0, G, BLOCK_COLS):", 1),),
        cause="loop", named="none",
        reasons=(("dgamma",), ("dbeta",), ("M=64, H=24",)),
        not_causes=("atomic",), not_words=("Lock not held", "out-of-bounds"),
        notes="steps of 32 over blocks of 4 partial rows: with 16 groups, rows 4 to 15 are never added"),
]

PASSING = [
    Right("contiguous_groups", (("    group = row % G\n", "    group = row * G // M\n", 1),),
                notes="rows split into G contiguous groups instead of round robin"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
ACQUIRE = "    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass\n"
RELEASE = "    tl.debug_barrier()\n    tl.atomic_xchg(lock, 0)"

MEASURED = [
    Bug("lock_per_row", "backward",
        (("lock = locks_ptr + group", "lock = locks_ptr + row", 1),),
        "address", "the lock taken at locks[row] instead of the group's locks[group]", accept=("lock",), timeout=60),
    Bug("count_is_the_lock", "backward",
        (("count = locks_ptr + G + group", "count = locks_ptr + group", 1),),
        "lock", "the count read from the lock's own slot (1 while held): no program ever sees 0, the first "
        "one adds onto garbage", accept=("address",), timeout=60),
    Bug("released_before_the_update", "backward",
        ((ACQUIRE, ACQUIRE + "    tl.atomic_xchg(lock, 0)\n", 1), (RELEASE, "    tl.debug_barrier()", 1)),
        "lock", "the lock released right after it is taken, before the read-add-write it should guard", timeout=60),
    Bug("group_by_division", "backward",
        (("group = row % G", "group = row // G", 1),),
        "address", "the group computed as row // G: more groups than G partial rows", timeout=60),
    Bug("cas_arguments_swapped", "backward",
        ((ACQUIRE, "    while tl.atomic_cas(lock, 1, 0) == 1:\n        pass\n", 1),),
        "lock", "atomic_cas(lock, 1, 0): it swaps 1 for 0, so a free lock is never taken", timeout=60),
    Bug("reduce_rows_g_apart", "backward",
        (("tile = rows[:, None] * H + cols[None, :]", "tile = rows[:, None] * G + cols[None, :]", 1),),
        "address", "the reduction reads partial row g at g * G instead of g * H"),
    Bug("count_tested_against_one", "backward",
        (("if tl.load(count) == 0:", "if tl.load(count) == 1:", 1),),
        "lock", "the 'written yet?' test inverted: the first program adds onto garbage, the others overwrite",
        accept=("accumulate",), timeout=60),
    # passes every case, on an H100 too (no case with a mean far from 0): a hole in the cases
    Bug("variance_in_one_pass", "backward",
        (("rstd = 1.0 / tl.sqrt(tl.sum(diff * diff, axis=0) / H + eps)",
          "rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / H - mean * mean + eps)", 1),),
        "stability", "the variance as E[x²] − mean²: cancels when the mean is large against the spread"),
]

RIGHT = [
    Right("count_by_atomic_add", (("tl.atomic_xchg(count, 1)", "tl.atomic_add(count, 1)", 1),),
          "the count bumped with atomic_add instead of set with atomic_xchg", timeout=60),
    # passes on an H100; the interpreter's sanitizer follows locks taken by atomic_cas only, and reports a race
    Right("test_and_set_with_xchg", ((ACQUIRE, "    while tl.atomic_xchg(lock, 1) == 1:\n        pass\n", 1),),
          "the lock taken with atomic_xchg(lock, 1) (test-and-set) instead of atomic_cas", timeout=60),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:ln_bwd_locked_kernel:553ad7d5:0": ZERO_PARTNER,
    "fill.other:ln_bwd_locked_kernel:3e2b28c1:0": ZERO_PARTNER,
    "fill.other:ln_bwd_locked_kernel:ad8d4866:0": MASKED_OUT,
    "fill.other:ln_bwd_locked_kernel:c459d2e8:0": MASKED_OUT,
    "address.offset:ln_bwd_locked_kernel:2aef9e9c:0": "(row + 1) % G is another assignment of rows to groups: the "
                                                      "launch makes G <= M, so every group still gets a row, and "
                                                      "the reduce kernel adds all G partial rows",
}
