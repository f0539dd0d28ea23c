"""The memory map's data against the trace: a race, a block never written and a store out of bounds,
each drawn where the sanitizer (or the output's own fill) says it happened.

Each check runs as a learner's does (checker/run/session.run_check, the map asked for) and its map
is read from the result; the facts it must agree with come from elsewhere: the sanitizer's fault of
the same kernel launched again here (its program, the other program, its offsets and lanes), and
the fill the checker leaves in elements no kernel wrote. With the tracing switched off, the same
assertions fail: the last test shows it.
"""
from __future__ import annotations

import pytest
from bugs import apply, entries, patched

from checker import registry
from checker.evidence.memory_map import cells
from checker.run.session import run_check
from checker.source import from_text

pytestmark = [pytest.mark.p02, pytest.mark.p04, pytest.mark.p07]


def _bug(key: str, name: str) -> str:
    puzzle = registry.get(key)
    bug = next(b for b in entries(puzzle).pinned if b.name == name)
    return patched(puzzle, name, bug.patches)


RACE = ("p07", "backward", lambda: _bug("p07", "dx_plain_store"))
NEVER_WRITTEN = ("p04", "forward", lambda: _bug("p04", "program_axes_swapped"))
# puzzle 2 with its loads masked and its store not: the store is the access out of bounds
STORE_OUT = ("p02", "forward", lambda: apply(registry.get("p02").solution.read_text(encoding="utf-8"),
                                             (("tl.store(z_ptr + offsets, x + y, mask=mask)",
                                               "tl.store(z_ptr + offsets, x + y)", 1),)))


def _documented_map(key: str, part: str, text: str) -> dict:
    """The documented case's result, its memory map asked for, as the checker makes it."""
    puzzle = registry.get(key)
    report = run_check(puzzle, [part], from_text(text, "kernels.py"), backend="interpreter", in_process=True,
                       only_documented=True, experiments=0.0, maps=True, write=lambda line: None)
    (result,) = report.results
    return result


def _fault(key: str, part: str, text: str):
    """The sanitizer's fault when the documented case's launch runs again, here."""
    from checker.interpreter import sanitizer
    from checker.interpreter.memory import KernelFault
    from checker.run.worker import _load_kernels
    puzzle = registry.get(key)
    case = next(c for c in puzzle.cases() if c.documented)
    kernels = _load_kernels(from_text(text, "kernels.py"), f"map_test_{key}")
    inputs = puzzle.make_inputs(case, "cpu")
    with sanitizer.sanitized():
        try:
            puzzle.part(part).launch(kernels, inputs, puzzle.part(part).allocate(inputs, case), case)
        except KernelFault as fault:
            return fault.fault
    raise AssertionError("the launch ran to its end")


def _tensor(result: dict, name: str) -> dict:
    found = {t["tensor"]: t for t in result.get("memory_map", {}).get("tensors", [])}
    assert name in found, f"no map of {name}: {sorted(found)}"
    return found[name]


def _linear(pid, grid) -> int:
    _, ny, nz = grid
    return (pid[0] * ny + pid[1]) * nz + pid[2]


def assert_race_marked(result: dict, fault) -> None:
    """dx: the element the sanitizer names is a race, first written by the other program, and the
    raced elements are exactly those the second program's store reached."""
    dx = _tensor(result, "dx")
    states, programs, _ = cells(dx["panels"][0])
    n, start = dx["shape"][0], dx["start"]
    raced = {int(j) + start for j in (states[0] == "r").nonzero()[0]}
    lanes = {int(i) for i in fault.facts["lanes"].ravel() if 0 <= i < n}
    assert fault.facts["offset"] in raced and raced == lanes, (raced, lanes)
    assert programs[0, fault.facts["offset"] - start] == _linear(fault.facts["other"], dx["grid"])
    assert result["memory_map"]["stopped"]["kind"] == "race"
    assert dx["counts"]["race"] == len(lanes)


def assert_never_written_blank(result: dict) -> None:
    """z of puzzle 4 with its program axes swapped: the cells never written are the elements that
    still hold the checker's fill (as many), and they are whole rows."""
    z = _tensor(result, "z")
    states, _, _ = cells(z["panels"][0])
    inside = states[-z["panels"][0]["row0"]:][:z["shape"][0]]
    unwritten = next(c for c in result["comparisons"] if c["label"] == "z")["n_unwritten"]
    assert unwritten and (inside == "n").sum() == unwritten == z["counts"]["never"], (unwritten, z["counts"])
    rows = {int(r) for r in (inside == "n").nonzero()[0]}
    assert all((inside[r] == "n").all() for r in rows) and max(rows) == z["shape"][0] - 1, rows


