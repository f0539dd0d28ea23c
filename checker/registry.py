"""Find puzzles by number: every module in checker/specs/ that defines PUZZLE."""
from __future__ import annotations

import importlib
import pkgutil

from checker import specs
from checker.spec import Puzzle


def all_puzzles() -> list[Puzzle]:
    found = []
    for info in pkgutil.iter_modules(specs.__path__):
        module = importlib.import_module(f"checker.specs.{info.name}")
        if hasattr(module, "PUZZLE"):
            found.append(module.PUZZLE)
    return sorted(found, key=lambda p: p.number)


def get(name: str) -> Puzzle:
    """'p22', '22' or 'p22_layernorm_linear'."""
    wanted = name.lower().lstrip("p").split("_")[0]
    for puzzle in all_puzzles():
        if wanted.isdigit() and int(wanted) == puzzle.number:
            return puzzle
    known = ", ".join(p.key for p in all_puzzles())
    raise KeyError(f"no puzzle called {name!r} (known: {known})")
