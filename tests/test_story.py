"""One report, one story (issue "Hints that generalize", item 4): the first cause a report names
stands; a later hint that names another cause, or asks only about others, on evidence no stronger,
is left out, and the report says so in its place. Pure Python: made-up cases, no kernel run."""
from __future__ import annotations

from checker import registry
from checker.diagnosis.arbitrate import Stories, Story
from checker.diagnosis.model import Diagnosis, Strength
from checker.report.model import CaseResult, OutputResult
from checker.report.text import ReportWriter

RACE = Diagnosis("Data race on `hist_ptr` element 3", "atomic", code="fault.race", strength=Strength.PROOF)
VARIANT = Diagnosis("hist[i] counts element i itself", "address", code="values.variant", strength=Strength.FIT)
ASKS_ELSEWHERE = Diagnosis("a per-row factor: formula? loop?", "", ("formula", "loop"), code="values.factor",
                           strength=Strength.FIT)
ASKS_ALONG = Diagnosis("shares overwrote each other? atomics?", "", ("atomic", "formula"), code="values.shares",
                       strength=Strength.FIT)


def _case(name: str, *outputs: Diagnosis, own: tuple = (), part: str = "forward") -> CaseResult:
    return CaseResult(part=part, case=name, dims=name, dtype="float32", status="fail", backend="interpreter",
                      outputs=[OutputResult(label=f"out{i}", ok=False, diagnosis=d) for i, d in enumerate(outputs)],
                      diagnoses=list(own))


def test_a_later_weaker_hint_naming_another_cause_is_left_out_with_a_note():
    stories = Stories()
    assert stories.read(_case("N=20", own=(RACE,))) == {}
    left = stories.read(_case("N=16", VARIANT, ASKS_ALONG))
    assert list(left) == ["out0"]                       # the variant names address: left out
    assert "atomic named in N=20" in left["out0"] and "address" in left["out0"]


def test_a_question_that_asks_only_about_other_causes_is_left_out_and_one_that_agrees_stays():
    stories = Stories()
    stories.read(_case("N=20", own=(RACE,)))
    assert list(stories.read(_case("N=7", ASKS_ELSEWHERE, ASKS_ALONG))) == ["out0"]


def test_stronger_evidence_becomes_the_story_and_each_part_has_its_own():
    story = Story()
    assert story.admits(VARIANT, "N=4")
    assert story.admits(RACE, "N=8") and story.cause == "atomic"      # proof beats a fit
    assert not story.admits(VARIANT, "N=9")
    stories = Stories()
    stories.read(_case("N=20", own=(RACE,)))
    assert stories.read(_case("N=16", VARIANT, part="backward")) == {}   # another part: another story


def test_the_terminal_report_prints_the_note_in_place_of_the_hint():
    lines: list[str] = []
    report = ReportWriter(registry.get("p17"), write=lines.append)
    report.backend = "interpreter"
    def event(name: str, documented: bool, comparisons: list, hints: list) -> dict:
        return {"type": "case_result", "part": "forward", "case": name, "dims": name, "dtype": "float32",
                "status": "fail", "documented": documented, "comparisons": comparisons, "hints": hints}
    report.case_result(event("N=20", True, [], [RACE.to_json()]))
    wrong = {"label": "hist", "ok": False, "max_diff": 7.0, "n_bad": 3, "n_total": 3, **VARIANT.to_json()}
    report.case_result(event("N=16", False, [wrong], []))
    text = "\n".join(lines)
    assert "counts element i itself" not in text
    assert "pointed at address, on weaker evidence than the atomic named in N=20" in text


def test_a_known_bug_an_earlier_case_ruled_out_is_a_coincidence_where_it_fits_later():
    """The documented case's dlogits is not 'p rounded before the − 1' (it was computed there and
    did not fit); a confident row, where the two sit together, fits it by chance: left out."""
    rounded = Diagnosis("dlogits matches p rounded to bfloat16 before the − 1", "precision",
                        code="variant.p_rounded", strength=Strength.FIT)
    first = CaseResult(part="step", case="documented", dims="M=4", dtype="float32", status="fail",
                       backend="interpreter", outputs=[OutputResult(label="dlogits", ok=False, refuted=("p_rounded",))])
    later = CaseResult(part="step", case="confident rows", dims="M=4", dtype="float32", status="fail",
                       backend="interpreter", outputs=[OutputResult(label="dlogits", ok=False, diagnosis=rounded)])
    stories = Stories()
    assert stories.read(first) == {}
    left = stories.read(later)
    assert list(left) == ["dlogits"] and "coincidence" in left["dlogits"] and "documented" in left["dlogits"]
    # not ruled out: the variant stands
    assert Stories().read(later) == {}
