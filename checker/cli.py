"""python -m checker p22 [--unfused|--fused|--backward] [--solution] ... (exit 0 only if all pass)."""
from __future__ import annotations

import argparse
import sys

from checker import registry
from checker.runner import DEFAULT_TIMEOUT
from checker.session import BACKENDS, run_check
from checker.source import from_file, from_notebook
from checker.spec import REPO_ROOT


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m checker", description=(
        "Check a puzzle's kernels against PyTorch autograd. Reads the saved notebook "
        "puzzles/pNN_*.ipynb (cells tagged 'kernel'); never writes to it."))
    parser.add_argument("puzzle", nargs="?", help="puzzle number, e.g. p22")
    parser.add_argument("--list", action="store_true", help="list the puzzles and their parts")
    parser.add_argument("--solution", action="store_true", help="check the reference kernels in solutions/")
    parser.add_argument("--notebook", metavar="PATH", help="check this notebook instead of the puzzle's own")
    parser.add_argument("--backend", choices=BACKENDS, default="auto",
                        help="auto: the interpreter, and the GPU too when CUDA is there")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"stop a case that runs longer than this (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--seed", type=int, default=0, help="draw other random inputs")
    parser.add_argument("--no-sanitize", action="store_true",
                        help="interpreter: skip the out-of-bounds and race checks (faster, blind)")
    parser.add_argument("--verbose", action="store_true", help="show full tracebacks")
    parser.add_argument("--reset", action="store_true",
                        help="back up the notebook next to itself, then restore its original stubs")
    return parser


def _add_part_flags(parser: argparse.ArgumentParser) -> None:
    # every part of every puzzle is a flag; a puzzle's parts are named in its spec
    names = sorted({part.name for puzzle in registry.all_puzzles() for part in puzzle.parts})
    for name in names:
        parser.add_argument(f"--{name}", action="append_const", const=name, dest="parts",
                            help=f"check only the '{name}' part")


def _list() -> int:
    for puzzle in registry.all_puzzles():
        parts = ", ".join(f"--{p.name} ({p.title})" for p in puzzle.parts)
        print(f"{puzzle.key}  {puzzle.title}: {parts}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    _add_part_flags(parser)
    args = parser.parse_args(argv)
    if args.list:
        return _list()
    if not args.puzzle:
        parser.print_usage()
        return 2
    try:
        puzzle = registry.get(args.puzzle)
    except KeyError as err:
        print(err.args[0], file=sys.stderr)
        return 2
    if args.reset:
        from checker.reset import reset_notebook
        return reset_notebook(puzzle)
    known = [p.name for p in puzzle.parts]
    parts = args.parts or known
    unknown = [p for p in parts if p not in known]
    if unknown:
        print(f"{puzzle.key} has no part {unknown[0]!r}; its parts: {', '.join(known)}", file=sys.stderr)
        return 2
    if args.solution:
        source = from_file(puzzle.solution, str(puzzle.solution.relative_to(REPO_ROOT)))
    else:
        path = args.notebook or puzzle.notebook
        display = args.notebook or str(puzzle.notebook.relative_to(REPO_ROOT))
        source = from_notebook(path, display)
    report = run_check(puzzle, parts, source, backend=args.backend, timeout=args.timeout, seed=args.seed,
                       sanitize=not args.no_sanitize, verbose=args.verbose)
    return 0 if report.passed else 1
