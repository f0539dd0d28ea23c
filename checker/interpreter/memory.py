"""Shadow memory for the sanitizer: the tensor arguments of one launch re-homed into a private arena
between red zones, the per-element history the race check reads, and the declarations the checker
makes before a launch (outputs that sum shares, buffers filled with the poison).

How a pointer is attributed to a tensor argument: each launch copies its tensor arguments into
one private arena, each between two large red zones (virtual memory only, never touched).
Arguments whose bytes overlap (in-place kernels) share one copy; disjoint ones, even slices of
one storage, get their own. An address is attributed to the argument whose zone contains it, so
a pointer that overflows one argument is blamed on that argument even when the caller's
allocations were adjacent. We chose this over tracking provenance through pointer arithmetic
because it needs no hooks on the dozens of builder ops that make pointers (addptr, splat,
broadcast, where, cat, reshape, int-to-ptr ...), which differ between Triton releases. The
price: an overflow larger than a red zone (4x the argument's size, clamped to 1-64 MiB) may
land in another argument unnoticed, and pointers the kernel reads from memory point at the caller's tensors,
not the copies, so they are reported as out of bounds. Results are copied back only when the
launch succeeds, so a faulted launch leaves every argument as it was.

The checks (checker/interpreter/sanitizer.py) and the lock protocol (checker/interpreter/locks.py)
both read this module; checker/interpreter/hooks.py runs them while a launch runs.
"""

from __future__ import annotations

import bisect
import dataclasses
from typing import Any, Callable, Optional

import numpy as np
import torch
import triton
from triton.runtime import interpreter as _interp

from checker.evidence.lanes import Layout, Site
from checker.evidence.model import Fault, Place

LOAD, STORE, ATOMIC = "load", "store", "atomic"
_ALIGN = 256  # keeps every re-homed storage aligned for any dtype and for TMA descriptors
_MIN_RED_ZONE = 1 << 20  # bytes on each side of an argument; virtual, never written
_MAX_RED_ZONE = 1 << 26  # so that huge tensors don't ask for more address space than the OS grants
NO_PID = np.int32(-1)
_MAX_PID = np.int32(np.iinfo(np.int32).max)
_PENDING_LIMIT = 1 << 20  # queued element accesses per storage before folding them in


class KernelFault(Exception):
    """A kernel touched memory it must not touch, or broke the lock protocol. `fault` holds the facts
    (checker/evidence/model.py); `diagnosis`, what the learner reads, words them
    (checker/diagnosis/faults.py) when first asked."""

    def __init__(self, fault: Fault) -> None:
        super().__init__()
        self.fault = fault
        self._diagnosis = None

    kind = property(lambda self: self.fault.kind)                    # "out_of_bounds", "race", "lock"
    program_id = property(lambda self: self.fault.program)
    tensor = property(lambda self: self.fault.tensor)
    filename = property(lambda self: self.fault.where.filename)
    lineno = property(lambda self: self.fault.where.lineno)

    @property
    def diagnosis(self):
        """What the learner reads (a checker.diagnosis.model.Diagnosis), worded once."""
        if self._diagnosis is None:
            from checker.diagnosis.faults import explain
            self._diagnosis = explain(self.fault)
        return self._diagnosis

    message = property(lambda self: self.diagnosis.text)
    cause = property(lambda self: self.diagnosis.cause)
    candidates = property(lambda self: self.diagnosis.candidates)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"KernelFault({self.kind!r}, program {self.program_id}, {self.tensor!r})"


@dataclasses.dataclass
class Config:
    """How the checks see the learner's code: which files are the learner's, how a line is named
    in a report, and whether a line is inside a loop."""
    learner_files: Callable[[str], bool]
    describe_line: Callable[[str, int], str]
    in_loop: Callable[[str, int], bool] = lambda filename, lineno: False


_config: Optional[Config] = None  # None while disabled


def config() -> Optional[Config]:
    """The checks' configuration while they are enabled, else None."""
    return _config


def configure(new: Optional[Config]) -> None:
    global _config
    _config = new


def place(filename: str, lineno: int) -> Place:
    """A line of the learner's code, to be named as the enabled configuration names lines."""
    describe = _config.describe_line if _config is not None else (lambda f, n: f"{f}, line {n}")
    return Place(filename, lineno, describe)


# ---------------------------------------------------------------------------------------------
# What the checker declares before a launch (through checker/instruments.py for scratch() and
# shared()): outputs that sum shares, buffers filled with the poison

