"""Keep every access of the launches inside a `with recording() as launches:` block: the trace the
memory map is drawn from (checker/evidence/memory_map.py folds it, checker/report/map_figure.py
draws it).

checker/interpreter/hooks.py hands each access to this module just before the checks run, so an
access the checks stop (out of bounds, a race) is kept too: the last access of a faulted launch.
An access is kept as it came, by reference (the program, the kind, the lanes' addresses and mask
as the interpreter made them): nothing is computed while the kernel runs, so a case whose map
nobody asks for pays one append per access; only a map asked for folds them. Past KEPT_LANES
lanes a recording keeps no more (the map then says it is incomplete).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Optional

from checker.evidence.memory_map import LaunchTrace, TensorArg
from checker.interpreter import hooks, memory
from checker.interpreter.memory import ATOMIC, data

KEPT_LANES = 1 << 24   # lanes one recording keeps (each an 8-byte address): ~130 MiB at most


class _Recording:
    def __init__(self) -> None:
        self.launches: list[LaunchTrace] = []
        self.lanes = 0


_recordings: list[_Recording] = []
_current: Optional[tuple[memory.Launch, list]] = None   # the running launch and its accesses


class _Observer:
    """What hooks.py calls: every access of a checked launch, and its end."""

    @staticmethod
    def access(launch: memory.Launch, builder: Any, ptr: Any, mask: Any, kind: str) -> None:
        global _current
        if _current is None or _current[0] is not launch:
            _current = (launch, [])
        addrs = data(ptr)
        _current[1].append((launch.program(builder), kind, addrs, None if mask is None else data(mask),
                            kind == ATOMIC or bool(launch.locks)))

    @staticmethod
    def finished(launch: memory.Launch) -> None:
        global _current
        accesses = _current[1] if _current is not None and _current[0] is launch else []
        _current = None
        if not _recordings:
            return
        args = [TensorArg(view.name, buf.original.data_ptr() + (view.start - buf.data_lo), view.start, view.end,
                          view.itemsize, view.shape, view.strides, zone)
                for zone, buf in enumerate(launch.buffers) for view in buf.views]
        lanes = sum(int(a[2].size) for a in accesses)
        for recording in _recordings:
            complete = recording.lanes + lanes <= KEPT_LANES
            recording.lanes += lanes if complete else 0
            recording.launches.append(LaunchTrace(launch.kernel, launch.grid, args, list(launch.zone_los),
                                                  accesses if complete else [], complete))


_OBSERVER = _Observer()


@contextmanager
def recording() -> Iterator[list[LaunchTrace]]:
    """Keep the accesses of every checked launch inside the block; yields the list their traces
    are added to, one per launch, as each ends (finished or faulted)."""
    mine = _Recording()
    _recordings.append(mine)
    hooks.observe(_OBSERVER)
    try:
        yield mine.launches
    finally:
        _recordings.remove(mine)
        if not _recordings:
            hooks.unobserve(_OBSERVER)
