"""The generic explainers of a wrong output (checker/diagnosis/factors.py, operands.py) and the
pattern across cases of a size the passing cases share (checker/diagnosis/across_cases.py): each
names its cause where the numbers fit it, and says nothing where they only come close."""
from __future__ import annotations

from types import SimpleNamespace

import torch

from checker.diagnosis.across_cases import same_size
from checker.diagnosis.factors import ratio_hint, row_factor_hint, slice_hint
from checker.diagnosis.operands import operand_hint
from checker.puzzle.model import Case, Output, Reference, Tolerance

TOL = Tolerance(atol=1e-5, rtol=1e-5)


def _ref(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def test_a_factor_of_its_own_per_row_is_a_normalisation():
    ref = _ref(4, 8)
    got = ref * torch.tensor([1.0, 2.0, 3.0, 0.5], dtype=torch.float64)[:, None]
    hint = row_factor_hint(got, ref, TOL, 1.0, 1.0, "o")
    assert hint.code == "values.row_factor" and hint.candidates[:2] == ("formula", "accumulate")


def test_a_factor_per_row_in_a_bf16_case_asks_about_a_running_sum_kept_in_bf16_too():
    """Rows short by 6-10 % in a bf16 case: p31's running output kept in bf16 drops the later key blocks'
    small shares, and leaves exactly this pattern. The hint asks about it beside the normalisation, and
    only in a 16-bit case."""
    ref = _ref(4, 8)
    got = ref * torch.tensor([0.90, 0.94, 0.92, 0.91], dtype=torch.float64)[:, None]
    narrow = row_factor_hint(got, ref, TOL, 1.0, 1.0, "o", "bfloat16")
    assert narrow.code == "values.row_factor" and "precision" in narrow.candidates
    assert "running sum kept in bfloat16" in narrow.observed + narrow.question
    plain = row_factor_hint(got, ref, TOL, 1.0, 1.0, "o")
    assert "precision" not in plain.candidates
    # rows scaled up (a sum not divided by its count) are no rounding's doing, bf16 or not
    larger = row_factor_hint(ref * torch.tensor([5.0, 9.0, 7.0, 12.0], dtype=torch.float64)[:, None], ref, TOL,
                             1.0, 1.0, "o", "bfloat16")
    assert larger.code == "values.row_factor" and "precision" not in larger.candidates
    # one factor for every row, spread only by the bf16 store (p32's dV scaled by 1/√D): no share was lost
    one = row_factor_hint(ref * torch.tensor([0.25, 0.2502, 0.2498, 0.2501], dtype=torch.float64)[:, None], ref,
                          TOL, 1.0, 1.0, "o", "bfloat16")
    assert one.code == "values.row_factor" and "precision" not in one.candidates


def test_factors_within_rounding_of_one_say_nothing():
    ref = _ref(4, 8)
    got = ref * (1 + 1e-3 * torch.tensor([1.0, -1.0, 2.0, 0.5], dtype=torch.float64))[:, None]
    assert not row_factor_hint(got, ref, Tolerance(atol=1e-2, rtol=1e-2), 1.0, 1.0, "o")


def test_a_sign_reversed_on_half_of_a_dimension_is_named():
    ref = _ref(3, 16)
    got = ref.clone()
    got[:, :8] *= -1
    hint = slice_hint(got, ref, TOL, 1.0, 1.0, "q_out", ("T", "D"))
    assert hint.code == "values.slice_sign" and hint.cause == "formula" and "first half of D" in hint.text


def test_a_half_of_a_dimension_walked_in_blocks_is_no_evidence():
    ref = _ref(3, 16)
    got = ref.clone()
    got[:, 8:] += 1.0
    case = Case("T=3, D=16", tags=frozenset({"wide", "wide_D"}), sizes={"T": 3, "D": 16})
    assert not slice_hint(got, ref, TOL, 1.0, 1.0, "q_out", ("T", "D"), case)


def test_a_factor_of_one_over_the_square_root_of_a_size_is_named():
    ref = _ref(4, 8)
    case = Case("D=16", sizes={"D": 16, "L": 8})
    hint = ratio_hint(ref * 0.25, ref, case)
    assert "(= 1 / √D)" in hint.text


def test_an_output_holding_another_outputs_values_asks_about_the_store_and_the_formula():
    da, db = _ref(4, 8), _ref(4, 8) + 3
    reference = Reference(outputs={"da": da, "db": db}, scales={"da": 1.0, "db": 1.0})
    hint = operand_hint(None, Output("da", "da", forward=False), db.clone(), reference, TOL)
    assert hint.candidates == ("address", "formula") and hint.code == "operand.other_output"


def test_zeros_fit_no_other_output():
    """An output left at 0 where another output's answer is 0 (one key, one query) fits nothing."""
    dq, dv = torch.zeros(2, 4, dtype=torch.float64), _ref(2, 4)
    reference = Reference(outputs={"dq": dq, "dv": dv}, scales={"dq": 1.0, "dv": 1.0})
    assert not operand_hint(None, Output("dv", "dv", forward=False), torch.zeros(2, 4, dtype=torch.float64),
                            reference, TOL)


def _case(d: int, *tags: str) -> Case:
    return Case(f"D={d}", tags=frozenset(tags), sizes={"D": d, "L": 8})


def _pair(failing: Case, passing: Case, prop: str):
    from checker.diagnosis.experiments import Finding, Neighbour
    return Finding("forward", "", failing, None, (Neighbour(prop, passing, failing.sizes[prop], passing.sizes[prop]),),
                   True, "", 2, 0.0, True)


def test_a_size_every_passing_case_shares_asks_whether_it_is_written_in():
    puzzle = SimpleNamespace(summary_patterns=())
    shown = _pair(_case(24), _case(16), "D")
    hint = same_size(puzzle, [_case(24), _case(32)], [_case(16), _case(16), _case(16)], shown)
    assert hint.code == "cases.same_size" and hint.candidates == ("hardcoded",)
    # where the experiment passed by changing another size, the shared value is a correlation only
    other = Case("D=24, L=4", sizes={"D": 24, "L": 4})
    from checker.diagnosis.experiments import Finding, Neighbour
    elsewhere = Finding("forward", "", _case(24), None, (Neighbour("L", other, 8, 4),), True, "", 2, 0.0, True)
    assert same_size(puzzle, [_case(24), _case(32)], [_case(16), _case(16), _case(16)], elsewhere) is None


def test_a_size_shared_only_where_a_kind_of_case_splits_them_too_is_no_evidence():
    puzzle = SimpleNamespace(summary_patterns=())
    shown = _pair(_case(24, "tail"), _case(16), "D")
    assert same_size(puzzle, [_case(24, "tail"), _case(40, "tail")], [_case(16), _case(16), _case(16)], shown) is None


def test_an_error_that_is_an_input_times_a_constant_is_a_term_with_the_wrong_coefficient():
    x, y = _ref(4, 8), _ref(4, 8) * 0.5 + 1
    ref = x + y
    operands = SimpleNamespace(floating={"x": x, "y": y}, hypotheses=lambda: [])
    reference = Reference(outputs={"z": ref}, scales={"z": 1.0})
    hint = operand_hint(operands, Output("z", "z", forward=True), x - y, reference, TOL)
    assert hint.code == "operand.term" and hint.candidates[0] == "formula" and "sign reversed" in hint.text


def test_zeros_stored_everywhere_ask_about_the_loop_and_the_running_value():
    from checker.diagnosis.values import output_hint
    from checker.evidence.compare import compare
    ref = _ref(4, 8)
    reference = Reference(outputs={"y": ref}, scales={"y": 1.0})
    got = torch.zeros(4, 8, dtype=torch.float64)
    puzzle = SimpleNamespace(patterns=(), input_dims={})
    hint = output_hint(puzzle, Output("y", "y", forward=True), got, reference, TOL, compare("y", got, ref, 1.0, TOL, None))
    assert hint.code == "values.zero" and hint.candidates[:2] == ("loop", "accumulate")


def test_a_pattern_holds_only_where_a_case_outside_it_that_is_not_trivial_passes():
    """Only the wide case fails: said where a one-block case of several rows passes, not where only
    a one-row case (which a missing 1/n cannot break) does."""
    from checker.diagnosis.across_cases import summary_hints
    from checker.puzzle.model import SummaryPattern
    wide = SummaryPattern("only the cases larger than one block fail", lambda c: "wide" in c.tags,
                          candidates=("loop",), code="cases.wide")
    puzzle = SimpleNamespace(summary_patterns=(wide,))
    failing = (Case("N=40", tags=frozenset({"wide"}), sizes={"M": 4, "N": 40}), {"status": "fail"})
    one_row = (Case("M=1, N=8", tags=frozenset({"single", "trivial"}), sizes={"M": 1, "N": 8}), {"status": "pass"})
    one_block = (Case("M=4, N=8", sizes={"M": 4, "N": 8}), {"status": "pass"})
    from checker.diagnosis.experiments import Finding, Neighbour
    shown = Finding("forward", "", failing[0], None, (Neighbour("N", one_block[0], 40, 8),), True, "", 2, 0.0, True)
    assert summary_hints(puzzle, [failing, one_row], shown) == []
    assert [d.code for d in summary_hints(puzzle, [failing, one_row, one_block], shown)] == ["cases.wide"]
