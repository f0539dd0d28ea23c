"""What a catalog entry is: a known-buggy kernel (the reference solution with one bug patched in)
and the reasons its report must give, or a correct kernel written differently, which must pass.

Each puzzle's entries live in tests/catalog_pNN.py (BUGS, ALTERNATIVES); tests/test_contract.py
runs them all. Patches are exact text replacements that must each apply exactly `count` times,
so a change to the solution that makes a patch stale fails loudly instead of testing nothing.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

from checker.puzzle.model import Puzzle


@dataclass(frozen=True)
class Bug:
    name: str
    part: str                              # the part whose check must fail
    patches: tuple                         # ((old, new, count), ...)
    reasons: tuple                         # substrings the report must contain (any one of each tuple)
    # with the sanitizer off (the values alone, as on a GPU), where the sanitized run stops at a fault
    reasons_unsanitized: tuple = ()
    cpu_blind_without_sanitizer: bool = False  # the interpreter alone cannot see it (races)
    interpreter_blind: bool = False        # right in the interpreter even sanitized (nondeterminism): GPU only
    timeout: float = 0.0                   # a bug that hangs: checked in a worker process with this limit
    # right on a GPU: the out-of-bounds read is multiplied by 0 or lands in masked-out lanes, a racy
    # store writes the same value twice. Only the interpreter's sanitizer can see it.
    gpu_blind: bool = False
    # on a GPU it shows only by chance (where a stray write lands, a memory-ordering window that real
    # hardware rarely opens): either verdict there, run to run. The interpreter catches it every time.
    gpu_by_chance: bool = False
    misleading: tuple = ()                 # words that must not appear (they would send the learner astray)
    gpu_reasons: tuple = ()                # on the GPU, where its values differ from the interpreter's
    notes: str = ""


@dataclass(frozen=True)
class Alternative:
    """A correct kernel that differs from the reference (another block size, loop order, formula)."""
    name: str
    patches: tuple                         # ((old, new, count), ...) applied to the solution
    notes: str = ""


def patched(puzzle: Puzzle, name: str, patches: tuple) -> str:
    text = puzzle.solution.read_text(encoding="utf-8")
    for old, new, count in patches:
        found = text.count(old)
        if found != count:
            raise AssertionError(f"{puzzle.key} {name}: patch applies {found} times, expected {count}: {old[:60]!r}")
        text = text.replace(old, new)
    return text


def entries(puzzle: Puzzle) -> tuple[list[Bug], list[Alternative]]:
    """The catalog of a puzzle (empty lists when it has none yet)."""
    try:
        module = importlib.import_module(f"catalog_{puzzle.key}")
    except ModuleNotFoundError:
        return [], []
    return list(getattr(module, "BUGS", [])), list(getattr(module, "ALTERNATIVES", []))
