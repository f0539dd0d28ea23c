"""python -m checker pNN --reset: back the learner's notebook up next to it, then restore the stubs."""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from checker.open_notebooks import servers_with_open
from checker.source import NotebookError, read_notebook
from checker.puzzle.model import REPO_ROOT, Puzzle
from checker.stubs import restubbed, write_notebook


def reset_notebook(puzzle: Puzzle, path: Path | None = None) -> int:
    """Reset `path` (default: the puzzle's own notebook); 2 if it is not there or not a notebook."""
    path = Path(path) if path is not None else puzzle.notebook
    try:
        notebook = read_notebook(path)
    except NotebookError as err:
        print(f"not reset: {err}", file=sys.stderr)
        return 2
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.stem}.backup-{stamp}{path.suffix}")
    shutil.copy2(path, backup)  # first the copy, so nothing is lost whatever happens next
    restubbed(puzzle, notebook)
    for cell in notebook["cells"]:  # old reports ("ALL CORRECT") must not sit under fresh stubs
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    write_notebook(path, notebook)
    print(f"Your version is saved as {_shown(backup)}.")
    print(f"{_shown(path)} has its original kernel stubs again, and no outputs (its other cells are as you "
          f"left them).")
    print(reload_advice(servers_with_open(path)))
    return 0


RELOAD = "File > Reload Notebook from Disk"


def reload_advice(servers: list[str]) -> str:
    """One sentence: JupyterLab keeps its own copy of an open notebook, and saving that copy (its
    "Overwrite") would put the old kernels back; `servers`: those that have it open now."""
    if servers:
        return (f"JupyterLab has it open now ({', '.join(servers)}): choose {RELOAD} there before you save, "
                f"or saving puts your old version back.")
    return (f"If JupyterLab has it open, choose {RELOAD} there before you save, or saving puts your old "
            f"version back.")


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT))
    except ValueError:
        return str(path)
