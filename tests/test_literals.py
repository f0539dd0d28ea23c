"""Facts about a kernel's code (checker/diagnosis/literals.py): a number that is one of the
documented case's sizes where the solution's kernel has none, and a 16-bit type the solution's kernel
does not name. Each is read only where it matters: the case's own size differs, the case is float32."""
from checker.diagnosis.across_cases import narrowed, number_written_in
from checker.diagnosis.literals import documented_values, narrowed_in, written_in

SOLUTION = '''
@triton.jit
def k(x_ptr, y_ptr, L, D, BLOCK: tl.constexpr = 16):
    """docstring 40"""
    rows = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows * D, mask=rows < L, other=0.0)
    tl.store(y_ptr + rows, x * 2, mask=rows < L)
'''


def test_a_documented_size_written_into_the_kernel_is_found_where_the_case_differs(tmp_path):
    solution = tmp_path / "solution.py"
    solution.write_text(SOLUTION)
    learner = SOLUTION.replace("mask=rows < L, other", "mask=rows < 40, other")
    values = documented_values({"L": 40, "D": 16}, {"BLOCK": 16})
    [found] = written_in(learner, ["k"], solution, values, {"L": 12, "D": 16, "BLOCK": 16})
    assert found["value"] == 40 and found["means"] == ["L"] and "rows < 40" in found["code"]
    # the documented case itself: the number is right there
    assert written_in(learner, ["k"], solution, values, {"L": 40, "D": 16, "BLOCK": 16}) == []
    # a number the solution writes too (the 2 of x * 2 is below 3 anyway; the docstring's 40 is no code)
    assert written_in(SOLUTION, ["k"], solution, values, {"L": 12, "D": 8, "BLOCK": 32}) == []
    hint = number_written_in([{"status": "fail", "literals": [found]}])
    assert hint.candidates == ("hardcoded",) and "in the documented case L is 40" in hint.text


def test_a_16_bit_type_the_solution_does_not_name_is_found(tmp_path):
    solution = tmp_path / "solution.py"
    solution.write_text(SOLUTION)
    learner = SOLUTION.replace("x * 2,", "(x * 2).to(tl.bfloat16),")
    [found] = narrowed_in(learner, ["k"], solution)
    assert "bfloat16" in found["code"]
    assert narrowed_in(SOLUTION, ["k"], solution) == []
    assert narrowed([{"status": "fail", "narrowed": [found]}]).candidates == ("precision",)