def assert_store_out_drawn_past_the_edge(result: dict, fault) -> None:
    """z of puzzle 2 with an unmasked store: the offsets the sanitizer stopped are drawn past z's
    end, in the program that stored there; no other cell is out of bounds."""
    z = _tensor(result, "z")
    states, programs, _ = cells(z["panels"][0])
    flat, owner = states.ravel(), programs.ravel()
    out = {int(k) + z["start"] for k in (flat == "O").nonzero()[0]}
    assert fault.kind == "out_of_bounds" and fault.facts["access"] == "store" and fault.tensor == z["param"]
    assert out == {int(o) for o in fault.facts["offsets"]} and min(out) >= z["shape"][0], out
    assert {int(owner[o - z["start"]]) for o in out} == {_linear(fault.program, z["grid"])}
    assert not any("O" in "".join(p["rows"]) for t in result["memory_map"]["tensors"] if t["tensor"] != "z"
                   for p in t["panels"])


def test_a_race_is_marked_where_the_sanitizer_saw_it():
    key, part, text = RACE
    result = _documented_map(key, part, text())
    assert_race_marked(result, _fault(key, part, text()))


def test_a_block_never_written_is_blank():
    key, part, text = NEVER_WRITTEN
    assert_never_written_blank(_documented_map(key, part, text()))


def test_a_store_out_of_bounds_is_drawn_past_the_edge():
    key, part, text = STORE_OUT
    result = _documented_map(key, part, text())
    assert_store_out_drawn_past_the_edge(result, _fault(key, part, text()))


def test_the_same_checks_fail_with_the_tracing_switched_off(monkeypatch):
    """The assertions above read the trace: with no access handed to it, each of them fails."""
    from checker.interpreter import hooks
    monkeypatch.setattr(hooks, "observe", lambda observer: None)
    for (key, part, text), check in ((RACE, lambda r: assert_race_marked(r, _fault(*RACE[:2], RACE[2]()))),
                                     (NEVER_WRITTEN, assert_never_written_blank),
                                     (STORE_OUT, lambda r: assert_store_out_drawn_past_the_edge(
                                         r, _fault(*STORE_OUT[:2], STORE_OUT[2]())))):
        with pytest.raises(AssertionError):
            check(_documented_map(key, part, text()))


def _result(case: str, backend: str, status: str, drawn: dict | None = None, **more) -> dict:
    return {"part": "forward", "case": case, "dims": "N=10", "status": status, "backend": backend,
            **({"memory_map": drawn} if drawn else {}), **more}


# one tensor of three elements, two of them written by program 0, drawn as the worker sends it
TINY = {"tensors": [{"tensor": "z", "role": "output", "param": "z_ptr", "kernel": "k", "grid": [1, 1, 1],
                     "shape": [3], "what": "written", "wrap": 3, "start": 0, "tile": [1, 1], "more_panels": 0,
                     "far_outside": 0, "counts": {"elements": 3, "never": 1, "masked_only": 0, "several": 0,
                                                  "race": 0, "out_of_bounds": 0, "masked_past_the_edge": 0},
                     "panels": [{"label": "", "rows": ["wwn"], "program": [[0, 0, -1]], "count": [[1, 1, 0]],
                                 "row0": 0, "tile": [1, 1]}]}],
        "stopped": None, "complete": True, "reference": None, "asked": False}


def test_the_report_maps_the_case_asked_for_else_the_first_failure_and_says_why_a_gpu_has_none():
    from checker.report.model import Report
    cpu, gpu = "Interpreter (CPU)", "GPU (H100)"
    first = Report(False, "", [_result("a", cpu, "pass"), _result("b", cpu, "fail", TINY)])
    assert [first.memory_map()[0].case, first.memory_map()[2]] == ["b", ""]
    asked = Report(False, "", [_result("b", cpu, "fail", TINY), _result("c", cpu, "pass", {**TINY, "asked": True})])
    assert asked.memory_map()[0].case == "c"
    passed_here = Report(False, "", [_result("a", cpu, "pass"), _result("a", gpu, "fail")])
    assert passed_here.memory_map()[1:] == (None, "No memory map: a GPU records no accesses, and the "
                                                  "interpreter passed this case.")
    gpu_only = Report(False, "", [_result("big", gpu, "fail")])
    assert "the interpreter does not run this case" in gpu_only.memory_map()[2]


def test_the_map_opens_for_a_failure_of_addresses_and_stays_folded_for_one_of_values():
    from checker.report import html
    from checker.report.model import Report
    wrong = {"label": "z", "ok": False, "max_diff": 9.0, "n_bad": 3, "n_total": 3, "hint": "z is x + 1",
             "cause": "formula"}
    values = _result("b", "Interpreter (CPU)", "fail", TINY, comparisons=[wrong])
    folded = "".join(html.report_html(Report(False, "", [values]))[1])
    assert '<details class="tgp-map">' in folded and 'src="data:image/png;base64,' in folded
    fault = _result("b", "Interpreter (CPU)", "error", TINY, error={"kind": "race", "message": "Data race on `z`"})
    assert '<details class="tgp-map" open>' in "".join(html.report_html(Report(False, "", [fault]))[1])
