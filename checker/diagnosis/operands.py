"""Hypotheses about operands, tested by recomputing the answer.

A wrong output that no known bug of the puzzle explains may still be the right formula applied to
the wrong operands. These hypotheses are generic (no spec declares them); each is the puzzle's own
reference run again, in float64, on the case's inputs changed one way:

- an input read where another of the same shape belongs (a pointer passed twice, a line copied,
  K used where V belongs);
- an input read transposed (its row and column strides swapped, a tl.trans missing or extra);
- every slice of an input along one of its leading dimensions read from the first one (a head's or
  a batch's or a row's offset missing from the pointer);
- an input read as zeros (never loaded: a loop that never runs, a mask that lets no lane through).
  This is the degenerate reading the others must beat: where it fits, it is the one said (a first
  slice of zeros, or of anything that cancels, gives the same answer as no operand at all).

And two that need no recomputation: an output holding the values another output should have (the
stores swapped), and an output off from the answer by an input's values, element by element (a
factor too many or missing).

Each names its cause only where the output is far nearer the hypothesis than the answer and the
case's other outputs do not contradict it (checker/diagnosis/variants.py's `fits` and
`contradicted`, the rules the known bugs follow). The recomputations run only for a wrong output
that nothing else explains, once per case, and only for small cases: each runs the whole reference.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from checker.diagnosis.model import NO_HINT, Diagnosis, asking, certain
from checker.diagnosis.variants import FEW, contradicted, fits
from checker.evidence.compare import matches
from checker.puzzle.model import Case, Output, Puzzle, Reference, Tolerance

LARGEST = 1 << 16   # input elements in all: each hypothesis runs the whole reference again
MOST = 48           # hypotheses per case


@dataclass(frozen=True)
class Hypothesis:
    """One change to the inputs and the outputs the reference gives with it (float64)."""
    code: str                      # "operand.swapped", "operand.transposed", "operand.first_slice"
    tensor: str                    # the input the kernel reads wrongly
    source: str = ""               # operand.swapped: the input it reads instead
    dim: int = -1                  # operand.first_slice: along which dimension
    outputs: dict = field(default_factory=dict, compare=False, hash=False)


class Operands:
    """A case's hypotheses about its operands: computed the first time a wrong output asks, then
    shared by the case's other outputs. unused: the inputs whose pointer no kernel body uses (None
    where the text does not say)."""

    def __init__(self, puzzle: Puzzle, case: Case, inputs: dict, unused: set[str] | None = None):
        self.puzzle, self.case = puzzle, case
        self.values = {k: v.detach().cpu() for k, v in inputs.items() if torch.is_tensor(v)}
        self.unused = unused
        self._found: list[Hypothesis] | None = None

    @property
    def floating(self) -> dict[str, torch.Tensor]:
        """The floating-point inputs of more than one element (a scalar upstream gradient is no operand)."""
        return {k: v.double() for k, v in self.values.items() if v.is_floating_point() and v.numel() > 1}

    def hypotheses(self) -> list[Hypothesis]:
        if self._found is None:
            small = sum(v.numel() for v in self.values.values()) <= LARGEST
            self._found = list(self._computed()) if small and self.puzzle.answer is not None else []
        return self._found

    def _changes(self):
        """(hypothesis, the inputs changed) for each change worth a recomputation, at most MOST."""
        found = []
        floating = self.floating
        for name, x in floating.items():  # the degenerate readings first: the others must beat them
            if bool((x != 0).any()):
                found.append((Hypothesis("operand.zeroed", name), {name: torch.zeros_like(x)}))
        for name, x in floating.items():
            for source, y in floating.items():
                if source != name and y.shape == x.shape and not torch.equal(x, y):
                    found.append((Hypothesis("operand.swapped", name, source=source), {name: y}))
            if x.dim() >= 2 and x.shape[-1] == x.shape[-2] >= 2:
                found.append((Hypothesis("operand.transposed", name), {name: x.transpose(-1, -2).contiguous()}))
            for dim in range(x.dim() - 1):
                if x.shape[dim] >= 2:
                    first = x.narrow(dim, 0, 1).expand_as(x).contiguous()
                    found.append((Hypothesis("operand.first_slice", name, dim=dim), {name: first}))
        return found[:MOST]

    def _computed(self):
        for hypothesis, changed in self._changes():
            values = {**self.values, **{k: v.to(self.values[k].dtype) for k, v in changed.items()}}
            try:
                outputs = self.puzzle.answer(values, self.case)
            except Exception:  # noqa: BLE001 (a change the reference cannot take: no hypothesis)
                continue
            yield Hypothesis(hypothesis.code, hypothesis.tensor, hypothesis.source, hypothesis.dim, outputs)

    def dim_name(self, tensor: str, dim: int) -> str:
        names = self.puzzle.input_dims.get(tensor, ())
        return names[dim] if dim < len(names) else f"dimension {dim}"


def operand_hint(operands: Operands | None, output: Output, got: torch.Tensor, reference: Reference,
                 tol: Tolerance, others: dict | None = None) -> Diagnosis:
    """The first hypothesis about operands that the wrong output fits, worded; NO_HINT if none."""
    ref = reference.outputs[output.name]
    scale, condition = reference.scales[output.name], reference.condition
    others = others or {}
    label = f"`{output.label}`"

    for other, other_ref in reference.outputs.items():
        if (other != output.name and other_ref.numel() == ref.numel() and ref.numel() >= FEW
                and not matches(other_ref.reshape(ref.shape), ref, scale, tol, 1.0, condition)
                and fits(got, other_ref.reshape(ref.shape), ref, scale, tol, condition)):
            # the same numbers: a store through the wrong pointer, or this output's formula computing
            # the other's (dγ = Σ dy, the x̂ dropped, is dβ): the values cannot tell which
            return asking(f"{label} holds the values `{other}` should have: does the store meant for `{other}` go "
                          f"through {label}'s pointer (the stores swapped, or a pointer passed twice), or does "
                          f"{label}'s formula compute `{other}`'s (a factor or a term of {label}'s own missing)?",
                          "address", "formula", code="operand.other_output", subject=output.label,
                          data={"other": other})

    if operands is None:
        return NO_HINT
    fitted = None
    for h in operands.hypotheses():
        alternative = h.outputs.get(output.name)
        if alternative is None or alternative.numel() != ref.numel():
            continue
        alternative = alternative.reshape(ref.shape)
        if matches(alternative, ref, scale, tol, 1.0, condition):
            continue  # the change leaves this output right: it says nothing about why it is wrong
        prediction = {k: v for k, v in h.outputs.items() if k in reference.outputs}
        if contradicted(prediction, output.name, reference, others, small_only=ref.numel() >= FEW):
            continue
        if fits(got, alternative, ref, scale, tol, condition):
            if h.code == "operand.zeroed":
                return _worded(h, operands, label)
            fitted = fitted or h
    if fitted is not None and not _degenerate_too(fitted, operands, output, ref, scale, tol, condition):
        return _worded(fitted, operands, label)

    if ref.numel() >= FEW:
        term = _term_hint(operands, output, got, ref, tol, scale, condition, label)
        if term:
            return term
        for name, x in operands.floating.items():
            try:
                factor = torch.broadcast_to(x, ref.shape)
            except RuntimeError:
                continue
            if float(factor.abs().min()) < 1e-3 * float(factor.abs().max()) or bool(((factor - 1).abs() < 1e-9).all()):
                continue  # near-zero factors make every quotient fit; a factor of 1 is no factor
            for alternative, how, fix in ((ref * factor, "times", "a factor too many"),
                                          (ref / factor, "divided by", "a factor missing")):
                if fits(got, alternative, ref, scale, tol, condition):
                    return certain(f"{label} is the expected value {how} `{name}`, element by element: {fix} "
                                   f"in its formula (`{name}` {'is not part of' if how == 'times' else 'belongs in'} "
                                   f"this product).", "formula", code="operand.factor", subject=output.label,
                                   data={"input": name, "how": how})
    return NO_HINT


def _degenerate_too(h: Hypothesis, operands: Operands, output: Output, ref: torch.Tensor, scale: float,
                    tol: Tolerance, condition: float) -> bool:
    """The hypothesis gives the same answer as reading its input as zeros: it is no more than the
    degenerate reading, and cannot be told from it."""
    zeroed = next((z for z in operands.hypotheses() if z.code == "operand.zeroed" and z.tensor == h.tensor), None)
    if zeroed is None or output.name not in zeroed.outputs or output.name not in h.outputs:
        return False
    return matches(h.outputs[output.name].reshape(ref.shape), zeroed.outputs[output.name].reshape(ref.shape),
                   scale, tol, 1.0, condition)


def _worded(h: Hypothesis, operands: Operands, label: str) -> Diagnosis:
    if h.code == "operand.zeroed":
        return asking(f"{label} matches the answer computed with `{h.tensor}` all zeros: does the kernel read "
                      f"`{h.tensor}` at all — does the loop that loads it run (its range for these sizes), does the "
                      f"load's mask let any lane through, and does the value loaded reach the arithmetic?",
                      "loop", "mask", "address", "formula", code=h.code, data={"tensor": h.tensor})
    if h.code == "operand.swapped":
        seen = f"{label} matches the answer computed with `{h.source}` where `{h.tensor}` belongs"
        if operands.unused is not None and h.tensor in operands.unused:
            return certain(f"{seen}, and no kernel uses `{h.tensor}`'s pointer: the load meant for `{h.tensor}` reads "
                           f"through `{h.source}`'s (a line copied?).", "address", code=h.code,
                           data={"tensor": h.tensor, "source": h.source})
        return asking(f"{seen}: does the arithmetic use `{h.source}` where `{h.tensor}` belongs, or does the load "
                      f"meant for `{h.tensor}` read through `{h.source}`'s pointer?", "formula", "address",
                      code=h.code, data={"tensor": h.tensor, "source": h.source})
    if h.code == "operand.transposed":
        return asking(f"{label} matches the answer computed with `{h.tensor}` transposed (element [i, j] read from "
                      f"[j, i]): are the row and column strides of its load swapped, or is a tl.trans missing or one "
                      f"too many?", "address", "formula", code=h.code, data={"tensor": h.tensor})
    along = operands.dim_name(h.tensor, h.dim)
    return certain(f"{label} matches the answer computed with every slice of `{h.tensor}` along {along} read from "
                   f"the first one: the offset along {along} is missing from the pointer of `{h.tensor}` (or its "
                   f"stride is 0).", "address", code=h.code, data={"tensor": h.tensor, "dim": along})


# smaller than any coefficient a formula has, and the size of a bf16 rounding's error (2^-9) and more
SMALL_COEFFICIENT = 2.0 ** -6


def _term_hint(operands: Operands, output: Output, got: torch.Tensor, ref: torch.Tensor, tol: Tolerance,
               scale: float, condition: float, label: str) -> Diagnosis:
    """The error is one input times a constant, element by element (got − expected = c · x): a term in
    x with the wrong coefficient. c = −2 × its coefficient: its sign reversed; c = −1 ×: it is missing."""
    error = got - ref
    for name, x in operands.floating.items():
        try:
            term = torch.broadcast_to(x, ref.shape)
        except RuntimeError:
            continue
        norm = float((term * term).sum())
        if norm == 0 or term.numel() < FEW:
            continue
        c = float((error * term).sum()) / norm
        whole = round(c)
        if abs(c) < 1e-6 or whole == 0 and abs(c) < SMALL_COEFFICIENT or not fits(got, ref + c * term, ref, scale, tol,
                                                                                 condition):
            continue  # a coefficient off by a hair is a rounding's trace, no term a learner wrote
        what = ("its sign reversed, or it is subtracted where it should be added (or the other way)" if whole == -2
                else "it is missing" if whole == -1 else "it is counted twice" if whole == 1 else "")
        what = what if what and abs(c - whole) < 1e-3 else f"its coefficient is off by {c:.4g}"
        # the formula's coefficient, or a loop or a mask that adds the term once too often or leaves it out;
        # a coefficient off by no whole number is a factor of the term computed from a wrong value too,
        # which a pointer copied from the line above (Δ read through lse_ptr) gives as well
        fraction = abs(c - whole) >= 1e-3
        wrong_factor = (" Or is a value the term is multiplied by read from the wrong place (a pointer copied "
                        "from the line above, another tensor's offset)?" if fraction else "")
        return asking(f"{label} is the expected value plus {c:.4g} × `{name}`, element by element: the term in "
                      f"`{name}` has the wrong coefficient ({what}). In the formula, or does a loop or a mask add it "
                      f"once too often, or leave it out (padded lanes that load a value, not 0), or is a sum it is "
                      f"multiplied by overwritten from one chunk to the next instead of accumulated?{wrong_factor}",
                      "formula", "loop", "mask", "fill", "accumulate", *(("address",) if fraction else ()),
                      code="operand.term", subject=output.label, data={"input": name, "coefficient": c})
    return NO_HINT