_shared: list[tuple[int, int]] = []  # byte ranges of outputs that several programs add into
_shared_tensors: list[torch.Tensor] = []  # kept alive while declared, so their addresses stay theirs


def expect_shared(tensors: list[torch.Tensor]) -> None:
    """Declare the outputs that programs accumulate into (parameter gradients, histograms): a race
    there calls for atomics; anywhere else it means overlapping offsets. Replaces the last call."""
    _shared_tensors[:] = list(tensors)
    _shared[:] = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()) for t in tensors]


def shared_tensors() -> list[torch.Tensor]:
    return list(_shared_tensors)


_watched: list[tuple[int, int, Any, int]] = []  # outputs filled with poison: (lo, hi, int dtype, bits)
_watched_tensors: list[torch.Tensor] = []


def expect_outputs(filled: list[tuple[torch.Tensor, Any, int]]) -> None:
    """Declare the outputs the checker filled with a poison value: (tensor, NumPy integer dtype of
    the same width, the poison's bits). A load that reads the poison back is noted as evidence
    (the kernel read an output before writing it). Replaces the last call."""
    _watched_tensors[:] = [t for t, _, _ in filled]
    _watched[:] = [(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size(), int_type, bits)
                   for t, int_type, bits in filled]


def watch_scratch(tensor: torch.Tensor, int_type: Any, bits: int) -> None:
    """Also watch a scratch buffer the checker filled with poison (partial rows, saved statistics):
    a load of an element no kernel wrote is evidence as an output's is. Until the next
    expect_outputs."""
    _watched_tensors.append(tensor)
    _watched.append((tensor.data_ptr(), tensor.data_ptr() + tensor.numel() * tensor.element_size(), int_type, bits))


def watched_poison(buf: "Buffer") -> Optional[tuple]:
    """(int dtype, bits) of the poison the buffer's bytes were filled with, if they are watched."""
    lo = buf.original.data_ptr()
    hi = lo + buf.nbytes
    return next(((int_type, bits) for start, end, int_type, bits in _watched if lo < end and start < hi), None)


def is_shared(buf: "Buffer") -> bool:
    """Whether the buffer holds an output that several programs add into on purpose."""
    lo = buf.original.data_ptr()
    hi = lo + buf.nbytes
    return any(lo < end and start < hi for start, end in _shared)


# ---------------------------------------------------------------------------------------------
# Re-homing the tensor arguments of one launch


