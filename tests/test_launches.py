"""A kernel must not assume its launch: a case declared with launches={"PROGRAMS": (2, 5)} is checked
again with each value on the same data (checker/puzzle/build.py), persistent() takes the case's
value where it gives one, and a verdict that flips on that value alone is named for what it is
(checker/diagnosis/launch_assumed.py)."""
from types import SimpleNamespace

import torch

from checker.diagnosis.across_cases import summary_hints
from checker.puzzle import case, part, persistent, puzzle, randn
from checker.puzzle.model import Case

PASS = {"status": "pass", "comparisons": [{"label": "y", "ok": True}]}
FAIL = {"status": "fail", "comparisons": [{"label": "y", "ok": False, "typical_error": 0.5}]}


def _declared():
    return puzzle(99, "walk", "Walk", inputs={"x": randn("M N")}, reference=lambda x: {"y": x * 2},
                  parts=[part("forward", "y", ["k"], outputs=["y"], launch=lambda k, x, y, PROGRAMS: None)],
                  params={"PROGRAMS": None},
                  cases=[case(M=4, N=8, documented=True), case(M=8, N=8, launches={"PROGRAMS": (2, 5)})])


def test_a_case_launched_again_keeps_its_sizes_data_and_parameters_but_the_one():
    p = _declared()
    base, two, five = p.cases()[1:]
    assert (two.variation_of, five.variation_of, base.variation_of) == (base.name, base.name, "")
    assert (base.params["PROGRAMS"], two.params["PROGRAMS"], five.params["PROGRAMS"]) == (None, 2, 5)
    assert two.sizes == base.sizes and "PROGRAMS = 2" in two.name and not two.documented
    assert torch.equal(p.make_inputs(two, "cpu")["x"], p.make_inputs(base, "cpu")["x"])


def test_a_persistent_grid_takes_the_cases_count_and_never_more_than_the_work():
    x = torch.zeros(1)
    assert persistent(x, 10, per_sm=8) == 3                   # the interpreter's own
    assert persistent(x, 10, per_sm=8, programs=5) == 5
    assert persistent(x, 4, per_sm=8, programs=5) == 4 and persistent(x, 2) == 2


def _family(statuses: dict) -> list:
    base = Case("rows", params={"PROGRAMS": None}, sizes={"M": 8})
    cases = [base] + [Case(f"rows, launched with PROGRAMS = {n}", params={"PROGRAMS": n}, sizes={"M": 8},
                           variation_of="rows") for n in (2, 5)]
    other = Case("doc", documented=True, params={"PROGRAMS": None}, sizes={"M": 4})
    return [(other, PASS)] + [(c, PASS if statuses[c.params["PROGRAMS"]] else FAIL) for c in cases]


def test_a_verdict_that_flips_on_the_program_count_alone_names_what_the_kernel_should_read():
    [hint] = summary_hints(SimpleNamespace(summary_patterns=()), _family({None: True, 2: False, 5: True}))
    assert hint.code == "cases.launch_assumed" and hint.candidates[0] == "hardcoded"
    assert "tl.num_programs(0)" in hint.text and "PROGRAMS = 2" in hint.text


def test_no_launch_hint_where_every_launch_fails_or_every_one_passes():
    for statuses in ({None: False, 2: False, 5: False}, {None: True, 2: True, 5: True}):
        assert "cases.launch_assumed" not in [d.code for d in summary_hints(
            SimpleNamespace(summary_patterns=()), _family(statuses))]
