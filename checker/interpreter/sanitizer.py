"""Stop out-of-bounds accesses and data races while Triton's interpreter runs a kernel.

With TRITON_INTERPRET=1 every program of a launch runs one after another on the CPU, and the
interpreter reads and writes raw addresses without checking them: a missing mask silently reads
garbage or overwrites a neighbouring tensor, and two programs updating one element with a plain
load/store give the right answer here although they race on a GPU. `enable()` patches the
interpreter so that every load, store and atomic is checked *before* memory is touched, and a
problem is raised as a `KernelFault` whose message is written for the learner.

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

Races: for each copy, three numpy shadow arrays record the lowest and highest program that touched
each element and the program that last wrote it with a plain store. A plain store conflicts
with any other program's earlier access; a load or atomic conflicts with another program's
plain store; atomics never conflict with each other. Accesses made while a program holds a lock
(a successful `tl.atomic_cas`, released by `tl.atomic_xchg`) are not tracked, as in the
LayerNorm-backward tutorial. Known false positive: the "last program to arrive reads everyone's
partial results" pattern (counter + plain loads) is reported as a race.

Faults raised inside a program reach the interpreter's GridExecutor, which wraps them in
InterpreterError; the patched launch unwraps them, so callers catch `KernelFault` directly.
"""

from __future__ import annotations

import bisect
import dataclasses
import linecache
import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import numpy as np
import torch
import triton
from triton.runtime import interpreter as _interp

from checker import instruments
from checker.diagnosis import addresses

from checker.interpreter import locks

__all__ = ["KernelFault", "enable", "disable", "sanitized"]

LOAD, STORE, ATOMIC = "load", "store", "atomic"
_ALIGN = 256  # keeps every re-homed storage aligned for any dtype and for TMA descriptors
_MIN_RED_ZONE = 1 << 20  # bytes on each side of an argument; virtual, never written
_MAX_RED_ZONE = 1 << 26  # so that huge tensors don't ask for more address space than the OS grants
_NO_PID = np.int32(-1)
_MAX_PID = np.int32(np.iinfo(np.int32).max)
_SHOWN_OFFSETS = 6
_PENDING_LIMIT = 1 << 20  # queued element accesses per storage before folding them in
_TRITON_DIR = os.path.dirname(triton.__file__) + os.sep


