"""Masked-off lanes that reached an output: a tl.load with a mask and no other= reads them undefined.

In the interpreter those lanes read as the checker's lane NaN (checker/interpreter/undefined.py), a
NaN of its own payload that arithmetic carries. An output element that holds it came from such lanes:
that is proof, and the hint names the cause (the fill, other=). Where a wrong output has NaN without
the mark (exp and log drop a NaN's payload) and the kernels have such a load, it asks.

The loads are found in the text: a call `tl.load(...)` (or any `.load(ptr, mask, ...)`) with a mask
and no other=, by the line the learner sees. Without the mark the question is asked only where the
learner's kernel has more such loads than the solution's kernel of the same name (a kernel whose
masked lanes are stored under the same mask, as p02's, needs no other=).
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

from checker.diagnosis.model import Diagnosis, Strength, asking, certain
from checker.parsed import tree_of
from checker.words import counted

FIX = ("give the load other= the value that leaves the reduction unchanged (other=0.0 for a sum, "
       "other=-float(\"inf\") for a max), or replace those lanes with tl.where(mask, x, 0.0) before reducing")


def unfilled_loads(source: Any) -> list[tuple[str, str]]:
    """(kernel, where) of each load with a mask and no other=, `where` as the learner finds the line
    ('`kernel`, line 4 of its cell: `x = tl.load(...)`'); [] where the text does not parse."""
    return [(kernel, f"{source.describe_line(line)}: `{source.line_text(line)}`")
            for kernel, line in _unfilled(source.text)]


@functools.lru_cache(maxsize=32)  # asked of the same text for every failing case of a check
def _unfilled(text: str) -> tuple[tuple[str, int], ...]:
    """(function, line) of each `.load(ptr, mask, ...)` call without other= in the text's functions."""
    tree = tree_of(text)
    if tree is None:
        return ()
    found = []
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load"):
                continue
            keywords = {k.arg for k in node.keywords}
            if ("mask" in keywords or len(node.args) >= 2) and "other" not in keywords and len(node.args) < 3:
                found.append((function.name, node.lineno))
    return tuple(found)


@functools.lru_cache(maxsize=32)
def _solution_counts(path: str) -> dict[str, int]:
    """The reference solution's loads without other=, counted per kernel."""
    counts: dict[str, int] = {}
    for kernel, _ in _unfilled(Path(path).read_text(encoding="utf-8")):
        counts[kernel] = counts.get(kernel, 0) + 1
    return counts


def beyond_solution(unfilled: list[tuple[str, str]], solution: Path) -> list[str]:
    """The loads of kernels that have more loads without other= than the solution's kernel of the same
    name: the solution fills those lanes somewhere the learner's kernel does not."""
    mine: dict[str, int] = {}
    for kernel, _ in unfilled:
        mine[kernel] = mine.get(kernel, 0) + 1
    theirs = _solution_counts(str(solution)) if solution.is_file() else {}
    return [where for kernel, where in unfilled if mine[kernel] > theirs.get(kernel, 0)]


def lanes_reached(label: str, got: Any, unfilled: list[tuple[str, str]],
                  solution: Path | None = None) -> Diagnosis | None:
    """The output holds the lane NaN (got: the output as the kernels left it, in its own dtype): the
    masked-off lanes of a load without other= reached it. Where the learner's kernels leave unfilled
    no load the solution's fill, the loads are as meant: the lanes reached the output through a store
    or an atomic that lets them through (its mask), or through a reduction that should have left them
    out: ask. Where a load the solution fills is left unfilled, that load is the cause."""
    from checker.poison import lane_nan_mask
    n = int(lane_nan_mask(got).sum())
    if not n:
        return None
    lines = [where for _, where in unfilled]
    where = f" ({_some(lines)})" if lines else ""
    seen = (f"{n} of {counted(got.numel(), 'element')} of `{label}` are the NaN that the interpreter puts in "
            f"the masked-off lanes of a tl.load without other={where}: the lanes a mask switches off are "
            f"undefined (on a GPU, whatever the registers held: often 0, not always), and here they reached "
            f"this output.")
    data = {"elements": n, "loads": lines[:3]}
    dropped = beyond_solution(unfilled, solution) if solution is not None and solution.is_file() else lines
    if dropped:
        return certain(f"{seen} Where such a load feeds a sum, a max or a product over the block, {FIX}.",
                       "fill", code="values.undefined_lanes", strength=Strength.PROOF, subject=label, data=data)
    return asking(f"{seen} Those loads are masked as the reference solution's are: does a store or an atomic "
                  f"write these lanes without the same mask (its mask missing, or another one)? Or does a "
                  f"reduction take them in, where {FIX}?", "mask", "fill",
                  code="values.undefined_lanes_written", subject=label, data=data)


def lanes_suspected(elements: str, unfilled: list[tuple[str, str]],
                    solution: Path | None) -> Diagnosis | None:
    """NaN the kernel computed, without the lane mark, in kernels that load with a mask and no other=
    where the solution's kernel fills its lanes: they may have reached it through an exp or a log
    (which drop a NaN's mark)."""
    unfilled = beyond_solution(unfilled, solution) if solution is not None else []
    if not unfilled:
        return None
    return asking(f"{elements} NaN or Inf, and the kernels load with a mask but no other= ({_some(unfilled)}): "
                  f"the interpreter reads those masked-off lanes as NaN (on a GPU they are undefined). Do they "
                  f"reach this output, through a sum or a max over the block, then an exp? If so, {FIX}. Or is "
                  f"the NaN an overflow, a division by zero?", "fill", "mask", "stability",
                  code="values.undefined_lanes_suspected", data={"loads": unfilled[:3]})


def _some(lines: list[str]) -> str:
    return "; ".join(lines[:2]) + ("; …" if len(lines) > 2 else "")
