"""Learner bugs for puzzle 24 (lock-grouped accumulation), and correct kernels written differently."""
from entries import Bug, Right

ACQUIRE = "    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass\n"
RELEASE = "    tl.debug_barrier()\n    tl.atomic_xchg(lock, 0)"

BUGS = [
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
