"""The lock protocol of a kernel, checked while Triton's interpreter runs it (puzzle 24's spin locks).

The interpreter runs a launch's programs one after another, so a lock is always free when a
program asks for it: a compare-and-swap whose result is ignored, a spin that waits the wrong way,
the count read before the lock is held, a release by plain store or without a barrier all give
the right answer here and lose updates on a GPU. These checks make them visible. They switch on
in a launch once one of its programs calls tl.atomic_cas (a launch that takes no lock is not
touched), and see a lock as an address that a program swaps with tl.atomic_cas:

* contention: the first tl.atomic_cas a program makes on an address, while it holds no lock,
  fails, as if another program held the lock: it returns the value being swapped in (1, taken) and
  leaves memory alone. A program that spins tries again and gets the lock; one that ignores the
  result, or spins while the swap succeeds, goes on without it (then caught below);
* guarded state: the buffers the spec declares shared (declare.shared: the partial rows) and the
  words of the locks' tensor that are not locks (the count) may be touched only by a program that
  holds a lock, and always under the same one;
* release: by an atomic exchange (or atomic store), never a plain store, and after a
  tl.debug_barrier() that follows the program's last plain store to guarded state.

Each fault is a KernelFault of kind "lock" (cause "lock") with a message for the learner: what
happened, in which program, on which line, and what to write instead. checker/sanitizer.py calls
`before` ahead of every memory access it checks and `barrier` at every tl.debug_barrier.

Known limit: a lock read with a plain tl.load before any program has swapped it (a
test-and-test-and-set spin) is taken for guarded state; spin with tl.atomic_cas alone.
"""
from __future__ import annotations

import linecache
import os
import sys
import weakref
from typing import Any, Optional

import numpy as np
import triton
from triton.runtime import interpreter as _interp

LOAD, STORE, ATOMIC = "load", "store", "atomic"  # the sanitizer's access kinds
_TRITON_DIR = os.path.dirname(triton.__file__) + os.sep
_SPIN = "    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass"
_RELEASE = "    tl.debug_barrier()\n    tl.atomic_xchg(lock, 0)"


