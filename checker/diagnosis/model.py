"""A hint is a hypothesis: one record, `Diagnosis`, for every hint the checker gives.

A diagnosis says what was seen (with its numbers), the cause class the evidence singles out or the
classes it asks about, what to check, how strong the evidence is, and where; renderers (the text,
HTML and JSON reports) only lay it out. Its `code` is stable ("values.shifted", "fault.oob",
"cases.larger_than_a_block"): tests pin a hint by its code and cause, not by its words.

Every hint the checker prints carries a cause class from CAUSES, so that a test (and the mutation
tool, `python -m checker.mutate`) can tell a right hint from a lucky one. A hint names one cause
only when the evidence singles it out (`cause`); where several causes fit it says what was seen
and asks, likeliest first (`candidates`); a pure observation names none.

This module is pure Python: the report and the command line use it without torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Mapping

# Of a diagnosis's data, what crosses to the report (a worker sends it as JSON): its words and
# numbers, and of a list of them its first few (a report names a few offsets, never all of them).
PORTABLE_ITEMS = 8

# The cause classes, each the kind of change that fixes the bug. Mutants of the reference
# solutions are made by class (checker/mutate.py), and a hint is precise when it names the class
# of the mutant that produced it.
CAUSES = {
    "mask": "lanes outside the tensor are not switched off: a mask missing, or comparing with the wrong "
            "bound (`<=` for `<`, the block size for the size)",
    "address": "an address computed wrongly: a stride, a row, column or program offset, the axis a "
               "program id picks, offsets in bytes, values stored transposed",
    "loop": "a loop's bounds or step: part of the row or of the reduction not covered, or covered twice",
    "accumulate": "a running value overwritten instead of accumulated, not started from zero, or not carried "
                  "from block to block as it must be (an online softmax's sum not rescaled when its max grows)",
    "atomic": "shares from several programs summed without atomics (a plain load, add and store races)",
    "fill": "the value padded lanes load (other=) or a reduction starts from, wrong for that reduction",
    "formula": "the arithmetic: a term dropped or wrong, a wrong operand, constant or scale",
    "precision": "a value kept or summed in a narrower type than it needs (bf16 or fp16 for fp32)",
    "stability": "a formula that overflows, underflows or cancels where a stable one is taught",
    "hardcoded": "a size written into the kernel instead of the argument it is passed",
    "determinism": "a result that depends on the order in which programs' atomics land",
    "lock": "the lock protocol: acquire, release, or shared state touched without the lock",
    "inplace": "an input written to (inputs are read-only)",
    "compile": "code the GPU compiler rejects, though the interpreter may run it",
    "stub": "a kernel not written yet",
}


class Strength(IntEnum):
    """How the evidence supports the cause, weakest first."""
    PATTERN = 1   # which cases fail, and which pass (across cases)
    FIT = 2       # the values fit a signature: shares, a ratio, a shift, a known-bug variant
    PROOF = 3     # the run proves it: lanes and strides, the lock protocol, the compiler


@dataclass(frozen=True)
class Span:
    """Where in the learner's code: the kernel, the notebook cell, the line and its text."""
    kernel: str = ""
    cell: int | None = None
    line: int = 0
    code: str = ""

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "cell": self.cell, "line": self.line, "code": self.code}


@dataclass(frozen=True)
class Suggestion:
    """A change to try, and whether it is certainly right (rustc's MachineApplicable) or may not be."""
    code: str
    certain: bool = False


@dataclass(frozen=True)
class Diagnosis:
    """One hint. observed: what was seen, with its numbers; until a producer words its parts apart,
    the whole of its text. cause: the class the evidence singles out ('' if none does).
    candidates: where several causes fit, the classes it asks about, likeliest first. question:
    what to check. notes: further lines (what a GPU would do). data: the numbers for renderers and
    tests."""
    observed: str
    cause: str = ""
    candidates: tuple[str, ...] = field(default_factory=tuple)
    code: str = ""
    question: str = ""
    strength: Strength = Strength.FIT
    subject: str = ""
    where: Span | None = None
    notes: tuple[str, ...] = ()
    suggestion: Suggestion | None = None
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        for name in (self.cause, *self.candidates):
            if name and name not in CAUSES:
                raise ValueError(f"unknown cause class {name!r}; known: {', '.join(CAUSES)}")
        if self.cause and self.candidates:
            raise ValueError("a diagnosis names one cause or asks about candidates, not both")

    @property
    def text(self) -> str:
        """What the learner reads: the observation, then the question, then the notes."""
        return " ".join(part for part in (self.observed, self.question, *self.notes) if part)

    def __bool__(self) -> bool:
        return bool(self.observed or self.question)

    @property
    def classes(self) -> tuple[str, ...]:
        """Every class the diagnosis points at: the named cause, or its candidates."""
        return (self.cause,) if self.cause else self.candidates

    def to_json(self) -> dict:
        """The report's hint entry: "hint", "cause" and "candidates" as in version 1, and the rest."""
        entry = {"hint": self.text, "cause": self.cause, "candidates": list(self.candidates)}
        if not self:
            return entry
        if self.code:
            entry["code"] = self.code
        entry["strength"] = self.strength.name.lower()
        if self.where is not None:
            entry["where"] = self.where.to_json()
        if self.subject:
            entry["subject"] = self.subject
        data = portable(self.data)
        if data:
            entry["data"] = data
        return entry


NO_HINT = Diagnosis("")


class HoldsDiagnosis:
    """A record that carries a diagnosis (a known bug, a pattern across cases, what stopped the
    kernels): its cause and candidates, read through from it."""
    diagnosis: Diagnosis

    @property
    def cause(self) -> str:
        return self.diagnosis.cause

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.diagnosis.candidates


def certain(text: str, cause: str, code: str = "", **more: Any) -> Diagnosis:
    """The evidence singles out one cause."""
    return Diagnosis(text, cause, code=code, **more)


def asking(text: str, *candidates: str, code: str = "", **more: Any) -> Diagnosis:
    """Several causes fit: the text says what was seen and asks about each, likeliest first."""
    return Diagnosis(text, "", tuple(candidates), code=code, **more)


def observed(text: str, code: str = "", **more: Any) -> Diagnosis:
    """What was seen, naming no cause."""
    return Diagnosis(text, code=code, **more)


def portable(data: Mapping[str, Any]) -> dict:
    """The part of a diagnosis's data that a report can use: words, numbers and short lists of them
    (a list's first PORTABLE_ITEMS); arrays and records stay with the worker."""
    scalar = (str, int, float, bool)
    kept = {}
    for key, value in data.items():
        if isinstance(value, scalar):
            kept[key] = value
        elif isinstance(value, (list, tuple)) and all(isinstance(v, scalar) for v in value):
            kept[key] = list(value[:PORTABLE_ITEMS])
    return kept


def from_json(data: dict) -> Diagnosis:
    where = data.get("where")
    return Diagnosis(data.get("hint", ""), data.get("cause", ""), tuple(data.get("candidates", ())),
                     code=data.get("code", ""), strength=Strength[data.get("strength", "fit").upper()],
                     where=Span(**where) if where else None, subject=data.get("subject", ""),
                     data=dict(data.get("data", {})))
