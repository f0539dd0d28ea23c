"""The one place that patches Triton's interpreter for the checks.

`enable(checks, ...)` replaces the interpreter builder's memory methods (loads, stores, atomics),
its barrier and the launch itself (GridExecutor.__call__) by hooks; `disable()` puts the
originals back. While a launch runs, every memory access goes first to the lock protocol
(checker/interpreter/locks.py), then to the checks (checker/interpreter/sanitizer.py: bounds and
races), and only then touches memory; a launch that ends, finished or faulted, is handed to the
checks to record what it saw. The launch's tensors are re-homed into the shadow memory first
(checker/interpreter/memory.py) and copied back only when it succeeds.

Faults raised inside a program reach the interpreter's GridExecutor, which wraps them in
InterpreterError; the launch hook unwraps them, so callers catch `KernelFault` directly.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, Protocol

from triton.runtime import interpreter as _interp

from checker import instruments
from checker.interpreter import locks, memory
from checker.interpreter.memory import ATOMIC, LOAD, STORE, KernelFault


class Checks(Protocol):
    """What the hooks run (checker/interpreter/sanitizer.py is one)."""

    def check(self, launch: memory.Launch, builder: Any, ptr: Any, mask: Any, kind: str, op: str) -> None:
        """Before an access touches memory: raise KernelFault if it must not happen."""

    def finished(self, launch: memory.Launch) -> None:
        """A launch ended (finished or faulted): record what it saw."""


_checks: Optional[Checks] = None
_originals: dict[tuple[type, str], Any] = {}
_launch: Optional[memory.Launch] = None
_busy = False  # set while an original builder method runs, so its nested memory ops aren't re-checked
# what sees every access just before the checks (so an access they stop is seen too) and every
# launch's end: the trace the memory map draws (checker/interpreter/trace.py)
_observers: list[Any] = []


def observe(observer: Any) -> None:
    """Hand every access (observer.access(launch, builder, ptr, mask, kind)) and every launch's end
    (observer.finished(launch)) to `observer` until unobserve(observer)."""
    if observer not in _observers:
        _observers.append(observer)


def unobserve(observer: Any) -> None:
    if observer in _observers:
        _observers.remove(observer)


def _arg(args: tuple, kwargs: dict, pos: int, *names: str) -> Any:
    if len(args) > pos:
        return args[pos]
    return next((kwargs[n] for n in names if n in kwargs), None)


def _memory_hook(name: str, kind: str, ptr_pos: int, mask_pos: Optional[int], op: str) -> Callable:
    original = getattr(_interp.InterpreterBuilder, name)

    def hook(self, *args, **kwargs):
        global _busy
        if _launch is None or _busy:
            return original(self, *args, **kwargs)
        ptr = _arg(args, kwargs, ptr_pos, "ptr", "ptrs")
        mask = None if mask_pos is None else _arg(args, kwargs, mask_pos, "mask")
        refused = locks.before(_launch, self, name, kind, args, kwargs, ptr, mask)  # the lock protocol
        if refused is not None:
            return refused
        for observer in _observers:
            observer.access(_launch, self, ptr, mask, kind)
        _checks.check(_launch, self, ptr, mask, kind, op if op else _rmw_name(_arg(args, kwargs, 0, "rmwOp")))
        _busy = True
        try:
            result = original(self, *args, **kwargs)
        finally:
            _busy = False
        # follow locks: accesses under one are left out of the race check
        locks.after(_launch, name, args, kwargs, ptr, mask, result)
        return result

    hook.__wrapped__ = original
    return hook


def _barrier_hook() -> Callable:
    """tl.debug_barrier(), for the lock protocol's release check (checker/interpreter/locks.py)."""
    original = _interp.InterpreterBuilder.create_barrier

    def hook(self, *args, **kwargs):
        if _launch is not None:
            locks.barrier(_launch, self)
        return original(self, *args, **kwargs)

    hook.__wrapped__ = original
    return hook


def _rmw_name(rmw_op: Any) -> str:
    """tl function behind an atomic read-modify-write, e.g. ATOMIC_OP.FADD -> atomic_add."""
    name = getattr(rmw_op, "name", "ADD").lower().removeprefix("f").removeprefix("u")
    return f"atomic_{name}"


