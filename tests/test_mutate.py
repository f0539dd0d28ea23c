"""python -m checker.mutate: each operator makes the change it names on a tiny kernel, ids survive
unrelated edits, the score counts what it should, and a fixed sample of mutants of the real
solutions is caught in the interpreter (the whole run is `python -m checker.mutate --all`).
"""
from __future__ import annotations

import ast
import re

import pytest

import bugs
from checker import registry
from checker.diagnosis.model import CAUSES
from checker.mutate.analysis import analyse
from checker.mutate.cli import mutate_puzzle, sample
from checker.mutate.operators import CLASSES, OPERATORS, mutants_of
from checker.mutate.run import Outcome, exemptions, report_hints, verdict
from checker.mutate.score import Scored
from checker.report.model import Report

TINY = '''"""A kernel that has one site for every operator."""
import triton
import triton.language as tl


@triton.jit
def tiny_kernel(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < M
    acc = tl.zeros([BLOCK_M], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = row_ok[:, None] & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0).to(tl.float32)
        acc += tl.sum(tl.where(mask, x * 2.0, 0.0), axis=1)  # the comment stays
    tl.atomic_add(y_ptr + rows, acc, mask=row_ok)
'''

# operator -> one line it must produce (the mutated line, stripped)
EXPECTED = {
    "mask.drop": "tl.atomic_add(y_ptr + rows, acc)",
    "mask.lt_le": "row_ok = rows <= M",
    "mask.bound": "row_ok = rows < M - 1",
    "mask.keep_one": "mask = row_ok[:, None]",
    "address.strides": "x = tl.load(x_ptr + rows[:, None] + cols[None, :] * N, mask=mask, other=0.0).to(tl.float32)",
    "address.offset": "rows = (tl.program_id(0) + 1) * BLOCK_M + tl.arange(0, BLOCK_M)",
    "address.block": "rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_M)",
    "loop.start": "for start in range(BLOCK_N, N, BLOCK_N):",
    "loop.stop": "for start in range(0, N - BLOCK_N, BLOCK_N):",
    "loop.step": "for start in range(0, N, 2 * BLOCK_N):",
    "accumulate.overwrite": "acc = tl.sum(tl.where(mask, x * 2.0, 0.0), axis=1)  # the comment stays",
    "atomic.race": "tl.store(y_ptr + rows, tl.load(y_ptr + rows, mask=row_ok) + acc, mask=row_ok)",
    "atomic.store": "tl.store(y_ptr + rows, acc, mask=row_ok)",
    "fill.other": "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=1.0).to(tl.float32)",
    "fill.start": "acc = tl.full([BLOCK_M], 1.0, dtype=tl.float32)",
    "fill.where": "acc += tl.sum(tl.where(mask, x * 2.0, 1.0), axis=1)  # the comment stays",
    "formula.drop": "acc += tl.sum(tl.where(mask, x, 0.0), axis=1)  # the comment stays",
    "precision.cast": "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0.0)",
    "precision.acc": "acc = tl.zeros([BLOCK_M], dtype=x_ptr.dtype.element_ty)",
}


def _changed_lines(before: str, after: str) -> list[str]:
    old = before.splitlines()
    return [line.strip() for line in after.splitlines() if line not in old]


def test_every_operator_makes_its_change_on_a_tiny_kernel():
    mutants = mutants_of(TINY)
    assert set(EXPECTED) | {"address.axis", "accumulate.dot"} == set(OPERATORS)  # those two: below
    for operator, line in EXPECTED.items():
        made = [_changed_lines(TINY, m.text) for m in mutants if m.operator == operator]
        assert [line] in made, f"{operator}: {made}"


def test_mutants_parse_change_one_site_and_name_their_class():
    mutants = mutants_of(TINY)
    assert set(CLASSES) <= set(CAUSES)
    assert len({m.id for m in mutants}) == len(mutants)
    assert len({m.text for m in mutants}) == len(mutants) and TINY not in {m.text for m in mutants}
    for m in mutants:
        ast.parse(m.text)
        assert m.cls == OPERATORS[m.operator][0] and m.kernel == "tiny_kernel"
        assert re.fullmatch(r"[a-z]+\.[a-z_]+:tiny_kernel:[0-9a-f]{8}:\d+", m.id), m.id
        # the lines before the site are untouched: line numbers in the learner's report stay right
        assert TINY.splitlines()[:m.line - 1] == m.text.splitlines()[:m.line - 1], m.id
        assert f"line {m.line}:" in m.description


