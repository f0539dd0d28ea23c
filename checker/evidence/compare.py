"""Compare one output with its reference: how far off, how many elements, which ones."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch

from checker.puzzle.model import Tolerance
from checker.tensors import unravel

SCALE_FLOOR = 1e-3  # an output whose reference is all zeros still gets a (tiny) tolerance
SHOW_INDICES = 5


@dataclass
class Comparison:
    label: str
    ok: bool
    max_diff: float             # max |out - ref| over finite elements
    worst_ratio: float          # max |out - ref| / allowed: <= 1 passes
    n_bad: int
    n_total: int
    n_unwritten: int = 0        # still NaN from the checker's fill where the reference is finite
    n_nonfinite: int = 0        # NaN/Inf the kernel produced
    first_bad: list = field(default_factory=list)   # [(index tuple, expected, got)]
    allowed: float = 0.0        # atol * scale: the absolute part of the tolerance
    rtol: float = 0.0           # the relative part: allowed + rtol * |expected|
    typical_error: float = 0.0  # median |out - ref| / |ref| over the wrong finite elements: how far off,
                                # in the values' own terms (a value rounded to bf16 is off by ~2^-9 of itself)

    def to_json(self) -> dict:
        return asdict(self)


def absolute_tolerance(tol: Tolerance, scale: float, condition: float = 1.0) -> float:
    return (tol.atol + tol.per_condition * condition) * max(scale, SCALE_FLOOR)


def compare(label: str, out: torch.Tensor, ref: torch.Tensor, scale: float, tol: Tolerance,
            unwritten: "torch.Tensor | None", condition: float = 1.0, rows: "int | torch.Tensor" = 0) -> Comparison:
    """unwritten: which elements still hold the checker's fill (None: the output was not poisoned).
    rows: how many shares were summed into each element (0 for outputs that are not accumulated;
    a tensor of ref's shape where elements sum different numbers of shares)."""
    got = out.detach().double().cpu().reshape(ref.shape)
    absolute = absolute_tolerance(tol, scale, condition)
    allowed = absolute + (tol.rtol + tol.per_row * rows) * ref.abs()
    diff = (got - ref).abs()
    nonfinite = ~torch.isfinite(got)
    unwritten = (unwritten.reshape(ref.shape) if unwritten is not None
                 else torch.zeros(ref.shape, dtype=torch.bool))
    bad = nonfinite | (diff > allowed)
    finite = diff[~nonfinite]
    ratio = (diff / allowed)[~nonfinite]
    wrong = bad & ~nonfinite
    # |ref| floored at the absolute tolerance: an element expected near 0 does not make the ratio blow up
    typical = float((diff[wrong] / torch.maximum(ref.abs()[wrong], torch.full_like(ref[wrong], max(absolute, 1e-30)))).median()) \
        if bool(wrong.any()) else 0.0
    flat_bad = torch.nonzero(bad.reshape(-1)).reshape(-1)[:SHOW_INDICES].tolist()
    first = [(unravel(i, tuple(ref.shape)), float(ref.reshape(-1)[i]), float(got.reshape(-1)[i])) for i in flat_bad]
    n_unwritten = int(unwritten.sum())
    # with NaN/Inf present the largest difference is not a number: say so rather than print 0
    max_diff = float("nan") if bool(nonfinite.any()) else (float(finite.max()) if finite.numel() else 0.0)
    return Comparison(label=label, ok=not bool(bad.any()), max_diff=max_diff,
                      worst_ratio=float(ratio.max()) if ratio.numel() else float("inf"), n_bad=int(bad.sum()),
                      n_total=ref.numel(), n_unwritten=n_unwritten,
                      n_nonfinite=int(nonfinite.sum()) - n_unwritten, first_bad=first, allowed=absolute,
                      rtol=float(tol.rtol + tol.per_row * (float(rows.max()) if torch.is_tensor(rows) else rows)),
                      typical_error=typical)


def matches(out: torch.Tensor, ref: torch.Tensor, scale: float, tol: Tolerance, slack: float = 4.0,
            condition: float = 1.0) -> bool:
    """Close to a known-bug variant (a little looser than the verdict's tolerance)."""
    got = out.detach().double().cpu().reshape(ref.shape)
    if not torch.isfinite(got).all() or not torch.isfinite(ref).all():
        return False
    allowed = slack * (absolute_tolerance(tol, scale, condition) + tol.rtol * ref.abs())
    return bool(((got - ref).abs() <= allowed).all())
