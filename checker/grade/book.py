"""The gradebook's two files: gradebook.json (everything: each student's notebooks, their content
hashes, each part's cell, its reason whole) and gradebook.csv (a row per student, a column per
puzzle part, the parts passed and the notebooks missing, once), and the last gradebook read back,
for grading again incrementally."""
from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from checker.grade.cell import MISSING, PASS, csv_text

SCHEMA = "triton-gpu-puzzles/gradebook/1"


@dataclass
class Gradebook:
    """columns: ("p01", "forward"), ... in puzzle order. students: name -> puzzle key ->
    {"notebook", "sha256", "checked", "parts": {part: cell}}. checked_with: what the cells depend on
    besides the notebooks (the checker's code, the backend, the time limit, the seed)."""
    columns: list[tuple[str, str]]
    checked_with: dict
    students: dict = field(default_factory=dict)
    graded: str = ""

    def cell(self, student: str, puzzle: str, part: str) -> dict:
        return self.students[student][puzzle]["parts"][part]

    def parts_passed(self, student: str) -> int:
        return sum(self.cell(student, key, part)["verdict"] == PASS for key, part in self.columns)

    def missing(self, student: str) -> list[str]:
        """The puzzles the student has no notebook of, in order."""
        keys = dict.fromkeys(key for key, _ in self.columns)
        return [key for key in keys if all(c and c["verdict"] == MISSING
                                           for c in self.students[student][key]["parts"].values())]

    def to_json(self) -> dict:
        return {"schema": SCHEMA, "graded": self.graded, "checked_with": self.checked_with,
                "columns": [f"{key} {part}" for key, part in self.columns],
                "students": {name: {"parts_passed": self.parts_passed(name), "parts": len(self.columns),
                                    "missing": self.missing(name), "puzzles": puzzles}
                             for name, puzzles in self.students.items()}}

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["student", *[f"{key} {part}" for key, part in self.columns], "parts passed",
                         "notebooks missing"])
        for name in self.students:
            writer.writerow([name, *[csv_text(self.cell(name, key, part)) for key, part in self.columns],
                             f"{self.parts_passed(name)}/{len(self.columns)}", spans(self.missing(name))])
        return out.getvalue()


def spans(keys: list[str]) -> str:
    """"p03–p05, p07, p09–p32": puzzle keys, runs of consecutive numbers as one span."""
    runs: list[list[int]] = []
    for number in sorted(int(key[1:]) for key in keys):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"p{r[0]:02d}" if len(r) == 1 else f"p{r[0]:02d}–p{r[-1]:02d}" for r in runs)


def output_paths(out: Path) -> tuple[Path, Path]:
    """(csv, json) for --out: a folder gets gradebook.csv and .json in it; a name gets its own
    .csv and .json (a suffix given is dropped)."""
    if out.is_dir():
        out = out / "gradebook"
    elif out.suffix in (".csv", ".json"):
        out = out.with_suffix("")
    return out.with_name(out.name + ".csv"), out.with_name(out.name + ".json")


def previous(path: Path, checked_with: dict) -> dict:
    """The last gradebook's students (name -> puzzle key -> entry) where it was graded the same way;
    {} where there is none, it cannot be read, or the checker or its options changed since."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or data.get("checked_with") != checked_with:
        return {}
    students = data.get("students")
    if not isinstance(students, dict):
        return {}
    return {name: s.get("puzzles", {}) for name, s in students.items() if isinstance(s, dict)}


def write(book: Gradebook, csv_path: Path, json_path: Path) -> None:
    """Both files, each written whole and renamed into place: an interrupted grading leaves the last
    gradebook as it was."""
    for path, text in ((csv_path, book.csv()), (json_path, json.dumps(book.to_json(), indent=1, ensure_ascii=False))):
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.partial")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
