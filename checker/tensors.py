"""Small facts about tensors that several rooms of the checker need: a root mean square, and where
a flat index lands in a shape. Nothing here knows about puzzles or hints."""
from __future__ import annotations

from typing import Any


def rms(t: Any) -> float:
    """Root mean square of a tensor, in float64; 0 for an empty one."""
    t = t.double()
    return float(t.pow(2).mean().sqrt()) if t.numel() else 0.0


def unravel(flat: int, shape: tuple) -> tuple[int, ...]:
    """The index in `shape` of the element at row-major position `flat`."""
    out = []
    for dim in reversed(shape):
        out.append(flat % dim)
        flat //= dim
    return tuple(reversed(out))
