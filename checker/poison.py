"""The fill every output and scratch buffer starts with, and the guard bands' bits: quiet NaNs with a
payload no arithmetic produces, so an element that still holds them was never written.

The bottom of the checker: it imports torch and nothing of the checker.
"""
from __future__ import annotations

import torch

# Quiet NaNs with a payload no arithmetic produces (computed NaNs carry the default payload): an
# element still holding these bits was never written; any other NaN the kernel computed.
POISON_BITS = {4: (torch.int32, 0x7FA5A5A5), 2: (torch.int16, 0x7FA5), 8: (torch.int64, 0x7FF5A5A5A5A5A5A5)}
# the guard bands after each output on a GPU (checker/evidence/guards.py): the same payloads, by element size
GUARD_BITS = {1: 0x5B, **{size: bits for size, (_, bits) in POISON_BITS.items()}}


def poison(t: torch.Tensor) -> None:
    if t.is_floating_point() and t.element_size() in POISON_BITS:
        int_type, bits = POISON_BITS[t.element_size()]
        t.view(int_type).fill_(bits)
    else:
        t.fill_(float("nan"))


def poison_of(t: torch.Tensor) -> tuple | None:
    """(NumPy integer type, bits) of the poison in a tensor that `poison` filled, for the sanitizer."""
    import numpy as np
    if not (t.is_floating_point() and t.element_size() in POISON_BITS):
        return None
    int_type, bits = POISON_BITS[t.element_size()]
    return {torch.int16: np.int16, torch.int32: np.int32, torch.int64: np.int64}[int_type], bits


def unwritten_mask(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point() and t.element_size() in POISON_BITS and t.is_contiguous():
        int_type, bits = POISON_BITS[t.element_size()]
        return (t.view(int_type) == bits).cpu()
    return torch.isnan(t.detach()).cpu()
