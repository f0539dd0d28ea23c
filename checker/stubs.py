"""Learner stubs, derived from the reference solution so the two cannot drift apart; and the facts
of the statement, rendered from the declaration so that they cannot drift from it either.

A stub is the solution kernel's decorator, signature and docstring, then a TODO and a raise.
`python -m checker.stubs --verify` fails when a notebook's kernel cells differ from the stubs, its
metadata from NOTEBOOK_METADATA, or its statement from the declaration (checker/statement.py: the
facts cell, the tensor tables, the launch lines, what a sentence says runs on a GPU only, a
tolerance); `--write` rewrites the kernel cells from the solution, the metadata, the facts cell and
the tables' dtype column from the declaration (and nothing else).
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import sys
from pathlib import Path

from checker import registry, statement
from checker.puzzle import facts
from checker.source import KERNEL_TAG, cell_text
from checker.puzzle.edition import kept
from checker.puzzle.model import Puzzle

TODO = "    # TODO: write this kernel, then run the check cell below.\n"

# A puzzle notebook's metadata: what JupyterLab writes into a notebook when it opens it with
# ipykernel's Python kernel (the kernel's spec, and the language_info its kernel_info reports), so
# that opening a notebook changes nothing in it. All but language_info's "version", the Python
# version of the machine, which JupyterLab adds (see keep_metadata).
# tests/test_notebook_metadata.py compares this with what a running kernel reports.
NOTEBOOK_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                      "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                      "pygments_lexer": "ipython3"},
}


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


def stub_of(puzzle: Puzzle, name: str) -> str:
    """The stub of the puzzle's kernel `name`: from its solution, or as the student edition keeps it
    (checker/puzzle/edition.py)."""
    if puzzle.solution.is_file():
        return stub_text(puzzle.solution.read_text(encoding="utf-8"), name)
    return kept(puzzle.solution)["stubs"][name]


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
    for cell, name in zip(kernel_cells(notebook), puzzle.kernel_names):
        cell["source"] = stub_of(puzzle, name).rstrip("\n")
        cell["outputs"], cell["execution_count"] = [], None
    return notebook


def with_statement(puzzle: Puzzle, notebook: dict) -> dict:
    """The notebook with the facts the declaration gives rendered: its facts cell, and the dtype
    column of its tensor tables."""
    statement.with_facts(puzzle, notebook)
    words = facts.tensor_dtypes(puzzle)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown" and statement.FACTS_TAG not in cell.get("metadata", {}).get("tags", []):
            text = cell_text(cell)
            rendered = statement.with_dtypes(text, words)
            if rendered != text:
                cell["source"] = rendered
    return notebook


def differences(puzzle: Puzzle) -> list[str]:
    """How the puzzle's notebook's kernel cells differ from the solution's stubs, and its metadata
    from NOTEBOOK_METADATA ([] if they do not)."""
    notebook = json.loads(puzzle.notebook.read_text(encoding="utf-8"))
    problems = differences_in(puzzle, notebook)
    if notebook.get("metadata") != NOTEBOOK_METADATA:
        problems.append(f"{puzzle.notebook.name}: its metadata is not checker.stubs.NOTEBOOK_METADATA "
                        f"(what JupyterLab writes on opening it)")
    return problems


def differences_in(puzzle: Puzzle, notebook: dict) -> list[str]:
    cells = kernel_cells(notebook)
    names = [cell_kernel_name(c) for c in cells]
    problems = []
    expected = list(puzzle.kernel_names)
    if names != expected:
        problems.append(f"{puzzle.notebook.name}: kernel cells define {names}, expected {expected}")
    for cell, name in zip(cells, names):
        if name in expected:
            if cell_text(cell).rstrip("\n") != stub_of(puzzle, name).rstrip("\n"):
                problems.append(f"{puzzle.notebook.name}: the cell of `{name}` is not the stub of the solution")
    return problems


def write_notebook(path: Path, notebook: dict) -> None:
    """In Jupyter's own format (nbformat: sorted keys, one-space indent, as Jupyter's server saves
    it), so a rewrite changes only the cells that changed."""
    import nbformat
    # read back first, as the server reads what JupyterLab sends: each cell's source one string,
    # which nbformat.write splits into lines
    nbformat.write(nbformat.reads(json.dumps(notebook), as_version=4), str(path))


def keep_metadata(model: dict, path: str, contents_manager, **kwargs) -> None:
    """A Jupyter server's save hook that keeps a notebook saved without language_info's "version"
    without it:  jupyter lab --ContentsManager.pre_save_hook=checker.stubs.keep_metadata

    JupyterLab writes the kernel's language_info into a notebook when it opens it, Python version
    included, and then saves the notebook (autosave) as changed. The puzzle notebooks carry all of
    that but the version (NOTEBOOK_METADATA), so with this hook a notebook that was only opened is
    saved byte for byte as it was, and `git status` lists only the notebooks whose cells changed.
    A notebook whose file names a version, or that is not saved yet, is saved as JupyterLab sends it.
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    info = model["content"].get("metadata", {}).get("language_info")
    if not isinstance(info, dict) or "version" not in info:
        return
    try:
        with open(os.path.join(contents_manager.root_dir, path.strip("/")), encoding="utf-8") as f:
            before = json.load(f).get("metadata", {}).get("language_info")
    except (OSError, ValueError, TypeError, AttributeError):
        return
    if isinstance(before, dict) and "version" not in before:
        del info["version"]


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
            with_statement(puzzle, notebook)
            notebook["metadata"] = copy.deepcopy(NOTEBOOK_METADATA)
            write_notebook(puzzle.notebook, notebook)
            print(f"wrote puzzles/{puzzle.notebook.name} (its stubs, from the solution)")
        notebook = json.loads(puzzle.notebook.read_text(encoding="utf-8"))
        for problem in differences(puzzle) + statement.differences(puzzle, notebook):
            print(problem)
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
