"""Keep every access of the launches inside a `with recording() as launches:` block: the trace the
memory map is drawn from (checker/evidence/memory_map.py folds it, checker/report/map_figure.py
draws it).

checker/interpreter/hooks.py hands each access to this module just before the checks run, so an
access the checks stop (out of bounds, a race) is kept too: the last access of a faulted launch.
An access is kept as it came, by reference (the program, the kind, the lanes' addresses and mask
as the interpreter made them): nothing is computed while the kernel runs, so a case whose map
is not drawn pays one append per access; only a map asked for folds them. Past KEPT_LANES lanes a
recording keeps no more (the map then says it shows the first accesses only).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Optional

from checker.evidence.memory_map import LaunchTrace, TensorArg
from checker.interpreter import hooks, memory
from checker.interpreter.memory import ATOMIC, data

KEPT_LANES = 1 << 22   # lanes one recording keeps (an 8-byte address each, and a mask): ~40 MiB at most


class _Recording:
    def __init__(self) -> None:
        self.launches: list[LaunchTrace] = []
        self.lanes = 0


class _Running:
    """The accesses of the launch that runs, as long as the recordings have room for them."""

    def __init__(self, launch: memory.Launch, room: int) -> None:
        self.launch = launch
        self.accesses: list[tuple] = []
        self.room = room
        self.complete = True


_recordings: list[_Recording] = []
_running: Optional[_Running] = None


class _Observer:
    """What hooks.py calls: every access of a checked launch, and its end."""

    @staticmethod
    def access(launch: memory.Launch, builder: Any, ptr: Any, mask: Any, kind: str) -> None:
        global _running
        if _running is None or _running.launch is not launch:
            _running = _Running(launch, min(KEPT_LANES - r.lanes for r in _recordings) if _recordings else 0)
        addrs = data(ptr)
        _running.room -= addrs.size
        if _running.room < 0:   # the map says it shows the first accesses only
            _running.complete = False
            return
        _running.accesses.append((launch.program(builder), kind, addrs, None if mask is None else data(mask),
                                  kind == ATOMIC or bool(launch.locks)))

    @staticmethod
    def finished(launch: memory.Launch) -> None:
        global _running
        running = _running if _running is not None and _running.launch is launch else _Running(launch, 0)
        _running = None
        if not _recordings:
            return
        args = [TensorArg(view.name, buf.original.data_ptr() + (view.start - buf.data_lo), view.start, view.end,
                          view.itemsize, view.shape, view.strides, zone)
                for zone, buf in enumerate(launch.buffers) for view in buf.views]
        lanes = sum(int(a[2].size) for a in running.accesses)
        for recording in _recordings:
            recording.lanes += lanes
            recording.launches.append(LaunchTrace(launch.kernel, launch.grid, args, list(launch.zone_los),
                                                  running.accesses, running.complete))


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
