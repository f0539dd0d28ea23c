"""The puzzle notebooks as the repository holds them, whatever a learner's copies in puzzles/ hold.

A learner works in puzzles/pNN_*.ipynb: kernels filled in, a kernel that hangs, outputs. The tests
check the repository's own state (the stubs derived from the solutions, an untouched notebook
failing kindly), so they read each notebook as git's index holds it (the committed one, or one
staged with `git add`), copied once per test process; a notebook git does not know yet (a puzzle
just made with `python -m checker.new`) is read where it is.
"""
from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path

_COPIES = Path(tempfile.mkdtemp(prefix="triton-puzzles-pristine-"))
atexit.register(shutil.rmtree, _COPIES, True)


def indexed_text(path: Path, repo: Path) -> bytes | None:
    """The file's content in git's index of `repo` (None: not in git, or no git)."""
    try:
        relative = path.resolve().relative_to(repo.resolve()).as_posix()
        shown = subprocess.run(["git", "-C", str(repo), "show", f":{relative}"], capture_output=True, timeout=30)
    except (ValueError, OSError, subprocess.TimeoutExpired):
        return None
    return shown.stdout if shown.returncode == 0 else None


def pristine(path: Path, repo: Path) -> Path:
    """A copy of `path` as git's index holds it, or `path` itself where git does not hold it."""
    copy = _COPIES / path.name
    if copy.exists():
        return copy
    text = indexed_text(path, repo)
    if text is None:
        return path
    copy.write_bytes(text)
    return copy
