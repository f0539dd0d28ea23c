"""What became of one part of a check, in a word: passed, failed, or stopped by what stopped it (a
hang, a crash, code that does not run). The progress view and the gradebook say the same words."""
from __future__ import annotations

from checker.report.model import Report

PASS, FAIL, HANG, CRASH, DOES_NOT_RUN = "pass", "fail", "hang", "crash", "does not run"
# the kinds of the report's faults (checker/report/text.py; a part's static problem has the kind
# checker/source.py gives it) that decide a part's verdict; any other failure is a fail
BY_FAULT = {"hang": HANG, "crash": CRASH, "stopped": CRASH, "load_error": DOES_NOT_RUN,
            "syntax": DOES_NOT_RUN, "stale": DOES_NOT_RUN, "missing": DOES_NOT_RUN, "untagged": DOES_NOT_RUN}


def stopping_fault(report: Report, part: str, backend: str | None = None) -> dict | None:
    """The fault that stopped `part` (on the backend of this report label; None: any), or None. A
    fault said before any part began (cells that do not load) stops every part of its backend."""
    for fault in report.faults:
        if fault["kind"] in BY_FAULT and fault.get("part") in (part, "", None) \
                and (backend is None or fault.get("backend") in (backend, "")):
            return fault
    return None


def verdict(report: Report, part: str, backend: str | None = None) -> str:
    """pass, fail, hang, crash or does not run: `part` on one backend (its report label), or on all."""
    entries = [p for p in report.parts if p["part"] == part and (backend is None or p["backend"] == backend)]
    if entries and all(p["passed"] for p in entries):
        return PASS
    fault = stopping_fault(report, part, backend)
    return BY_FAULT[fault["kind"]] if fault is not None else FAIL
