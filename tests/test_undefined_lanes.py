"""Undefined is poisoned: in the interpreter the masked-off lanes of a tl.load without other= read the
lane NaN (checker/interpreter/undefined.py), which arithmetic carries to an output, where
checker/diagnosis/undefined_lanes.py traces it back; a kernel whose masked lanes never reach an
output is untouched."""
import torch
import triton
import triton.language as tl

from checker.diagnosis.undefined_lanes import beyond_solution, lanes_reached, unfilled_loads
from checker.interpreter import bf16, undefined
from checker.poison import LANE_INT, lane_nan_mask
from checker.source import from_text

bf16.enable()
undefined.enable()


@triton.jit
def summed(x_ptr, y_ptr, N, KEEP_OUT: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, mask=i < N).to(tl.float32)
    if KEEP_OUT:
        x = tl.where(i < N, x, 0.0)
    tl.store(y_ptr, tl.sum(x, axis=0))


@triton.jit
def copied(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < N) * 2, mask=i < N)


@triton.jit
def loaded(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < N))


def test_a_summed_masked_load_without_other_reads_the_lane_nan_in_fp32_and_bf16():
    for dtype in (torch.float32, torch.bfloat16):
        x, y = torch.ones(5, dtype=dtype), torch.zeros(1)
        summed[(1,)](x, y, 5, KEEP_OUT=False, BLOCK=8)
        assert bool(lane_nan_mask(y).all()), (dtype, y)
        found = lanes_reached("y", y, [("summed", "line 3: `x = tl.load(x_ptr + i, mask=i < N)`")])
        assert found.cause == "fill" and "other=0.0" in found.text and "line 3" in found.text


def test_masked_lanes_kept_out_or_stored_under_the_same_mask_never_reach_the_output():
    x, y = torch.ones(5), torch.zeros(1)
    summed[(1,)](x, y, 5, KEEP_OUT=True, BLOCK=8)
    assert float(y) == 5.0
    z = torch.zeros(5)
    copied[(1,)](x, z, 5, BLOCK=8)
    assert torch.equal(z, torch.full((5,), 2.0)) and lanes_reached("z", z, []) is None


@triton.jit
def one_lane(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < N, other=0.0))


def test_other_given_as_zero_on_a_block_of_one_lane_is_kept():
    # the interpreter drops a falsy other= of one element before the builder sees it: still a given other
    x, y = torch.ones(1), torch.full((1,), 5.0)
    one_lane[(1,)](x, y, 0, BLOCK=1)
    assert float(y) == 0.0


def test_integer_lanes_read_a_loud_pattern():
    x, y = torch.arange(5, dtype=torch.int32), torch.zeros(8, dtype=torch.int32)
    loaded[(1,)](x, y, 5, BLOCK=8)
    assert y[:5].tolist() == list(range(5)) and set(y[5:].tolist()) == {LANE_INT[4]}


def test_the_poison_can_be_switched_off():
    undefined.disable()
    try:
        x, y = torch.ones(5), torch.zeros(1)
        summed[(1,)](x, y, 5, KEEP_OUT=False, BLOCK=8)
        assert float(y) == 5.0  # the interpreter's own zeros
    finally:
        undefined.enable()


def test_loads_without_other_are_found_and_counted_against_the_solution(tmp_path):
    text = ("def k(x_ptr, m):\n"
            "    a = tl.load(x_ptr, mask=m)\n"
            "    b = tl.load(x_ptr, mask=m, other=0.0)\n"
            "    c = tl.load(x_ptr, m, 0.0)\n"
            "    d = tl.load(x_ptr)\n")
    found = unfilled_loads(from_text(text, "kernels.py"))
    assert [kernel for kernel, _ in found] == ["k"] and "line 2" in found[0][1]
    solution = tmp_path / "solution.py"
    solution.write_text(text)
    assert beyond_solution(found, solution) == []       # the solution leaves that lane undefined too
    filled = tmp_path / "filled.py"
    filled.write_text(text.replace("mask=m)", "mask=m, other=0.0)"))
    assert beyond_solution(found, filled) == [found[0][1]]
