"""Two facts about a kernel's code that the run cannot show as well as the text does.

Numbers written into a kernel where a size belongs: an integer in the kernel's code that equals a
size of the documented case (L = 40), half of one (D / 2 = 8) or one of its parameters (BLOCK_V =
16), and that the reference solution's kernel of the same name does not write anywhere. The page's
example sizes are the ones a learner has in front of them; a kernel tried on them alone passes.

Values rounded to a 16-bit type on the way: a kernel that names bfloat16 or float16 more often than
the solution's kernel of the same name does, in a float32 case (where the inputs carry more digits
than such a rounding keeps).

These are facts about the source, not about the run: they say where, and ask. It is read only where a case fails, and only where that case's own value of the size
differs (there the number is wrong; in the documented case it is harmless).
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

from checker.parsed import tree_of
from checker.puzzle.edition import kept

SMALLEST = 3  # 1 and 2 are everywhere (a step of one, a half); a size written in is larger


def _tree(text: str) -> ast.Module | None:
    """The parsed source (a check reads the same text for every failing case): checker/parsed.py."""
    return tree_of(text)


def _kernels(text: str, names: set[str]) -> dict[str, ast.FunctionDef]:
    return _kernels_named(text, frozenset(names))


# A check asks these questions of the same text for every failing case and every experiment's trial:
# the answers are kept (the trees are shared and never changed, so a function node is its own key)
@functools.lru_cache(maxsize=32)
def _kernels_named(text: str, names: frozenset[str]) -> dict[str, ast.FunctionDef]:
    tree = _tree(text)
    if tree is None:
        return {}
    return {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name in names}


@functools.lru_cache(maxsize=128)
def _integers(function: ast.FunctionDef) -> tuple[tuple[int, int], ...]:
    """(value, line) of each integer in the body (the signature's defaults and the docstring left out)."""
    found = []
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= SMALLEST:
                found.append((node.value, node.lineno))
    return tuple(found)


@functools.lru_cache(maxsize=32)
def _solution_integers(path: str, names: frozenset[str]) -> dict[str, frozenset[int]]:
    if not Path(path).is_file():  # the student edition keeps these facts of the solution it leaves out
        return {name: frozenset(v) for name, v in kept(Path(path)).get("integers", {}).items() if name in names}
    text = Path(path).read_text()
    return {name: frozenset(v for v, _ in _integers(f)) for name, f in _kernels(text, set(names)).items()}


def foreign_integers(text: str, kernels: list[str], solution: Path | None) -> dict[int, list[tuple[str, int]]]:
    """The integers the learner's kernels write that the solution's kernel of the same name does not:
    value -> [(kernel, line)]. An experiment tries a size at these values (a size written in as a
    number passes exactly there)."""
    if solution is None or not solution.is_file():
        return {}
    names = frozenset(kernels)
    reference = _solution_integers(str(solution), names)
    found: dict[int, list[tuple[str, int]]] = {}
    for name, function in _kernels(text, set(names)).items():
        for value, line in _integers(function):
            if name in reference and value not in reference[name]:
                found.setdefault(value, []).append((name, line))
    return found


@functools.lru_cache(maxsize=128)
def _floats(function: ast.FunctionDef) -> tuple[tuple[float, int], ...]:
    """(value, line) of each float constant in the body other than 0, 1 and their negatives, halves
    and doubles (a scale, an eps, a constant of a formula)."""
    found = []
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Constant) and type(node.value) is float and abs(node.value) not in COMMON_FLOATS:
                found.append((node.value, node.lineno))
    return tuple(found)


COMMON_FLOATS = (0.0, 0.5, 1.0, 2.0, float("inf"))


def foreign_floats(text: str, kernels: list[str], solution: Path | None) -> dict[float, list[tuple[str, int]]]:
    """The float constants the learner's kernels write that the solution's kernel of the same name does
    not (a scale or an eps written in where the kernel receives it): value -> [(kernel, line)]."""
    if solution is None or not solution.is_file():
        return {}
    names = set(kernels)
    reference = {name: {v for v, _ in _floats(f)} for name, f in _kernels(solution.read_text(), names).items()}
    found: dict[float, list[tuple[str, int]]] = {}
    for name, function in _kernels(text, names).items():
        for value, line in _floats(function):
            if name in reference and value not in reference[name]:
                found.setdefault(value, []).append((name, line))
    return found


