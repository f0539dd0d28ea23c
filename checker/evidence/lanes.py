"""The lanes of one access, as facts: a tensor argument's layout, a line's pointer block (its steps
and where each program's block starts), and how the program ids move it.

The sanitizer records these while a kernel runs (checker/interpreter/sanitizer.py); the address
explainers (checker/diagnosis/addresses.py) read them. Pure NumPy, no Triton, no sentences.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

Pid = tuple[int, int, int]


@dataclass(frozen=True)
class Layout:
    """A tensor argument as the kernel was given it."""
    name: str                      # the kernel's parameter, e.g. "x_ptr"
    shape: tuple[int, ...]
    strides: tuple[int, ...]       # in elements
    itemsize: int
    span: int                      # the argument may touch elements [0, span)

    def big_dims(self) -> list[int]:
        """Dimensions with more than one element."""
        return [d for d, n in enumerate(self.shape) if n > 1]

    def steps_that_fit(self) -> set[int]:
        """Steps that walk a dimension: its stride, and for a dimension of one element (whose stride
        means nothing) also the stride it has when contiguous: a block over rows of a [1, K] tensor
        steps by K, its lanes past the first row masked off."""
        fit = {abs(s) for s in self.strides}
        natural = 1
        for d in reversed(range(len(self.shape))):
            if self.shape[d] == 1:
                fit.add(natural)
            natural *= max(self.shape[d], 1)
        return fit

    def row_stride(self) -> Optional[int]:
        """The stride between rows of a 2-D (or higher) layout whose last dimension is contiguous."""
        dims = self.big_dims()
        if len(self.shape) < 2 or len(dims) < 2 or self.strides[-1] != 1:
            return None
        return self.strides[-2]

    def coordinates(self, offset: int) -> Optional[tuple[int, int]]:
        """(row, column) of an element offset in a row-major 2-D view (rows = all leading dims)."""
        rows_apart = self.row_stride()
        if rows_apart is None or offset < 0:
            return None
        return offset // rows_apart, offset % rows_apart



@dataclass
class Site:
    """One line of the learner's kernel accessing one tensor: the steps of its pointer block (from
    the first program that reached it) and each program's first origin there."""
    steps: tuple[Optional[int], ...]
    block: tuple[int, ...]         # the pointer block's shape
    origins: dict[Pid, int] = field(default_factory=dict)
    active: dict[Pid, int] = field(default_factory=dict)   # lanes the mask let through, at that first access

    def flat_walk(self, grid: tuple[int, int, int]) -> bool:
        """Do the programs walk the tensor as one flat array, block after block? Then only the last
        block's mask switches lanes off; a kernel that walks rows masks lanes in every row."""
        width = int(np.prod(self.block)) if self.block else 1
        last = (grid[0] - 1, grid[1] - 1, grid[2] - 1)
        return all(n == width for pid, n in self.active.items() if pid != last)


def lane_steps(offsets: np.ndarray) -> tuple[Optional[int], ...]:
    """Per axis of the pointer block, the constant difference between neighbouring lanes (None
    where the axis has one lane or the differences vary: a gather)."""
    steps: list[Optional[int]] = []
    for axis in range(offsets.ndim):
        if offsets.shape[axis] < 2:
            steps.append(None)
            continue
        diff = np.diff(offsets.astype(np.int64), axis=axis)
        first = int(diff.flat[0])
        steps.append(first if bool((diff == first).all()) else None)
    return tuple(steps)


def program_steps(origins: dict[Pid, int], grid: tuple[int, int, int]) -> Optional[tuple[Optional[int], ...]]:
    """How far each program id moves the block's origin: (g0, g1, g2), None per axis where the
    programs seen do not tell; None if the origins are not one affine function of the program id
    (a persistent loop, data-dependent offsets)."""
    if not origins:
        return None
    base = min(origins)
    steps: list[Optional[int]] = []
    for axis in range(3):
        nxt = list(base)
        nxt[axis] += 1
        steps.append(origins[tuple(nxt)] - origins[base] if tuple(nxt) in origins else None)
    for pid, origin in origins.items():
        predicted = origins[base]
        for axis in range(3):
            if pid[axis] != base[axis]:
                if steps[axis] is None:
                    return tuple(steps)  # not enough programs seen to check this one
                predicted += (pid[axis] - base[axis]) * steps[axis]
        if predicted != origin:
            return None
    return tuple(steps)

