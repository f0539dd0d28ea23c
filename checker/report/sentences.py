"""The sentences that the text and the HTML report both say about an output: written once here."""
from __future__ import annotations

from checker.report.model import OutputResult
from checker.words import counted

NEVER_WRITTEN = "never written (still the NaN the checker filled it with)"


def fmt(value: float) -> str:
    return f"{value:.2e}"


def tolerance(o: OutputResult) -> str:
    return ("must be exact" if not o.allowed and not o.rtol
            else f"tolerance {fmt(o.allowed)} + {o.rtol:.1e}·|expected|")


def how_far_off(o: OutputResult) -> str:
    """'12 of 40 elements off, 3 of them never written (max difference 1.00e+00, tolerance …)'."""
    if o.never_written:
        return NEVER_WRITTEN
    unwritten = f", {o.n_unwritten} of them never written" if o.n_unwritten else ""
    return (f"{o.n_bad} of {counted(o.n_total, 'element')} off{unwritten} (max difference {fmt(o.max_diff)}, "
            f"{tolerance(o)})")


def in_a_line(o: OutputResult) -> str:
    """The shortest form, for a table of cases: 'z: 12 of 40 off', 'z: never written', 'z: wrong'."""
    if not o.compared:
        return f"{o.label}: wrong"
    if o.never_written:
        return f"{o.label}: never written"
    return f"{o.label}: {o.n_bad} of {o.n_total} off"
