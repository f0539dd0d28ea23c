"""The band after each output (checker/evidence/guards.py): a store past an output's end is seen where the
sanitizer is off, and an output the kernels keep inside of is left alone."""
import torch

from checker.diagnosis.faults import past_the_end
from checker.evidence.guards import GUARD_ELEMENTS, guard_outputs, overruns


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
