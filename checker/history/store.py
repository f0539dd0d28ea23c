"""The progress store: one JSON file per user and checkout (.checker/progress.json at the
repository's root, git-ignored; TRITON_PUZZLES_STATE names another folder), never the notebooks.

Every check of a learner's own notebook (the command line, --all, check() in a notebook) records,
per puzzle, part and backend, its verdict (pass, fail, hang, crash, does not run), its cases and
when; --bench records the fraction of the roofline it measured, and the store keeps the best.
Progress belongs to the learner's own notebooks, those in puzzles/ (`learners_own`): a check of the
reference solution, of another notebook (`--notebook OTHER`, a class's folder), the book's build
and the tests record nothing.

Recording never stops a check: a store that cannot be written is skipped, and one that cannot be
read (cut short, edited by hand) is moved aside to progress.corrupt.json and started afresh, so the
next check still has somewhere to go. Pure Python: no torch.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from checker.history.verdicts import verdict
from checker.puzzle.model import REPO_ROOT, Puzzle
from checker.report.model import Report

STATE_ENV = "TRITON_PUZZLES_STATE"  # a folder for the store instead of .checker/ (the tests use one)
SCHEMA = "triton-gpu-puzzles/progress/1"
FILE, LOCK, CORRUPT = "progress.json", "progress.lock", "progress.corrupt.json"
BACKENDS = ("interpreter", "gpu")


def state_dir() -> Path:
    chosen = os.environ.get(STATE_ENV, "").strip()
    return Path(chosen) if chosen else REPO_ROOT / ".checker"


def store_path() -> Path:
    return state_dir() / FILE


def learner_folder() -> Path:
    """Where the learner's own notebooks are: this checkout's puzzles/."""
    return REPO_ROOT / "puzzles"


def is_learner_folder(folder: Path) -> bool:
    try:
        return Path(folder).resolve() == learner_folder().resolve()
    except OSError:
        return False


def learners_own(notebook: Path | None) -> bool:
    """Is this notebook one of the learner's own, whose checks are their progress? Those in
    puzzles/ are (a copy made there too); a notebook elsewhere is someone else's, or a page's."""
    return notebook is not None and is_learner_folder(Path(notebook).parent)


@dataclass
class Progress:
    """What the store holds: puzzle key -> {"parts": {part: {backend: outcome}}, "bench": best run}.
    An outcome: {"passed", "verdict" (checker/history/verdicts.py), "correct", "cases", "problem",
    "checked" (local time, ISO), "device"}.
    problem: why the store could not be read ('' when it could, or when there is none yet)."""
    path: Path
    puzzles: dict = field(default_factory=dict)
    problem: str = ""

    def outcome(self, puzzle: str, part: str, backend: str) -> dict | None:
        return self.puzzles.get(puzzle, {}).get("parts", {}).get(part, {}).get(backend)

    def bench(self, puzzle: str) -> dict | None:
        return self.puzzles.get(puzzle, {}).get("bench")


def load(path: Path | None = None) -> Progress:
    """The store as it is now; empty, with a problem said kindly, where it cannot be read."""
    path = path or store_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Progress(path)
    except OSError as err:
        return Progress(path, problem=f"{path} could not be read ({err.strerror or err})")
    puzzles = _parse(text)
    if puzzles is None:
        return Progress(path, problem=f"{path} is not a progress file the checker wrote (cut short, or "
                                      f"edited?); the next check moves it aside to {CORRUPT} and starts afresh")
    return Progress(path, puzzles)


def _parse(text: str) -> dict | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("puzzles"), dict):
        return None
    return {k: v for k, v in data["puzzles"].items() if isinstance(v, dict)}


def backend_of(label: str) -> str:
    """A report's backend label ("Interpreter (CPU)", "GPU (NVIDIA H100 …)") as the store's key."""
    return "gpu" if label.upper().startswith("GPU") else "interpreter"


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def record_check(puzzle: Puzzle, report: Report) -> bool:
    """Keep each part's outcome on each backend this check ran; False where the store could not be
    written (the check's verdict stands either way)."""
    if report.usage_error or not report.parts:
        return False
    stamp = now()

    def change(puzzles: dict) -> None:
        parts = puzzles.setdefault(puzzle.key, {}).setdefault("parts", {})
        for entry in report.parts:
            device = entry["backend"][entry["backend"].find("(") + 1:-1] if "(" in entry["backend"] else ""
            parts.setdefault(entry["part"], {})[backend_of(entry["backend"])] = {
                "passed": bool(entry["passed"]), "verdict": verdict(report, entry["part"], entry["backend"]),
                "correct": int(entry["correct"]), "cases": int(entry["cases"]),
                "problem": entry.get("problem", ""), "checked": stamp, "device": device}

    return update(change)


def bench_summary(rows: list) -> dict | None:
    """One --bench run in a few numbers, at its largest size (the small ones measure launch latency,
    not the memory): the fraction of the roofline — the device's copy bandwidth, measured in the same
    run — where the work is counted in bytes; and the best other column's time over yours."""
    if not rows:
        return None
    row = max(rows, key=lambda r: r.gbytes)
    other = row.best_other()
    fraction = None if row.tflop else row.gbps(row.ms) / row.copy_gbps if row.copy_gbps else None
    ratio = row.others()[other] / row.ms if other and row.ms else None
    return {"fraction": fraction, "other": other, "other_over_yours": ratio, "dims": row.dims,
            "device": row.device, "measured": now()}


def _better(new: dict, old: dict | None) -> bool:
    if old is None:
        return True
    key = "fraction" if new.get("fraction") is not None else "other_over_yours"
    return (new.get(key) or 0) > (old.get(key) or 0)


def record_bench(puzzle: Puzzle, rows: list) -> bool:
    """Keep this --bench run where it beats the best recorded (BenchRow rows)."""
    summary = bench_summary(rows)
    if summary is None:
        return False

    def change(puzzles: dict) -> None:
        entry = puzzles.setdefault(puzzle.key, {})
        if _better(summary, entry.get("bench")):
            entry["bench"] = summary

    return update(change)


def update(change: Callable[[dict], None], path: Path | None = None) -> bool:
    """Read, change and write the store under a lock (several notebooks may check at once); a file
    written whole and renamed into place, so a reader never sees half of it."""
    path = path or store_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path.parent / LOCK):
            puzzles = {}
            if path.exists():
                puzzles = _parse(path.read_text(encoding="utf-8"))
                if puzzles is None:  # kept for whoever wants to look, out of the checker's way
                    os.replace(path, path.parent / CORRUPT)
                    puzzles = {}
            change(puzzles)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".progress-", suffix=".json")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"schema": SCHEMA, "puzzles": puzzles}, out, indent=1, sort_keys=True)
            os.replace(temporary, path)
        return True
    except (OSError, ValueError):
        return False


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: no lock; a lost update costs one check's line
        yield
        return
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
