"""Hints across cases (checker/diagnosis/across_cases.py) keep to their premise: which cases fail is weak
evidence, weaker than an access the sanitizer stopped."""
from types import SimpleNamespace

from checker.diagnosis.across_cases import summary_hints
from checker.diagnosis.experiments import Finding, Neighbour
from checker.puzzle.model import Case, SummaryPattern

WIDE = SummaryPattern("only the wide cases fail: do the programs start at their own rows?", lambda c: "wide" in c.tags,
                      candidates=("address",))
PUZZLE = SimpleNamespace(summary_patterns=(WIDE,))
NARROW, WIDE_1, WIDE_2 = (Case("narrow"), Case("wide 1", tags=frozenset({"wide"})),
                          Case("wide 2", tags=frozenset({"wide"})))


# the experiment: a wide case fails, the same case one block narrow passes
SHOWN = Finding("forward", "", WIDE_1, None, (Neighbour("N", NARROW, 40, 8),), True, "", 2, 0.0, True)


def error(cause: str = "", *candidates: str) -> dict:
    return {"status": "error", "error": {"cause": cause, "candidates": list(candidates)}}


def test_a_summary_asks_where_only_its_kind_of_case_fails():
    results = [(NARROW, {"status": "pass"}), (WIDE_1, {"status": "fail"}), (WIDE_2, {"status": "fail"})]
    assert [h.candidates for h in summary_hints(PUZZLE, results, SHOWN)] == [("address",)]
    # which declared cases fail is a correlation: without the experiment's pair, nothing is said
    assert summary_hints(PUZZLE, results) == []


def test_a_summary_stays_quiet_beside_an_error_that_asks_about_more_than_it_does():
    """The failing cases stopped at an out-of-bounds read that asks about a mask and an address: a
    question about the address alone would narrow what the access showed."""
    results = [(NARROW, {"status": "pass"}), (WIDE_1, error("", "address", "mask")), (WIDE_2, {"status": "fail"})]
    assert summary_hints(PUZZLE, results, SHOWN) == []
    # an error whose causes the summary asks about leaves it be
    results[1] = (WIDE_1, error("address"))
    assert [h.candidates for h in summary_hints(PUZZLE, results, SHOWN)] == [("address",)]
