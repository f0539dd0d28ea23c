"""Every known kernel of a puzzle, in one file: tests/bugs/pNN.py. Each list is optional.

PINNED      known-buggy kernels (the reference solution with one bug patched in) whose report
            tests/test_contract.py pins down: the part must fail; a hint must name the true cause class
            (`cause`) as its cause, or ask about it among its candidates where `named="candidates"`
            (`named="none"`: no hint names it today); no hint may name a class of `not_causes` as its
            cause; and, only where the wording is the point (a tensor's name, "past the end of `z`"),
            the report must contain one phrase of each group of `reasons` and none of `not_words`
PASSING     correct kernels written differently from the reference: tests/test_contract.py passes them
MEASURED    bugs a learner writes, written apart from PINNED: tests/bugs/measure.py measures whether the
            checker's hints name their true cause (`cause`, or a class they `accept`), without pinning
RIGHT       correct rewrites measured beside them (measure.py says "ok" or "FAILS")
EQUIVALENT  mutants of the reference solution (ids as `python -m checker.mutate` prints them) that no
            check can catch, each with the reason (the shared reasons: tests/bugs/reasons.py)
SAME_BUG    mutants that are, honestly, also a bug of a second class: that class and the reason

Patches are exact text replacements (old, new, count) that must each apply exactly `count` times
(a change to the solution that makes a patch stale fails loudly instead of testing nothing), or
Kernel(name, text): the whole function `name` replaced by `text` (decorators included).

This package imports no torch: `python -m checker.mutate` loads EQUIVALENT and SAME_BUG from it.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from checker.diagnosis.model import CAUSES

HERE = Path(__file__).resolve().parent
NAMED = ("cause", "candidates", "none")


@dataclass(frozen=True)
class Kernel:
    """Replace the whole function `name` of the solution (its decorators included) by `text`."""
    name: str
    text: str


@dataclass(frozen=True)
class Bug:
    name: str
    part: str                              # the part whose check must fail
    patches: tuple                         # ((old, new, count) | Kernel, ...)
    cause: str = ""                        # the class of CAUSES whose fix repairs it (the true cause)
    what: str = ""                         # MEASURED: one line, the mistake as a teacher would name it
    accept: tuple = ()                     # MEASURED: other classes that name it fairly too
    # PINNED: how the report names `cause` today, at least: "cause" (a hint's cause), "candidates"
    # (only asked about among a hint's candidates) or "none" (not named at all: a finding). The
    # contract test asserts this much; a report that names it better passes too.
    named: str = "cause"
    not_causes: tuple = ()                 # classes no hint may name as its cause (they send the learner astray)
    not_words: tuple = ()                  # phrases no hint may say, where a phrase, not a class, is the point
    code: str = ""                         # the code of the hint that names `cause` (tests/bugs/pin_codes.py writes it)
    reasons: tuple = ()                    # substrings the report must contain (any one of each tuple)
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
    gpu_reasons: tuple = ()                # on the GPU, where its values differ from the interpreter's
    notes: str = ""

    def __post_init__(self) -> None:
        for name in (self.cause, *self.accept, *self.not_causes):
            if name and name not in CAUSES:
                raise ValueError(f"{self.name}: unknown cause class {name!r}")
        if self.named not in NAMED:
            raise ValueError(f"{self.name}: named={self.named!r}, one of {NAMED}")
        if set(self.not_causes) & set(self.classes):
            raise ValueError(f"{self.name}: {self.cause!r} is its cause and among its not_causes")

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(c for c in (self.cause, *self.accept) if c)


def summed_without_other(part: str, load: str) -> Bug:
    """The bug of a load whose masked-off lanes are summed, its other=0.0 dropped: those lanes are
    undefined (the interpreter reads them as NaN, a GPU as whatever its registers held, often 0, and
    then it passes there). The same in every puzzle that sums a masked load."""
    return Bug("summed_load_without_other", part, ((load, load.replace(", other=0.0", ""), 1),), cause="fill",
               reasons=(("masked-off lanes",), ("other=0.0",)), not_causes=("atomic",), gpu_by_chance=True,
               notes="the padded lanes' other=0.0 dropped: the interpreter reads them as NaN, a GPU as whatever "
                     "its registers held")


def ignore_index_written_in(part: str) -> Bug:
    """The bug of a cross-entropy kernel that compares the targets with PyTorch's default -100 where
    it gets ignore_index (p27, p28): right on every case whose ignored rows are -100, wrong where the
    same rows are marked -1 (the case launched again with IGNORE_INDEX = -1)."""
    return Bug("ignore_index_compared_with_minus_100", part, (("!= ignore_index", "!= -100", 3),), cause="hardcoded",
               named="candidates",
               reasons=(("passes with ignore_index = -100 and fails with ignore_index = -1",), ("`ignore_index`",)),
               not_causes=("atomic",), code="cases.argument_assumed",
               notes="PyTorch's default written in where the kernels get ignore_index")


@dataclass(frozen=True)
class Right:
    """A correct kernel written differently from the reference: it must pass."""
    name: str
    patches: tuple                         # ((old, new, count) | Kernel, ...) applied to the solution
    what: str = ""
    timeout: float = 0.0
    notes: str = ""


@dataclass
class Entries:
    """One puzzle's known kernels (empty lists where its file has none, or it has no file)."""
    key: str
    pinned: list[Bug] = field(default_factory=list)
    passing: list[Right] = field(default_factory=list)
    measured: list[Bug] = field(default_factory=list)
    right: list[Right] = field(default_factory=list)
    equivalent: dict[str, str] = field(default_factory=dict)            # mutant id -> reason
    same_bug: dict[str, tuple[str, str]] = field(default_factory=dict)  # mutant id -> (class, reason)


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
    """The text with the patches applied; a stale patch fails loudly."""
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


def patched(puzzle, name: str, patches: tuple) -> str:
    """The puzzle's reference solution with the patches applied."""
    return apply(puzzle.solution.read_text(encoding="utf-8"), patches, f"{puzzle.key} {name}")


def written_against(then: tuple, found: list) -> list:
    """The entries (Bug or Right) with `then` applied first: the patches that take today's solution
    back to the text they were written against (tests/bugs/then.py)."""
    return [dataclasses.replace(entry, patches=tuple(then) + tuple(entry.patches)) for entry in found]


def carried_forward(then: tuple, found: list, grown: tuple) -> list:
    """Entries written before the contract grew (an argument, a layout): today's solution taken back to
    their text (`then`), their own patches, then the contract's growth made again (`grown`: the new
    argument and the lines that use it), as a learner brings a kernel up to date. Their bug is
    untouched, and they are measured on today's cases (tests/bugs/then.py)."""
    return [dataclasses.replace(entry, patches=tuple(then) + tuple(entry.patches) + tuple(grown)) for entry in found]


def keys() -> list[str]:
    """The puzzles that have a file here."""
    return sorted(p.stem for p in HERE.glob("p[0-9][0-9].py"))


def entries(puzzle) -> Entries:
    """The known kernels of a puzzle (a Puzzle or its key, "p07")."""
    key = puzzle if isinstance(puzzle, str) else puzzle.key
    if not (HERE / f"{key}.py").is_file():
        return Entries(key)
    module = importlib.import_module(f"{__name__}.{key}")
    return Entries(key, list(getattr(module, "PINNED", [])), list(getattr(module, "PASSING", [])),
                   list(getattr(module, "MEASURED", [])), list(getattr(module, "RIGHT", [])),
                   dict(getattr(module, "EQUIVALENT", {})), dict(getattr(module, "SAME_BUG", {})))
