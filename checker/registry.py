"""Find puzzles by number: every module in checker/specs/ that defines PUZZLE, checked as it loads.

The checks catch a puzzle author's mistakes with a "spec error" naming the puzzle, before any
learner sees a confusing crash: numbers and names unique and matching the files, every declared
kernel defined in the solution, part names that cannot collide with the command line's own
options, and no torch or triton imported when a spec is imported (`--list` stays instant).
"""
from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
import re
import sys

from checker import specs
from checker.puzzle.edition import kept, student_edition
from checker.puzzle.model import Puzzle, SpecError

# the command line's own options: a part named like one would shadow it (--list, --all, ...)
RESERVED_PARTS = {"list", "all", "json", "solution", "notebook", "backend", "timeout", "seed", "no_sanitize", "workers",
                  "no-sanitize", "verbose", "reset", "help", "bench", "folder", "no-server",
                  "no_server", "stop-server", "stop_server", "progress", "grade", "out", "puzzles", "jobs"}
HEAVY = ("torch", "triton")


@functools.lru_cache(maxsize=1)
def _load() -> tuple[list[Puzzle], dict[str, str]]:
    """The puzzles whose specs load and pass the checks, and an error per spec that does not: one
    broken spec must not take the other puzzles (or a whole class) down with it."""
    found, errors = [], {}
    for info in pkgutil.iter_modules(specs.__path__):
        heavy_before = {m for m in HEAVY if m in sys.modules}
        try:
            module = importlib.import_module(f"checker.specs.{info.name}")
            heavy = [m for m in HEAVY if m in sys.modules and m not in heavy_before]
            if heavy:
                raise SpecError(f"spec error in checker/specs/{info.name}: importing it imported {heavy[0]}; "
                                f"import that inside the functions that need it (--list must stay instant)")
            if hasattr(module, "PUZZLE"):
                _check_one(info.name, module.PUZZLE)
                found.append(module.PUZZLE)
        except SpecError as err:
            errors[info.name] = str(err)
        except Exception as err:  # the author's module does not even import
            errors[info.name] = f"spec error in checker/specs/{info.name}: {type(err).__name__}: {err}"
    try:
        _check_together(found)
    except SpecError as err:
        errors["(all)"] = str(err)
    return sorted(found, key=lambda p: p.number), errors


def all_puzzles() -> list[Puzzle]:
    return list(_load()[0])


def errors() -> dict[str, str]:
    """Spec module name -> why it did not load (empty when every spec is sound)."""
    return dict(_load()[1])


def _kernels_in(path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def _check_one(module: str, puzzle: Puzzle) -> None:
    where = f"spec error in checker/specs/{module}"
    if module != puzzle.slug:
        raise SpecError(f"{where}: the module must be named after the puzzle's slug {puzzle.slug!r}")
    if not re.fullmatch(rf"p{puzzle.number:02d}_[a-z0-9_]+", puzzle.slug):
        raise SpecError(f"{where}: slug {puzzle.slug!r} must be p{puzzle.number:02d}_<snake_case>")
    edition = student_edition()  # no solutions: the kernels are those whose stubs it keeps
    for path in (puzzle.notebook,) if edition else (puzzle.solution, puzzle.notebook):
        if not path.is_file():
            raise SpecError(f"{where}: {path.parent.name}/{path.name} is missing")
    defined = set(kept(puzzle.solution).get("stubs", {})) if edition else _kernels_in(puzzle.solution)
    for part in puzzle.parts:
        if part.name in RESERVED_PARTS or not re.fullmatch(r"[a-z][a-z0-9_]*", part.name):
            raise SpecError(f"{where}: part name {part.name!r} collides with an option or is not a plain name")
        missing = [k for k in part.kernels if k not in defined]
        if missing:
            raise SpecError(f"{where}: part {part.name!r} launches {missing[0]}, which "
                            f"solutions/{puzzle.solution.name} does not define")


def _check_together(puzzles: list[Puzzle]) -> None:
    seen_numbers: dict[int, str] = {}
    seen_kernels: dict[str, str] = {}
    for puzzle in puzzles:
        if puzzle.number in seen_numbers:
            raise SpecError(f"spec error: {puzzle.slug} and {seen_numbers[puzzle.number]} have the same number")
        seen_numbers[puzzle.number] = puzzle.slug
        for kernel in puzzle.kernel_names:
            # check() in a notebook finds its puzzle by the kernels the notebook defines
            if seen_kernels.get(kernel, puzzle.slug) != puzzle.slug:
                raise SpecError(f"spec error: kernel {kernel} is in {puzzle.slug} and {seen_kernels[kernel]}; "
                                f"kernel names must be unique across puzzles")
            seen_kernels[kernel] = puzzle.slug


def get(name: str) -> Puzzle:
    """'p22', '22' or 'p22_layernorm_linear'."""
    wanted = name.lower().lstrip("p").split("_")[0]
    for puzzle in all_puzzles():
        if wanted.isdigit() and int(wanted) == puzzle.number:
            return puzzle
    for module, message in errors().items():
        if wanted.isdigit() and module.startswith(f"p{int(wanted):02d}_"):
            raise SpecError(message)
    known = ", ".join(p.key for p in all_puzzles())
    raise KeyError(f"no puzzle called {name!r} (known: {known})")
