"""A finding about a number, beside the same number written into the learner's kernel.

The addresses and the sanitizer name a mask or an address where a step or a mask's bound is wrong
(rows 5 apart where the row has 8 elements; a mask that lets lanes through up to index 9). Where
that number is one the learner's kernel writes and the reference solution's kernel of the same name
does not (checker/diagnosis/literals.py), the same evidence fits a size written into the kernel as
well: the fix is the argument, not another mask or stride. The finding then asks about both, and
says which line writes the number. Pure Python on the worker's diagnoses.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from checker.diagnosis.model import Diagnosis

NAMED = ("mask", "address")   # the causes a number in the kernel may stand behind


def _number(d: Diagnosis, written: Mapping[int, list], lines: list[str]) -> tuple[int, tuple] | None:
    """The number the finding rests on that the kernel writes, and where: a step or a bound equal to
    it, or, where the finding only knows the bound is past the block (every lane let through), a
    larger number written in a comparison."""
    for key in ("step", "bound"):
        value = d.data.get(key)
        if isinstance(value, int) and value in written:
            return value, written[value][0]
    # a block that starts outside at the very number the kernel writes (half = 64: row 1 starts at 64)
    offsets = d.data.get("offsets") or []
    if offsets and isinstance(offsets[0], int) and offsets[0] in written:
        return offsets[0], written[offsets[0]][0]
    least = d.data.get("bound_at_least")
    if isinstance(least, int):
        for value in sorted(v for v in written if v >= least):
            for kernel, line in written[value]:
                text = lines[line - 1] if 0 < line <= len(lines) else ""
                if "<" in text or ">" in text:
                    return value, (kernel, line)
    return None


def with_written_number(d: Diagnosis, written: Mapping[int, list], text: str) -> Diagnosis:
    """The diagnosis, asking about a size written in too where its number is one the kernel writes."""
    if not written or not d or d.cause not in NAMED:
        return d
    found = _number(d, written, text.split("\n"))
    if found is None:
        return d
    value, (kernel, line) = found
    said = (f" Line {line} of `{kernel}` writes the number {value}, which the reference solution's kernel does "
            f"not: is a size written into the kernel there (the documented case's, say)? Then the fix is the "
            f"argument the kernel receives, not another {'mask' if d.cause == 'mask' else 'stride or offset'}.")
    joined = "\n" + said.lstrip() if "\n" in d.observed else said
    return replace(d, observed=d.observed + joined, cause="", candidates=(d.cause, "hardcoded"),
                   data={**d.data, "written": value, "line": line})


def beside_documented_sizes(entry: dict, found: list[dict]) -> dict:
    """An output's diagnosis (its JSON) that names or asks about a mask, an address or a loop, in a case
    whose kernels write a documented case's size as a number where this case's size differs
    (checker/diagnosis/literals.py's `literals`): the same wrong values come from that number, so it
    asks about both and names the line. Anything else is returned as it is."""
    named = [entry["cause"]] if entry.get("cause") else list(entry.get("candidates", []))
    if not found or entry.get("ok", False) or not set(named) & {*NAMED, "loop"} or "hardcoded" in named:
        return entry
    first = found[0]
    means = " or ".join(first["means"])
    said = (f" Line {first['line']} of `{first['kernel']}` writes {first['value']}, the documented case's {means}, "
            f"and this case's {means} is another: is it written into the kernel where the argument belongs?")
    text = entry.get("hint", "")
    joined = "\n" + said.lstrip() if "\n" in text else said
    return {**entry, "hint": text + joined, "cause": "", "candidates": [*named, "hardcoded"]}


def written_into_error(error: dict, found: list[dict]) -> dict:
    """An error event (a fault the run saw) whose diagnosis names or asks about a mask, an address or
    a loop, in a case whose kernels write a documented size as a number: asked about that too."""
    entry = beside_documented_sizes({"hint": error.get("message", ""), "cause": error.get("cause", ""),
                                     "candidates": error.get("candidates", []), "ok": False}, found)
    if entry.get("candidates") == list(error.get("candidates", [])) and entry.get("cause") == error.get("cause", ""):
        return error
    diagnosis = {**(error.get("diagnosis") or {}), "hint": entry["hint"], "cause": entry["cause"],
                 "candidates": entry["candidates"]}
    return {**error, "message": entry["hint"], "cause": entry["cause"], "candidates": entry["candidates"],
            "diagnosis": diagnosis}


# what a number written in (or a launch the kernel assumes) shows up as: the places the blocks reach
COVERAGE = {"address", "mask", "loop"}


def _named(entry: dict) -> list[str]:
    """The classes a hint's JSON names or asks about."""
    return [entry["cause"]] if entry.get("cause") else list(entry.get("candidates", []))


def _asking_also(entry: dict, said: str, first: str = "", last: str = "") -> dict:
    """The hint's JSON with `said` added, no cause named, and `first` / `last` asked about too."""
    named = _named(entry)
    return {**entry, "hint": entry.get("hint", "") + said, "cause": "",
            "candidates": [*([first] if first else []), *named, *([last] if last else [])]}


def _covers_only(entry: dict) -> bool:
    """A failing output whose hint asks only about addresses, masks or loops, and not yet about a size
    written in."""
    named = _named(entry)
    return not entry.get("ok", True) and bool(named) and set(named) <= COVERAGE and "hardcoded" not in named


def written_to_an_input(entry: dict, mutated: list[str]) -> dict:
    """An output never written (or partly) in a case whose kernels wrote an input: the store meant for
    the output most likely went through the input's pointer. Asks about that first."""
    if entry.get("ok", True) or not entry.get("n_unwritten") or "inplace" in _named(entry):
        return entry
    said = (f" The kernel changed {', '.join(f'`{m}`' for m in mutated)}, an input: does the store meant for "
            f"`{entry.get('label', 'this output')}` go through the input's pointer instead?")
    return _asking_also(entry, said, first="inplace")


def beside_a_written_constant(entry: dict, floats: Mapping[float, list]) -> dict:
    """A failing output's diagnosis (its JSON) that asks, in a case whose kernels write a float constant
    the solution's do not (checker/diagnosis/literals.py foreign_floats: a scale, an eps written in
    where the kernel receives it): a wrong constant fits most readings of wrong values, so it asks
    about that too, naming the line."""
    if not floats or entry.get("ok", True) or entry.get("cause") or not entry.get("candidates") \
            or "hardcoded" in entry.get("candidates", []):
        return entry
    value, [(kernel, line), *_] = next(iter(floats.items()))
    said = (f" Line {line} of `{kernel}` writes {value}, a constant the reference solution's kernel does not: is a "
            f"value the kernel receives as an argument (a scale, an eps) written in there?")
    return _asking_also(entry, said, last="hardcoded")


def unwritten_beside_a_number(entry: dict, written: Mapping[int, list]) -> dict:
    """Elements never written (its JSON: an output whose diagnosis asks about addresses, masks or loops),
    in a case whose kernels write an integer the solution's do not: a block size or a stride written in
    (a program's start at pid * 1024) leaves blocks unwritten, so it asks about that number too."""
    if not written or not entry.get("n_unwritten") or not _covers_only(entry):
        return entry
    value = max(written)
    kernel, line = written[value][0]
    said = (f" Line {line} of `{kernel}` writes {value}, a number the reference solution's kernel does not: is a "
            f"block size or a size written in there, where the argument belongs?")
    return _asking_also(entry, said, last="hardcoded")


def beside_a_written_number(entry: dict, hints: list[dict]) -> dict:
    """A failing output's diagnosis (its JSON) that asks only about addresses, masks or loops (elements
    never written, a block that does not reach the end), in a case where an address the run saw rests
    on a number the kernel writes and the solution does not (with_written_number): that number may
    be what leaves them unwritten too, so it asks about it with the same line."""
    number = next((h["data"] for h in hints if isinstance(h.get("data"), dict) and "written" in h["data"]), None)
    if number is None or not _covers_only(entry):
        return entry
    said = (f" The addresses above rest on {number['written']}, a number line {number['line']} writes (the reference "
            f"solution's kernel does not): is a size written in there, where the argument belongs?")
    return _asking_also(entry, said, last="hardcoded")
