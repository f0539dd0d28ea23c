"""Masked-off lanes are undefined: in Triton's interpreter they read as poison.

`tl.load(ptr, mask=m)` without `other=` leaves the lanes `m` switches off undefined: on a GPU they hold
whatever the registers held. The interpreter alone fills them with 0, so a kernel that sums such a
load passes here and may not on a GPU. `enable()` makes them read as the checker's lane poison
(checker/poison.py): a NaN of its own payload for floats, which arithmetic carries to any output it
reaches (checker/diagnosis/undefined_lanes.py traces it back), and a loud pattern for integers. A
kernel whose masked-off lanes never reach an output (stored under the same mask, or replaced by
tl.where) is unaffected.

For the interpreter only; enable it before the sanitizer (checker/interpreter/hooks.py), which wraps
whatever load it finds and puts that back when it stops.
"""
from __future__ import annotations

import numpy as np

FLAG = "checker_undefined_lanes"
_on = False  # switched by enable() and disable(); the patch, once installed, stays
# for each tl.load being built (innermost last): whether it was given other=. The interpreter hands
# the builder no other= where one was given as a falsy one-element block (its `other.handle if other
# else None` reads the value: other=0.0 on a block of one lane, or on a scalar), so the builder alone
# cannot tell "not given" from "given as 0"
_given: list[bool] = []


def enable() -> None:
    """Poison the masked-off lanes of loads without other= from now on (idempotent)."""
    global _on
    from triton.runtime import interpreter as interp

    from checker.interpreter.compat import wraps_with
    _on = True
    current = interp.InterpreterBuilder.create_masked_load
    if wraps_with(current, FLAG):
        return

    # the trailing arguments (cache and eviction policies, volatility) differ between versions
    def create_masked_load(self, ptrs, mask, other, *policies, **named):
        if other is None and _on and not (_given and _given[-1]):
            other = _poison_like(interp, ptrs)
        return current(self, ptrs, mask, other, *policies, **named)

    create_masked_load.__wrapped__ = current
    setattr(create_masked_load, FLAG, True)
    interp.InterpreterBuilder.create_masked_load = create_masked_load
    _watch_other()


def _watch_other() -> None:
    """Note, for each tl.load the interpreter builds, whether it was given other= (see _given)."""
    from triton.language import semantic
    owner = getattr(semantic, "TritonSemantic", None)
    original = getattr(owner, "load", None)
    if original is None or getattr(original, FLAG, False):
        return

    def load(self, ptr, mask, *rest, **named):
        _given.append((rest[0] if rest else named.get("other")) is not None)
        try:
            return original(self, ptr, mask, *rest, **named)
        finally:
            _given.pop()

    load.__wrapped__ = original
    setattr(load, FLAG, True)
    owner.load = load


def disable() -> None:
    """Masked-off lanes read the interpreter's own zeros again."""
    global _on
    _on = False


def _poison_like(interp, ptrs):
    """The `other` a load without one reads: the lane poison in the pointers' element type, or None
    (the interpreter's own fill) for a type that has none (booleans, pointers)."""
    import triton.language as tl

    from checker.poison import lane_fill
    dtype_tt = ptrs.get_element_ty()
    if isinstance(dtype_tt, tl.pointer_type):
        return None
    np_dtype = interp._get_np_dtype(dtype_tt)  # float32 for bf16, whose values the interpreter holds
    fill = lane_fill(np_dtype)
    if fill is None:
        return None
    return interp.TensorHandle(np.full(np.shape(ptrs.data), fill, dtype=np_dtype), dtype_tt)
