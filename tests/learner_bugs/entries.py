"""What an entry of the learner-bug corpus is: a bug a learner writes (the reference solution with one
mistake patched in) and the cause class that truly fixes it, or a correct kernel written differently.

The corpus is written apart from tests/catalog_pNN.py: it measures the checker's hints (is the
cause class they name the one that fixes the bug?), where the catalog pins down reasons. Each
puzzle's entries live in tests/learner_bugs/pNN.py (BUGS, RIGHT); tests/learner_bugs/run.py checks
them. Not test_*.py files: pytest does not collect them.

Patches are exact text replacements (old, new, count) that must each apply exactly `count` times,
or Kernel(name, text): the whole function `name` replaced by `text` (decorator included).
"""
from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from checker.diagnosis.model import CAUSES


@dataclass(frozen=True)
class Kernel:
    """Replace the whole function `name` of the solution (its decorators included) by `text`."""
    name: str
    text: str


@dataclass(frozen=True)
class Bug:
    name: str
    part: str                 # the part whose check must fail
    patches: tuple            # ((old, new, count) | Kernel, ...)
    cause: str                # the class of checker.diagnosis.model.CAUSES whose fix repairs it
    what: str                 # one line: the mistake, as a teacher would name it
    accept: tuple = ()        # other classes that name it fairly too (a wrong pointer is formula and address)
    timeout: float = 0.0      # may hang: run in a worker process with this limit (seconds)
    # the interpreter cannot see it (GPU-only rounding, a race the sanitizer has no way to observe):
    # expected to pass on the CPU, listed apart
    interpreter_blind: bool = False

    def __post_init__(self) -> None:
        for name in (self.cause, *self.accept):
            if name not in CAUSES:
                raise ValueError(f"{self.name}: unknown cause class {name!r}")

    @property
    def classes(self) -> tuple[str, ...]:
        return (self.cause, *self.accept)


@dataclass(frozen=True)
class Right:
    """A correct kernel written differently from the reference and the catalog: it must pass."""
    name: str
    patches: tuple
    what: str
    timeout: float = 0.0


def _replace_function(text: str, name: str, new: str) -> str:
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            body = textwrap.dedent(new).strip("\n") + "\n"
            return "".join(lines[:first - 1]) + body + "".join(lines[node.end_lineno:])
    raise AssertionError(f"no function {name!r} in the solution")


def apply(text: str, patches: tuple, label: str = "") -> str:
    """The solution text with the patches applied; a stale patch fails loudly."""
    for patch in patches:
        if isinstance(patch, Kernel):
            text = _replace_function(text, patch.name, patch.text)
            continue
        old, new, count = patch
        found = text.count(old)
        if found != count:
            raise AssertionError(f"{label}: patch applies {found} times, expected {count}: {old[:70]!r}")
        text = text.replace(old, new)
    return text
