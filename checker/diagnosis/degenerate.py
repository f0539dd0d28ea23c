"""The degenerate explanations a fit must beat before it is stated.

A wrong output that is all zeros, one value repeated, or an input passed through unchanged fits many
hypotheses at once: a per-row factor of 1 is no scale, a known bug whose values collapse to the same
constant "matches" a loop that never ran, an operand read from the wrong place gives the same answer as
no operand at all. So before a fit names a cause, the output is checked against these plain readings;
where one holds, the hint says what it saw (every element is 0; every element is 0.25; `dx` is `dy`
as loaded) and asks where such a value comes from, and no fit is stated.

Pure torch on the worker's tensors; no puzzle knowledge.
"""
from __future__ import annotations

import torch

from checker.diagnosis.model import NO_HINT, Diagnosis, asking, certain
from checker.evidence.compare import matches
from checker.puzzle.model import Tolerance

FEW = 4  # elements at least: a constant among fewer is no observation


def constant_value(got: torch.Tensor, ref: torch.Tensor) -> float | None:
    """The one value every element holds, where the expected output is not itself constant."""
    if got.numel() < FEW or not bool(torch.isfinite(got).all()):
        return None
    first = got.reshape(-1)[0]
    if not bool((got == first).all()) or bool((ref == ref.reshape(-1)[0]).all()):
        return None
    return float(first)


def passed_through(got: torch.Tensor, ref: torch.Tensor, inputs: dict, scale: float, tol: Tolerance,
                   condition: float) -> str:
    """The input the output equals, element by element, where the expected output does not ('' if none)."""
    for name, x in inputs.items():
        if not torch.is_tensor(x) or not x.is_floating_point() or x.numel() != got.numel() or x.numel() < FEW:
            continue
        x = x.detach().double().cpu().reshape(got.shape)
        if matches(got, x, scale, tol, 1.0, condition) and not matches(x, ref, scale, tol, 1.0, condition):
            return name
    return ""


def degenerate_hint(label: str, got: torch.Tensor, ref: torch.Tensor, inputs: dict, scale: float, tol: Tolerance,
                    condition: float) -> Diagnosis:
    """What a degenerate output is, said as an observation with its questions; NO_HINT where it is none.
    (All zeros is values.zero's: the stores ran with nothing in them.)"""
    if bool((got == 0).all()):
        return NO_HINT
    value = constant_value(got, ref)
    if value is not None:
        flat = ref.reshape(-1)
        allowed = tol.atol * scale + tol.rtol * flat.abs()
        same = ((flat - value).abs() <= allowed).nonzero().reshape(-1).tolist()
        if len(same) == 1:
            # one element's answer everywhere: every lane computed it from that element's inputs
            at = _index(same[0], tuple(ref.shape))
            return certain(f"every element of `{label}` holds {value:.6g}, the value expected at {at}: every lane "
                           f"computed the answer of that one element, from its inputs. Is an offset missing from a "
                           f"load (a pointer with no + offsets: every lane reads the same element)?", "address",
                           code="values.one_element", subject=label, data={"value": value, "at": list(at)})
        return asking(f"every element of `{label}` is the same number, {value:.6g}, where the expected values differ: "
                      f"the kernel stores one value everywhere. Is what it stores computed from the loaded data at "
                      f"all — a reduction that ran over no lanes (a mask or a loop that lets none through), a running "
                      f"value never updated, every program reading the same element (an offset missing), or masked "
                      f"lanes filled with a value that swamps the rest?",
                      "loop", "mask", "accumulate", "address", "formula", "fill", code="values.constant",
                      subject=label, data={"value": value})
    source = passed_through(got, ref, inputs, scale, tol, condition)
    if source:
        return asking(f"`{label}` holds `{source}` unchanged, element by element: the value stored is the value "
                      f"loaded. Is the arithmetic between the load and the store there (applied to what it stores), "
                      f"and does the store write the result, not the input?", "formula", "address",
                      code="values.passed_through", subject=label, data={"input": source})
    return NO_HINT


def _index(flat: int, shape: tuple) -> list[int]:
    found = []
    for n in reversed(shape):
        found.append(flat % n)
        flat //= n
    return found[::-1]


def degenerate(got: torch.Tensor, ref: torch.Tensor, inputs: dict, scale: float, tol: Tolerance,
               condition: float) -> bool:
    """Whether a plain reading explains the output: zeros, one value, an input passed through."""
    return (bool((got == 0).all()) or constant_value(got, ref) is not None
            or bool(passed_through(got, ref, inputs, scale, tol, condition)))
