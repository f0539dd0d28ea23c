"""Puzzle 22 end to end: the solution passes, the untouched notebook fails kindly, the notebook and
the solution cannot drift apart, the book's equations match autograd, the report has its shape."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from checker import registry
from checker.run.session import run_check
from checker.source import from_file
from checker.puzzle.model import REPO_ROOT
from checker.specs.families import layernorm as formulas

pytestmark = pytest.mark.p22
PUZZLE = registry.get("p22")


def checker(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_documented_case_reports_every_output_like_mojo_p22():
    lines: list[str] = []
    report = run_check(PUZZLE, ["unfused", "backward"], from_file(PUZZLE.solution, "solution"),
                       backend="interpreter", only_documented=True, in_process=True, write=lines.append)
    out = "\n".join(lines)
    assert report.passed, out
    assert "Testing with dimensions: [4, 4, 8] -> [4, 4, 16]" in out
    for line in ("Computing PyTorch autograd reference...", "Forward max difference:",
                 "LayerNorm output max difference:", "dx:", "dgamma:", "dbeta:", "dw:", "dbias:",
                 "Forward pass: ✅ CORRECT",
                 "Gradients:    ✅ CORRECT", "This case:    ✅ CORRECT", "Backward Pass Test Summary:",
                 "Overall Result: ✅ ALL CORRECT"):
        assert line in out, line


def test_a_part_flag_checks_only_its_own_kernels():
    run = checker("p22", "--unfused", "--solution", "--backend", "interpreter")
    assert run.returncode == 0, run.stdout
    assert "Unfused Forward Test Summary" in run.stdout
    assert "Fused Forward Test Summary" not in run.stdout and "Backward Pass Test Summary" not in run.stdout


def test_list_and_unknown_puzzle():
    assert "p22" in checker("--list").stdout
    assert checker("p99").returncode == 2


def _random_problem(m=6, h=11, n=7, seed=0, mean=0.0, spread=1.0):
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)  # noqa: E731
    return mean + spread * r(m, h), 1 + 0.5 * r(h), 0.5 * r(h), r(n, h), r(n), r(m, n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_form_backward_equals_autograd(seed):
    x, gamma, beta, w, bias, dy = _random_problem(seed=seed, mean=-2.3 * seed)
    truth = formulas.autograd_reference(x, gamma, beta, w, bias, dy, 1e-5)
    mean, rstd = formulas.statistics(x, 1e-5)
    ours = formulas.formulas(x, gamma, beta, w, bias, dy, mean, rstd)
    for name, value in truth.items():
        torch.testing.assert_close(ours[name], value, rtol=1e-12, atol=1e-12, msg=name)
    shares = formulas.contributions(x, gamma, beta, w, dy, mean, rstd)
    for name, share in shares.items():
        torch.testing.assert_close(share.sum(0), truth[name], rtol=1e-12, atol=1e-12, msg=name)


def test_jacobian_diagonal_formula_is_wrong():
    x, gamma, beta, w, bias, dy = _random_problem(m=4, h=8)
    truth = formulas.autograd_reference(x, gamma, beta, w, bias, dy, 1e-5)
    mean, rstd = formulas.statistics(x, 1e-5)
    diagonal = formulas.formulas(x, gamma, beta, w, bias, dy, mean, rstd, jacobian_diagonal=True)
    assert (diagonal["dx"] - truth["dx"]).abs().max() > 0.1


def test_every_bug_variant_differs_from_the_truth():
    """A variant equal to the truth would hand out hints for nothing (a variance near eps shows all)."""
    x, gamma, beta, w, bias, dy = _random_problem(mean=3.0, spread=0.003)
    truth = formulas.autograd_reference(x, gamma, beta, w, bias, dy, 1e-5)
    for name, variant in formulas.bug_variants(x, gamma, beta, w, bias, dy, 1e-5, (16,)).items():
        assert any((variant[k] - truth[k]).abs().max() > 1e-3 for k in truth), name


def test_as_many_padded_lanes_as_h_are_the_uncentred_variance():
    """H = 8 in a block of 16: 8 lanes of (0 - mean)^2 add 8 * mean^2, exactly what the variance taken
    around 0 adds. Both variants are declared, so a kernel that computes it is asked about both."""
    x, gamma, beta, w, bias, dy = _random_problem(h=8)
    variants = formulas.bug_variants(x, gamma, beta, w, bias, dy, 1e-5, (8, 16))
    padded, uncentred = variants["padded_lanes_16"], variants["variance_not_centred"]
    assert all(torch.allclose(padded[k], uncentred[k]) for k in padded)


def test_a_variance_bug_that_leaves_x_hat_near_zero_is_not_declared():
    """Rows near 1000: padded lanes or an uncentred variance make the variance ~1e6 and x_hat ~0, an
    output (z ~ beta) that any kernel losing x_hat matches too."""
    x, gamma, beta, w, bias, dy = _random_problem(h=11, mean=1000.0)
    variants = formulas.bug_variants(x, gamma, beta, w, bias, dy, 1e-5, (16,))
    assert "variance_not_centred" not in variants and "padded_lanes_16" not in variants
    assert "unbiased_variance" in variants
