"""The tolerances are written down in the spec; here we keep them honest: the reference kernels use
at most half of every tolerance (so they pass on other seeds and compilers), while every catalog bug
fails (tests/test_p22_catalog.py)."""
from __future__ import annotations

import pytest

from checker import registry
from checker.session import run_check
from checker.source import from_file

pytestmark = pytest.mark.p22
PUZZLE = registry.get("p22")
MARGIN = 0.5  # the solution may use at most this fraction of a tolerance


def worst_ratios(backend: str, seed: int) -> dict:
    source = from_file(PUZZLE.solution, "solution")
    report = run_check(PUZZLE, [p.name for p in PUZZLE.parts], source, backend=backend, seed=seed,
                       write=lambda line: None)
    assert report.passed, "\n".join(r["case"] for r in report.results if r["status"] != "pass")
    worst = {}
    for result in report.results:
        for c in result["comparisons"]:
            key = (result["dtype"], c["label"])
            if c["worst_ratio"] > worst.get(key, (0.0, ""))[0]:
                worst[key] = (c["worst_ratio"], result["case"])
    return worst


def _assert_margins(worst: dict) -> None:
    print()
    for (dtype, label), (ratio, case) in sorted(worst.items()):
        print(f"{dtype:9s} {label:20s} uses {ratio:6.1%} of its tolerance (worst: {case})")
    over = {k: v for k, v in worst.items() if v[0] > MARGIN}
    assert not over, over


@pytest.mark.parametrize("seed", [0, 7])
def test_solution_uses_at_most_half_of_each_tolerance_in_the_interpreter(seed):
    _assert_margins(worst_ratios("interpreter", seed))


@pytest.mark.gpu
@pytest.mark.parametrize("seed", [0, 7])
def test_solution_uses_at_most_half_of_each_tolerance_on_the_gpu(seed):
    _assert_margins(worst_ratios("gpu", seed))
