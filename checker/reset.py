"""python -m checker pNN --reset: back the learner's notebook up next to it, then restore the stubs."""
from __future__ import annotations

import json
import shutil
import time

from checker.spec import REPO_ROOT, Puzzle
from checker.stubs import restubbed, write_notebook


def reset_notebook(puzzle: Puzzle) -> int:
    path = puzzle.notebook
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.stem}.backup-{stamp}{path.suffix}")
    shutil.copy2(path, backup)  # first the copy, so nothing is lost whatever happens next
    notebook = json.loads(path.read_text(encoding="utf-8"))
    restubbed(puzzle, notebook)
    write_notebook(path, notebook)
    print(f"Your version is saved as {backup.relative_to(REPO_ROOT)}.")
    print(f"{path.relative_to(REPO_ROOT)} has its original kernel stubs again (its other cells are as you left them).")
    return 0
