"""A learner's notebook, made from a puzzle's own notebook, or a notebook's namespace: the tests that
check a notebook file (the command line, --all, the gradebook) or a live notebook (check()) build
theirs here."""
from __future__ import annotations

import json
from pathlib import Path

from checker import stubs
from checker.puzzle.model import Puzzle


def solved_notebook(puzzle: Puzzle, path: Path, code: str | None = None) -> Path:
    """The puzzle's notebook with `code` (default: the reference solution) in its kernel cells, one
    copy per cell: each cell may define everything, and later definitions win. Returns the path."""
    notebook = json.loads(puzzle.notebook.read_text(encoding="utf-8"))
    code = puzzle.solution.read_text(encoding="utf-8") if code is None else code
    for cell in stubs.kernel_cells(notebook):
        cell["source"] = code
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


def namespace_of(code: str, tmp_path: Path) -> dict:
    """Define the kernel as a notebook cell would: in a namespace, with its source findable."""
    source_file = tmp_path / "cell.py"
    source_file.write_text("import triton\nimport triton.language as tl\n\n" + code, encoding="utf-8")
    namespace: dict = {}
    exec(compile(source_file.read_text(), str(source_file), "exec"), namespace)
    return namespace