class KernelFault(Exception):
    """A kernel touched memory it must not touch; `message` is the learner-facing report."""

    def __init__(self, kind: str, program_id: tuple, filename: str, lineno: int, tensor: str,
                 message: str, cause: str = "", candidates: tuple = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.cause = cause                # the class the evidence names (checker/diagnosis/model.py)
        self.candidates = candidates      # or the classes it asks about
        self.program_id = program_id
        self.filename = filename
        self.lineno = lineno
        self.tensor = tensor
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclasses.dataclass
class _Config:
    learner_files: Callable[[str], bool]
    describe_line: Callable[[str, int], str]
    in_loop: Callable[[str, int], bool] = lambda filename, lineno: False


_config: Optional[_Config] = None  # None while disabled
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


def _poison_of(buf: "_Buffer") -> Optional[tuple]:
    lo = buf.original.data_ptr()
    hi = lo + buf.nbytes
    return next(((int_type, bits) for start, end, int_type, bits in _watched if lo < end and start < hi), None)


@dataclasses.dataclass
class _Evidence:
    """What one finished (or faulted) launch leaves for the diagnosis: where its blocks went, what it
    did to each tensor, and which outputs it read before writing."""
    sites: dict
    site_views: dict
    grid: tuple
    scalars: dict
    poison_reads: list
    kinds: list   # (storage lo, hi, {"load", "store", "atomic"})

    @classmethod
    def of(cls, launch: "_Launch") -> "_Evidence":
        kinds = [(b.original.data_ptr(), b.original.data_ptr() + b.nbytes, set(b.kinds)) for b in launch.buffers]
        return cls(launch.sites, launch.site_views, launch.grid, launch.scalars, launch.poison_reads, kinds)


_finished: list[_Evidence] = []  # launches since reset_evidence(), in order


def reset_evidence() -> None:
    _finished.clear()


def address_findings() -> list[tuple[str, addresses.Finding]]:
    """Address evidence from the launches since reset_evidence(): (where, finding) for each line
    whose lanes step by none of its tensor's strides, or whose program ids move its block outside the
    tensor. Asked only when a case's results are wrong."""
    found = []
    for evidence in _finished:
        unused = addresses.unused_program_ids(evidence.sites, evidence.grid)
        if unused is not None:
            found.append(("", unused))
        for key, site in evidence.sites.items():
            view = evidence.site_views[key]
            finding = addresses.audit(view.layout(), site, evidence.grid, evidence.scalars)
            if finding is not None and all(f.text != finding.text for _, f in found):
                found.append((_where(key[0], key[1]), finding))
    return found


def poison_reads() -> list[tuple[str, str]]:
    """(tensor, where) for each output a launch read while it still held the checker's fill."""
    return [(name, _config.describe_line(filename, lineno) if filename else "an unknown line")
            for e in _finished for name, filename, lineno in e.poison_reads]


def access_kinds(tensor: torch.Tensor) -> set[str]:
    """What the launches since reset_evidence() did to a tensor's bytes: load, store, atomic."""
    lo = tensor.data_ptr()
    hi = lo + tensor.numel() * tensor.element_size()
    return set().union(*[k for e in _finished for start, end, k in e.kinds if start < hi and lo < end])


def _is_shared(buf: "_Buffer") -> bool:
    lo = buf.original.data_ptr()
    hi = lo + buf.nbytes
    return any(lo < end and start < hi for start, end in _shared)
_originals: dict[tuple[type, str], Any] = {}


# ---------------------------------------------------------------------------------------------
# Re-homing the tensor arguments of one launch


@dataclasses.dataclass
class _View:
    """One tensor argument: the bytes [start, end) of its buffer it may touch."""
    name: str
    start: int
    end: int
    itemsize: int
    shape: tuple
    contiguous: bool
    strides: tuple = ()

    def layout(self) -> addresses.Layout:
        return addresses.Layout(self.name, self.shape, self.strides, self.itemsize,
                                (self.end - self.start) // self.itemsize)


class _Shadow:
    """Per-element access history of one storage, for race detection."""

    def __init__(self, n: int) -> None:
        self.min_pid = np.full(n, _MAX_PID, dtype=np.int32)
        self.max_pid = np.full(n, _NO_PID, dtype=np.int32)
        self.store_pid = np.full(n, _NO_PID, dtype=np.int32)


class _Buffer:
    """The bytes of one or more overlapping arguments, copied into the arena between red zones."""

    def __init__(self, original: torch.Tensor, copy: torch.Tensor, zone_lo: int, granule: int) -> None:
        self.original = original  # uint8 view of those bytes in the caller's storage
        self.copy = copy  # its uint8 copy inside the arena
        self.zone_lo = zone_lo
        self.data_lo = copy.data_ptr()
        self.data_lo_u64 = np.uint64(self.data_lo)
        self.nbytes = original.numel()
        self.shift = np.uint64(granule.bit_length() - 1)
        self.views: list[_View] = []
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


class _Launch:
    """Everything the hooks need while one kernel launch runs."""

    def __init__(self, buffers: list[_Buffer], arena: torch.Tensor, scalars: dict[str, int]) -> None:
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
        # (learner file, line, tensor) -> its pointer blocks' steps and each program's origin there
        self.sites: dict[tuple[str, int, str], addresses.Site] = {}
        self.site_views: dict[tuple[str, int, str], _View] = {}
        self.poison_reads: list[tuple[str, str, int]] = []   # (tensor, file, line): an output read unwritten

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

    def buffer_of(self, addr: int) -> _Buffer:
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


def _rehome(arg_names: list[str], args: tuple, kwargs: dict) -> Optional[tuple[_Launch, tuple, dict]]:
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
            buf = _Buffer(original, copy, base + zone_off, min(t.element_size() for _, t in members))
            for name, t in members:
                size = t.element_size()
                if id(t) not in new:
                    offset = (data_off + t.storage_offset() * size - lo) // size
                    new[id(t)] = torch.empty(0, dtype=t.dtype).set_(arena.untyped_storage(), offset, t.size(),
                                                                    t.stride())
                t_lo, t_hi = _byte_span(t)
                start = new[id(t)].data_ptr()
                buf.views.append(_View(name, start, start + t_hi - t_lo, size, tuple(t.shape), t.is_contiguous(),
                                     tuple(t.stride())))
            buffers.append(buf)
    new_args = tuple(_replace(a, new) for a in args)
    new_kwargs = {k: _replace(v, new) for k, v in kwargs.items()}
    scalars = {name: int(v) for name, v in list(zip(arg_names, args)) + list(kwargs.items())
               if isinstance(v, (int, np.integer)) and not isinstance(v, bool)}
    for buf in buffers:
        buf.watch_poison = _poison_of(buf)
    return _Launch(buffers, arena, scalars), new_args, new_kwargs


# ---------------------------------------------------------------------------------------------
# Checking one access

_launch: Optional[_Launch] = None
_busy = False  # set while an original builder method runs, so its nested memory ops aren't re-checked


def _data(x: Any) -> np.ndarray:
    return x.data if isinstance(x, _interp.TensorHandle) else np.asarray(x)


def _active_addresses(ptr: Any, mask: Any) -> np.ndarray:
    """Flat addresses of the lanes the mask lets through (masked-off lanes touch nothing)."""
    addrs = _data(ptr)
    if mask is None:
        return addrs.ravel()
    m = _data(mask)
    if m.shape != addrs.shape:
        addrs, m = np.broadcast_arrays(addrs, m)
    return addrs[m]


def _check(builder: Any, ptr: Any, mask: Any, kind: str, op: str) -> None:
    """Raise KernelFault if this access leaves its tensor or races with another program."""
    launch = _launch
    addrs = _active_addresses(ptr, mask)
    if addrs.size == 0:
        return
    pid = launch.program(builder)
    width = max(1, ptr.get_element_ty().primitive_bitwidth // 8)
    lo, hi = int(addrs.min()), int(addrs.max())
    buf = launch.buffer_of(lo)
    for view in buf.views:  # fast path: the whole block lies inside one argument
        if view.start <= lo and hi + width <= view.end:
            if kind != LOAD:
                buf.written = True
            buf.kinds.add(kind)
            _record_site(launch, view, ptr, builder, addrs.size)
            if kind != STORE and buf.watch_poison is not None:  # a load, or an atomic's read of the old value
                _note_poison_read(launch, buf, view, addrs)
            if not launch.locks:
                _track(launch, buf, addrs, kind, pid, builder, op, ptr)
            return
    _check_lanes(launch, builder, ptr, mask, addrs, width, kind, op, pid)


def _lane_offsets(ptr: Any, view: _View) -> np.ndarray:
    """Every lane's element offset from the start of `view` (masked-off lanes too), in the
    pointer block's shape."""
    return (_data(ptr).astype(np.int64) - view.start) // view.itemsize


def _record_site(launch: _Launch, view: _View, ptr: Any, builder: Any, active: int) -> None:
    """Remember how this line's pointer block steps (once) and where each program's block starts
    (its first access there): the evidence that tells a wrong address from a missing mask."""
    filename, lineno = _learner_frame()
    if not filename:
        return
    key = (filename, lineno, view.name)
    pid = tuple(int(i) for i in builder.grid_idx)
    site = launch.sites.get(key)
    if site is not None and pid in site.origins:
        return
    if site is None:
        offsets = _lane_offsets(ptr, view)
        site = launch.sites[key] = addresses.Site(addresses.lane_steps(offsets), offsets.shape)
        launch.site_views[key] = view
    site.origins[pid] = (int(_data(ptr).flat[0]) - view.start) // view.itemsize
    site.active[pid] = active


def _note_poison_read(launch: _Launch, buf: _Buffer, view: _View, addrs: np.ndarray) -> None:
    """A load of an output element that still holds the checker's fill: the kernel read an output
    before writing it (or through the wrong pointer). Noted once per tensor."""
    if any(name == view.name for name, _, _ in launch.poison_reads):
        return
    int_type, bits = buf.watch_poison
    size = np.dtype(int_type).itemsize
    try:
        words = buf.copy.numpy().view(int_type)
    except ValueError:  # not a whole number of words
        return
    idx = ((addrs.astype(np.uint64) - buf.data_lo_u64) // np.uint64(size)).astype(np.int64)
    idx = idx[(idx >= 0) & (idx < words.size)]
    if idx.size and bool((words[idx] == bits).any()):
        launch.poison_reads.append((view.name, *_learner_frame()))


def _check_lanes(launch: _Launch, builder: Any, ptr: Any, mask: Any, addrs: np.ndarray, width: int,
                 kind: str, op: str, pid: int) -> None:
    """Slow path: attribute every lane to its storage; fault on the first lane outside them."""
    a = addrs.astype(np.int64)
    owner = np.maximum(np.searchsorted(np.asarray(launch.zone_los, dtype=np.int64), a, side="right") - 1, 0)
    for b in np.unique(owner):
        buf = launch.buffers[b]
        lanes = a[owner == b]
        inside = np.zeros(lanes.shape, dtype=bool)
        for view in buf.views:
            inside |= (lanes >= view.start) & (lanes + width <= view.end)
        if not inside.all():
            bad = lanes[~inside]
            view = min(buf.views, key=lambda v: min(abs(int(bad[0]) - v.start), abs(int(bad[0]) - v.end)))
            offsets = np.unique((bad - view.start) // view.itemsize)
            raise _fault_oob(builder, view, offsets, kind, op, ptr, mask)
    for b in np.unique(owner):
        buf = launch.buffers[b]
        if kind != LOAD:
            buf.written = True
        buf.kinds.add(kind)
        if not launch.locks:
            _track(launch, buf, addrs[owner == b], kind, pid, builder, op, ptr)


def _track(launch: _Launch, buf: _Buffer, addrs: np.ndarray, kind: str, pid: int, builder: Any,
           op: str, ptr: Any) -> None:
    """Record this access for race detection and fault on a conflict with another program."""
    idx = ((addrs - buf.data_lo_u64) >> buf.shift).view(np.int64)  # small and positive: a free view
    p = launch.pid_i32
    if kind != STORE:
        if buf.plain_stored:
            writer = buf.history().store_pid[idx]
            clash = (writer != _NO_PID) & (writer != p)
            if clash.any():
                i = int(np.argmax(clash))
                raise _fault_race(builder, launch, buf, int(idx[i]), kind, op, int(writer[i]), True, ptr)
        buf.defer(pid, idx)
        return
    sh = buf.history()
    lo, hi = sh.min_pid[idx], sh.max_pid[idx]
    if lo.min() < p or hi.max() > p:  # some other program touched one of these elements
        i = int(np.argmax((lo < p) | (hi > p)))
        other = int(lo[i]) if lo[i] < p else int(hi[i])
        stored = int(sh.store_pid[idx[i]]) == other
        raise _fault_race(builder, launch, buf, int(idx[i]), kind, op, other, stored, ptr)
    buf.plain_stored = True
    sh.store_pid[idx] = p
    sh.min_pid[idx] = np.minimum(lo, p)
    sh.max_pid[idx] = np.maximum(hi, p)


# ---------------------------------------------------------------------------------------------
# Learner-facing reports


_learner_file: dict[str, bool] = {}  # file name -> is it the learner's? (asked for every access)


def _learner_frame() -> tuple[str, int]:
    """Innermost frame outside Triton and this module that the caller calls the learner's."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        mine = _learner_file.get(name)
        if mine is None:
            mine = _learner_file[name] = (name != __file__ and not name.startswith(_TRITON_DIR)
                                          and _config.learner_files(name))
        if mine:
            return name, frame.f_lineno
        frame = frame.f_back
    return "", 0


def _where(filename: str, lineno: int) -> str:
    """'`kernel`, cell 4, line 3:' and the line's code below it (ends with the colon either way)."""
    if not filename:
        return "an unknown line:"
    text = f"{_config.describe_line(filename, lineno)}"
    source = linecache.getline(filename, lineno).strip()
    return f"{text}:\n    {source}" if source else f"{text}:"


def _pid_text(pid: tuple) -> str:
    return f"({pid[0]}, {pid[1]}, {pid[2]})"


def _offsets_text(offsets: np.ndarray) -> str:
    shown = ", ".join(str(int(o)) for o in offsets[:_SHOWN_OFFSETS])
    more = f", ... ({len(offsets)} offending offsets in all)" if len(offsets) > _SHOWN_OFFSETS else ""
    return shown + more


_VERB = {LOAD: "load from", STORE: "store to", ATOMIC: "atomic update of"}


def _mask_advice(view: _View, span: int, offsets: np.ndarray, op: str, tile: bool, had_mask: bool,
                 certain: bool = True) -> str:
    name = view.name
    if op == "load":
        call = f"tl.load({name} + offsets, mask=mask, other=0.0)"
    else:
        call = f"tl.{op}({name} + offsets, value, mask=mask)"
    if tile:
        cond = "(rows[:, None] < n_rows) & (cols[None, :] < n_cols)"
        call = call.replace("offsets", "rows[:, None] * stride + cols[None, :]")
    elif offsets[0] < 0:
        cond = "(offsets >= 0) & (offsets < n_elements)"
    else:
        cond = "offsets < n_elements"
    if not certain:
        lead = (f"If it is the mask: it must switch off every offset outside [0, {span}) (compare with this "
                f"tensor's size, and use `<`, not `<=`), e.g.")
    elif had_mask:
        lead = (f"This access already has a mask, but it lets these lanes through: it must switch off every "
                f"offset outside [0, {span}) (compare with the tensor's size, not the block size, and use "
                "`<`, not `<=`). For example:")
    else:
        lead = "Fix: switch off the lanes that fall outside with a mask, e.g."
    return f"{lead}\n    mask = {cond}\n    {call}"


def _oob_diagnosis(view: _View, ptr: Any, mask: Any, pid: tuple, filename: str,
                   lineno: int) -> addresses.Finding:
    """Mask or address? The lanes' steps and the block's start against the tensor's layout."""
    lanes = _lane_offsets(ptr, view)
    active = np.ones(lanes.shape, dtype=bool) if mask is None else np.broadcast_to(_data(mask), lanes.shape)
    key = (filename, lineno, view.name)
    site = _launch.sites.get(key) or addresses.Site(addresses.lane_steps(lanes), lanes.shape)
    others = {v.name: (v.end - v.start) // v.itemsize for b in _launch.buffers for v in b.views if v is not view}
    return addresses.out_of_bounds(view.layout(), lanes, active, site, pid, _launch.grid, _launch.scalars,
                                   _config.in_loop(filename, lineno), others)


def _fault_oob(builder: Any, view: _View, offsets: np.ndarray, kind: str, op: str, ptr: Any,
               mask: Any) -> KernelFault:
    filename, lineno = _learner_frame()
    pid = tuple(int(i) for i in builder.grid_idx)
    span = (view.end - view.start) // view.itemsize
    # tl.load/tl.store without a mask reach the builder without one; atomics always get one
    had_mask = mask is not None and (kind != ATOMIC or not bool(np.all(_data(mask))))
    finding = _oob_diagnosis(view, ptr, mask, pid, filename, lineno)
    side = "before the start of" if offsets[0] < 0 else "past the end of"
    if len(offsets) > 1:
        these = f"Element offsets {_offsets_text(offsets)} are"
    else:
        these = f"Element offset {offsets[0]} is"
    shape = f" (`{view.name}` has shape {tuple(view.shape)})" if len(view.shape) > 1 else ""
    message = "\n".join([
        f"Out-of-bounds {_VERB[kind]} `{view.name}` in program {_pid_text(pid)}, at {_where(filename, lineno)}",
        f"{these} {side} `{view.name}`: valid offsets are [0, {span}){shape}.",
        "On a GPU this would touch memory that belongs to something else (wrong values, a crash, or "
        "another tensor silently overwritten); the checker stopped it before memory was touched.",
        *([finding.text + ("" if "mask" in finding.candidates else " A mask would only hide this.")]
          if finding.text else []),
        # where a mask is (one of) the fixes, show how to write it
        *([_mask_advice(view, span, offsets, op, np.ndim(_data(ptr)) >= 2, had_mask, finding.cause == "mask")]
          if "mask" in (finding.cause, *finding.candidates) else []),
    ])
    return KernelFault("out_of_bounds", pid, filename, lineno, view.name, message, finding.cause,
                       finding.candidates)


def _element_text(view: _View, offset: int) -> str:
    if view.contiguous and len(view.shape) > 1 and 0 <= offset < int(np.prod(view.shape)):
        index = ", ".join(str(int(i)) for i in np.unravel_index(offset, view.shape))
        return f"element {offset} (index [{index}])"
    return f"element {offset}"


def _fault_race(builder: Any, launch: _Launch, buf: _Buffer, element: int, kind: str, op: str,
                other: int, other_stored: bool, ptr: Any) -> KernelFault:
    filename, lineno = _learner_frame()
    pid = tuple(int(i) for i in builder.grid_idx)
    nx, ny, nz = builder.grid_dim
    other_pid = (other // (ny * nz), other // nz % ny, other % nz)
    addr = buf.data_lo + (element << int(buf.shift))
    view = next((v for v in buf.views if v.start <= addr < v.end), buf.views[0])
    offset = (addr - view.start) // view.itemsize
    doing = {LOAD: "loads this element", STORE: "stores to this element",
             ATOMIC: f"updates this element with tl.{op}"}[kind]
    # a load or an atomic races only with another program's plain store, so a conflict with an
    # access that was no store is this program's store meeting the other's load or atomic
    done = "stored to it with a plain tl.store" if other_stored else "reads it or updates it with an atomic"
    cause, candidates = "atomic", ()
    shared = _is_shared(buf) and addresses.shared_overlap(
        view.layout(), _lane_offsets(ptr, view), launch.sites, (filename, lineno, view.name), pid, other_pid,
        launch.grid, launch.scalars, {n: v for n, v in launch.scalars.items() if n not in launch.constexprs})
    if shared:  # the programs were never meant to meet here, though the output sums shares
        fix = f"This output sums shares from several programs, but not these two here. {shared.text}"
        cause, candidates = shared.cause, shared.candidates
    elif _is_shared(buf):
        fix = ("Fix: this output sums shares from several programs: add each share with tl.atomic_add "
               "(or another tl.atomic_* op), never with a load, an add and a store.")
    else:
        lanes = _lane_offsets(ptr, view)
        site = launch.sites.get((filename, lineno, view.name)) or addresses.Site(addresses.lane_steps(lanes),
                                                                               lanes.shape)
        sizes = {n: v for n, v in launch.scalars.items() if n not in launch.constexprs}
        finding = addresses.overlapping_writes(view.layout(), lanes, site, pid, launch.grid, launch.scalars, sizes)
        if finding is not None:
            fix = f"Each element of `{view.name}` belongs to exactly one program. {finding.text}"
            cause, candidates = finding.cause, finding.candidates
        else:
            cause, candidates = "", ("address", "mask")
            fix = (f"Each element of `{view.name}` belongs to exactly one program, so two programs reaching it "
                   "means their blocks overlap: either an offset is computed wrongly (each program's start "
                   "from tl.program_id, the strides), or lanes past the end of a block reach into the next "
                   "one and need a mask.")
    message = "\n".join([
        f"Data race on `{view.name}` {_element_text(view, offset)}, in program {_pid_text(pid)} at "
        f"{_where(filename, lineno)}",
        f"Program {_pid_text(pid)} {doing}, but program {_pid_text(other_pid)} {done} in the same launch.",
        "On a GPU, programs run in parallel, so these accesses happen in no fixed order and one "
        "program's update can overwrite another's. The interpreter runs programs one after another, "
        "so the answer can look right here and still be wrong on a GPU.",
        fix,
    ])
    return KernelFault("race", pid, filename, lineno, view.name, message, cause, candidates)


# ---------------------------------------------------------------------------------------------
# Hooks on the interpreter


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
        _check(self, ptr, mask, kind, op if op else _rmw_name(_arg(args, kwargs, 0, "rmwOp")))
        _busy = True
        try:
            result = original(self, *args, **kwargs)
        finally:
            _busy = False
        _after(name, args, kwargs, ptr, mask, result)
        return result

    hook.__wrapped__ = original
    return hook


def _after(name: str, args: tuple, kwargs: dict, ptr: Any, mask: Any, result: Any) -> None:
    """Follow locks (checker/interpreter/locks.py): accesses under one are left out of the race check."""
    locks.after(_launch, name, args, kwargs, ptr, mask, result)


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
        prepared = _rehome(list(self.arg_names), args, kwargs)
        if prepared is None:  # no tensors, or memory we can't copy: run unchecked
            return original(self, *args, **kwargs)
        launch, args, kwargs = prepared
        launch.constexprs = frozenset(getattr(self, "constexprs", ()))
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
            _finished.append(_Evidence.of(launch))
            del _finished[:-16]  # a check asks after each case; a bare loop of launches must not pile up
        launch.copy_back()

    launch_hook.__wrapped__ = original
    return launch_hook


def enable(learner_files: Callable[[str], bool] = lambda f: True,
           describe_line: Callable[[str, int], str] = lambda f, n: f"{f}, line {n}",
           in_loop: Callable[[str, int], bool] = lambda f, n: False) -> None:
    """Check every interpreted launch from now on (idempotent; a second call updates the callbacks).
    in_loop(file, line): is that line of the learner's inside a loop (a block that starts outside
    its tensor may then be a loop running one step too far)."""
    global _config
    _config = _Config(learner_files, describe_line, in_loop)
    _learner_file.clear()
    instruments.install(sys.modules[__name__])  # scratch() and shared() reach this module there
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
    return _config is not None


def disable() -> None:
    """Restore the interpreter's original methods."""
    global _config, _launch
    for (owner, name), original in _originals.items():
        setattr(owner, name, original)
    _originals.clear()
    _config = None
    _launch = None
    instruments.install(None)


@contextmanager
def sanitized(learner_files: Callable[[str], bool] = lambda f: True,
              describe_line: Callable[[str, int], str] = lambda f, n: f"{f}, line {n}") -> Iterator[None]:
    """Enable the checks for a block, then put back whatever state came before."""
    previous = _config
    enable(learner_files, describe_line)
    try:
        yield
    finally:
        if previous is None:
            disable()
        else:
            enable(previous.learner_files, previous.describe_line, previous.in_loop)
