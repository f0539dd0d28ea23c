"""Write each PINNED bug's diagnosis code into its catalog: the code of the hint that names its cause.

    python tests/bugs/pin_codes.py p02 p17      # some puzzles (default: every puzzle with a catalog)
    python tests/bugs/pin_codes.py --check      # say what would change, write nothing

A pinned bug's report must name its true cause (tests/test_contract.py); its `code=` says which
diagnosis does (`fault.oob`, `values.factor_blocks`, `cases.tail`, ...), so that a test fails when the
report names the cause through another hint than the one it was pinned by (a hint that moved, a
finding lost while a question across cases still asks). This tool runs each pinned bug as the
contract test does and writes the code of the first hint the report shows that names the bug's
cause (or, for `named="candidates"`, that asks about it) into the Bug(...) call, replacing one that
is there. A bug whose report names its cause through no coded hint is left as it is, and said.
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

from checker import registry  # noqa: E402
from checker.run.session import run_check  # noqa: E402
from checker.source import from_text  # noqa: E402

from bugs import Bug, entries, keys, patched  # noqa: E402


def code_of(puzzle, bug: Bug) -> str:
    """The code of the first shown diagnosis that names the bug's cause (or asks about it)."""
    options = {"timeout": bug.timeout, "shards": 1} if bug.timeout else {"in_process": True}
    report = run_check(puzzle, [bug.part], from_text(patched(puzzle, bug.name, bug.patches), "kernels.py"),
                       backend="interpreter", write=lambda line: None, **options)
    if report.passed:
        return ""
    shown = [s.diagnosis for s in report.shown() if s.diagnosis.code]
    named = [d for d in shown if d.cause in bug.classes]
    asked = [d for d in shown if not d.cause and set(d.candidates) & set(bug.classes)]
    found = named or (asked if bug.named != "cause" else [])
    # a claim across cases (cases.*, experiment.*) rests on the experiment, which a loaded machine may
    # cut short: a pin on it would make the contract test depend on the machine's load
    steady = [d for d in found if not d.code.startswith(UNSTEADY)]
    return steady[0].code if steady else ""


UNSTEADY = ("cases.", "experiment.")


def _rewrite(text: str, name: str, code: str) -> str:
    """The catalog's text with `code=` set in the Bug(...) call whose first argument is `name`."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Bug" and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == name):
            continue
        existing = next((k for k in node.keywords if k.arg == "code"), None)
        if existing is not None:
            start = _offset(lines, existing.value.lineno, existing.value.col_offset)
            end = _offset(lines, existing.value.end_lineno, existing.value.end_col_offset)
            return text[:start] + repr(code) + text[end:]
        # before the call's closing parenthesis, after its last argument
        last = max([*node.args, *[k.value for k in node.keywords]], key=lambda n: (n.end_lineno, n.end_col_offset))
        at = _offset(lines, last.end_lineno, last.end_col_offset)
        return text[:at] + f", code={code!r}" + text[at:]
    raise KeyError(name)


def _offset(lines: list[str], lineno: int, col: int) -> int:
    return sum(len(line) for line in lines[:lineno - 1]) + len(lines[lineno - 1].encode()[:col].decode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("puzzles", nargs="*")
    parser.add_argument("--check", action="store_true", help="say what would change, write nothing")
    args = parser.parse_args(argv)
    status = 0
    for key in args.puzzles or keys():
        puzzle = registry.get(key)
        path = HERE / f"{puzzle.key}.py"
        text = path.read_text(encoding="utf-8")
        for bug in entries(puzzle).pinned:
            if bug.interpreter_blind:
                continue
            code = code_of(puzzle, bug)
            if not code:
                print(f"{puzzle.key} {bug.name}: no coded hint names {bug.cause}")
                status = 1
                continue
            if code != bug.code:
                try:
                    text = _rewrite(text, bug.name, code)
                except KeyError:  # made by a helper (bugs.summed_without_other), not a Bug(...) of this file
                    print(f"{puzzle.key} {bug.name}: {code}, not written (its Bug is made elsewhere)")
                    continue
                print(f"{puzzle.key} {bug.name}: {bug.code or '-'} -> {code}")
        if not args.check:
            path.write_text(text, encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
