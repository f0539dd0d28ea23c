"""What a puzzle's declaration says, in the words its statement uses: the tensors its kernels
receive (shape and dtype), the cases the interpreter runs and those only a GPU runs, and the
tolerances. checker.stubs renders them into the notebook (the facts cell, the tables' dtype
column); checker/statement.py checks the notebook's tables and launch lines against them.

The tensors come from a dry launch: each part's own launch, given kernels that record what they
are called with instead of running. A scratch buffer the launch makes is seen as the kernels see it.
torch is imported inside the functions that make tensors (a spec loads without it).
"""
from __future__ import annotations

import ast
import dataclasses
import functools
from dataclasses import dataclass
from typing import Any

from checker.puzzle.model import Case, Puzzle, Tolerance

DTYPES = ("float32", "bfloat16")


@dataclass(frozen=True)
class Launch:
    """One kernel launch as a part's launch makes it: the kernel, its grid, its arguments by the
    solution's parameter names, and the part's tensors by name (inputs, outputs, what the kernels
    receive)."""
    part: str
    kernel: str
    grid: Any
    args: dict[str, Any]
    tensors: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)


class _Recorder:
    """Stands in for the kernels' module: `k.name[grid](*args, **kwargs)` records, runs nothing."""

    def __init__(self, signatures: dict[str, list[str]], part: str):
        self._signatures, self._part, self.calls = signatures, part, []

    def __getattr__(self, name: str):
        recorder = self

        class Kernel:
            def __getitem__(self, grid):
                def call(*args, **kwargs):
                    named = dict(zip(recorder._signatures.get(name, []), args))
                    named.update(kwargs)
                    recorder.calls.append(Launch(recorder._part, name, grid, named))
                return call
        return Kernel()


def signatures(puzzle: Puzzle) -> dict[str, list[str]]:
    """Each function of the solution -> its parameter names, in order."""
    return _signatures(puzzle.solution.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=64)
def _signatures(solution: str) -> dict[str, list[str]]:
    tree = ast.parse(solution)
    return {n.name: [a.arg for a in n.args.args] for n in tree.body if isinstance(n, ast.FunctionDef)}


def dtypes(puzzle: Puzzle) -> list[str]:
    """The dtypes the puzzle's cases use, float32 first."""
    used = {c.dtype for c in puzzle.cases()}
    return [d for d in DTYPES if d in used] + sorted(used - set(DTYPES))


def documented(puzzle: Puzzle, dtype: str | None = None) -> Case:
    """The documented case, in `dtype` (its own by default): the configuration the text uses."""
    case = next(c for c in puzzle.cases() if c.documented)
    return case if dtype in (None, case.dtype) else dataclasses.replace(case, dtype=dtype)


def names(puzzle: Puzzle, case: Case) -> dict[str, Any]:
    """What a launch line may name in `case`: its sizes, parameters and the puzzle's constants."""
    sizes = puzzle.sizes_of(case) if puzzle.sizes_of else case.sizes
    constants = {k: v for k, v in puzzle.make_inputs(case, "cpu").items() if not _is_tensor(v)}
    return {**constants, **case.params, **sizes}


def dry_run(puzzle: Puzzle, case: Case) -> tuple[list[Launch], dict[str, Any]]:
    """Every part's launches in `case`, and every tensor they pass by name: a kernel's parameter
    without its `_ptr`, and each input and output by its declared name (the first part's where
    several parts make their own)."""
    launches: list[Launch] = []
    seen: dict[str, Any] = {}
    inputs = puzzle.make_inputs(case, "cpu")
    for part in puzzle.parts:
        outputs = part.allocate(inputs, case)
        recorder = _Recorder(signatures(puzzle), part.name)
        try:
            produced = part.launch(recorder, inputs, outputs, case)
        except Exception:  # noqa: BLE001 (a launch that reads what the kernels wrote: the calls are recorded)
            produced = {}
        tensors = {name: value for name, value in {**inputs, **outputs, **(produced or {})}.items()
                   if _is_tensor(value)}
        for launch in recorder.calls:
            for param, value in launch.args.items():
                if _is_tensor(value):
                    tensors.setdefault(param.removesuffix("_ptr"), value)
        launches += [dataclasses.replace(launch, tensors=tensors) for launch in recorder.calls]
        for name, value in tensors.items():
            seen.setdefault(name, value)
    return launches, seen


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "data_ptr")


