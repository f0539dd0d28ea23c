"""A part's outputs are allocated from the forward's shapes alone: the forward runs on the meta device
(no arithmetic), so a benchmark size whose float64 forward would not fit (attention's scores at 16
heads of 16384 keys: 32 GiB) still gets its buffers; a forward the meta device cannot run is
computed as before."""
from __future__ import annotations

import checker.puzzle.build as build
from checker import registry


def test_outputs_come_from_the_meta_forward_without_computing_it(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the float64 forward was computed to allocate the outputs")
    monkeypatch.setattr(build.DeclaredPuzzle, "_in_float64", refuse)
    puzzle = registry.get("p31")
    case = puzzle.cases()[0]
    outs = puzzle.parts[0].allocate(puzzle.make_inputs(case, "cpu", 0), case)
    sizes = case.sizes
    assert outs["o"].shape == (sizes["B"], sizes["H"], sizes["L"], sizes["D"])
    assert outs["lse"].shape == outs["o"].shape[:-1] and str(outs["lse"].dtype) == "torch.float32"


def test_a_forward_the_meta_device_cannot_run_is_computed():
    puzzle = registry.get("p17")  # a histogram: its outputs' sizes come from the values
    case = puzzle.cases()[0]
    outs = puzzle.parts[0].allocate(puzzle.make_inputs(case, "cpu", 0), case)
    assert outs and all(t.numel() > 0 for t in outs.values())