class _Program:
    """What one program has done with locks so far."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.refused: dict[int, tuple[str, int]] = {}   # lock address -> where its first swap was refused
        self.released: Optional[tuple[str, int]] = None  # where it last released a lock
        self.unfenced: Optional[tuple[str, int, str]] = None  # last plain store to guarded state since a barrier


class _State:
    """The locks of one launch."""

    def __init__(self, launch: Any) -> None:
        self.launch = weakref.ref(launch)
        self.locks: set[int] = set()            # addresses any program swapped with tl.atomic_cas
        self.lock_buffers: set[int] = set()     # ids of the sanitizer buffers that hold a lock
        self.guard: dict[int, np.ndarray] = {}  # buffer id -> per element, the lock it is touched under (0: none yet)
        self.program = _Program(-1)


_state: Optional[_State] = None


def _state_of(launch: Any, create: bool) -> Optional[_State]:
    global _state
    if _state is not None and _state.launch() is launch:
        return _state
    if create:
        _state = _State(launch)
        return _state
    return None


def _program(state: _State, launch: Any, builder: Any) -> _Program:
    pid = launch.program(builder)  # also drops the locks a finished program held
    if state.program.pid != pid:
        state.program = _Program(pid)
    return state.program


# ---------------------------------------------------------------------------------------------
# Hooks


def before(launch: Any, builder: Any, op: str, kind: str, args: tuple, kwargs: dict, ptr: Any, mask: Any) -> Any:
    """Called before each memory access of a sanitized launch (op: the interpreter builder's method).
    Returns a result to use instead of running a tl.atomic_cas (a refused swap), else None;
    raises KernelFault when the access breaks the lock protocol. Free for launches without locks."""
    if op == "create_atomic_cas":
        state = _state_of(launch, create=True)
    else:
        state = _state_of(launch, create=False)
        if state is None:
            return None
    from checker.sanitizer import _active_addresses
    addrs = _active_addresses(ptr, mask)
    if addrs.size == 0:
        return None
    if op == "create_atomic_cas":
        return _compare_and_swap(state, launch, builder, args, kwargs, addrs)
    is_release = op == "create_atomic_store" or (
        op == "create_atomic_rmw" and (args[0] if args else kwargs.get("rmwOp")) == _interp._ir.ATOMIC_OP.XCHG)
    program = _program(state, launch, builder)
    held = launch.locks
    on_locks = np.isin(addrs, np.fromiter(state.locks, dtype=addrs.dtype, count=len(state.locks)))
    if on_locks.any():
        lock = int(addrs[on_locks][0])
        if kind == STORE:
            raise _fault_plain_release(launch, builder, lock, held)
        if is_release and lock in held:
            if program.unfenced is not None:
                raise _fault_unfenced(launch, builder, lock, program.unfenced)
            program.released = _site()
        return None
    guarded = _guarded(state, launch, addrs)
    if not guarded.any():
        return None
    target = addrs[guarded]
    if not held:
        raise _fault_unlocked(launch, builder, int(target[0]), kind, program)
    _check_same_lock(state, launch, builder, target, held)
    if kind == STORE:
        program.unfenced = (*_site(), _name_of(launch, int(target[0]))[0])
    return None


def barrier(launch: Any, builder: Any) -> None:
    """tl.debug_barrier(): the program's stores so far are visible to all its threads."""
    state = _state_of(launch, create=False)
    if state is not None:
        _program(state, launch, builder).unfenced = None


def _compare_and_swap(state: _State, launch: Any, builder: Any, args: tuple, kwargs: dict,
                      addrs: np.ndarray) -> Any:
    program = _program(state, launch, builder)
    for addr in addrs.tolist():
        if addr not in state.locks:
            state.locks.add(addr)
            state.lock_buffers.add(id(launch.buffer_of(addr)))
    fresh = [a for a in addrs.tolist() if a not in program.refused]
    if launch.locks or not fresh:
        return None  # under a lock a swap is a flag, not an acquire; and each lock is refused once
    for addr in fresh:
        program.refused[addr] = _site()
    cmp = args[1] if len(args) > 1 else kwargs["cmp"]
    val = args[2] if len(args) > 2 else kwargs["val"]
    c, v = np.asarray(cmp.data), np.asarray(val.data)
    taken = np.where(v != c, v, c + 1).astype(c.dtype)  # what another program's swap left there
    return _interp.TensorHandle(taken, getattr(cmp.dtype, "scalar", cmp.dtype))


def _guarded(state: _State, launch: Any, addrs: np.ndarray) -> np.ndarray:
    """Which addresses are guarded state: in a shared buffer, or next to the locks."""
    from checker import sanitizer
    owner = np.maximum(np.searchsorted(np.asarray(launch.zone_los, dtype=np.int64),
                                       addrs.astype(np.int64), side="right") - 1, 0)
    guarded = np.zeros(addrs.shape, dtype=bool)
    for b in np.unique(owner).tolist():
        buf = launch.buffers[b]
        if id(buf) in state.lock_buffers or sanitizer._is_shared(buf):
            guarded |= owner == b
    return guarded


def _check_same_lock(state: _State, launch: Any, builder: Any, addrs: np.ndarray, held: set) -> None:
    """Each element of guarded state belongs to one lock: the first one held when it is touched."""
    lock = min(held)
    buf = launch.buffer_of(int(addrs[0]))
    record = state.guard.get(id(buf))
    if record is None:
        record = state.guard[id(buf)] = np.zeros(max(1, buf.nbytes), dtype=np.int64)
    idx = (addrs.astype(np.int64) - buf.data_lo).clip(0, buf.nbytes - 1)
    seen = record[idx]
    other = (seen != 0) & ~np.isin(seen, np.fromiter(held, dtype=np.int64, count=len(held)))
    if other.any():
        i = int(np.argmax(other))
        raise _fault_other_lock(launch, builder, int(addrs[i]), int(seen[i]), lock)
    record[idx[seen == 0]] = lock


# ---------------------------------------------------------------------------------------------
# Learner-facing reports


def _site() -> tuple[str, int]:
    """The learner's line running now: the innermost frame outside Triton and the checker."""
    from checker import sanitizer
    config = sanitizer._config
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if (not name.startswith(_TRITON_DIR) and not os.path.abspath(name).startswith(here)
                and (config is None or config.learner_files(name))):
            return name, frame.f_lineno
        frame = frame.f_back
    return "", 0


def _where(site: tuple[str, int]) -> str:
    from checker import sanitizer
    filename, lineno = site[0], site[1]
    if not filename:
        return "an unknown line"
    config = sanitizer._config
    text = config.describe_line(filename, lineno) if config else f"{filename}, line {lineno}"
    source = linecache.getline(filename, lineno).strip()
    return f"{text}:\n    {source}" if source else text


def _name_of(launch: Any, addr: int) -> tuple[str, int]:
    """The argument an address belongs to, and its element offset there."""
    buf = launch.buffer_of(addr)
    view = next((v for v in buf.views if v.start <= addr < v.end), buf.views[0])
    return view.name, (addr - view.start) // view.itemsize


def _pid(builder: Any) -> str:
    return "(" + ", ".join(str(int(i)) for i in builder.grid_idx) + ")"


def _element(launch: Any, addr: int) -> str:
    name, offset = _name_of(launch, addr)
    return f"`{name}` element {offset}"


def _guarded_text(launch: Any, addr: int) -> str:
    """A guarded element, and what it is: a word next to the locks, or a shared buffer's."""
    state = _state_of(launch, create=False)
    if state is not None and id(launch.buffer_of(addr)) in state.lock_buffers:
        return f"{_element(launch, addr)} (in the locks' tensor but not a lock: the count)"
    return f"{_element(launch, addr)} (shared by the programs of a group)"


def _fault(builder: Any, launch: Any, addr: int, lines: list[str]) -> Exception:
    from checker.sanitizer import KernelFault
    filename, lineno = _site()
    fault = KernelFault("lock", tuple(int(i) for i in builder.grid_idx), filename, lineno,
                        _name_of(launch, addr)[0], "\n".join(lines))
    fault.cause = "lock"  # the hint's cause class (checker/hints.py)
    return fault


_VERBS = {LOAD: "reads", STORE: "stores to", ATOMIC: "updates"}


def _fault_unlocked(launch: Any, builder: Any, addr: int, kind: str, program: _Program) -> Exception:
    pid = _pid(builder)
    head = f"Lock not held: program {pid} {_VERBS[kind]} {_guarded_text(launch, addr)} at {_where(_site())}"
    if program.released is not None:
        why = [f"It released its lock before this, at {_where(program.released)}",
               "Every access to the group's shared state (the partial rows, the count) belongs between "
               "taking the lock and releasing it: move the release after the last of them."]
    elif program.refused:
        lock, site = next(iter(program.refused.items()))
        why = [f"Its tl.atomic_cas on {_element(launch, lock)} at {_where(site)}",
               "found the lock taken: the checker makes a program's first attempt fail, as it does on a GPU "
               "while another program of the group holds the lock. This program went on without the lock: "
               "is the result of tl.atomic_cas ignored, or does the loop spin while the swap succeeds "
               "(== 0) instead of while it fails (== 1)?",
               "Fix: spin until the swap from 0 (free) to 1 (taken) succeeds, then touch the shared state:",
               _SPIN]
    else:
        why = ["It has not taken the lock yet: another program of its group may be halfway through its "
               "own update of these values.",
               "Fix: take the lock first, and read or write the shared state (the count included) only "
               "while holding it:", _SPIN]
    return _fault(builder, launch, addr, [
        head, *why,
        "On a GPU the programs of a group run at the same time; without the lock they read and write "
        "the same partial row at once and shares are lost. The interpreter runs programs one after "
        "another, so the values alone can look right here."])


def _fault_plain_release(launch: Any, builder: Any, lock: int, held: set) -> Exception:
    pid = _pid(builder)
    holds = "the lock it holds" if lock in held else "a lock"
    return _fault(builder, launch, lock, [
        f"Lock written with a plain store: program {pid} stores to {_element(launch, lock)}, {holds}, at "
        f"{_where(_site())}",
        "A plain store is not atomic, and on a GPU nothing orders it after the program's other stores: "
        "the next program can find the lock free before this program's partial row has landed.",
        "Fix: release with an atomic exchange, after a barrier:", _RELEASE])


def _fault_unfenced(launch: Any, builder: Any, lock: int, store: tuple[str, int, str]) -> Exception:
    pid = _pid(builder)
    return _fault(builder, launch, lock, [
        f"Lock released before the stores it guards: program {pid} releases {_element(launch, lock)} at "
        f"{_where(_site())}",
        f"but no tl.debug_barrier() came after its store to `{store[2]}` at {_where(store[:2])}",
        "On a GPU each thread of a program stores its own lanes; without a barrier some of them may still "
        "be storing the partial row when the next program takes the lock and reads it.",
        "Fix: a barrier between the last store and the release:", _RELEASE])


def _fault_other_lock(launch: Any, builder: Any, addr: int, first: int, now: int) -> Exception:
    pid = _pid(builder)
    return _fault(builder, launch, addr, [
        f"Two locks for one value: program {pid} touches {_guarded_text(launch, addr)} at {_where(_site())}",
        f"holding the lock {_element(launch, now)}, but an earlier program touched it holding the lock "
        f"{_element(launch, first)}.",
        "Two programs holding different locks do not exclude each other: on a GPU they update this value "
        "at the same time. Compute the lock from the same group as the partial row it guards (group = "
        "row % G: the lock locks_ptr + group, the partial row group * H, the count locks_ptr + G + group)."])