def test_program_id_axes_are_swapped_where_a_kernel_uses_two():
    two = TINY.replace("cols = start + tl.arange(0, BLOCK_N)",
                       "cols = tl.program_id(1) + start + tl.arange(0, BLOCK_N)")
    made = [_changed_lines(two, m.text) for m in mutants_of(two) if m.operator == "address.axis"]
    assert ["rows = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)"] in made
    assert not [m for m in mutants_of(TINY) if m.operator == "address.axis"]  # one axis: nothing to swap


def test_the_accumulator_of_tl_dot_is_dropped():
    dot = TINY.replace("acc += tl.sum(tl.where(mask, x * 2.0, 0.0), axis=1)", "acc = tl.dot(x, x.T, acc)")
    made = [_changed_lines(dot, m.text) for m in mutants_of(dot) if m.operator == "accumulate.dot"]
    assert made == [["acc = tl.dot(x, x.T)  # the comment stays"]]


def test_ids_survive_unrelated_edits():
    ids = {m.id for m in mutants_of(TINY)}
    moved = TINY.replace('import triton\n', 'import math  # a new first line\nimport triton\n\n\n')
    moved = moved.replace("# the comment stays", "# a comment rewritten")
    assert {m.id for m in mutants_of(moved)} == ids
    # an edit at one site changes the ids at that site only
    edited = TINY.replace("x * 2.0", "x * 3.0")
    site = {m.id for m in mutants_of(TINY) if "x * 2.0" in m.description}
    assert site and {m.id for m in mutants_of(edited)} & ids == ids - site


def test_class_filter_and_sample_keep_ids():
    everything = {m.id: m for m in mutants_of(TINY)}
    masks = mutants_of(TINY, ("mask",))
    assert masks and all(m.cls == "mask" and everything[m.id] == m for m in masks)
    chosen = sample(list(everything.values()), 8)
    assert chosen == sample(list(everything.values()), 8)
    assert len({m.cls for m in chosen}) == 8  # one of each class first


def test_kinds_tell_addresses_masks_and_values_apart():
    kernel = analyse(next(n for n in ast.parse(TINY).body if isinstance(n, ast.FunctionDef)))
    assert {"index", "pid", "vec"} <= kernel.kinds["rows"]
    assert "bound" in kernel.kinds["row_ok"] and "bound" in kernel.kinds["mask"]
    assert kernel.kinds["x"] == {"value"} and "value" in kernel.kinds["acc"]
    assert "index" in kernel.kinds["start"]


def test_hint_verdicts():
    assert verdict("mask", "mask", []) == "right"
    assert verdict("mask", "address", []) == "misleading"
    assert verdict("mask", "", ["address", "mask"]) == "candidates"
    assert verdict("mask", "", ["address", "loop"]) == "misleading"
    assert verdict("mask", "", []) == "none"


def _report(results: list, hints: list | None = None) -> Report:
    report = Report(False, "", results)
    if hints is not None:
        report.hints = hints
    return report


def test_hints_are_read_from_comparisons_errors_and_the_report_missing_keys_as_empty():
    results = [
        {"part": "forward", "case": "N=40", "status": "fail", "comparisons": [
            {"label": "y", "ok": False, "hint": "12 of 40 elements were never written", "cause": "mask", "candidates": []},
            {"label": "z", "ok": False, "hint": "old style, no class"}, {"label": "w", "ok": True}]},
        {"part": "forward", "case": "N=41", "status": "fail", "comparisons": [
            {"label": "y", "ok": False, "hint": "3 of 40 elements were never written", "cause": "mask", "candidates": []}]},
        {"part": "forward", "case": "N=42", "status": "error",
         "error": {"message": "Out-of-bounds load", "kind": "out_of_bounds", "candidates": ["mask", "address"]}},
    ]
    across = [{"part": "forward", "backend": "Interpreter (CPU)", "hint": "only wide rows fail", "cause": "loop",
               "candidates": []}]
    hints = report_hints(_report(results, across), "mask")
    assert sorted(h["verdict"] for h in hints) == ["candidates", "misleading", "none", "right"]
    assert len(report_hints(_report(results), "mask")) == 3  # before the report lists its hints


def _outcome(mutant, caught: bool, hints: list | None = None) -> Outcome:
    return Outcome(mutant, caught, "case" if caught else "", hints or [])