def documented_values(sizes: dict[str, int], params: dict[str, Any]) -> dict[int, list[str]]:
    """value -> what it is in the documented case: its sizes, their halves, its integer parameters."""
    values: dict[int, list[str]] = {}
    for name, v in sizes.items():
        values.setdefault(v, []).append(name)
        if v % 2 == 0:
            values.setdefault(v // 2, []).append(f"{name} / 2")
    names = list(sizes)
    for i, a in enumerate(names):  # a product of two sizes written as one number (M · N elements)
        for b in names[i + 1:]:
            if sizes[a] > 1 and sizes[b] > 1:
                values.setdefault(sizes[a] * sizes[b], []).append(f"{a} · {b}")
    for name, v in params.items():
        if type(v) is int:
            values.setdefault(v, []).append(name)
    return {v: names for v, names in values.items() if v >= SMALLEST}


def written_in(text: str, kernels: list[str], solution: Path | None, documented: dict[int, list[str]],
               this_case: dict[str, Any]) -> list[dict]:
    """The numbers in these kernels that equal a documented size or parameter, where the solution's
    kernel of the same name has no such number and this case's value of that size differs. Each:
    {kernel, line, code, value, means} (means: the sizes it equals, e.g. ["L"])."""
    if solution is None or not (solution.is_file() or kept(solution)):
        return []
    names = frozenset(kernels)
    learner = _kernels(text, set(names))
    reference = _solution_integers(str(solution), names)
    lines = text.split("\n")
    found, seen = [], set()
    for name, function in learner.items():
        if name not in reference:
            continue  # a kernel of the learner's own: nothing to compare it with
        for value, line in _integers(function):
            means = [m for m in documented.get(value, ()) if _differs(m, value, this_case)]
            if not means or value in reference[name] or (value, line) in seen:
                continue
            seen.add((value, line))
            found.append({"kernel": name, "line": line, "code": lines[line - 1].strip() if line <= len(lines) else "",
                          "value": value, "means": means})
    return found


def _differs(meaning: str, value: int, this_case: dict[str, Any]) -> bool:
    """This case's value of what the number stands for is another: here the number is wrong."""
    if " · " in meaning:
        a, b = meaning.split(" · ")
        own_a, own_b = this_case.get(a), this_case.get(b)
        return type(own_a) is int and type(own_b) is int and own_a * own_b != value
    name, half = (meaning[:-4], True) if meaning.endswith(" / 2") else (meaning, False)
    own = this_case.get(name)
    if type(own) is not int:
        return False
    return (own // 2 if half else own) != value


NARROW = ("bfloat16", "float16")


@functools.lru_cache(maxsize=128)
def _narrowing_lines(function: ast.FunctionDef) -> tuple[int, ...]:
    """Lines of the body that name tl.bfloat16 or tl.float16 (a conversion, a dtype=)."""
    return tuple(sorted({node.lineno for statement in function.body for node in ast.walk(statement)
                   if isinstance(node, ast.Attribute) and node.attr in NARROW}))


@functools.lru_cache(maxsize=32)
def _solution_narrowing(path: str, names: frozenset[str]) -> dict[str, int]:
    if not Path(path).is_file():
        return {name: n for name, n in kept(Path(path)).get("narrowing", {}).items() if name in names}
    return {name: len(_narrowing_lines(f)) for name, f in _kernels(Path(path).read_text(), set(names)).items()}


def narrowed_in(text: str, kernels: list[str], solution: Path | None) -> list[dict]:
    """The lines that name a 16-bit type in a kernel that names one on more lines than the solution's
    kernel of the same name. Each: {kernel, line, code}."""
    if solution is None or not (solution.is_file() or kept(solution)):
        return []
    names = frozenset(kernels)
    reference = _solution_narrowing(str(solution), names)
    lines = text.split("\n")
    found = []
    for name, function in _kernels(text, set(names)).items():
        narrowing = _narrowing_lines(function)
        if name in reference and len(narrowing) > reference[name]:
            found += [{"kernel": name, "line": line, "code": lines[line - 1].strip()} for line in narrowing]
    return found


def solution_facts(solution: Path, kernels: list[str]) -> dict[str, dict]:
    """What these hints read from the solution's kernels, for a copy without it (the student edition,
    checker/puzzle/edition.py): {"integers": {kernel: [n, ...]}, "narrowing": {kernel: lines}}."""
    names = frozenset(kernels)
    return {"integers": {k: sorted(v) for k, v in _solution_integers(str(solution), names).items()},
            "narrowing": _solution_narrowing(str(solution), names)}


def source_facts(puzzle: Any, part: Any, case: Any, text: str, compared: bool = True) -> dict[str, list[dict]]:
    """What a failing case's result carries about the code: `literals` (numbers that are documented
    sizes where this case's differ) and, in a float32 case whose values were compared (compared:
    not stopped by an error), `narrowed` (16-bit types the solution's kernels do not name: a
    rounding shows in values). Empty where the solution or the documented case is not there."""
    kernels, solution = list(part.kernels), puzzle.solution
    documented = next((c for c in puzzle.cases() if c.documented), None)
    facts: dict[str, list[dict]] = {}
    try:
        if documented is not None and documented.every_size:
            values = documented_values(dict(documented.every_size), dict(documented.params))
            facts["literals"] = written_in(text, kernels, solution, values, {**case.params, **case.every_size})
        if compared and case.dtype == "float32":
            facts["narrowed"] = narrowed_in(text, kernels, solution)
    except (OSError, ValueError):
        return {}
    return facts
