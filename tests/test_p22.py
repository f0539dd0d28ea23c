"""Puzzle 22 end to end: the solution passes, the untouched notebook fails kindly, the notebook and
the solution cannot drift apart, the book's equations match autograd, the report has its shape."""
from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
import torch

from checker import registry, stubs
from checker.spec import REPO_ROOT
from checker.specs.p22_layernorm_linear import formulas

pytestmark = pytest.mark.p22
PUZZLE = registry.get("p22")


def checker(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_solution_passes_every_case_with_exit_status_0():
    run = checker("p22", "--solution", "--backend", "interpreter")
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "Testing with dimensions: [4, 4, 8] -> [4, 4, 16]" in out
    for line in ("Computing PyTorch autograd reference...", "Forward max difference:", "grad_input:",
                 "grad_ln_weight:", "grad_ln_bias:", "grad_linear_weight:", "grad_linear_bias:",
                 "Forward pass: ✅ CORRECT", "Gradients:    ✅ CORRECT", "Overall:      ✅ CORRECT",
                 "Backward Pass Test Summary:", "Overall Result: ✅ ALL CORRECT"):
        assert line in out, line
    cases = [c for c in PUZZLE.cases() if not c.gpu_only]
    assert out.count("✅ 13/13 cases correct") == 3 and len(cases) == 13
    assert "❌" not in out


def test_untouched_notebook_fails_with_not_implemented_and_exit_status_1():
    before = PUZZLE.notebook.read_bytes()
    run = checker("p22", "--backward")
    assert run.returncode == 1
    assert "ln_linear_bwd_kernel is not implemented yet" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert PUZZLE.notebook.read_bytes() == before


@pytest.mark.parametrize("flag", ["--unfused", "--fused", "--backward"])
def test_each_part_flag_checks_its_own_kernels(flag):
    run = checker("p22", flag, "--solution", "--backend", "interpreter")
    assert run.returncode == 0, run.stdout
    titles = {"--unfused": "Unfused Forward", "--fused": "Fused Forward", "--backward": "Backward Pass"}
    assert f"{titles[flag]} Test Summary" in run.stdout
    assert sum(f"{t} Test Summary" in run.stdout for t in titles.values()) == 1


def test_list_and_unknown_puzzle():
    assert "p22" in checker("--list").stdout
    assert checker("p99").returncode == 2


def test_notebook_stubs_are_the_solution_signatures():
    assert stubs.differences(PUZZLE) == []


def _solution_by_kernel() -> list[str]:
    """The solution cut into one cell per kernel; helper functions go into the first cell."""
    text = PUZZLE.solution.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    segments = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            segments[node.name] = "".join(lines[first - 1:node.end_lineno])
    kernels = PUZZLE.kernel_names
    helpers = [code for name, code in segments.items() if name not in kernels]
    return ["\n\n".join(helpers + [segments[kernels[0]]])] + [segments[k] for k in kernels[1:]]


def test_notebook_with_the_solution_in_its_kernel_cells_passes(tmp_path):
    """The notebook's own structure (tags, order, prelude) carries the solution to a pass."""
    notebook = json.loads(PUZZLE.notebook.read_text(encoding="utf-8"))
    cells = stubs.kernel_cells(notebook)
    for cell, code in zip(cells, _solution_by_kernel(), strict=True):
        cell["source"] = code
    path = tmp_path / "solved.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    run = checker("p22", "--notebook", str(path), "--backend", "interpreter")
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("✅ 13/13 cases correct") == 3


def test_notebooks_are_committed_without_outputs():
    for path in (REPO_ROOT / "puzzles").glob("*.ipynb"):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        for cell in notebook["cells"]:
            if cell["cell_type"] == "code":
                assert not cell.get("outputs") and cell.get("execution_count") is None, path.name


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
    assert (diagonal["grad_input"] - truth["grad_input"]).abs().max() > 0.1


def test_every_bug_variant_differs_from_the_truth():
    """A variant equal to the truth would hand out hints for nothing (a variance near eps shows all)."""
    x, gamma, beta, w, bias, dy = _random_problem(mean=3.0, spread=0.003)
    truth = formulas.autograd_reference(x, gamma, beta, w, bias, dy, 1e-5)
    for name, variant in formulas.bug_variants(x, gamma, beta, w, bias, dy, 1e-5, (16,)).items():
        assert any((variant[k] - truth[k]).abs().max() > 1e-3 for k in truth), name
