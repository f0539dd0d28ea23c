"""The lock protocol of a kernel, checked while Triton's interpreter runs it (puzzle 24's spin locks).

The interpreter runs a launch's programs one after another, so a lock is always free when a
program asks for it: a compare-and-swap whose result is ignored, a spin that waits the wrong way,
the count read before the lock is held, a release by plain store or without a barrier all give
the right answer here and lose updates on a GPU. These checks make them visible. A lock is a word
that a program holding no lock swaps with tl.atomic_cas, or sets from 0 with tl.atomic_xchg and
later swaps 0 back into (a test-and-set); under a lock, either operation is a flag (a count), not
a lock. The checks switch on in a launch once it has a lock (a launch that takes none is not
touched):

* contention: the first tl.atomic_cas a program makes on a lock, while it holds none, fails as if
  another program held the lock: it returns the value being swapped in (1, taken) and leaves
  memory alone. A program that spins tries again and gets the lock; one that ignores the result,
  or spins while the swap succeeds, goes on without it (then caught below);
* guarded state: the buffers the spec declares shared (declare.shared: the partial rows) and the
  words of the locks' tensor that are not locks (the count) may be touched only by a program that
  holds a lock, and always under the same one; the lock itself is not data (a plain load of a
  held lock reads 1, whatever the others did);
* release: by an atomic exchange (or atomic store), never a plain store, and after a
  tl.debug_barrier() that follows the program's last plain store to guarded state.

Each fault is a KernelFault of kind "lock" carrying facts (the rule broken, the program, the line,
the elements and locks involved); checker/diagnosis/faults.py words them for the learner: what
happened, in which program, on which line, and what to write instead. checker/interpreter/hooks.py calls
`before` ahead of every memory access the sanitizer checks, `after` once an atomic has run (which also
keeps the race check off accesses made under a lock), and `barrier` at every tl.debug_barrier. The
launch's memory is the shadow memory's (checker/interpreter/memory.py).

Known limits: a lock read with a plain tl.load before any program has swapped it (a
test-and-test-and-set spin) is taken for guarded state; a test-and-set lock is known only from
the first program's release on, so that program's own accesses are not checked.
"""
from __future__ import annotations

import os
import sys
import weakref
from typing import Any, Optional

import numpy as np
import triton
from triton.runtime import interpreter as _interp

from checker.evidence.model import Fault
from checker.interpreter import memory
from checker.interpreter.memory import LOAD, STORE, KernelFault, active_addresses
_TRITON_DIR = os.path.dirname(triton.__file__) + os.sep


class _Program:
    """What one program has done with locks so far."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.refused: dict[int, tuple] = {}   # lock address -> (file, line, cmp, val) of its refused first swap
        self.released: Optional[tuple[str, int]] = None  # where it last released a lock
        self.unfenced: Optional[tuple[str, int, str]] = None  # last plain store to guarded state since a barrier


class _State:
    """The locks of one launch."""

    def __init__(self, launch: Any) -> None:
        self.launch = weakref.ref(launch)
        self.locks: set[int] = set()            # addresses taken as locks (checks are on once there is one)
        self.lock_buffers: set[int] = set()     # ids of the sanitizer buffers that hold a lock
        self.guard: dict[int, np.ndarray] = {}  # buffer id -> per element, the lock it is touched under (0: none yet)
        # a word a program set from 0 by tl.atomic_xchg: a test-and-set lock once that program swaps 0
        # back (a release), a count or a flag otherwise. word -> the program that set it
        self.candidates: dict[int, int] = {}
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


def _active(launch: Any) -> Optional[_State]:
    """The launch's lock state once it has a lock, else None."""
    state = _state_of(launch, create=False)
    return state if state is not None and state.locks else None


def _add_lock(state: _State, launch: Any, addr: int) -> None:
    if addr not in state.locks:
        state.locks.add(addr)
        state.lock_buffers.add(id(launch.buffer_of(addr)))


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
    state = _active(launch)
    if state is None and op != _CAS:
        return None
    addrs = active_addresses(ptr, mask)
    if addrs.size == 0:
        return None
    launch.program(builder)  # a new program holds no lock yet
    held = launch.locks
    written = _exchanged(op, args, kwargs)
    attempt = _is_attempt(op, written, addrs, held, state, launch)
    if state is None:
        state = _state_of(launch, create=True)  # a first tl.atomic_cas: the checks start
    program = _program(state, launch, builder)
    if attempt:
        for addr in addrs.tolist():
            _add_lock(state, launch, addr)
        if op == _CAS and all(_inside(launch, a) for a in addrs.tolist()):
            return _refuse_once(program, args, kwargs, addrs)
        return None  # the sanitizer's bounds check comes next
    on_locks = np.isin(addrs, np.fromiter(state.locks, dtype=addrs.dtype, count=len(state.locks)))
    if on_locks.any():
        lock = int(addrs[on_locks][0])
        if kind == STORE:
            raise _fault_plain_release(launch, builder, lock, held)
        if kind == LOAD and lock in held:
            raise _fault_reads_its_lock(launch, builder, lock)
        if _is_release(op, written) and lock in held:
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


