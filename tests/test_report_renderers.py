"""The text, HTML and JSON reports are renderings of one typed report, decided once
(checker/report/build.py): each diagnosis it shows is said by all three, with the same cause and
code, and so is its experiment (the smallest failing case); no reader decides again."""
from __future__ import annotations

import html
import json
import re

import pytest

from checker import registry
from checker.report import html as report_html
from checker.report import json as report_json
from checker.report.model import OutputResult, Report
from checker.report.repeats import Repeats, same_line
from checker.report.sentences import how_far_off
from checker.run.session import run_check
from checker.source import from_text
from checker.puzzle.model import REPO_ROOT
from checker.words import counted

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
    """(diagnosis, where it belongs) for every diagnosis the report shows (an error's is its message)."""
    return [(s.diagnosis, s.source) for s in report.shown() if s.source != "error"]


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
    said = Repeats()  # the text says an error in full once; a later case's same one in a line
    for c in report.cases:
        if c.status == "error":
            first = c.error["message"].split("\n")[0]
            earlier = said.earlier(c.error_diagnosis, c.heading, c.part, c.backend)
            assert (f"{same_line(c.error_diagnosis, earlier)}\n" if earlier else first) in report.text
            assert _words(first) in page
            assert any(j["error"] == c.error["message"] for j in entry["cases"])


@pytest.mark.parametrize(("key", "part", "old", "new"), FAILING[:2], ids=[f[0] for f in FAILING[:2]])
def test_the_smallest_failing_case_is_in_the_text_the_html_and_the_json(key, part, old, new):
    puzzle, report = _report(key, part, old, new)
    [experiment] = report.experiments
    entry = report_json.report_entry(puzzle, "kernels.py", report)
    assert "smallest failing case" in report.text
    assert "smallest failing case" in _plain(report_html.to_html(report))
    [found] = entry["experiments"]
    assert found["summary"].startswith("smallest failing case: ")
    assert found["smallest_failing_case"] == experiment["smallest_failing_case"]
    # a pair unless the experiments' time ran out first (they are timed against the part's own cases)
    assert found["nearest_passing"] or found["stopped"]


# the modules that read a report; checker/report/build.py alone calls the rules that decide it
READERS = ["checker/report/text.py", "checker/report/html.py", "checker/report/json.py", "checker/grade",
           "checker/mutate", "checker/notebook.py", "checker/cli.py", "checker/history", "tests/bugs/measure.py"]
DECIDING = ("arbitrate", "summary_hints", "Stories(", "keeps_pattern", "experiments.read(")


def test_no_reader_decides_what_the_report_shows_again():
    """The text, the HTML, the JSON, the gradebook, the mutation tool and the corpus measure render or
    score what the builder decided; none imports the rules or applies them itself."""
    found = []
    for reader in READERS:
        path = REPO_ROOT / reader
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            text = file.read_text(encoding="utf-8")
            found += [f"{file.relative_to(REPO_ROOT)}: {word}" for word in DECIDING if word in text]
    assert not found, "\n".join(found)


def test_every_diagnosis_has_a_code_and_the_json_names_the_schema_version():
    puzzle, report = _report(*FAILING[0])
    assert all(d.code for d in report.diagnoses() if d.text and not d.text.startswith("test"))
    assert report_json.document([]).get("schema") == "triton-gpu-puzzles/report/3"


OOB_PARAGRAPH = "the checker stopped it before memory was touched"  # the out-of-bounds paragraph's end


def test_an_out_of_bounds_diagnosis_repeated_across_cases_is_said_once_then_a_line_per_case():
    """p02 with `<=` for `<`: eight cases load x one past its end at the same line, for the same reason.
    The text says the paragraph once; each later case with the same diagnosis gets one line naming the
    case it was said for, and its own offset."""
    _, report = _report(*FAILING[1])
    failures = [c for c in report.cases if c.status == "error"]
    assert len(failures) == 8 and all(c.error["kind"] == "out_of_bounds" for c in failures)
    # twice: N=7's finding is another (addr.mask, not addr.mask_le), so its paragraph is its own
    assert report.text.count(OOB_PARAGRAPH) == 2, report.text
    line = ("      same out-of-bounds access to `x_ptr` at `add_vectors_kernel`, line 25 as documented "
            "configuration, N=10 (offset {}, past the end)\n")
    for n in (1, 33, 100, 1000, 50):
        assert line.format(n) in report.text, report.text
    other = report.text.split("The other cases:\n")[1].split("\n\n")[0].split("\n")
    # a line per case and per folded error, the experiment (three lines), a hint across cases
    assert len(other) <= 28, "\n".join(other)
    # the fault's message names its place: no second "at" line under it
    assert "at `add_vectors_kernel`, kernels.py, line 25: x = tl.load" not in report.text
    # no mask at all: one diagnosis for all eight cases, said once
    unmasked = _report("p02", "forward", "x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)")[1]
    assert unmasked.text.count(OOB_PARAGRAPH) == 1, unmasked.text
    assert unmasked.text.count("same out-of-bounds access to `x_ptr`") == 7, unmasked.text


def test_json_of_an_out_of_bounds_failure_carries_its_place_its_code_and_its_hints():
    """--json of a kernel whose mask lets one lane past the end: each stopped case names the line (kernel,
    line as the learner counts it, its code), the diagnosis's code, and the hint the terminal shows."""
    puzzle, report = _report(*FAILING[1])
    entry = report_json.report_entry(puzzle, "kernels.py", report)
    schema = json.loads((REPO_ROOT / "checker" / "report" / "schema.json").read_text(encoding="utf-8"))
    pytest.importorskip("jsonschema").validate(report_json.document([entry]), schema)
    code = "x = tl.load(x_ptr + offsets, mask=mask)"
    place = {"kernel": "add_vectors_kernel", "cell": None, "line": 25, "code": code}
    stopped = [c for c in entry["cases"] if c["verdict"] == "error"]
    assert stopped
    for case in stopped:
        detail = case["error_detail"]
        assert detail["where"] == "`add_vectors_kernel`, kernels.py, line 25" and detail["code"] == code, detail
        assert detail["place"] == place and detail["diagnosis_code"] == "fault.oob", detail
        assert [(h["hint"], h["code"], h["cause"], h["where"]) for h in case["hints"]] == [
            (case["error"], "fault.oob", "mask", place)], case["hints"]


def test_counts_agree_with_their_number():
    """'1 of 1 element off', '1 case not run': never '1 elements' nor '1 cases'."""
    assert counted(1, "element") == "1 element" and counted(3, "element") == "3 elements"
    scalar = OutputResult("loss", ok=False, max_diff=1.0, n_bad=1, n_total=1)
    assert how_far_off(scalar).startswith("1 of 1 element off ("), how_far_off(scalar)
    part = {"part": "forward", "title": "z = x + y", "backend": "Interpreter (CPU)", "passed": False,
            "correct": 0, "cases": 0, "unrun": 1, "problem": ""}
    page = _plain(report_html.to_html(Report(False, "", [], [part])))
    assert "0 of 0 cases correct; 1 case not run" in page, page
