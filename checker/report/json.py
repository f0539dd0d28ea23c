"""The report as JSON (`--json`, schema: checker/report/schema.json): every part, case, output,
difference and diagnosis of the typed report, for failures as for passes; a case's memory map as
data (checker/evidence/memory_map.py), never the picture."""
from __future__ import annotations

from checker.diagnosis.model import NO_HINT, Diagnosis
from checker.puzzle.model import Puzzle
from checker.report.model import CaseResult, OutputResult, Report

SCHEMA = "triton-gpu-puzzles/report/3"


def document(entries: list[dict]) -> dict:
    """The whole --json answer: the puzzles' entries and the verdict over all of them."""
    return {"schema": SCHEMA, "passed": bool(entries) and all(e["passed"] for e in entries), "puzzles": entries}


def report_entry(puzzle: Puzzle, origin: str, report: Report | None, status: str = "") -> dict:
    """One puzzle's entry: everything the text report says, for failures as for passes."""
    cases = [_case_entry(c) for c in (report.cases if report is not None else [])]
    return {"puzzle": puzzle.key, "title": puzzle.title, "source": origin,
            "status": status or ("pass" if report is not None and report.passed else "fail"),
            "passed": bool(report is not None and report.passed),
            "parts": report.parts if report is not None else [], "cases": cases,
            "hints": [{"part": part, "backend": backend, **hint_entry(d)}
                      for part, backend, d in (report.summaries if report is not None else [])],
            "not_run": list(report.not_run) if report is not None else [],
            "experiments": [experiment_entry(e) for e in (report.experiments if report is not None else [])]}


def experiment_entry(e: dict) -> dict:
    """A part's experiment: its smallest failing case, the nearest that pass, in the text's words too."""
    return {"part": e["part"], "backend": e["backend"], "summary": "; ".join(e["sentences"]),
            "smallest_failing_case": e["smallest_failing_case"], "what_failed": e["what_failed"],
            "nearest_passing": e["nearest_passing"], "minimal": e["minimal"], "stopped": e["stopped"]}


def hint_entry(d: Diagnosis) -> dict:
    entry = {"hint": d.text, "cause": d.cause, "candidates": list(d.candidates), "code": d.code,
             "strength": d.strength.name.lower() if d else ""}
    if d.where is not None:
        entry["where"] = d.where.to_json()
    return entry


def _case_entry(c: CaseResult) -> dict:
    error = c.error or {}
    stopped = c.error_diagnosis
    detail = {k: error.get(k, d) for k, d in
              (("kind", ""), ("where", ""), ("code", ""), ("cause", ""), ("candidates", []))}
    if c.error:
        # the error's own diagnosis: its stable code, and its place as the learner finds it
        detail["diagnosis_code"] = stopped.code
        detail["place"] = stopped.where.to_json() if stopped.where is not None else None
    # the hints the terminal shows for the case: a stopped case's is its error's diagnosis
    hints = [hint_entry(d) for d in c.diagnoses] + ([hint_entry(stopped)] if c.error and stopped else [])
    return {"part": c.part, "backend": c.backend, "case": c.case, "dims": c.dims, "dtype": c.dtype,
            "verdict": c.status, "error": error.get("message", ""), "error_detail": detail,
            "outputs": [_output_entry(o, c) for o in c.outputs], "hints": hints,
            "mutated_inputs": list(c.mutated), **({"memory_map": c.memory_map} if c.memory_map else {})}


def _output_entry(o: OutputResult, c: CaseResult) -> dict:
    """An output's numbers, and its hint where the report shows it (else the note in its place)."""
    compared = o.compared
    note = {"note": c.notes[o.label]} if o.label in c.notes else {}
    return {**note, "output": o.label, "max_difference": _finite(o.max_diff),
            "tolerance": o.allowed if compared else None, "rtol": o.rtol if compared else None,
            "verdict": "pass" if o.ok else "fail",
            "wrong": o.n_bad if compared else None, "total": o.n_total if compared else None,
            "never_written": o.n_unwritten if compared else None,
            "nonfinite": o.n_nonfinite if compared else None,
            "first_wrong": [{"index": list(index), "expected": _finite(expected), "got": _finite(got)}
                            for index, expected, got in o.first_bad],
            **hint_entry(o.diagnosis if c.shows(o) or o.ok else NO_HINT)}


def _finite(value):
    return value if isinstance(value, (int, float)) and value == value and abs(value) != float("inf") else None
