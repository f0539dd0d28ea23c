"""One cell of the gradebook: a student's puzzle part, from the report of its check.

A cell says pass or fail, the cases passed of those run (on every backend that ran), the cause
class of the first failure (checker/diagnosis/model.py's CAUSES: what kind of change fixes it; a
question where the evidence leaves several, "mask or address?") and the reason in the report's own
words, what matters first (where a hang was stuck, where a cell does not parse): whole in the JSON,
cut at a word in the CSV. What stopped a check has a verdict of its own (checker/history/verdicts.py):
a hang, a crash, code that does not run; and so has what was never run: a notebook missing,
unreadable or not started; and, on a cluster, what was lost with the workers that ran it.
"""
from __future__ import annotations

import re

from checker.diagnosis.model import Diagnosis
from checker.history.store import backend_of
from checker.history.verdicts import CRASH, DOES_NOT_RUN, FAIL, HANG, PASS, stopping_fault, verdict
from checker.report.model import BAD, OK, Report
from checker.report.sentences import in_a_line

MISSING, UNREADABLE, NOT_STARTED, ERROR = "missing", "unreadable", "not started", "error"
LOST = "lost"  # on a cluster: the check's worker died each time it ran it (checker/grade/cluster.py)
REASON_CHARACTERS = 140  # a reason in the CSV, cut at a word: the JSON has it whole
HANG_CAUSE = "loop or lock?"  # what the report asks of a hang: a loop that never ends, a lock never released


def cell(verdict: str, passed: int = 0, cases: int = 0, cause: str = "", reason: str = "",
         backends: dict | None = None) -> dict:
    """A gradebook cell as the JSON gradebook holds it."""
    return {"verdict": verdict, "passed": passed, "cases": cases, "cause": cause, "reason": reason,
            "backends": backends or {}}


def from_report(part: str, report: Report) -> dict:
    """The cell of `part`, from a check of that part alone (one part per check: a hang in one part
    leaves the student's other parts graded)."""
    entries = [p for p in report.parts if p["part"] == part]
    passed = sum(p["correct"] for p in entries)
    cases = sum(p["cases"] + p.get("unrun", 0) for p in entries)  # those a hang or crash left unrun too
    backends = {backend_of(p["backend"]): f"{p['correct']}/{p['cases'] + p.get('unrun', 0)}"
                + ("" if p["passed"] else " ✗") for p in entries}
    decided = verdict(report, part)
    if decided == PASS:
        return cell(PASS, passed, cases, backends=backends)
    fault = stopping_fault(report, part)
    if fault is not None:
        return cell(decided, passed, cases, HANG_CAUSE if decided == HANG else "", _fault_reason(fault), backends)
    if report.usage_error:
        return cell(ERROR, passed, cases, "", whole(report.usage_error), backends)
    cause, reason = first_failure(part, report)
    if not reason:
        reason = next((p["problem"] for p in entries if p["problem"]), "")
    return cell(FAIL, passed, cases, cause, whole(reason), backends)


def first_failure(part: str, report: Report) -> tuple[str, str]:
    """(cause class, reason) of the part's first failing case, in the order the report shows them:
    the case's error, its own diagnoses (the addresses it saw), then its outputs'; where the case
    names no cause, the part's diagnosis across cases."""
    failing = [c for c in report.cases if c.part == part and c.status != "pass"]
    across = [d for p, _, d in report.summaries if p == part]
    if not failing:
        return (causes(across[0]), across[0].text) if across else ("", "")
    case = failing[0]
    cause = next((causes(d) for d in case.shown if d.classes), "") or next((causes(d) for d in across if d.classes), "")
    bad = next((o for o in case.outputs if not o.ok), None)
    said = case.explanation_text or (in_a_line(bad) if bad else "")
    return cause, f"{case.case}: {said}" if said else case.case


def causes(d: Diagnosis) -> str:
    """'mask', or 'mask or address?' where the evidence asks about several."""
    if d.cause:
        return d.cause
    return " or ".join(d.candidates) + "?" if d.candidates else ""


def _fault_reason(fault: dict) -> str:
    """What stopped the check, in the report's own words, what matters first: "N=8: still running
    after 2 s, stopped at `kernel`, line 6 of its cell: while True. A loop that never ends? (…)";
    "SyntaxError: '(' was never closed (the cell that defines `kernel`, line 3): offs = …"."""
    if fault.get("message"):  # a part's static problem: its message, where, then the code it quotes
        first, *code = fault["message"].split("\n")
        where = f" ({fault['where']})" if fault.get("where") else ""
        code = whole(" ".join(code))
        return whole(f"{first}{where}" + (f": {code}" if code else ""))
    lines = [re.sub(rf"^({BAD}|{OK})\s*", "", ln.strip()) for ln in fault.get("lines", []) if ln.strip()]
    if not lines:
        return fault["kind"]
    where = next((ln[len("it was at "):] for ln in lines[1:] if ln.startswith("it was at ")), "")
    if fault["kind"] == "hang" and where and ", so it was stopped" in lines[0]:
        head, advice = lines[0].split(", so it was stopped", 1)
        return whole(f"{head}, stopped at {where}{advice}")
    if fault["kind"] == "load_error" and len(lines) > 1:
        lines = lines[1:]  # "the kernel cells do not run:" is the verdict's
    return whole(" ".join(lines))


def whole(text: str) -> str:
    """The reason on one line, whole: the JSON's."""
    return " ".join(text.split())


def short(text: str, limit: int = REASON_CHARACTERS) -> str:
    """One line of at most `limit` characters, cut at a word: the CSV's."""
    text = whole(text)
    if len(text) <= limit:
        return text
    return text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def csv_text(c: dict) -> str:
    """The cell as the CSV shows it: "pass 9/9", "fail 5/9 [mask] N=100: …", "hang 0/9 [loop or lock?] …",
    "does not run: SyntaxError: …", "missing"; its reason cut at a word."""
    counted = f" {c['passed']}/{c['cases']}" if c["cases"] or c["verdict"] in (PASS, FAIL, HANG, CRASH) else ""
    cause = f" [{c['cause']}]" if c["cause"] else ""
    said = counted or cause
    reason = f"{' ' if said else ': '}{short(c['reason'])}" if c["reason"] and c["verdict"] != PASS else ""
    return f"{c['verdict']}{counted}{cause}{reason}"
