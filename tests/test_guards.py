"""The band after each output (checker/evidence/guards.py): a store past an output's end is seen where the
sanitizer is off, and an output the kernels keep inside of is left alone."""
import torch

from checker.diagnosis.faults import past_the_end
from checker.evidence.guards import GUARD_ELEMENTS, guard_inputs, guard_outputs, overruns


def overrun_text(name: str, first: int) -> str:
    return past_the_end(name, first).text


def test_a_write_past_the_end_is_seen_and_where():
    outputs = {"z": torch.full((3, 5), float("nan")), "count": torch.zeros(4, dtype=torch.int32)}
    guards = guard_outputs(outputs)
    assert {g.name for g in guards} == {"z", "count"}
    assert outputs["z"].shape == (3, 5) and torch.isnan(outputs["z"]).all()  # the same values, in place
    outputs["z"].fill_(1.0)
    assert overruns(guards) == {}
    # what an unmasked last block does: lanes past the 15 elements store into the memory after them
    whole = torch.empty(0).set_(outputs["z"].untyped_storage(), 0, (15 + GUARD_ELEMENTS,))
    whole[15 + 3] = 2.0
    assert overruns(guards) == {"z": 3}
    assert "3 elements after its end" in overrun_text("z", 3)
    assert "right after it" in overrun_text("z", 0)


def test_non_contiguous_outputs_are_left_as_they_are():
    transposed = torch.zeros(4, 6).t()
    outputs = {"y": transposed}
    assert guard_outputs(outputs) == []
    assert outputs["y"] is transposed


def test_a_load_past_an_inputs_end_reads_the_band_nan_and_the_hint_traces_it():
    """Where the sanitizer is off, what a load past an input's end reads is the band's NaN on every run
    (not whatever the heap held), and an output computed from it says where it came from."""
    from checker.diagnosis.values import _read_past_an_input
    from checker.poison import band_nan_mask
    x = torch.randn(3, 4)
    xt = torch.randn(5, 2).T                    # a transposed input keeps its strides
    shared = torch.randn(6)
    inputs = {"x": x, "xt": xt, "a": shared[:3], "b": shared[3:], "idx": torch.arange(4), "scale": 2.0}
    guard_inputs(inputs)
    assert torch.equal(inputs["x"], x) and inputs["x"].data_ptr() != x.data_ptr()
    assert torch.equal(inputs["xt"], xt) and inputs["xt"].stride() == xt.stride()
    assert inputs["a"] is not None and inputs["a"].data_ptr() == shared.data_ptr()  # shared storage: left as is
    assert inputs["idx"].data_ptr() != 0 and inputs["scale"] == 2.0
    past = torch.empty(0).set_(inputs["x"].untyped_storage(), 0, (12 + GUARD_ELEMENTS,))[12:20]
    assert band_nan_mask(past).all()
    # a sum that takes in one element past the end keeps the band's payload
    got = torch.stack([x.sum(), x.sum() + past[0]])
    assert band_nan_mask(got).tolist() == [False, True]
    hint = _read_past_an_input("y", got)
    assert hint is not None and "1 of 2 elements of `y` is the NaN" in hint.observed and hint.candidates[:2] == ("mask", "address")
    assert _read_past_an_input("y", torch.tensor([float("nan")])) is None  # a NaN the kernel computed
