"""What a run leaves behind, as facts: where in the learner's code, what the launches did to memory,
and what stopped a launch. Nothing here is a sentence; checker/diagnosis/ words these facts.

The instrumented launch (checker/interpreter/sanitizer.py) fills a MemoryEvidence that the caller
holds (`with sanitizer.recording(...) as memory:`), and stops a launch with a KernelFault that
carries a Fault; neither travels through module globals.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Mapping

from checker.evidence.lanes import Layout, Pid, Site

Describe = Callable[[str, int], str]   # (file, line) -> '`kernel`, cell 4, line 3'


def _plain(filename: str, lineno: int) -> str:
    return f"{filename}, line {lineno}"


@dataclass(frozen=True)
class Place:
    """A line of the learner's code: its file and line, named as the report names it (`label`, by
    the describe_line the checks were enabled with) and its text (`code`); both are looked up
    only when asked, since most places recorded are never reported."""
    filename: str = ""
    lineno: int = 0
    describe: Describe = field(default=_plain, compare=False, repr=False)

    @cached_property
    def label(self) -> str:
        return self.describe(self.filename, self.lineno) if self.filename else "an unknown line"

    @cached_property
    def code(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip() if self.filename else ""


SiteKey = tuple[str, int, str]   # (learner file, line, tensor argument)


@dataclass
class LaunchRecord:
    """One launch (finished or faulted): where its blocks went, what it did to each storage, and
    which outputs it read before writing them."""
    grid: tuple[int, int, int]
    scalars: dict[str, int]                    # its integer arguments by name
    sites: dict[SiteKey, Site]                 # each line's pointer block, per tensor
    layouts: dict[SiteKey, Layout]             # the tensor each site reached, as the kernel saw it
    places: dict[SiteKey, Place]               # each site's line
    kinds: list[tuple[int, int, frozenset]]    # (storage bytes lo, hi, {"load", "store", "atomic"})
    poison_reads: list[tuple[str, Place]]      # (tensor argument, line): read while it held the fill


@dataclass
class MemoryEvidence:
    """What the launches of one recording saw. outputs: the byte ranges of the tensors to report
    on by name; launches: the last KEPT launches, in order."""
    outputs: dict[str, tuple[int, int]] = field(default_factory=dict)
    launches: list[LaunchRecord] = field(default_factory=list)

    KEPT = 16   # a bare loop of launches must not pile up

    def add(self, record: LaunchRecord) -> None:
        self.launches.append(record)
        del self.launches[:-self.KEPT]

    @property
    def kinds(self) -> dict[str, set[str]]:
        """Per output, what the launches did to its bytes: load, store, atomic."""
        return {name: set().union(*[k for r in self.launches for start, end, k in r.kinds if start < hi and lo < end])
                for name, (lo, hi) in self.outputs.items()}

    @property
    def poison_reads(self) -> list[tuple[str, Place]]:
        """(tensor argument, line) for each output a launch read while it still held the fill."""
        return [read for r in self.launches for read in r.poison_reads]


@dataclass(frozen=True)
class Fault:
    """What stopped a launch. kind: "out_of_bounds", "race" or "lock"; program: the program that
    made the access; tensor: the argument it touched; where: its line; facts: the rest, by kind
    (offsets, layout, lanes, grid, the other program, the lock and the rule it broke ...)."""
    kind: str
    program: Pid
    tensor: str
    where: Place
    facts: Mapping[str, Any] = field(default_factory=dict)
