"""Every equation the book prints is executed here against torch autograd, in float64.

The chapters label each display equation (``$$ ... $$ (eq-name)``); ``book/mathref.py`` maps
each label to a check.  These tests fail if a chapter gains an equation without a check, if a
check drifts from autograd, or if the Jacobian-diagonal formula (shown in chapter 5 as a trap)
stops being wrong.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
sys.path.insert(0, str(BOOK))

import mathref  # noqa: E402

MATH_CHAPTERS = sorted(p for p in BOOK.glob("0[3-79]_*.md"))
SHAPES = [(4, 8, 6), (3, 40, 5), (1, 5, 3), (16, 128, 12)]
SEEDS = [0, 1, 2]
TOL = 1e-12


def _display_math(text: str):
    """(body, label or None) for each $$ ... $$ block, and each {math} directive."""
    found = [(m.group(1), m.group(2)) for m in
             re.finditer(r"^\$\$\s*\n(.*?)\n\$\$[ \t]*(?:\((eq-[\w-]+)\))?[ \t]*$", text, re.S | re.M)]
    for m in re.finditer(r"```\{math\}\n(.*?)```", text, re.S):
        label = re.search(r":label:\s*(\S+)", m.group(1))
        found.append((m.group(1), label.group(1) if label else None))
    return found


def test_math_chapters_exist():
    assert [p.stem[:2] for p in MATH_CHAPTERS] == ["03", "04", "05", "06", "07", "09"]


@pytest.mark.parametrize("chapter", MATH_CHAPTERS, ids=lambda p: p.stem)
def test_every_display_equation_is_labelled_and_checked(chapter):
    text = chapter.read_text()
    blocks = _display_math(text)
    assert blocks, f"{chapter.name} shows no display equation"
    unlabelled = [body.strip()[:60] for body, label in blocks if not label]
    assert not unlabelled, f"{chapter.name}: display equations without a label: {unlabelled}"
    known = set(mathref.EQUATIONS) | set(mathref.WRONG_EQUATIONS)
    unchecked = [label for _, label in blocks if label not in known]
    assert not unchecked, f"{chapter.name}: equations with no check in book/mathref.py: {unchecked}"
    # $$ pairs must all be accounted for (an odd count means a block the regex did not parse)
    assert len(re.findall(r"^\$\$", text, re.M)) == 2 * len([b for b in blocks if "{math}" not in b[0]])


def test_every_check_is_used_by_a_chapter():
    labels = {label for ch in MATH_CHAPTERS for _, label in _display_math(ch.read_text())}
    assert set(mathref.EQUATIONS) <= labels, set(mathref.EQUATIONS) - labels
    assert set(mathref.WRONG_EQUATIONS) <= labels


@pytest.mark.parametrize("label", sorted(mathref.EQUATIONS))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("seed", SEEDS)
def test_equation_matches_autograd(label, shape, seed):
    M, H, N = shape
    err = mathref.EQUATIONS[label].check(mathref.make_inputs(M=M, H=H, N=N, seed=seed))
    assert err < TOL, f"{label} ({mathref.EQUATIONS[label].what}): max |formula - autograd| = {err:.2e}"


def test_layernorm_dx_full_vjp_matches_autograd_to_1e_15():
    """The issue's own example: float64, 4 x 8, random inputs."""
    torch.manual_seed(0)
    x, dz = torch.randn(4, 8, dtype=torch.float64), torch.randn(4, 8, dtype=torch.float64)
    gamma, beta = torch.ones(8, dtype=torch.float64), torch.zeros(8, dtype=torch.float64)
    ref = mathref.autograd_layernorm(x, gamma, beta, dz)["dx"]
    assert (mathref.ln_dx(dz, x, gamma) - ref).abs().max() < 1e-14


@pytest.mark.parametrize("seed", SEEDS)
def test_jacobian_diagonal_formula_is_wrong(seed):
    """The element-wise (diagonal-only) dx must stay far from autograd, while the full
    vector-Jacobian product matches it."""
    i = mathref.make_inputs(M=4, H=8, seed=seed)
    assert mathref.diagonal_trap_error(i) > 0.1
    assert mathref.check_ln_dx(i) < TOL


def test_jacobian_diagonal_formula_is_wrong_even_for_wide_rows_when_dz_has_a_mean():
    i = mathref.make_inputs(M=4, H=512, seed=0)
    i["dz"] = torch.ones_like(i["dz"])
    assert mathref.diagonal_trap_error(i) > 0.1


def test_wrong_equations_are_all_wrong():
    for label, err in mathref.WRONG_EQUATIONS.items():
        assert err(mathref.make_inputs(M=4, H=8)) > 0.1, label


def test_diagonal_formula_is_the_jacobian_diagonal():
    """eq-ln-dx-diagonal really is diag(J) * dz: the trap is the diagonal, not some other slip."""
    i = mathref.make_inputs(M=1, H=8)
    J = mathref.ln_jacobian_row(i["x"][0], i["gamma"])
    assert torch.allclose(torch.diagonal(J) * i["dz"][0],
                          mathref.ln_dx_diagonal(i["dz"], i["x"], i["gamma"])[0], atol=1e-14)


def test_leaked_padding_is_exactly_the_extra_mu_squared_terms():
    i = mathref.make_inputs(M=3, H=40)
    x = i["x"]
    extra = mathref.variance_with_leaked_padding(x, 64) - x.var(-1, unbiased=False, keepdim=True)
    assert torch.allclose(extra, 24 * x.mean(-1, keepdim=True) ** 2 / 40, atol=1e-12)
