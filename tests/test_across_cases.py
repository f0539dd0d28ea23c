"""The narrower splits across cases (checker/diagnosis/across_cases.py): every case fails but the
trivial ones (the arithmetic), only cases whose block sizes differ (one block used for another),
only sizes past the documented one (a number written in), only where one size exceeds another (one
size used for another). Each asks; each holds only where its premise is decided by cases that pass,
and only where an experiment's pair (a failing and a passing case one property apart) shows it."""
from types import SimpleNamespace

from checker.diagnosis.across_cases import summary_hints
from checker.diagnosis.experiments import Finding, Neighbour
from checker.puzzle.model import Case

PUZZLE = SimpleNamespace(summary_patterns=())


def case(name: str, dtype: str = "float32", documented: bool = False, tags: tuple = (), **sizes: int) -> Case:
    blocks = {k: sizes.pop(k) for k in list(sizes) if k.startswith("BLOCK")}
    return Case(name, dtype=dtype, documented=documented, tags=frozenset(tags), params=blocks, sizes=sizes)


def fail(typical: float = 0.5, **more) -> dict:
    return {"status": "fail", "comparisons": [{"label": "y", "ok": False, "typical_error": typical, **more},
                                              {"label": "z", "ok": True}]}


PASS = {"status": "pass", "comparisons": [{"label": "y", "ok": True}, {"label": "z", "ok": True}]}
DOC = case("doc", documented=True, tags=("wide",), M=4, N=20)
ONE_BLOCK = case("one block", M=4, N=8)
WIDE = case("wide", tags=("wide",), M=8, N=40)
ONE_ROW = case("one row", tags=("single", "trivial"), M=1, N=8)


def codes(results, finding=None) -> list[str]:
    return [d.code for d in summary_hints(PUZZLE, results, finding)]


def pair(failing: Case, passing: Case, prop: str) -> Finding:
    """An experiment's finding: `failing` fails, `passing` (one property changed) passes."""
    value = lambda c: c.sizes.get(prop, c.params.get(prop))  # noqa: E731
    return Finding("forward", "", failing, None, (Neighbour(prop, passing, value(failing), value(passing)),),
                   True, "", 2, 0.0, True)


def test_every_case_but_the_trivial_failing_asks_about_the_arithmetic_and_names_what_is_right():
    results = [(DOC, fail()), (ONE_BLOCK, fail()), (WIDE, fail()), (ONE_ROW, PASS)]
    [hint] = summary_hints(PUZZLE, results)
    assert hint.code == "cases.every_case" and hint.candidates[0] == "formula"
    assert "`y` wrong in each" in hint.text and "`z` is right in every case" in hint.text
    # off by a rounding's size: a narrower type first
    [hint] = summary_hints(PUZZLE, [(c, fail(0.003)) for c, _ in results[:3]] + [(ONE_ROW, PASS)])
    assert hint.candidates[0] == "precision"


def test_every_case_failing_says_nothing_where_a_one_block_case_could_not_tell():
    # a non-trivial case passes: it is no formula slip
    assert "cases.every_case" not in codes([(DOC, fail()), (ONE_BLOCK, PASS), (WIDE, fail()), (ONE_ROW, PASS)])
    # nor where the experiment found a case one change away that passes
    every = [(DOC, fail()), (ONE_BLOCK, fail()), (WIDE, fail()), (ONE_ROW, PASS)]
    assert "cases.every_case" not in codes(every, pair(ONE_BLOCK, case("M=4, N=16", M=4, N=16), "N"))
    # every failing case is wider than a block: a loop over blocks explains it as well
    wide = [(case(f"w{i}", tags=("wide",), documented=i == 0, M=4, N=40 + i), fail()) for i in range(3)]
    assert codes(wide) == []
    # a failure with an unwritten element is no value's slip
    assert codes([(DOC, fail(n_unwritten=3)), (ONE_BLOCK, fail()), (WIDE, fail())]) == []


def test_only_cases_whose_blocks_differ_failing_asks_about_one_block_for_another():
    same = [case(f"same {m}", documented=m == 4, M=m, N=20, BLOCK_M=16, BLOCK_K=16) for m in (4, 40, 12)]
    differ = [case(f"differ {m}", M=m, N=20, BLOCK_M=32, BLOCK_K=16) for m in (8, 20)]
    results = [(c, PASS) for c in same] + [(c, fail()) for c in differ]
    shown = pair(differ[0], case("equal", M=8, N=20, BLOCK_M=16, BLOCK_K=16), "BLOCK_M")
    [hint] = summary_hints(PUZZLE, results, shown)
    assert hint.code == "cases.blocks_differ" and "BLOCK_K ≠ BLOCK_M" in hint.text
    # the declared cases alone are a correlation: without a pair that shows it, nothing is said
    assert codes(results) == []
    # nor where the pair changes something else
    assert codes(results, pair(differ[0], case("M=4", M=4, N=20, BLOCK_M=32, BLOCK_K=16), "M")) == []
    # a case with equal blocks fails too: the blocks do not split them
    results[1] = (same[1], fail())
    assert "cases.blocks_differ" not in codes(results, shown)


def test_only_sizes_past_the_documented_one_failing_asks_about_a_number_written_in():
    doc = case("doc", documented=True, M=4, K=20)
    within = [case(f"K={k}", M=4, K=k) for k in (10, 16)]
    beyond = [case(f"K={k}", M=4, K=k) for k in (50, 200, 64)]
    results = [(doc, PASS)] + [(c, PASS) for c in within] + [(beyond[0], fail()), (beyond[1], fail()), (beyond[2], PASS)]
    puzzle = SimpleNamespace(summary_patterns=(), sizes_of=lambda c: c.sizes)
    shown = pair(beyond[0], doc, "K")
    assert "cases.past_documented" in [d.code for d in summary_hints(puzzle, results, shown)]
    assert "cases.past_documented" not in [d.code for d in summary_hints(puzzle, results)]
    # two of five larger cases failing is a chance split, not a pattern
    more = [(case(f"K={k}", M=4, K=k), PASS) for k in (70, 80)]
    assert "cases.past_documented" not in [d.code for d in summary_hints(puzzle, results + more, shown)]


def test_only_cases_where_a_size_exceeds_another_failing_asks_about_one_size_for_another():
    within = [(case(f"L=S={n}", documented=n == 40, L=n, S=n), PASS) for n in (40, 12, 33, 64, 70)]
    beyond = [(case(f"L={ell}, S=20", L=ell, S=20), fail()) for ell in (50, 36)]
    shown = pair(beyond[1][0], case("L=20, S=20", L=20, S=20), "L")
    hints = summary_hints(PUZZLE, within + beyond, shown)
    assert [h.code for h in hints] == ["cases.one_size_for_another"] and "S used where L belongs" in hints[0].text
    assert codes(within + beyond) == []  # no pair, no claim
    # one failing case is unique in too many ways: nothing is said
    assert codes(within + beyond[:1], shown) == []
