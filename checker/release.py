"""`python -m checker.release student OUT`: the student edition, a copy of this checkout that a class
can hand out, written to the new folder OUT.

It leaves out the answers: the reference solutions (solutions/), the catalogs of known bugs and
the corpora of learners' bugs with the tests that read them (tests/: tests/bugs/ holds the
solutions with one line changed), the research (research/) and CI. In the book, a
dropdown that shows a reference solution says instead that this edition has none, and a page
whose code reads the solutions (a chapter of bugs patched into one) keeps its title and says so.
The checker is copied whole and unchanged: its verdicts compare kernels with the puzzles' PyTorch
references, so a gradebook graded with either copy says the same. The few facts it reads from a
solution's text (the stubs, two hints' facts) go to checker/edition.json (checker/puzzle/edition.py),
which marks the copy as the student edition.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from checker import registry
from checker.diagnosis.literals import solution_facts
from checker.puzzle.edition import EDITION, SCHEMA, student_edition
from checker.puzzle.model import REPO_ROOT
from checker.stubs import stub_text

LEFT_OUT = ("solutions/", "tests/", "research/", ".ci/", ".github/")
SKIPPED = {".git", "__pycache__", "_build", ".pytest_cache", ".ipynb_checkpoints", ".checker", "node_modules"}
NOT_HERE = "The reference solution is not in this edition (the student edition has no solutions)."
# a dropdown (:::{dropdown} ... :::, or with more colons) whose body names a file of solutions/
SOLUTION_DROPDOWN = re.compile(r"^(:{3,})\{dropdown\}[^\n]*\n(?:(?!\1\s*\n).*\n)*?.*\.\./solutions/.*\n(?:.*\n)*?\1\s*\n",
                               re.M)
CODE_CELL = re.compile(r"^(```+)\{code-cell\}[^\n]*\n((?::[^\n]*\n)*)(.*?)^\1[ \t]*$", re.M | re.S)
CELL_NOT_HERE = ('from IPython.display import Markdown, display\n\n'
                 'display(Markdown("*Not in the student edition: computed from what it leaves out '
                 '(the reference solutions, the research).*"))\n')
EDITION_NOTE = """> **The student edition.** This copy has no reference solutions, no tests (their catalogs of
> known bugs are the solutions with a line changed) and no research: the checker compares your
> kernels with PyTorch's references, as always. Commands that need the solutions (`--solution`,
> `python -m checker.mutate`) say so, and so do the book's pages where it would show them.

"""


def tracked_files(root: Path = REPO_ROOT) -> list[str]:
    """The checkout's files, relative paths: where it is a git checkout, those git tracks or would
    (not those it ignores: nothing built or left behind), else every file but build outputs and caches."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], capture_output=True, check=True)
        return sorted(p for p in listed.stdout.decode().split("\0") if p and (root / p).is_file())
    except (OSError, subprocess.CalledProcessError):
        found = []
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [d for d in subfolders if d not in SKIPPED and not d.endswith(".egg-info")]
            found += [str((Path(folder) / f).relative_to(root)) for f in files]
        return sorted(found)


def left_out(path: str) -> bool:
    return path.startswith(LEFT_OUT) or bool(set(Path(path).parts) & SKIPPED)


def page_without_answers(text: str, readers: tuple[str, ...] = ()) -> str:
    """A book page as the edition shows it: solution dropdowns replaced by a note; a page whose code
    reads the solutions (they are its subject), its title and a note; a code cell that runs the
    research or a book module of `readers` (modules that read a solution), a note in its place."""
    text = SOLUTION_DROPDOWN.sub(lambda m: f"{m.group(1)}{{note}}\n{NOT_HERE}\n{m.group(1)}\n", text)
    if any("solutions" in m.group(3) for m in CODE_CELL.finditer(text)):
        head, _, _ = text.partition("\n# ")
        title = text[len(head) + 1:].split("\n", 1)[0]
        return (f"{head}\n{title}\n\nThis chapter is built on the reference solutions, which the student edition "
                f"leaves out: it is in the full copy of the book.\n")
    reads = re.compile(r"[\"'](?:\.\./)+research\b|[\"']research[\"']"  # a path into research/, from book/
                       r"|^\s*(?:from|import)\s+(?:research|%s)\b" % "|".join(map(re.escape, readers or ("-",))), re.M)
    return CODE_CELL.sub(lambda m: f"{m.group(1)}{{code-cell}} ipython3\n{m.group(2)}{CELL_NOT_HERE}{m.group(1)}"
                         if reads.search(m.group(3)) else m.group(0), text)


def solution_readers(files: list[str]) -> tuple[str, ...]:
    """The book's own modules that read a solution: a page's cell that imports one cannot run here."""
    return tuple(Path(p).stem for p in files if re.fullmatch(r"book/[^/]+\.py", p)
                 and '"solutions"' in (REPO_ROOT / p).read_text(encoding="utf-8"))


def edition_facts() -> dict:
    """What the checker reads from the solutions, kept for the edition (checker/puzzle/edition.py)."""
    puzzles = {}
    for puzzle in registry.all_puzzles():
        text = puzzle.solution.read_text(encoding="utf-8")
        names = list(puzzle.kernel_names)
        puzzles[puzzle.slug] = {"stubs": {name: stub_text(text, name) for name in names},
                                **solution_facts(puzzle.solution, names)}
    return {"schema": SCHEMA, "puzzles": puzzles}


def write_student_edition(out: Path) -> int:
    """Write the edition into `out` (new, or empty); the number of files written."""
    files = [p for p in tracked_files() if not left_out(p)]
    readers = solution_readers(files)
    out.mkdir(parents=True, exist_ok=True)
    for relative in files:
        source, target = REPO_ROOT / relative, out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if relative.startswith("book/") and relative.endswith(".md"):
            target.write_text(page_without_answers(source.read_text(encoding="utf-8"), readers), encoding="utf-8")
        elif relative == "README.md":
            target.write_text(EDITION_NOTE + source.read_text(encoding="utf-8"), encoding="utf-8")
        else:
            shutil.copy2(source, target)
    edition = out / EDITION.relative_to(REPO_ROOT)
    edition.write_text(json.dumps(edition_facts(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(files) + 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.release", description=__doc__.split("\n\n")[0])
    parser.add_argument("edition", choices=["student"], help="student: without solutions, catalogs or research")
    parser.add_argument("out", help="a new (or empty) folder for the copy")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    if student_edition():
        print("This copy is already the student edition: it has no solutions to leave out.", file=sys.stderr)
        return 2
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"{args.out} exists and is not an empty folder: name a new one", file=sys.stderr)
        return 2
    written = write_student_edition(out)
    print(f"The student edition: {written} files in {args.out} (no solutions/, tests/, research).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