def after(launch: Any, op: str, args: tuple, kwargs: dict, ptr: Any, mask: Any, result: Any) -> None:
    """Follow the locks once an atomic has run: a won attempt takes the lock, an exchange of 0 or an
    atomic store releases it (the sanitizer leaves accesses under a lock out of its race check)."""
    written = _exchanged(op, args, kwargs)
    if op != _CAS and op != "create_atomic_store" and written is None:
        return
    addrs = active_addresses(ptr, mask)
    state = _active(launch)
    if _is_attempt(op, written, addrs, launch.locks, state, launch):
        old = np.broadcast_to(np.asarray(result.data), addrs.shape)
        free = np.asarray(_operand(args, kwargs, 1, "cmp").data) if op == _CAS else 0
        launch.locks.update(int(a) for a in addrs[np.broadcast_to(old == free, addrs.shape)])
    elif _is_set(written, addrs, launch.locks):  # maybe a test-and-set on a word not known as a lock
        if int(np.asarray(result.data).flat[0]) == 0:
            _state_of(launch, create=True).candidates[int(addrs[0])] = launch.pid
    elif _is_release(op, written):
        pending = _state_of(launch, create=False)
        for addr in addrs.tolist():
            if pending is not None and pending.candidates.get(addr) == launch.pid:
                _add_lock(pending, launch, addr)  # set from 0, then swapped back: a test-and-set lock
        launch.locks.difference_update(int(a) for a in addrs)


def barrier(launch: Any, builder: Any) -> None:
    """tl.debug_barrier(): the program's stores so far are visible to all its threads."""
    state = _active(launch)
    if state is not None:
        _program(state, launch, builder).unfenced = None


_CAS = "create_atomic_cas"


def _operand(args: tuple, kwargs: dict, pos: int, name: str) -> Any:
    return args[pos] if len(args) > pos else kwargs[name]


def _exchanged(op: str, args: tuple, kwargs: dict) -> Optional[np.ndarray]:
    """The values a tl.atomic_xchg writes (None for any other operation)."""
    if op != "create_atomic_rmw" or _operand(args, kwargs, 0, "rmwOp") != _interp._ir.ATOMIC_OP.XCHG:
        return None
    return np.asarray(_operand(args, kwargs, 2, "val").data)


def _is_set(written: Optional[np.ndarray], addrs: np.ndarray, held: set) -> bool:
    """tl.atomic_xchg of a non-zero integer into one word, by a program that holds no lock."""
    return (not held and written is not None and addrs.size == 1 and np.issubdtype(written.dtype, np.integer)
            and bool(np.all(written != 0)))


def _is_attempt(op: str, written: Optional[np.ndarray], addrs: np.ndarray, held: set, state: Optional[_State],
                launch: Any) -> bool:
    """An attempt to take a lock by a program that holds none: a tl.atomic_cas, or a test-and-set
    (tl.atomic_xchg of a non-zero integer) next to a known lock. Under a lock, either is a flag."""
    if held:
        return False
    if op == _CAS:
        return True
    return (state is not None and _is_set(written, addrs, held)
            and id(launch.buffer_of(int(addrs[0]))) in state.lock_buffers)


def _is_release(op: str, written: Optional[np.ndarray]) -> bool:
    """tl.atomic_xchg(lock, 0) or tl.atomic_store: how a lock goes back."""
    return op == "create_atomic_store" or (written is not None and bool(np.all(written == 0)))


def _refuse_once(program: _Program, args: tuple, kwargs: dict, addrs: np.ndarray) -> Any:
    """The program's first tl.atomic_cas on a lock fails, as if another program held it: the swap
    returns a value other than `cmp` (the `val` another program swapped in) and writes nothing."""
    fresh = [a for a in addrs.tolist() if a not in program.refused]
    if not fresh:
        return None
    cmp, val = _operand(args, kwargs, 1, "cmp"), _operand(args, kwargs, 2, "val")
    c, v = np.asarray(cmp.data), np.asarray(val.data)
    for addr in fresh:
        program.refused[addr] = (*_site(), int(c.flat[0]), int(v.flat[0]))
    taken = np.where(v != c, v, c + 1).astype(c.dtype)
    return _interp.TensorHandle(taken, getattr(cmp.dtype, "scalar", cmp.dtype))


def _inside(launch: Any, addr: int) -> bool:
    """Whether an address lies in one of the launch's tensor arguments."""
    return any(v.start <= addr < v.end for v in launch.buffer_of(addr).views)