# builder method: (kind, position of the pointer, position of the mask, tl function for advice;
# empty means "read it from the rmw op")
_MEMORY_OPS = {
    "create_load": (LOAD, 0, None, "load"),
    "create_masked_load": (LOAD, 0, 1, "load"),
    "create_store": (STORE, 0, None, "store"),
    "create_masked_store": (STORE, 0, 2, "store"),
    "create_atomic_rmw": (ATOMIC, 1, 3, ""),
    "create_atomic_cas": (ATOMIC, 0, None, "atomic_cas"),
    "create_atomic_load": (ATOMIC, 0, 1, "atomic_load"),
    "create_atomic_store": (ATOMIC, 0, 2, "atomic_store"),
    "create_atomic_poll": (ATOMIC, 0, None, "atomic_poll"),
}


def _find_fault(exc: BaseException) -> Optional[KernelFault]:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KernelFault):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def _make_launch_hook() -> Callable:
    original = _interp.GridExecutor.__call__

    def launch_hook(self, *args, **kwargs):
        global _launch
        if _launch is not None:
            return original(self, *args, **kwargs)
        prepared = memory.rehome(list(self.arg_names), args, kwargs)
        if prepared is None:  # no tensors, or memory we can't copy: run unchecked
            return original(self, *args, **kwargs)
        launch, args, kwargs = prepared
        launch.constexprs = frozenset(getattr(self, "constexprs", ()))
        launch.kernel = getattr(getattr(self, "fn", None), "__name__", "")
        checks = _checks
        _launch = launch
        try:
            original(self, *args, **kwargs)
        except Exception as exc:
            fault = _find_fault(exc)
            if fault is None:
                raise
            raise fault.with_traceback(None) from None
        finally:
            _launch = None
            checks.finished(launch)
            for observer in _observers:
                observer.finished(launch)
        launch.copy_back()

    launch_hook.__wrapped__ = original
    return launch_hook


def enable(checks: Checks, learner_files: Callable[[str], bool] = lambda f: True,
           describe_line: Callable[[str, int], str] = lambda f, n: f"{f}, line {n}",
           in_loop: Callable[[str, int], bool] = lambda f, n: False) -> None:
    """Run `checks` on every interpreted launch from now on (idempotent; a second call updates the
    callbacks). in_loop(file, line): is that line of the learner's inside a loop."""
    global _checks
    memory.configure(memory.Config(learner_files, describe_line, in_loop))
    _checks = checks
    instruments.install(memory)  # scratch() and shared() declare their buffers to the shadow memory there
    if _originals:
        return
    for name, (kind, ptr_pos, mask_pos, op) in _MEMORY_OPS.items():
        if hasattr(_interp.InterpreterBuilder, name):
            _originals[(_interp.InterpreterBuilder, name)] = getattr(_interp.InterpreterBuilder, name)
            setattr(_interp.InterpreterBuilder, name, _memory_hook(name, kind, ptr_pos, mask_pos, op))
    _originals[(_interp.GridExecutor, "__call__")] = _interp.GridExecutor.__call__
    _interp.GridExecutor.__call__ = _make_launch_hook()
    if hasattr(_interp.InterpreterBuilder, "create_barrier"):
        _originals[(_interp.InterpreterBuilder, "create_barrier")] = _interp.InterpreterBuilder.create_barrier
        _interp.InterpreterBuilder.create_barrier = _barrier_hook()


def enabled() -> bool:
    return memory.config() is not None


def disable() -> None:
    """Restore the interpreter's original methods."""
    global _checks, _launch
    for (owner, name), original in _originals.items():
        setattr(owner, name, original)
    _originals.clear()
    memory.configure(None)
    _checks = None
    _launch = None
    instruments.install(None)


@contextmanager
def sanitized(checks: Checks, learner_files: Callable[[str], bool] = lambda f: True,
              describe_line: Callable[[str, int], str] = lambda f, n: f"{f}, line {n}") -> Iterator[None]:
    """Enable the checks for a block, then put back whatever state came before."""
    previous, previous_checks = memory.config(), _checks
    enable(checks, learner_files, describe_line)
    try:
        yield
    finally:
        if previous is None:
            disable()
        else:
            enable(previous_checks, previous.learner_files, previous.describe_line, previous.in_loop)
