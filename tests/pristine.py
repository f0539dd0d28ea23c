"""The puzzle notebooks as the repository holds them, whatever a learner's copies in puzzles/ hold.

A learner works in puzzles/pNN_*.ipynb: kernels filled in, a kernel that hangs, outputs. The tests
check the repository's own state (the stubs derived from the solutions, an untouched notebook
failing kindly), so they read each notebook as git's index holds it (the committed one, or one
staged with `git add`), copied once per test process; a notebook git does not know yet (a puzzle
just made with `python -m checker.new`) is read where it is. Where the index holds a learner's
work (a solved notebook staged or committed: its kernel cells no longer the stubs), the newest
commit that holds the notebook as the project gives it is read instead.
"""
from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Iterator

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


def committed_texts(path: Path, repo: Path) -> Iterator[bytes]:
    """The file's content at each commit that changed it, newest first."""
    try:
        relative = path.resolve().relative_to(repo.resolve()).as_posix()
        log = subprocess.run(["git", "-C", str(repo), "log", "--format=%H", "--", relative],
                             capture_output=True, text=True, timeout=60)
    except (ValueError, OSError, subprocess.TimeoutExpired):
        return
    for commit in log.stdout.split():
        shown = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{relative}"], capture_output=True,
                               timeout=30)
        if shown.returncode == 0:
            yield shown.stdout


def pristine(path: Path, repo: Path, shipped: Callable[[bytes], bool] | None = None) -> Path:
    """A copy of `path` as git's index holds it, or `path` itself where git does not hold it.
    shipped: is this content the project's (not a learner's work)? Where the index's is not, the
    newest commit's that is (the index's where none is)."""
    copy = _COPIES / path.name
    if copy.exists():
        return copy
    text = indexed_text(path, repo)
    if text is None:
        return path
    if shipped is not None and not shipped(text):
        text = next((old for old in committed_texts(path, repo) if shipped(old)), text)
    copy.write_bytes(text)
    return copy
