"""Known-bug variants: a spec declares a mistake with the output it would give (variant(name, cause,
hint, compute)); a wrong output that reproduces one, nearer it than the answer by a clear margin,
and not contradicted by the case's other outputs, gets its hint."""
from __future__ import annotations

import torch

from checker.diagnosis.model import Diagnosis, asking
from checker.evidence.compare import absolute_tolerance, matches
from checker.puzzle.model import Output, Puzzle, Reference, Tolerance
from checker.tensors import rms

VARIANT_SHAPE = 0.05  # a reproduced variant is within 5 % of its values (RMS): bf16 rounding is ~0.4 %


FEW = 8  # an output of fewer elements (a loss) can sit near a variant by chance


def known_bugs(puzzle: Puzzle, output: Output, got: torch.Tensor, reference: Reference, tol: Tolerance,
                   others: dict | None = None) -> list:
    """The known bugs whose output this one reproduces (a variant that leaves this output right
    says nothing about why it is wrong). others: the case's other outputs, name -> (got, tolerance):
    an output matches a variant only where the variant also fits the other outputs it predicts (a
    kernel whose other outputs are wrong otherwise has another bug, or a different one; and one
    number near a variant's, a scalar loss, is no evidence by itself)."""
    ref = reference.outputs[output.name]
    scale = reference.scales[output.name]
    found = []
    for pattern in puzzle.patterns:
        alternative = reference.alternatives.get(pattern.name, {}).get(output.name)
        if alternative is None or matches(alternative, ref, scale, tol, 1.0, reference.condition):
            continue
        if contradicted(reference.alternatives.get(pattern.name, {}), output.name, reference, others or {},
                        small_only=ref.numel() >= FEW):
            continue  # the variant predicts another output that came out otherwise: not this bug alone
        if fits(got, alternative, ref, scale, tol, reference.condition):
            found.append(pattern)
    return found


REFUTES = 20.0  # how much further from a variant than the variant is from the answer rules it out


def refuted(puzzle: Puzzle, output: Output, got: torch.Tensor, reference: Reference, tol: Tolerance) -> list[str]:
    """The known bugs this case rules out for this output: their output differs from the answer here,
    and this one is not near it. A later case whose output happens to sit near one of them (a
    confident row, where the softmax's sum is 1 and leaving it out changes nothing) is then no
    evidence of it: the kernel is one kernel, and here it was not that bug."""
    ref = reference.outputs[output.name].double()
    scale = reference.scales[output.name]
    got = got.detach().double().cpu().reshape(ref.shape)
    if not torch.isfinite(got).all():
        return []  # NaN fits nothing: it refutes nothing either
    found = []
    for pattern in puzzle.patterns:
        alternative = reference.alternatives.get(pattern.name, {}).get(output.name)
        if (alternative is None or not torch.isfinite(alternative).all()
                or matches(alternative, ref, scale, tol, 1.0, reference.condition)
                or matches(got, alternative, scale, tol, condition=reference.condition)):
            continue
        alternative = alternative.double().cpu().reshape(ref.shape)
        # a variant is a model of the bug, computed its own way, and may miss its output by a few
        # times its own size (p28's tile maxima: 5-8 times); an output off by far more than the
        # variant changes the answer (p27's p rounded to bf16: 1,000 times and more) is another bug
        if rms(got - alternative) > REFUTES * rms(alternative - ref):
            found.append(pattern.name)
    return found


def fits(got: torch.Tensor, alternative: torch.Tensor, ref: torch.Tensor, scale: float, tol: Tolerance,
         condition: float) -> bool:
    """Does a wrong output reproduce a hypothesis (a known bug's output, a recomputed answer)?
    Within the tolerance of it, nearer it than the answer by a clear margin (a hypothesis only a
    little way from the answer would otherwise match any kernel that is a little off: bf16
    rounding), and near its own numbers, not only its size (where the tolerance is wide, an
    ill-conditioned case, two outputs near 0 "match" whatever made them small)."""
    if rms(alternative) < 1e-3 * max(scale, 1e-30):
        return False  # a hypothesis of (near) zeros: a kernel that stored nothing useful "fits" it
    return (matches(got, alternative, scale, tol, condition=condition)
            and _distance(got, alternative, ref, scale, tol, condition)
            < 0.25 * _distance(got, ref, ref, scale, tol, condition)
            and rms(got - alternative.double().reshape(got.shape)) <= VARIANT_SHAPE * rms(alternative))


def contradicted(prediction: dict, own: str, reference: Reference, others: dict, small_only: bool = False) -> bool:
    """Does some other output of the case differ from what a hypothesis predicts for it
    (prediction: output name -> its values under the hypothesis)? small_only: ask only of outputs
    of a few numbers (a loss beside a gradient): a variant may model a large side output only
    roughly (p31's base-2 scores: o exactly, lse not)."""
    for other, alternative in prediction.items():
        if other == own or other not in others or others[other][0] is None:
            continue
        if small_only and reference.outputs[other].numel() >= FEW:
            continue
        got, tol = others[other]
        ref = reference.outputs[other]
        if got.numel() != ref.numel():
            continue
        scale = reference.scales[other]
        if not matches(got, alternative, scale, tol, condition=reference.condition):
            return True
        # the variant leaves this output right, and it came out wrong: a bug the variant is not
        # (a near-zero loss sits within the variant's looser slack of almost anything)
        if (matches(alternative, ref, scale, tol, 1.0, reference.condition)
                and not matches(got, ref, scale, tol, 1.0, reference.condition)):
            return True
    return False


def _distance(got: torch.Tensor, target: torch.Tensor, ref: torch.Tensor, scale: float, tol: Tolerance,
              condition: float) -> float:
    """The largest difference from target, in units of the verdict's tolerance."""
    allowed = absolute_tolerance(tol, scale, condition) + tol.rtol * ref.abs()
    diff = (got - target.double().reshape(got.shape)).abs()
    # exact outputs (counts) allow 0: any difference is infinitely many tolerances, none is 0
    return float(torch.where(diff == 0, 0.0, diff / allowed).max())


def combine(variants: list, share: Diagnosis) -> Diagnosis:
    """One variant and nothing else fits: its hint. Several explanations fit the same numbers
    (two variants, or a variant and a sharing signature that names another cause): say so, and ask
    about each. A sharing observation that names no cause only describes what the variant explains."""
    explanations = [(p.hint, p.diagnosis.classes) for p in variants]
    if share and not {c for p in variants for c in p.diagnosis.classes} & set(share.classes):
        explanations.append((share.text, share.classes))
    texts = list(dict.fromkeys(text for text, _ in explanations))
    causes = tuple(dict.fromkeys(cause for _, classes in explanations for cause in classes if cause))
    if len(texts) == 1:
        # one variant alone: its own diagnosis; the same words from several: ask about their causes
        return variants[0].diagnosis if len(variants) == 1 else asking(texts[0], *causes, code="variant.several")
    lines = " Or: ".join(texts)
    return asking(f"these numbers fit more than one known mistake. {lines}", *causes, code="variant.several")
