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

# What the interpreter reads in the masked-off lanes of a tl.load without other= (on a GPU: whatever
# the registers held; checker/interpreter/undefined.py). Floats: a quiet NaN of its own payload, so
# that arithmetic carries it (x + NaN keeps the NaN's bits) and an output element holding it traces
# back to those lanes; its top 16 bits (LANE_MARK) survive a rounding to bf16 and any widening.
# Integers: a loud pattern (a sum or an index made from it is far off), no tracing.
LANE_NAN32 = 0x7FD1D1D1
LANE_MARK = LANE_NAN32 >> 16
LANE_INT = {1: 0x5A, 2: 0x5A5A, 4: 0x5A5A5A5A, 8: 0x5A5A5A5A5A5A5A5A}


# What a float input's guard band holds (checker/evidence/guards.py, where the sanitizer is off): a
# quiet NaN of a third payload, so that an output element computed from a load past an input's end
# traces back to it, as the lane NaN does; a bf16 input's band holds its top 16 bits (BAND_MARK).
BAND_NAN32 = 0x7FE4B4B4
BAND_MARK = BAND_NAN32 >> 16


def band_bits(t: torch.Tensor) -> tuple[torch.dtype, int] | None:
    """(integer view type, bits) that fill a float input's guard band, per float type; None for others
    (an integer read past the end is left to chance: a loud pattern would index far out and fault)."""
    import numpy as np
    if t.dtype == torch.float32:
        return torch.int32, BAND_NAN32
    if t.dtype in (torch.bfloat16, torch.float16):
        return torch.int16, BAND_MARK
    if t.dtype == torch.float64:  # the float32 NaN widened: narrowing it back gives the same bits
        wide = np.array([BAND_NAN32], dtype=np.uint32).view(np.float32).astype(np.float64).view(np.int64)
        return torch.int64, int(wide[0])
    return None


def band_nan_mask(t: torch.Tensor) -> torch.Tensor:
    """Which elements of a float tensor hold the NaN of an input's guard band (either sign), as a bool
    tensor on the CPU."""
    if not t.is_floating_point():
        return torch.zeros(t.shape, dtype=torch.bool)
    wide = t.detach().cpu().float()
    return ((wide.view(torch.int32) >> 16) & 0x7FFF).eq(BAND_MARK) & wide.isnan()


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


def lane_fill(np_dtype):
    """The value masked-off lanes read, as a NumPy scalar of `np_dtype` (None: a type left alone,
    booleans and pointers)."""
    import numpy as np
    kind = np.dtype(np_dtype)
    if kind.kind == "f":
        return np.array([LANE_NAN32], dtype=np.uint32).view(np.float32).astype(kind)[0]
    if kind.kind in "iu" and kind.itemsize in LANE_INT:
        return np.array([LANE_INT[kind.itemsize]], dtype=f"u{kind.itemsize}").view(kind)[0]
    return None


def lane_nan_mask(t: torch.Tensor) -> torch.Tensor:
    """Which elements of a float tensor hold the NaN of masked-off lanes (in any float width, either
    sign: a negation flips the sign bit), as a bool tensor on the CPU."""
    if not t.is_floating_point():
        return torch.zeros(t.shape, dtype=torch.bool)
    wide = t.detach().cpu().float()
    return ((wide.view(torch.int32) >> 16) & 0x7FFF).eq(LANE_MARK) & wide.isnan()


def unwritten_mask(t: torch.Tensor) -> torch.Tensor:
    if t.is_floating_point() and t.element_size() in POISON_BITS and t.is_contiguous():
        int_type, bits = POISON_BITS[t.element_size()]
        return (t.view(int_type) == bits).cpu()
    return torch.isnan(t.detach()).cpu()