def test_score_counts_survivors_equivalents_and_wrong_listings():
    puzzle = registry.get("p08")
    mutants = [m for m in mutants_of(TINY) if m.cls in ("mask", "precision")][:4]
    right = [{"verdict": "right"}]
    outcomes = [_outcome(mutants[0], True, right), _outcome(mutants[1], False), _outcome(mutants[2], False),
                _outcome(mutants[3], True, [{"verdict": "misleading"}, {"verdict": "right"}])]
    listed = {mutants[1].id: "the same lanes", mutants[3].id: "claimed, wrongly", "gone:id:00000000:0": "stale"}
    scored = Scored(puzzle, outcomes, listed, gpu_only=False, complete=True)
    assert [o.mutant.id for o in scored.survivors] == [mutants[2].id]
    assert [o.mutant.id for o in scored.wrongly_listed] == [mutants[3].id]
    assert scored.stale == ["gone:id:00000000:0"] and not scored.ok
    total = scored.to_json()["total"]
    counted = ("mutants", "caught", "equivalent", "survived", "right", "misleading")
    assert [total[k] for k in counted] == [4, 2, 1, 1, 2, 1]
    assert total["precision"] == pytest.approx(2 / 3)


def test_misleading_hints_are_grouped_by_their_gist():
    from checker.mutate.score import _gist
    a = _gist("Out-of-bounds load from `x_ptr` in program (2, 0, 0), at `k`, line 3")
    b = _gist("Out-of-bounds load from `w_ptr` in program (0, 1, 0), at `k2`, line 9")
    assert a == b == "Out-of-bounds load from `…`"
    assert _gist("every element is 0.81 times the value") == _gist("every element is 1.5e-3 times the value")


@pytest.mark.every_puzzle
def test_equivalent_listing_is_well_formed():
    keys = {p.key for p in registry.all_puzzles()}
    assert set(bugs.keys()) <= keys
    listed_somewhere = False
    for key in sorted(keys):
        listed = exemptions(key).equivalent
        assert listed == bugs.entries(key).equivalent  # the mutation tool reads what the tests read
        listed_somewhere |= bool(listed)
        for mutant_id, reason in listed.items():
            assert re.fullmatch(r"[a-z]+\.[a-z_]+:\w+:[0-9a-f]{8}:\d+", mutant_id), mutant_id
            assert len(reason) > 20, f"{mutant_id}: say why no input can tell it from the solution"
    assert listed_somewhere
    assert exemptions("p99").equivalent == {} and exemptions("p99").same_bug == {}  # no file: none listed


def test_list_and_show_need_no_check(capsys):
    from checker.mutate.cli import main
    assert main(["p02", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == len(mutants_of(registry.get("p02").solution.read_text(encoding="utf-8")))
    first = listed[0].split()[1]
    assert main(["p02", "--show", first]) == 0
    ast.parse(capsys.readouterr().out)
    assert main(["p02", "--show", "mask.drop:nothing:00000000:0"]) == 2


# A fixed sample of each puzzle's mutants, spread over the classes, checked as `python -m
# checker.mutate` checks them. The puzzles between them have a mutant of every class. Measured:
# about 20 s of CPU on one core.
SAMPLE = {"p07": 8, "p08": 8, "p09": 4, "p10": 8}


@pytest.mark.parametrize("key", [pytest.param(k, marks=getattr(pytest.mark, k)) for k in SAMPLE])
def test_a_fixed_sample_of_mutants_is_caught(key):
    scored = mutate_puzzle(registry.get(key), k=SAMPLE[key])
    assert len(scored.outcomes) == SAMPLE[key]
    problems = [f"{o.mutant.id} survived: {o.mutant.description}" for o in scored.survivors]
    problems += [f"{o.mutant.id} is listed as equivalent but was caught: {o.first_failure}"
                 for o in scored.wrongly_listed]
    assert not problems, "\n".join(problems)


def test_a_mutant_listed_as_the_same_bug_of_a_second_class_is_right_for_either():
    assert verdict(("formula", "stability"), "stability", []) == "right"
    assert verdict(("formula", "stability"), "", ["stability", "fill"]) == "candidates"
    assert verdict(("formula", "stability"), "mask", []) == "misleading"
    for key in [p.key for p in registry.all_puzzles()]:
        for mutant_id, (cls, reason) in exemptions(key).same_bug.items():
            assert re.fullmatch(r"[a-z]+\.[a-z_]+:\w+:[0-9a-f]{8}:\d+", mutant_id), mutant_id
            assert cls in CAUSES and cls != mutant_id.split(".")[0] and len(reason) > 20
