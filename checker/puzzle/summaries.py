"""The summary hints every short-form puzzle gets: which cases fail, when exactly the cases of one
kind fail (a partly filled block, more than one block, bf16, other sizes than the documented case).
A spec may reword each or leave it out (puzzle(hints=...)); its own patterns come first.
"""
from __future__ import annotations

from typing import Any, Mapping

from checker.puzzle.model import SpecError, SummaryPattern

# Summary hints every short-form puzzle gets, for the case tags it has: (text, candidate causes).
# Which cases fail is weak evidence: these say what the failing cases have in common and where in
# the kernel that points, and ask about the causes that their text points at; none names a cause
# (the checker fixes the grid, so none asks about it). A pattern holds only where a case outside it
# that is not trivial passes (checker/diagnosis/across_cases.py).
GENERIC_SUMMARIES = {
    "non_pow2": ("only the cases whose sizes are not powers of two fail: those are the cases with a partly filled "
                 "block. Look at what the kernel does with it: its offsets, its mask, what its padded lanes load, "
                 "whether every loop reaches it, and every count that should be the size rather than the block "
                 "size or a number written into the kernel.", ("mask", "fill", "loop", "address", "formula", "hardcoded")),
    "tail": ("only the cases whose last block sticks out past the end fail: look at what the kernel does with that "
             "partly filled block (its offsets, its mask, what its padded lanes load, whether every loop reaches "
             "it).", ("mask", "fill", "loop")),
    "wide": ("only the cases larger than one block fail: look at what changes from the first block to the next "
             "ones (each program's offsets, the loop's bounds and step, what carries over from one block to the "
             "next, how the blocks' results are combined).", ("loop", "address", "accumulate", "formula")),
    # not tags: where the puzzle has bf16 cases, and where it has a documented case
    "bfloat16": ("only bfloat16 cases fail, and the float32 ones pass: is a value or a sum kept in bfloat16 "
                 "somewhere between the loads and the store (8 bits of mantissa)? Compute in float32 "
                 "(.to(tl.float32) after each load) and round once, at the store.", ("precision",)),
    # a number written in shows wherever the sizes differ: as a mask that lets the wrong lanes through, an
    # address past the end, a loop that stops short; so it asks beside those findings, not against them
    "documented": ("every case of other sizes than the documented one fails: is a size hard-coded — the documented "
                   "value written where the kernel's argument belongs, in a mask, an offset or a loop's bound? Use the "
                   "size arguments the kernel receives.", ("hardcoded", "mask", "address", "loop")),
}
TAGGED = ("non_pow2", "tail", "wide")


def generic_summaries(declared: Any, hints: Mapping[str, Any]) -> list[SummaryPattern]:
    """The generic summary patterns for the cases this puzzle has, with the spec's texts where it
    gives them (hints: a text, (text, candidate causes), or None to leave that pattern out)."""
    unknown = sorted(set(hints) - set(GENERIC_SUMMARIES))
    if unknown:
        raise SpecError(f"p{declared.number:02d}: hints= names {unknown}; the generic summary hints are "
                        f"{sorted(GENERIC_SUMMARIES)}")
    texts = dict(GENERIC_SUMMARIES) | {key: h if h is None or isinstance(h, tuple) else (h, GENERIC_SUMMARIES[key][1])
                                       for key, h in hints.items()}
    tags = {t for c in declared.cases for t in c.tags}
    generic = [SummaryPattern(texts[t][0], (lambda tag: lambda c: tag in c.tags)(t), candidates=texts[t][1],
                              code=f"cases.{t}")
               for t in TAGGED if t in tags and texts[t] is not None]
    if texts["bfloat16"] is not None and any(c.dtype == "bfloat16" for c in declared.cases):
        generic.append(SummaryPattern(texts["bfloat16"][0], lambda c: c.dtype == "bfloat16", coverage=0.5,
                                      candidates=texts["bfloat16"][1], code="cases.bfloat16"))
    documented = next((c for c in declared.cases if c.documented), None)
    if texts["documented"] is not None and documented is not None:
        sizes = declared.sizes
        generic.append(SummaryPattern(texts["documented"][0], lambda c, d=dict(sizes(documented)): dict(sizes(c)) != d,
                                      coverage=1.0, candidates=texts["documented"][1],
                                      code="cases.not_documented"))
    return generic