def _guarded(state: _State, launch: Any, addrs: np.ndarray) -> np.ndarray:
    """Which addresses are guarded state: in a shared buffer, or next to the locks."""
    owner = np.maximum(np.searchsorted(np.asarray(launch.zone_los, dtype=np.int64),
                                       addrs.astype(np.int64), side="right") - 1, 0)
    guarded = np.zeros(addrs.shape, dtype=bool)
    for b in np.unique(owner).tolist():
        buf = launch.buffers[b]
        if id(buf) in state.lock_buffers or memory.is_shared(buf):
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
        raise _fault_other_lock(launch, builder, int(addrs[i]), int(seen[i]), lock, _rows_spanned(launch, addrs))
    record[idx[seen == 0]] = lock


# ---------------------------------------------------------------------------------------------
# What a fault records (checker/diagnosis/faults.py words it)


def _site() -> tuple[str, int]:
    """The learner's line running now: the innermost frame outside Triton and the checker."""
    config = memory.config()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the checker package
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if (not name.startswith(_TRITON_DIR) and not os.path.abspath(name).startswith(here)
                and (config is None or config.learner_files(name))):
            return name, frame.f_lineno
        frame = frame.f_back
    return "", 0


def _name_of(launch: Any, addr: int) -> tuple[str, int]:
    """The argument an address belongs to, and its element offset there."""
    buf = launch.buffer_of(addr)
    view = next((v for v in buf.views if v.start <= addr < v.end), buf.views[0])
    return view.name, (addr - view.start) // view.itemsize


def _is_count(launch: Any, addr: int) -> bool:
    """A guarded word in the locks' tensor that is not a lock (the count), not a shared buffer's."""
    state = _state_of(launch, create=False)
    return state is not None and id(launch.buffer_of(addr)) in state.lock_buffers


def _fault(builder: Any, launch: Any, addr: int, rule: str, **facts: Any) -> KernelFault:
    """The protocol broken at `addr`: rule names how; facts hold elements as (tensor, offset)."""
    return KernelFault(Fault("lock", tuple(int(i) for i in builder.grid_idx), _name_of(launch, addr)[0],
                             memory.place(*_site()), {"rule": rule, **facts}))


def _fault_unlocked(launch: Any, builder: Any, addr: int, kind: str, program: _Program) -> KernelFault:
    refused = None
    if program.refused:
        lock, (filename, lineno, cmp, val) = next(iter(program.refused.items()))
        refused = (_name_of(launch, lock), memory.place(filename, lineno), cmp, val)
    return _fault(builder, launch, addr, "unlocked", access=kind, element=_name_of(launch, addr),
                  count=_is_count(launch, addr), refused=refused,
                  released=memory.place(*program.released) if program.released is not None else None)


def _fault_plain_release(launch: Any, builder: Any, lock: int, held: set) -> KernelFault:
    return _fault(builder, launch, lock, "plain_release", lock=_name_of(launch, lock), holds=lock in held)


def _fault_reads_its_lock(launch: Any, builder: Any, lock: int) -> KernelFault:
    return _fault(builder, launch, lock, "reads_its_lock", lock=_name_of(launch, lock))


def _fault_unfenced(launch: Any, builder: Any, lock: int, store: tuple[str, int, str]) -> KernelFault:
    return _fault(builder, launch, lock, "unfenced", lock=_name_of(launch, lock),
                  store=(store[2], memory.place(store[0], store[1])))


def _rows_spanned(launch: Any, addrs: np.ndarray) -> tuple[int, int]:
    """(rows this one access touches, the row length) in the 2-D buffer it reaches: a block whose
    lanes run past the end of a row (no mask, or one that lets lanes past H through) touches two
    rows, and the second belongs to another group and its lock. (0, 0) when not a 2-D buffer."""
    buf = launch.buffer_of(int(addrs[0]))
    view = next((v for v in buf.views if v.start <= int(addrs[0]) < v.end), buf.views[0])
    layout = view.layout()
    if len(layout.shape) != 2 or layout.strides[-1] != 1 or layout.shape[-1] < 1:
        return 0, 0
    elements = (addrs.astype(np.int64) - view.start) // view.itemsize
    row = layout.strides[0]
    return len(np.unique(elements // row)), int(layout.shape[-1])


def _fault_other_lock(launch: Any, builder: Any, addr: int, first: int, now: int,
                      spanned: tuple[int, int] = (0, 0)) -> KernelFault:
    return _fault(builder, launch, addr, "other_lock", element=_name_of(launch, addr), count=_is_count(launch, addr),
                  now=_name_of(launch, now), first=_name_of(launch, first), rows=spanned[0], width=spanned[1])
