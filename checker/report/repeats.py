"""A diagnosis said in full once: where a later case's diagnosis is the same as an earlier case's, the
report gives it one line that names the case it was said for, and keeps what is the later case's own
(the offsets it reached).

"The same" is decided on the diagnosis's fields, never on its words: the same code (the same kind of
finding), on the same tensor, at the same line of code, naming the same causes, with the same facts.
The words carry each case's own numbers (a program, an offset, a size), which differ from case to
case where the mistake does not. Pure Python: no torch.
"""
from __future__ import annotations

from typing import Hashable

from checker.diagnosis.model import Diagnosis

# what the one line calls a diagnosis, by its code (or the family before the code's dot), and the
# word that joins it to its tensor
WHAT = {
    "fault.oob": ("out-of-bounds access", "to"),
    "fault.race": ("data race", "on"),
    "guard.overrun": ("store past the end", "of"),
    "lock": ("lock mistake", ""),
    "addr": ("finding in the addresses", ""),
}
SHOWN_OFFSETS = 3  # the later case's own offsets named in its line
# numbers a finding rests on that are each case's own (the bound a mask lets lanes through to, a step
# that is a case's size): the same finding in two cases carries two of them
OWN_NUMBERS = frozenset({"bound", "bound_at_least", "step", "program", "written", "line"})


def key(d: Diagnosis, *scope: Hashable) -> tuple | None:
    """What makes two diagnoses the same, within a scope (a part on a backend); None for one that
    cannot be compared (no code: a message without a kind)."""
    if not d or not d.code:
        return None
    facts = tuple(sorted((k, v) for k, v in d.data.items()
                         if isinstance(v, (str, int, float, bool)) and k not in OWN_NUMBERS))
    where = (d.where.kernel, d.where.line, d.where.code) if d.where is not None else None
    return (*scope, d.code, d.subject, where, d.cause, d.candidates, facts)


class Repeats:
    """The diagnoses said in full so far, and the case each was said for."""

    def __init__(self) -> None:
        self.first: dict[tuple, str] = {}

    def earlier(self, d: Diagnosis, case: str, *scope: Hashable) -> str:
        """The case this diagnosis was said for in full ('' if it was not: it is said now, for `case`)."""
        found = key(d, *scope)
        if found is None:
            return ""
        if found in self.first:
            return self.first[found]
        self.first[found] = case
        return ""


def same_line(d: Diagnosis, first: str) -> str:
    """'same out-of-bounds access to `x_ptr` at `add_vectors_kernel`, line 25 as N=33 (offset 100,
    past the end)'."""
    what, joined = WHAT.get(d.code) or WHAT.get(d.code.split(".")[0]) or ("hint", "")
    if d.subject and joined:
        what += f" {joined} `{d.subject}`"
    at = ""
    if d.where is not None and d.where.line:
        at = f" at `{d.where.kernel}`, line {d.where.line}" if d.where.kernel else f" at line {d.where.line}"
    return f"same {what}{at} as {first}{_own(d)}"


def _own(d: Diagnosis) -> str:
    """What is this case's own: the offsets it reached, and on which side of the tensor."""
    offsets = [o for o in d.data.get("offsets", []) if isinstance(o, int)]
    if not offsets:
        return ""
    side = "before the start" if offsets[0] < 0 else "past the end"
    shown = ", ".join(str(o) for o in offsets[:SHOWN_OFFSETS])
    more = ", …" if len(offsets) > SHOWN_OFFSETS else ""
    return f" ({'offset' if len(offsets) == 1 else 'offsets'} {shown}{more}, {side})"
