"""The readings and words every address finding shares: a finding's record, counts of elements named by the
size they equal, a tensor's layout in words, how far a block reaches.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from checker.diagnosis.model import Diagnosis, Strength
from checker.evidence.lanes import Layout, Pid, program_steps


def _found(code: str, text: str, cls: str = "", asked: tuple[str, ...] = (), **data) -> Diagnosis:
    """One finding: the run proves a cause class (lanes and strides), or several fit and it asks.
    data: the number it rests on (a step, a mask's bound), for a reader that knows the kernel's text
    (checker/diagnosis/written_numbers.py)."""
    return Diagnosis(text, cls, tuple(asked), code=code, strength=Strength.PROOF if cls else Strength.FIT,
                     data=data)


def _elements(n: int, scalars: Optional[dict[str, int]] = None) -> str:
    """'1 element', '16 (= N) elements': a count of elements, and the size that equals it where one does."""
    return f"{n}{name_of(n, scalars) if scalars else ''} element{'' if n == 1 else 's'}"


def _label(layout: Layout) -> str:
    return f"`{layout.name}`"


def _layout_text(layout: Layout) -> str:
    if len(layout.shape) <= 1:
        return f"{_label(layout)} has {_elements(layout.span)}, 1 apart"
    return f"{_label(layout)} has shape {tuple(layout.shape)}, strides {tuple(layout.strides)}"


def name_of(value: int, scalars: dict[str, int]) -> str:
    """' (= M)' when exactly one of the kernel's integer arguments has this value."""
    names = [n for n, v in scalars.items() if v == value]
    return f" (= {names[0]})" if len(names) == 1 else ""


def _axis_words(block: tuple[int, ...], axis: int) -> str:
    if len(block) == 1:
        return "neighbouring lanes"
    return "neighbouring rows of the block" if axis == 0 else "neighbouring columns of the block"


def _origin_text(layout: Layout, origin: int) -> str:
    where = layout.coordinates(origin)
    if where is None:
        return f"element {origin}"
    return f"element {origin} (row {where[0]}, column {where[1]})"


def _program_words(pid: Pid, origins: dict[Pid, int], grid: tuple[int, int, int],
                   scalars: dict[str, int]) -> str:
    """'the programs before it started at 0, 32, 64 (32 apart, = BLOCK_N)' where that is known."""
    steps = program_steps(origins, grid)
    if steps is None:
        return ""
    moved = [(axis, g) for axis, g in enumerate(steps) if g is not None and grid[axis] > 1]
    if not moved:
        return ""
    parts = [f"tl.program_id({axis}) moves it by {_elements(g, scalars)}" for axis, g in moved]
    return " " + "; ".join(parts) + "."


def _extent(layout: Layout, steps: tuple[Optional[int], ...], block: tuple[int, ...], g: int) -> tuple[int, int]:
    """(how many units the block spans in the direction a program move of g goes, the unit in
    elements): lanes along a block axis of step 1 for a move within a row, rows along a block axis
    that steps by the row stride for a move by whole rows. (0, 1) where the block does not span
    that direction."""
    rows_apart = layout.row_stride()
    if rows_apart is not None and g % rows_apart == 0:
        spans = [n for n, s in zip(block, steps) if s == rows_apart]
        return (spans[0], rows_apart) if spans else (0, 1)
    spans = [n for n, s in zip(block, steps) if s == 1]
    return (spans[0], 1) if spans else (0, 1)


def _reach(active: np.ndarray, axis: int) -> tuple[np.ndarray, int]:
    """Along one axis of a block: which lanes the mask lets through in any row or column, and how far
    they reach (the last such lane + 1; 0 if none). active: already of the block's shape."""
    lanes = active.any(axis=tuple(a for a in range(active.ndim) if a != axis))
    return lanes, (int(np.nonzero(lanes)[0].max()) + 1 if lanes.any() else 0)


def size_name(scalars: dict[str, int], size: int, default: str) -> str:
    """The kernel's own name for a size (N, n_cols), where exactly one of its arguments that is not a
    stride holds it; else `default`."""
    named = [k for k, v in scalars.items() if v == size and not k.lower().startswith("stride")]
    return named[0] if len(named) == 1 else default
