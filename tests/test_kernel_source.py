"""KernelSource's questions about lines (checker/source.py): the loop around a line, which a hang's
report names when the stack sample lands in a spin loop's body (checker/run/runner.py)."""
from __future__ import annotations

from checker.source import from_text

KERNEL = """import triton
import triton.language as tl


@triton.jit
def spin_kernel(lock, x_ptr, N):
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    for i in range(0, N):
        x = tl.load(x_ptr + i)
        tl.store(x_ptr + i, x + 1)
    tl.atomic_xchg(lock, 0)
"""


def _line(source, text: str) -> int:
    """The line of the checked text (the learner's, after the checker's own imports) that holds text."""
    return next(i for i, line in enumerate(source.text.split("\n"), 1) if text in line)


def test_a_line_in_a_loops_body_has_that_loop_around_it():
    source = from_text(KERNEL, "kernels.py")
    spin, walk = _line(source, "while tl.atomic_cas"), _line(source, "for i in range")
    assert source.loop_around(_line(source, "pass")) == spin
    assert source.loop_around(_line(source, "tl.store")) == walk
    assert source.learner_line(spin) == 7 and source.line_text(spin).startswith("while")


def test_a_loops_own_line_and_a_line_outside_every_loop_have_none():
    source = from_text(KERNEL, "kernels.py")
    assert source.loop_around(_line(source, "while tl.atomic_cas")) is None  # where the sample should land
    assert source.loop_around(_line(source, "atomic_xchg")) is None
