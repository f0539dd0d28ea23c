"""Learner stubs, derived from the reference solution so the two cannot drift apart.

A stub is the solution kernel's decorator, signature and docstring, then a TODO and a raise.
`python -m checker.stubs --verify` fails when a notebook's kernel cells differ from the stubs;
`--write` rewrites those cells (and nothing else) from the solution.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

from checker import registry
from checker.source import KERNEL_TAG, cell_text
from checker.spec import Puzzle

TODO = "    # TODO: write this kernel, then run the check cell below.\n"


def stub_text(solution: str, name: str) -> str:
    """Decorator + signature + docstring of `name` in the solution, then a NotImplementedError."""
    tree = ast.parse(solution)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    lines = solution.splitlines(keepends=True)
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    body = node.body[0]
    has_doc = isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant) and isinstance(body.value.value, str)
    last = body.end_lineno if has_doc else body.lineno - 1
    head = "".join(lines[first - 1:last])
    return head + TODO + f'    raise NotImplementedError("{name} is not implemented yet")\n'


def kernel_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook["cells"]
            if c["cell_type"] == "code" and KERNEL_TAG in c.get("metadata", {}).get("tags", [])]


def cell_kernel_name(cell: dict) -> str | None:
    try:
        tree = ast.parse(cell_text(cell))
    except SyntaxError:
        return None
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    return names[-1] if names else None


def restubbed(puzzle: Puzzle, notebook: dict) -> dict:
    """The notebook with its kernel cells, in order, replaced by the stubs of puzzle.kernel_names."""
    solution = puzzle.solution.read_text(encoding="utf-8")
    for cell, name in zip(kernel_cells(notebook), puzzle.kernel_names):
        cell["source"] = stub_text(solution, name).rstrip("\n")
        cell["outputs"], cell["execution_count"] = [], None
    return notebook


def differences(puzzle: Puzzle) -> list[str]:
    """How the puzzle's notebook's kernel cells differ from the solution's stubs ([] if they do not)."""
    return differences_in(puzzle, json.loads(puzzle.notebook.read_text(encoding="utf-8")))


def differences_in(puzzle: Puzzle, notebook: dict) -> list[str]:
    solution = puzzle.solution.read_text(encoding="utf-8")
    cells = kernel_cells(notebook)
    names = [cell_kernel_name(c) for c in cells]
    problems = []
    expected = list(puzzle.kernel_names)
    if names != expected:
        problems.append(f"{puzzle.notebook.name}: kernel cells define {names}, expected {expected}")
    for cell, name in zip(cells, names):
        if name in expected:
            if cell_text(cell).rstrip("\n") != stub_text(solution, name).rstrip("\n"):
                problems.append(f"{puzzle.notebook.name}: the cell of `{name}` is not the stub of the solution")
    return problems


def write_notebook(path: Path, notebook: dict) -> None:
    """In Jupyter's own format (nbformat: sorted keys, one-space indent), so a rewrite changes only
    the cells that changed."""
    import nbformat
    nbformat.write(nbformat.from_dict(notebook), str(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.stubs")
    parser.add_argument("puzzles", nargs="*", help="e.g. p07 (default: every puzzle)")
    parser.add_argument("--write", action="store_true", help="rewrite the notebooks' kernel cells")
    parser.add_argument("--verify", action="store_true", help="exit 1 if a notebook differs (default)")
    args = parser.parse_args(argv)
    failures = 0
    chosen = [registry.get(p) for p in args.puzzles] if args.puzzles else registry.all_puzzles()
    for puzzle in chosen:
        if args.write:
            notebook = json.loads(puzzle.notebook.read_text(encoding="utf-8"))
            restubbed(puzzle, notebook)
            write_notebook(puzzle.notebook, notebook)
            print(f"wrote {puzzle.notebook.name}")
        for problem in differences(puzzle):
            print(problem)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
