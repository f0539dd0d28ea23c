"""Stop out-of-bounds accesses and data races while Triton's interpreter runs a kernel.

With TRITON_INTERPRET=1 every program of a launch runs one after another on the CPU, and the
interpreter reads and writes raw addresses without checking them: a missing mask silently reads
garbage or overwrites a neighbouring tensor, and two programs updating one element with a plain
load/store give the right answer here although they race on a GPU. `enable()` patches the
interpreter so that every load, store and atomic is checked *before* memory is touched, and a
problem is raised as a `KernelFault` carrying the facts (checker/evidence/model.py's Fault: the
offsets, the lanes, the other program ...); checker/diagnosis/faults.py words them for the learner.

Each launch's tensor arguments are re-homed into a private arena between red zones
(checker/interpreter/memory.py), so an address is attributed to the argument it belongs to;
checker/interpreter/hooks.py patches the interpreter and runs these checks before each access.

Races: for each copy, three numpy shadow arrays record the lowest and highest program that touched
each element and the program that last wrote it with a plain store. A plain store conflicts
with any other program's earlier access; a load or atomic conflicts with another program's
plain store; atomics never conflict with each other. Accesses made while a program holds a lock
(a successful `tl.atomic_cas`, released by `tl.atomic_xchg`) are not tracked, as in the
LayerNorm-backward tutorial. Known false positive: the "last program to arrive reads everyone's
partial results" pattern (counter + plain loads) is reported as a race.

What the launches saw (each line's pointer blocks, what they did to each output, the outputs read
before being written) is recorded for the caller that asks: `with recording(...) as memory:` fills
`memory` (checker/evidence/model.py's MemoryEvidence) with every launch inside the block.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Optional

import numpy as np
import torch
import triton

from checker.evidence.lanes import Site, lane_steps
from checker.evidence.model import Fault, LaunchRecord, MemoryEvidence
from checker.interpreter import hooks, memory
from checker.interpreter.memory import (ATOMIC, LOAD, NO_PID, STORE, Buffer, KernelFault, Launch, View,  # noqa: F401
                                        active_addresses, data, expect_outputs, expect_shared, is_shared,
                                        shared_tensors, watch_scratch)

__all__ = ["KernelFault", "enable", "disable", "enabled", "sanitized", "recording", "expect_shared",
           "expect_outputs", "watch_scratch", "shared_tensors"]

_TRITON_DIR = os.path.dirname(triton.__file__) + os.sep
# the files of the checks, their hooks and the other instruments on the interpreter (checker/interpreter/:
# the undefined lanes' wrapper of tl.load sits between a learner's line and the hooks): a learner's
# line is never one of theirs
_OWN_FILES = frozenset({__file__, hooks.__file__, memory.__file__})
_OWN_DIR = os.path.dirname(__file__) + os.sep


# ---------------------------------------------------------------------------------------------
# Checking one access


def check(launch: Launch, builder: Any, ptr: Any, mask: Any, kind: str, op: str) -> None:
    """Raise KernelFault if this access leaves its tensor or races with another program."""
    addrs = active_addresses(ptr, mask)
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
            if kind == ATOMIC:
                buf.kinds.add(op)  # which atomic: an exchange replaces, an add sums
            _record_site(launch, view, ptr, builder, addrs.size)
            if kind != STORE and buf.watch_poison is not None:  # a load, or an atomic's read of the old value
                _note_poison_read(launch, buf, view, addrs)
            if not launch.locks:
                _track(launch, buf, addrs, kind, pid, builder, op, ptr)
            return
    _check_lanes(launch, builder, ptr, mask, addrs, width, kind, op, pid)


def _lane_offsets(ptr: Any, view: View) -> np.ndarray:
    """Every lane's element offset from the start of `view` (masked-off lanes too), in the
    pointer block's shape."""
    return (data(ptr).astype(np.int64) - view.start) // view.itemsize


def _record_site(launch: Launch, view: View, ptr: Any, builder: Any, active: int) -> None:
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
        site = launch.sites[key] = Site(lane_steps(offsets), offsets.shape)
        launch.site_views[key] = view
    site.origins[pid] = (int(data(ptr).flat[0]) - view.start) // view.itemsize
    site.active[pid] = active