def dtype_name(tensor: Any) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def tensor_dtypes(puzzle: Puzzle) -> dict[str, str]:
    """Each tensor the kernels receive -> its dtype in words: "float32", "int32", or "float32 or
    bfloat16" for one that follows the case's dtype."""
    return dtype_words({d: dry_run(puzzle, documented(puzzle, d))[1] for d in dtypes(puzzle)})


def dtype_words(seen_by_dtype: dict[str, dict[str, Any]]) -> dict[str, str]:
    """tensor_dtypes from the tensors of a dry run per case dtype (dtype -> name -> tensor)."""
    words = {}
    for name in dict.fromkeys(n for seen in seen_by_dtype.values() for n in seen):
        found = list(dict.fromkeys(dtype_name(seen[name]) for seen in seen_by_dtype.values() if name in seen))
        words[name] = " or ".join(found)
    return words


# ---------------------------------------------------------------------------------------------
# What runs where
# ---------------------------------------------------------------------------------------------
def _number(n: int) -> str:
    return f"{n:,}".replace(",", " ")


def _dtypes_phrase(cases: list[Case]) -> str:
    found = [d for d in DTYPES if any(c.dtype == d for c in cases)]
    return f"all in {found[0]}" if len(found) == 1 else "in " + " and ".join(found)


def where_it_runs(puzzle: Puzzle) -> str:
    """Which cases the interpreter runs and which only a GPU runs, and what only a GPU checks."""
    cases = puzzle.cases()
    here = [c for c in cases if not c.gpu_only]
    gpu = [c for c in cases if c.gpu_only]
    text = f"The interpreter runs {len(here)} cases, {_dtypes_phrase(here)}."
    if gpu:
        sizes = puzzle.sizes_of or (lambda c: c.sizes)
        larger = []
        for size in dict.fromkeys(n for c in cases for n in sizes(c)):
            top_here = max((sizes(c).get(size, 0) for c in here), default=0)
            top_gpu = max((sizes(c).get(size, 0) for c in gpu), default=0)
            if top_gpu > top_here:
                larger.append(f"`{size}` up to {_number(top_gpu)}")
        text += f" A GPU runs them and {len(gpu)} more, {_dtypes_phrase(gpu)}"
        text += (", with " + ", ".join(larger) + ".") if larger else "."
    else:
        text += " A GPU runs the same cases."
    for part in puzzle.parts:
        if part.repeat > 1:
            text += (f" On a GPU only, the {part.name} part is launched {part.repeat} times and must give the "
                     f"same bits every time: the interpreter runs programs one after another, in one order.")
    return text


# ---------------------------------------------------------------------------------------------
# Tolerances
# ---------------------------------------------------------------------------------------------
def _figure(x: float) -> str:
    """1e-05 -> 1e-5, 0.016 -> 1.6e-2, 0.0 -> 0."""
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.1e}".split("e")
    return f"{mantissa.removesuffix('.0')}e{int(exponent)}"


def _bound(t: Tolerance) -> str:
    if t.atol == t.rtol == 0:
        return "exact"
    return f"a = r = {_figure(t.atol)}" if t.atol == t.rtol else f"a = {_figure(t.atol)}, r = {_figure(t.rtol)}"


def tolerances(puzzle: Puzzle) -> str:
    """Each output's tolerance per dtype the puzzle runs, outputs with the same ones together."""
    groups: dict[tuple, list[str]] = {}
    for part in puzzle.parts:
        for output in part.outputs:
            found = [puzzle.tolerance(d, output) for d in dtypes(puzzle)]
            key = (tuple((d, _bound(t)) for d, t in zip(dtypes(puzzle), found)), any(t.per_row for t in found))
            names = groups.setdefault(key, [])
            if output.label not in names:
                names.append(output.label)
    phrases = []
    for (bounds, per_row), outs in groups.items():
        said = (bounds[0][1] if len({b for _, b in bounds}) == 1
                else ", ".join(f"{b} in {d}" for d, b in bounds))
        if per_row:
            said += ", widened by one fp32 rounding per row summed"
        phrases.append(f"{', '.join(f'`{o}`' for o in outs)}: {said}" if len(groups) > 1 else said)
    return ("Each element of an output must lie within a · size + r · |value| of autograd's answer "
            "(computed in float64), size being the output's typical magnitude: " + "; ".join(phrases) + ".")


FACTS_TAG = "facts"


def facts_cell(puzzle: Puzzle) -> str:
    """The notebook's facts cell: what runs where, and the tolerances, from the declaration."""
    return (f"**What the checker runs.** {where_it_runs(puzzle)}\n\n"
            f"**Tolerance.** {tolerances(puzzle)}")
