"""The student edition (`python -m checker.release student OUT`): a copy without the reference
solutions, the catalogs of known bugs and the research, which a class can hand out.

Its checks are the full copy's: every verdict compares a kernel with the puzzle's PyTorch
reference, never with the solution. The few facts the checker reads from a solution's text
(the stubs a notebook is reset to, the numbers and 16-bit types the reference kernels write, for
two hints) are kept in EDITION, written by the release from the solutions it leaves out, so that a
student's report and the teacher's say the same. Whatever else would read a solution says
NO_SOLUTIONS instead.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path

from checker.puzzle.model import REPO_ROOT

EDITION = REPO_ROOT / "checker" / "edition.json"  # only in the student edition: its facts, and its mark
SCHEMA = "triton-gpu-puzzles/edition/1"
NO_SOLUTIONS = ("This is the student edition: it has no reference solutions (solutions/ is left out); "
                "the checker compares your kernels with PyTorch's references.")


def student_edition() -> bool:
    """This copy is the student edition."""
    return EDITION.is_file()


@functools.lru_cache(maxsize=1)
def _facts() -> dict:
    try:
        return json.loads(EDITION.read_text(encoding="utf-8"))["puzzles"]
    except (OSError, ValueError, KeyError):
        return {}


def kept(solution: Path) -> dict:
    """What the edition keeps of the solution at this path (the path it would have):
    {"stubs": {kernel: text}, "integers": {kernel: [n, ...]}, "narrowing": {kernel: lines}}; {} in
    the full copy."""
    return _facts().get(Path(solution).stem, {})