def _note_poison_read(launch: Launch, buf: Buffer, view: View, addrs: np.ndarray) -> None:
    """A load of an output element that still holds the checker's fill: the kernel read an output
    before writing it (or through the wrong pointer). Noted once per tensor."""
    if any(name == view.name for name, _ in launch.poison_reads):
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
        launch.poison_reads.append((view.name, memory.place(*_learner_frame())))


def _check_lanes(launch: Launch, builder: Any, ptr: Any, mask: Any, addrs: np.ndarray, width: int,
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
            raise _fault_oob(launch, builder, view, offsets, kind, op, ptr, mask)
    for b in np.unique(owner):
        buf = launch.buffers[b]
        if kind != LOAD:
            buf.written = True
        buf.kinds.add(kind)
        if kind == ATOMIC:
            buf.kinds.add(op)  # which atomic: an exchange replaces, an add sums
        if not launch.locks:
            _track(launch, buf, addrs[owner == b], kind, pid, builder, op, ptr)


def _track(launch: Launch, buf: Buffer, addrs: np.ndarray, kind: str, pid: int, builder: Any,
           op: str, ptr: Any) -> None:
    """Record this access for race detection and fault on a conflict with another program."""
    idx = ((addrs - buf.data_lo_u64) >> buf.shift).view(np.int64)  # small and positive: a free view
    p = launch.pid_i32
    if kind != STORE:
        if buf.plain_stored:
            writer = buf.history().store_pid[idx]
            clash = (writer != NO_PID) & (writer != p)
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
# The learner's line


_learner_file: dict[str, bool] = {}  # file name -> is it the learner's? (asked for every access)
_answered_for: Optional[memory.Config] = None   # the configuration those answers came from


def _learner_frame() -> tuple[str, int]:
    """Innermost frame outside Triton and the checks that the configuration calls the learner's."""
    global _answered_for
    config = memory.config()
    if _answered_for is not config:  # enabled anew: ask again
        _learner_file.clear()
        _answered_for = config
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        mine = _learner_file.get(name)
        if mine is None:
            mine = _learner_file[name] = (name not in _OWN_FILES and not name.startswith((_TRITON_DIR, _OWN_DIR))
                                          and config.learner_files(name))
        if mine:
            return name, frame.f_lineno
        frame = frame.f_back
    return "", 0


# ---------------------------------------------------------------------------------------------
# Faults, as facts (checker/diagnosis/faults.py words them)


def _fault_oob(launch: Launch, builder: Any, view: View, offsets: np.ndarray, kind: str, op: str, ptr: Any,
               mask: Any) -> KernelFault:
    """Lanes that leave their tensor: the offending offsets, and the evidence that tells a mask from
    an address (the lanes, the line's site, the grid; checker/diagnosis/addresses.py reads it)."""
    filename, lineno = _learner_frame()
    lanes = _lane_offsets(ptr, view)
    active = np.ones(lanes.shape, dtype=bool) if mask is None else np.broadcast_to(data(mask), lanes.shape)
    site = launch.sites.get((filename, lineno, view.name)) or Site(lane_steps(lanes), lanes.shape)
    return KernelFault(Fault("out_of_bounds", tuple(int(i) for i in builder.grid_idx), view.name,
                             memory.place(filename, lineno), {
        "access": kind, "op": op, "offsets": offsets, "layout": view.layout(), "lanes": lanes, "active": active,
        # tl.load/tl.store without a mask reach the builder without one; atomics always get one
        "had_mask": mask is not None and (kind != ATOMIC or not bool(np.all(data(mask)))),
        "tile": np.ndim(data(ptr)) >= 2, "site": site, "grid": launch.grid, "scalars": launch.scalars,
        "in_loop": memory.config().in_loop(filename, lineno),
        "others": {v.name: (v.end - v.start) // v.itemsize for b in launch.buffers for v in b.views if v is not view},
    }))


def _fault_race(builder: Any, launch: Launch, buf: Buffer, element: int, kind: str, op: str,
                other: int, other_stored: bool, ptr: Any) -> KernelFault:
    """Two programs at one element: which, doing what, and the evidence on whether they were meant
    to meet (the output sums shares) or their blocks overlap (the lanes, every line's site)."""
    filename, lineno = _learner_frame()
    nx, ny, nz = builder.grid_dim
    addr = buf.data_lo + (element << int(buf.shift))
    view = next((v for v in buf.views if v.start <= addr < v.end), buf.views[0])
    return KernelFault(Fault("race", tuple(int(i) for i in builder.grid_idx), view.name,
                             memory.place(filename, lineno), {
        "access": kind, "op": op, "offset": (addr - view.start) // view.itemsize, "contiguous": view.contiguous,
        "other": (other // (ny * nz), other // nz % ny, other % nz), "other_stored": other_stored,
        "shared": is_shared(buf), "layout": view.layout(), "lanes": _lane_offsets(ptr, view),
        "sites": launch.sites, "key": (filename, lineno, view.name), "grid": launch.grid, "scalars": launch.scalars,
        "sizes": {n: v for n, v in launch.scalars.items() if n not in launch.constexprs},
    }))


# ---------------------------------------------------------------------------------------------
# What the launches saw, for the caller that records them

_recordings: list[MemoryEvidence] = []   # open recordings, innermost last


def finished(launch: Launch) -> None:
    """A launch ended, finished or faulted: hand what it saw to every open recording."""
    if not _recordings:
        return
    kinds = [(b.original.data_ptr(), b.original.data_ptr() + b.nbytes, frozenset(b.kinds)) for b in launch.buffers]
    record = LaunchRecord(launch.grid, launch.scalars, launch.sites,
                          {key: view.layout() for key, view in launch.site_views.items()},
                          {key: memory.place(key[0], key[1]) for key in launch.sites}, kinds, launch.poison_reads)
    for seen in _recordings:
        seen.add(record)


def _byte_range(t: torch.Tensor) -> tuple[int, int]:
    return t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()


@contextmanager
def recording(outputs: Mapping[str, torch.Tensor] = {}, shared: Optional[list[torch.Tensor]] = None,
              poisoned: Optional[list[tuple[torch.Tensor, Any, int]]] = None) -> Iterator[MemoryEvidence]:
    """Record what the launches inside the block see into the MemoryEvidence it yields: each line's
    pointer blocks, what they did to each of `outputs` (by name), the outputs they read while those
    still held the checker's fill. shared: the outputs that sum shares from several programs (see
    expect_shared); poisoned: the outputs filled with the poison (see expect_outputs)."""
    if shared is not None:
        expect_shared(shared)
    if poisoned is not None:
        expect_outputs(poisoned)
    seen = MemoryEvidence()
    _recordings.append(seen)
    try:
        yield seen
    finally:
        _recordings.remove(seen)
        seen.outputs = {name: _byte_range(t) for name, t in outputs.items() if torch.is_tensor(t)}


# ---------------------------------------------------------------------------------------------
# Switching the checks on and off (checker/interpreter/hooks.py does the patching)


def enable(learner_files: Callable[[str], bool] = lambda f: True,
           describe_line: Callable[[str, int], str] = lambda f, n: f"{f}, line {n}",
           in_loop: Callable[[str, int], bool] = lambda f, n: False) -> None:
    """Check every interpreted launch from now on (idempotent; a second call updates the callbacks).
    in_loop(file, line): is that line of the learner's inside a loop (a block that starts outside
    its tensor may then be a loop running one step too far)."""
    hooks.enable(sys.modules[__name__], learner_files, describe_line, in_loop)


disable = hooks.disable
enabled = hooks.enabled


@contextmanager
def sanitized(learner_files: Callable[[str], bool] = lambda f: True,
              describe_line: Callable[[str, int], str] = lambda f, n: f"{f}, line {n}") -> Iterator[MemoryEvidence]:
    """Enable the checks for a block, then put back whatever state came before; yields what the
    launches inside saw."""
    with hooks.sanitized(sys.modules[__name__], learner_files, describe_line), recording() as seen:
        yield seen
