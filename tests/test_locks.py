"""The lock protocol checks (checker/interpreter/locks.py): one kernel, puzzle 24's scheme in small, with one
protocol bug switched on at a time. The interpreter runs programs one after another, so every
one of these bugs gives the right sums; the checks must still stop each, and only those."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported (conftest does it too)

import pytest  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from checker.interpreter import sanitizer  # noqa: E402
from checker.interpreter.sanitizer import KernelFault  # noqa: E402

BLOCK, G, ROWS = 8, 2, 6


@triton.jit
def grouped_sum(x_ptr, part_ptr, locks_ptr, G: tl.constexpr, BLOCK: tl.constexpr, SPIN: tl.constexpr,
                COUNT_FIRST: tl.constexpr, BARRIER: tl.constexpr, PLAIN_RELEASE: tl.constexpr,
                OTHER_LOCK: tl.constexpr, TOUCH_AFTER: tl.constexpr, COUNT_BY_CAS: tl.constexpr,
                COUNT_IS_LOCK: tl.constexpr):
    """Row r adds into partial row r % G under that group's lock; locks[G + g] counts the writers.
    SPIN: 1 spins while the swap fails (right), 0 ignores its result, 2 spins while it succeeds,
    3 swaps the arguments (1 for 0), 4 takes the lock by test-and-set (tl.atomic_xchg, right)."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * BLOCK + cols)
    group = row % G
    partial = part_ptr + group * BLOCK + cols
    if COUNT_IS_LOCK:
        count = locks_ptr + group
    else:
        count = locks_ptr + G + group
    if OTHER_LOCK:
        lock = locks_ptr + (group + row // G) % G  # rows of one group take different locks
    else:
        lock = locks_ptr + group
    if COUNT_FIRST:
        first = tl.load(count) == 0
    if SPIN == 1:
        while tl.atomic_cas(lock, 0, 1) == 1:
            pass
    elif SPIN == 0:
        tl.atomic_cas(lock, 0, 1)
    elif SPIN == 2:
        while tl.atomic_cas(lock, 0, 1) == 0:
            pass
    elif SPIN == 3:
        while tl.atomic_cas(lock, 1, 0) == 1:
            pass
    else:
        while tl.atomic_xchg(lock, 1) == 1:
            pass
    if COUNT_BY_CAS:
        first = tl.atomic_cas(count, 0, 1) == 0  # a flag under the lock: the swap is not an acquire
    elif not COUNT_FIRST:
        first = tl.load(count) == 0
    if first:
        if not COUNT_BY_CAS:
            tl.atomic_xchg(count, 1)
        tl.store(partial, x)
    else:
        tl.store(partial, tl.load(partial) + x)
    if BARRIER:
        tl.debug_barrier()
    if PLAIN_RELEASE:
        tl.store(lock, 0)
    else:
        tl.atomic_xchg(lock, 0)
    if TOUCH_AFTER:
        tl.load(partial)


RIGHT = dict(SPIN=1, COUNT_FIRST=False, BARRIER=True, PLAIN_RELEASE=False, OTHER_LOCK=False, TOUCH_AFTER=False,
             COUNT_BY_CAS=False, COUNT_IS_LOCK=False)


@pytest.fixture
def checked():
    with sanitizer.sanitized():
        yield


def run(right_sums: bool = True, **changes):
    """Launch with the partial rows declared shared, as puzzle 24's spec does; the sums."""
    x = torch.randn(ROWS, BLOCK)
    part = torch.full((G, BLOCK), float("nan"))
    locks = torch.zeros(2 * G, dtype=torch.int32)
    sanitizer.expect_shared([part])
    try:
        grouped_sum[(ROWS,)](x, part, locks, G=G, BLOCK=BLOCK, **{**RIGHT, **changes})
    finally:
        sanitizer.expect_shared([])
    if right_sums:  # the values alone look right
        assert torch.allclose(part, x.view(-1, G, BLOCK).sum(0), atol=1e-6)
    return locks


def fault_of(**changes) -> KernelFault:
    with pytest.raises(KernelFault) as info:
        run(**changes)
    assert info.value.kind == "lock" and info.value.cause == "lock"
    return info.value


def test_the_right_protocol_passes_and_releases_every_lock(checked):
    locks = run()
    assert locks[:G].tolist() == [0] * G and locks[G:].tolist() == [1] * G


def test_a_flag_swapped_under_the_lock_is_not_refused(checked):
    run(COUNT_BY_CAS=True)


def test_a_lock_taken_by_test_and_set_is_followed(checked):
    # tl.atomic_xchg(lock, 1) returning 0 takes the lock as a successful swap does: no race reported
    locks = run(SPIN=4)
    assert locks[:G].tolist() == [0] * G


def test_a_test_and_set_lock_is_checked_once_a_release_shows_it(checked):
    # program 0's swap of 0 back makes its word a lock; from program 1 on, the checks apply
    fault = fault_of(SPIN=4, BARRIER=False)
    assert fault.program_id == (1, 0, 0) and "Lock released before the stores it guards" in str(fault)


def test_swapped_arguments_never_take_the_lock(checked):
    text = str(fault_of(SPIN=3))
    assert "swaps 0 in where it finds 1: a free lock holds 0" in text and "found the lock taken" not in text


def test_the_count_kept_in_the_lock_itself(checked):
    with pytest.raises(KernelFault) as info:
        run(right_sums=False, COUNT_IS_LOCK=True)
    assert info.value.kind == "lock" and "A lock read as data" in str(info.value)


def test_an_ignored_swap_goes_on_without_the_lock(checked):
    fault = fault_of(SPIN=0)
    text = str(fault)
    assert "Lock not held: program (0, 0, 0)" in text
    assert "found the lock taken" in text and "result of tl.atomic_cas ignored" in text
    assert "tl.atomic_cas(lock, 0, 1)\n" in text and "while tl.atomic_cas(lock, 0, 1) == 1:" in text
    assert "(in the locks' tensor but not a lock: the count)" in text


def test_a_spin_the_wrong_way_round_goes_on_without_the_lock(checked):
    text = str(fault_of(SPIN=2))
    assert "found the lock taken" in text and "while tl.atomic_cas(lock, 0, 1) == 0:" in text


def test_the_count_read_before_the_lock_is_held(checked):
    fault = fault_of(COUNT_FIRST=True)
    assert fault.program_id == (1, 0, 0)  # program 0's read came before any lock was known
    assert "has not taken the lock yet" in str(fault) and "first = tl.load(count) == 0" in str(fault)


def test_a_release_by_plain_store(checked):
    text = str(fault_of(PLAIN_RELEASE=True))
    assert "Lock written with a plain store" in text and "the lock it holds" in text
    assert "tl.store(lock, 0)" in text and "tl.atomic_xchg(lock, 0)" in text


def test_a_release_without_a_barrier(checked):
    text = str(fault_of(BARRIER=False))
    assert "Lock released before the stores it guards" in text and "`part_ptr`" in text
    assert "tl.store(partial, x)" in text and "tl.debug_barrier()" in text


def test_shared_state_touched_after_the_release(checked):
    text = str(fault_of(TOUCH_AFTER=True))
    assert "It released its lock before this" in text and "(shared by the programs of a group)" in text


def test_one_value_guarded_by_two_locks(checked):
    text = str(fault_of(OTHER_LOCK=True))
    assert "Two locks for one value: program (2, 0, 0)" in text


def test_launches_without_locks_are_left_alone(checked):
    # atomics into a shared buffer, and a barrier, with no lock anywhere: nothing to check
    @triton.jit
    def add_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
        cols = tl.arange(0, BLOCK)
        tl.atomic_add(out_ptr + cols, tl.load(x_ptr + tl.program_id(0) * BLOCK + cols))
        tl.debug_barrier()

    x, out = torch.randn(4, BLOCK), torch.zeros(BLOCK)
    sanitizer.expect_shared([out])
    try:
        add_rows[(4,)](x, out, BLOCK=BLOCK)
    finally:
        sanitizer.expect_shared([])
    assert torch.allclose(out, x.sum(0), atol=1e-6)


def test_without_the_sanitizer_every_bug_passes():
    """The hole these checks close: the plain interpreter gives each of them the right sums."""
    for changes in ({"SPIN": 0}, {"SPIN": 2}, {"SPIN": 3}, {"COUNT_FIRST": True}, {"PLAIN_RELEASE": True}, {"BARRIER": False},
                    {"OTHER_LOCK": True}, {"TOUCH_AFTER": True}):
        run(**changes)
