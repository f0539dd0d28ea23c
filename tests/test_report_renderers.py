"""The text, HTML and JSON reports are renderings of one typed report: built once from a failing
check, each diagnosis the arbitration shows is said by all three, with the same cause and code."""
from __future__ import annotations

import html
import re

import pytest

from checker import registry
from checker.diagnosis import arbitrate
from checker.report import html as report_html
from checker.report import json as report_json
from checker.run.session import run_check
from checker.source import from_text

X_LOAD = "x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask)"

# (puzzle, part, the solution's text replaced): one per kind of diagnosis the report carries
FAILING = [
    # an output's diagnosis in every case, and one across cases (only the cases with K > BLOCK_K fail)
    ("p13", "forward", "for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, BLOCK_K, BLOCK_K):"),
    # a case whose kernels stop at an error (a store past the end, seen by the sanitizer)
    ("p02", "forward", "mask = offsets < N", "mask = offsets <= N"),
    # a case's own diagnosis beside its outputs' (x read as if contiguous: the addresses say so)
    ("p05", "forward", X_LOAD, "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)"),
]


def _report(key: str, part: str, old: str, new: str):
    puzzle = registry.get(key)
    text = puzzle.solution.read_text(encoding="utf-8")
    assert text.count(old) == 1
    lines: list[str] = []
    report = run_check(puzzle, [part], from_text(text.replace(old, new), "kernels.py"), write=lines.append,
                       in_process=True, backend="interpreter")
    assert not report.passed
    return puzzle, report


def _shown(report):
    """(diagnosis, where it belongs) for every diagnosis the arbitration lets a learner see."""
    found = []
    for case in report.cases:
        if case.status == "error":
            continue
        cut = arbitrate.sharper(case.diagnoses)
        found += [(o.diagnosis, "output") for o in case.outputs
                  if not o.ok and o.diagnosis and arbitrate.shown(o.diagnosis, cut)]
        found += [(d, "case") for d in case.diagnoses if d]
    return found + [(d, "summary") for _, _, d in report.summaries]


def _plain(markup: str) -> str:
    """What a reader sees of the HTML, words only."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def _words(text: str, limit: int = 60) -> str:
    """The first words of a message as the HTML shows them (`names` as code, no backticks)."""
    return " ".join(text.replace("`", " ").split())[:limit].rstrip(" .,;:")


@pytest.mark.parametrize(("key", "part", "old", "new"), FAILING, ids=[f[0] for f in FAILING])
def test_text_html_and_json_say_the_same_diagnoses(key, part, old, new):
    puzzle, report = _report(key, part, old, new)
    shown = _shown(report)
    entry = report_json.report_entry(puzzle, "kernels.py", report)
    said_json = [h for c in entry["cases"] for h in [*(o for o in c["outputs"] if o["hint"]), *c["hints"]]]
    said_json += entry["hints"]
    page = _plain(report_html.to_html(report))
    for d, kind in shown:
        first = d.text.split("\n")[0]
        assert first in report.text, (kind, first)
        # the HTML says each hint in full once (later cases fold it to its first words)
        assert _words(first, limit=10_000) in page, (kind, first)
        assert any(h["hint"] == d.text and h["cause"] == d.cause and h["candidates"] == list(d.candidates)
                   and h["code"] == d.code for h in said_json), (kind, d)
    for c in report.cases:
        if c.status == "error":
            first = c.error["message"].split("\n")[0]
            assert first in report.text and _words(first) in page
            assert any(j["error"] == c.error["message"] for j in entry["cases"])


def test_every_diagnosis_has_a_code_and_the_json_names_the_schema_version():
    puzzle, report = _report(*FAILING[0])
    assert all(d.code for d in report.diagnoses() if d.text and not d.text.startswith("test"))
    assert report_json.document([]).get("schema") == "triton-gpu-puzzles/report/2"