@dataclasses.dataclass
class View:
    """One tensor argument: the bytes [start, end) of its buffer it may touch."""
    name: str
    start: int
    end: int
    itemsize: int
    shape: tuple
    contiguous: bool
    strides: tuple = ()

    def layout(self) -> Layout:
        return Layout(self.name, self.shape, self.strides, self.itemsize, (self.end - self.start) // self.itemsize)


class _Shadow:
    """Per-element access history of one storage, for race detection."""

    def __init__(self, n: int) -> None:
        self.min_pid = np.full(n, _MAX_PID, dtype=np.int32)
        self.max_pid = np.full(n, NO_PID, dtype=np.int32)
        self.store_pid = np.full(n, NO_PID, dtype=np.int32)


class Buffer:
    """The bytes of one or more overlapping arguments, copied into the arena between red zones."""

    def __init__(self, original: torch.Tensor, copy: torch.Tensor, zone_lo: int, granule: int) -> None:
        self.original = original  # uint8 view of those bytes in the caller's storage
        self.copy = copy  # its uint8 copy inside the arena
        self.zone_lo = zone_lo
        self.data_lo = copy.data_ptr()
        self.data_lo_u64 = np.uint64(self.data_lo)
        self.nbytes = original.numel()
        self.shift = np.uint64(granule.bit_length() - 1)
        self.views: list[View] = []
        self.written = False
        self.plain_stored = False
        self.kinds: set[str] = set()   # load / store / atomic: what the launch did to these bytes
        self.watch_poison: Optional[tuple] = None   # (int dtype, bits): an output still holding the fill
        self._shadow: Optional[_Shadow] = None
        # Loads and atomics only matter to a later plain store, and most buffers (inputs,
        # atomic accumulators) never get one: queue them and fold them in when one comes.
        self._pending: list[tuple[int, np.ndarray]] = []
        self._pending_n = 0

    def defer(self, pid: int, idx: np.ndarray) -> None:
        self._pending.append((pid, idx))
        self._pending_n += idx.size
        if self._pending_n > _PENDING_LIMIT:
            self.history()

    def history(self) -> _Shadow:
        """The shadow arrays, with every queued access folded in."""
        if self._shadow is None:
            self._shadow = _Shadow(max(1, self.nbytes >> int(self.shift)))
        if self._pending:
            sizes = [idx.size for _, idx in self._pending]
            pids = np.repeat(np.array([pid for pid, _ in self._pending], dtype=np.int32), sizes)
            idx = np.concatenate([idx for _, idx in self._pending])
            np.minimum.at(self._shadow.min_pid, idx, pids)
            np.maximum.at(self._shadow.max_pid, idx, pids)
            self._pending.clear()
            self._pending_n = 0
        return self._shadow


class Launch:
    """Everything the hooks need while one kernel launch runs."""

    def __init__(self, buffers: list[Buffer], arena: torch.Tensor, scalars: dict[str, int]) -> None:
        self.buffers = buffers
        self.zone_los = [b.zone_lo for b in buffers]
        self.arena = arena  # keeps the re-homed storages alive for the launch
        self.grid_idx: Optional[tuple] = None
        self.grid: tuple = (1, 1, 1)
        self.pid = 0
        self.pid_i32 = np.int32(0)
        self.locks: set[int] = set()  # addresses the running program holds as a lock
        self.scalars = scalars        # the launch's integer arguments by name, to name values in reports
        self.constexprs: frozenset = frozenset()  # which of them are constexprs (block sizes), not sizes
        self.kernel = ""              # the kernel's name, for the memory map's captions
        # (learner file, line, tensor) -> its pointer blocks' steps and each program's origin there
        self.sites: dict[tuple[str, int, str], Site] = {}
        self.site_views: dict[tuple[str, int, str], View] = {}
        self.poison_reads: list[tuple[str, Place]] = []   # (tensor, line): an output read unwritten

    def program(self, builder: Any) -> int:
        """Linear id of the running program; resets per-program state when it changes."""
        idx = builder.grid_idx
        if idx != self.grid_idx:
            nx, ny, nz = builder.grid_dim
            self.grid = (nx, ny, nz)
            self.grid_idx = idx
            self.pid = (idx[0] * ny + idx[1]) * nz + idx[2]
            self.pid_i32 = np.int32(self.pid)
            self.locks.clear()
        return self.pid

    def buffer_of(self, addr: int) -> Buffer:
        # Zones tile the arena, so the zone below an address is its owner; addresses outside
        # the arena go to the nearest storage.
        return self.buffers[max(0, bisect.bisect_right(self.zone_los, addr) - 1)]

    def copy_back(self) -> None:
        for buf in self.buffers:
            if buf.written:
                buf.original.copy_(buf.copy)


def _unwrap(arg: Any) -> Optional[torch.Tensor]:
    if isinstance(arg, torch.Tensor):
        return arg
    if isinstance(arg, triton.runtime.jit.TensorWrapper) and isinstance(arg.base, torch.Tensor):
        return arg.base
    return None


def _is_descriptor(arg: Any) -> bool:
    return dataclasses.is_dataclass(arg) and type(arg).__name__ == "TensorDescriptor"


def _tensors_in(name: str, arg: Any, out: list[tuple[str, torch.Tensor]]) -> bool:
    """Collect (name, tensor) pairs inside one argument; False if it holds memory we can't re-home."""
    if isinstance(arg, tuple):
        return all(_tensors_in(f"{name}[{i}]", a, out) for i, a in enumerate(arg))
    if _is_descriptor(arg):
        return _tensors_in(name, arg.base, out)
    tensor = _unwrap(arg)
    if tensor is not None:
        out.append((name, tensor))
        return True
    return not hasattr(arg, "data_ptr")


def _replace(arg: Any, new: dict[int, torch.Tensor]) -> Any:
    """Rebuild one argument with every tensor swapped for its re-homed copy."""
    if isinstance(arg, tuple):
        items = [_replace(a, new) for a in arg]
        return type(arg)(*items) if hasattr(arg, "_fields") else type(arg)(items)
    if _is_descriptor(arg):
        return dataclasses.replace(arg, base=_replace(arg.base, new))
    if isinstance(arg, triton.runtime.jit.TensorWrapper):
        return triton.runtime.jit.TensorWrapper(new[id(arg.base)], arg.dtype)
    if isinstance(arg, torch.Tensor):
        return new[id(arg)]
    return arg


def _round_up(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _byte_span(t: torch.Tensor) -> tuple[int, int]:
    """Bytes [lo, hi) of its storage that a tensor can reach through its shape and strides."""
    lo = t.storage_offset() * t.element_size()
    if t.numel() == 0:
        return lo, lo
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return lo, lo + (last + 1) * t.element_size()


def _span_groups(named: list[tuple[str, torch.Tensor]]) -> list[list[tuple[str, torch.Tensor]]]:
    """Group arguments whose bytes overlap (in-place kernels must keep seeing one memory).

    Arguments that are disjoint slices of one storage get separate buffers, so that an overflow
    from one slice into its neighbour is caught and blamed on the right argument.
    """
    by_storage: dict[tuple, list[tuple[str, torch.Tensor]]] = {}
    for name, t in named:
        by_storage.setdefault((t.device, t.untyped_storage().data_ptr()), []).append((name, t))
    groups = []
    for members in by_storage.values():
        members.sort(key=lambda m: _byte_span(m[1]))
        end = None
        for name, t in members:
            lo, hi = _byte_span(t)
            if end is None or lo >= end:
                groups.append([])
                end = hi
            groups[-1].append((name, t))
            end = max(end, hi)
    return groups


def rehome(arg_names: list[str], args: tuple, kwargs: dict) -> Optional[tuple[Launch, tuple, dict]]:
    """Copy the launch's tensors into a fresh arena; returns (launch, args, kwargs) or None."""
    named: list[tuple[str, torch.Tensor]] = []
    for i, arg in enumerate(args):
        if not _tensors_in(arg_names[i] if i < len(arg_names) else f"arg{i}", arg, named):
            return None
    for key, arg in kwargs.items():
        if not _tensors_in(key, arg, named):
            return None
    if not named:
        return None

    layout, total = [], 0
    for members in _span_groups(named):
        spans = [_byte_span(t) for _, t in members]
        # Start on a 16-byte boundary of the storage so every dtype keeps its alignment.
        lo, hi = min(s[0] for s in spans) // 16 * 16, max(s[1] for s in spans)
        red = _round_up(min(max(4 * (hi - lo), _MIN_RED_ZONE), _MAX_RED_ZONE))
        layout.append((members, lo, hi, total, total + red))
        total += red + _round_up(hi - lo) + red
    arena = torch.empty(total, dtype=torch.uint8)  # lazily committed: red zones cost no RAM
    base = arena.data_ptr()

    buffers, new = [], {}
    with torch.no_grad():
        for members, lo, hi, zone_off, data_off in layout:
            first = members[0][1]
            original = torch.empty(0, dtype=torch.uint8, device=first.device)
            original.set_(first.untyped_storage())
            original = original[lo:hi]
            copy = arena[data_off:data_off + hi - lo]
            copy.copy_(original)
            buf = Buffer(original, copy, base + zone_off, min(t.element_size() for _, t in members))
            for name, t in members:
                size = t.element_size()
                if id(t) not in new:
                    offset = (data_off + t.storage_offset() * size - lo) // size
                    new[id(t)] = torch.empty(0, dtype=t.dtype).set_(arena.untyped_storage(), offset, t.size(),
                                                                    t.stride())
                t_lo, t_hi = _byte_span(t)
                start = new[id(t)].data_ptr()
                buf.views.append(View(name, start, start + t_hi - t_lo, size, tuple(t.shape), t.is_contiguous(),
                                     tuple(t.stride())))
            buffers.append(buf)
    new_args = tuple(_replace(a, new) for a in args)
    new_kwargs = {k: _replace(v, new) for k, v in kwargs.items()}
    scalars = {name: int(v) for name, v in list(zip(arg_names, args)) + list(kwargs.items())
               if isinstance(v, (int, np.integer)) and not isinstance(v, bool)}
    for buf in buffers:
        buf.watch_poison = watched_poison(buf)
    return Launch(buffers, arena, scalars), new_args, new_kwargs


# ---------------------------------------------------------------------------------------------
# The lanes of one access


def data(x: Any) -> np.ndarray:
    """The NumPy values of an interpreter value (a pointer block, a mask)."""
    return x.data if isinstance(x, _interp.TensorHandle) else np.asarray(x)


def active_addresses(ptr: Any, mask: Any) -> np.ndarray:
    """Flat addresses of the lanes the mask lets through (masked-off lanes touch nothing)."""
    addrs = data(ptr)
    if mask is None:
        return addrs.ravel()
    m = data(mask)
    if m.shape != addrs.shape:
        addrs, m = np.broadcast_arrays(addrs, m)
    return addrs[m]

