"""Who is graded, and on which notebook: one subfolder of the class folder per student, holding that
student's pNN_*.ipynb files. Read only: nothing here (or anywhere in the gradebook) writes to a
student's folder."""
from __future__ import annotations

import hashlib
from pathlib import Path

from checker.puzzle.model import Puzzle

BACKUP_MARK = ".backup-"  # `python -m checker pNN --reset` leaves pNN_<slug>.backup-<time>.ipynb beside the notebook


def students(folder: Path, skip: tuple[Path, ...] = ()) -> list[Path]:
    """The student folders, by name: every visible subfolder but those in `skip` (the gradebook's own
    output folder, where it is one of them)."""
    skipped = {p.resolve() for p in skip}
    return sorted((p for p in folder.iterdir()
                   if p.is_dir() and not p.name.startswith((".", "_")) and p.resolve() not in skipped),
                  key=lambda p: p.name)


def notebook_for(student: Path, puzzle: Puzzle) -> Path | None:
    """The student's notebook of this puzzle: its own name where the student kept it, else the one
    pNN_*.ipynb that is not a --reset backup (the first by name where there are several)."""
    own = student / puzzle.notebook.name
    if own.is_file():
        return own
    found = sorted(p for p in student.glob(f"p{puzzle.number:02d}_*.ipynb") if BACKUP_MARK not in p.name)
    return found[0] if found else None


def content_hash(path: Path) -> str:
    """sha256 of the notebook's bytes: the same file is not checked twice."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
