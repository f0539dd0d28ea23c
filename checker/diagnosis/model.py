"""A hint is a hypothesis: its text, the cause class it names, and how sure the evidence makes it.

Every hint the checker prints carries a cause class from CAUSES, so that a test (and the mutation
tool, `python -m checker.mutate`) can tell a right hint from a lucky one. A hint names one cause
only when the evidence singles it out (`cause`); where several causes fit it says what was seen
and asks, likeliest first (`candidates`); a pure observation names none.

This module is pure Python: the report and the command line use it without torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# The cause classes, each the kind of change that fixes the bug. Mutants of the reference
# solutions are made by class (checker/mutate.py), and a hint is precise when it names the class
# of the mutant that produced it.
CAUSES = {
    "mask": "lanes outside the tensor are not switched off: a mask missing, or comparing with the wrong "
            "bound (`<=` for `<`, the block size for the size)",
    "address": "an address computed wrongly: a stride, a row, column or program offset, the axis a "
               "program id picks, offsets in bytes, values stored transposed",
    "loop": "a loop's bounds or step: part of the row or of the reduction not covered, or covered twice",
    "accumulate": "a running value overwritten instead of accumulated, or not started from zero",
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


@dataclass(frozen=True)
class Hint:
    """text: what the learner reads. cause: the class the evidence singles out ('' if none does).
    candidates: where several causes fit, the classes the text asks about, likeliest first."""
    text: str
    cause: str = ""
    candidates: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        for name in (self.cause, *self.candidates):
            if name and name not in CAUSES:
                raise ValueError(f"unknown cause class {name!r}; known: {', '.join(CAUSES)}")

    def __bool__(self) -> bool:
        return bool(self.text)

    @property
    def classes(self) -> tuple[str, ...]:
        """Every class the hint points at: the named cause, or its candidates."""
        return (self.cause,) if self.cause else self.candidates

    def to_json(self) -> dict:
        return {"hint": self.text, "cause": self.cause, "candidates": list(self.candidates)}


NO_HINT = Hint("")


def certain(text: str, cause: str) -> Hint:
    """The evidence singles out one cause."""
    return Hint(text, cause)


def asking(text: str, *candidates: str) -> Hint:
    """Several causes fit: the text says what was seen and asks about each, likeliest first."""
    return Hint(text, "", tuple(candidates))


def observed(text: str) -> Hint:
    """What was seen, naming no cause."""
    return Hint(text)


def from_json(data: dict) -> Hint:
    return Hint(data.get("hint", ""), data.get("cause", ""), tuple(data.get("candidates", ())))
