"""What a wrong output's error looks like when its values are finite and in place: a factor (one
for the whole output, or one per row or per column), a sign reversed, or an error confined to one
slice of the output (half of the last dimension, some heads) while the rest is right.

These are formula slips, told apart by the shape of got / expected: a per-row factor is a row's
normalisation (1/l, 1/n) missing or applied twice; a factor that is a size, its square root or
log2(e) names itself; an error confined to the first half of the last dimension points at the code
that computes that half. Each fits the output within the verdict's tolerance, or says nothing.
"""
from __future__ import annotations

import math

import torch

from checker.diagnosis.model import NO_HINT, Diagnosis, asking, certain
from checker.evidence.compare import absolute_tolerance
from checker.puzzle.model import Case, Tolerance

LOG2E = 1.0 / math.log(2.0)
PER_FACTOR = 8   # numbers behind each row's (or column's) factor, at least


def _named(c: float, case: Case | None) -> list[str]:
    """What a factor c is, among the case's sizes and parameters, their ratios and square roots, and
    log2(e) (exp2 without the scores brought to base 2, or brought twice)."""
    close = lambda x: x != 0 and abs(x - c) < 1e-6 * abs(c)  # noqa: E731
    known = {}
    if case is not None:
        known = {**case.sizes, **{k: v for k, v in case.params.items() if isinstance(v, int) and not isinstance(v, bool)}}
    found = ([a for a, x in known.items() if close(x)] + [f"1 / {a}" for a, x in known.items() if x and close(1 / x)]
             + [f"√{a}" for a, x in known.items() if x >= 4 and close(math.sqrt(x))]
             + [f"1 / √{a}" for a, x in known.items() if x >= 4 and close(1 / math.sqrt(x))]
             + [f"{a} / {b}" for a, x in known.items() for b, y in known.items() if a != b and y and close(x / y)])
    found += [name for name, x in (("log2(e) = 1 / ln 2", LOG2E), ("ln 2", math.log(2.0))) if close(x)]
    if case is not None:  # the number of blocks a size takes: a value added once per block, not once
        for size, param in case.blocked.items():
            block, n = case.block_of(size), case.every_size.get(size)
            if block and n and -(-n // block) > 1 and close(-(-n // block)):
                found.insert(0, f"the number of {param} blocks {size} = {n} takes")
    return found


def ratio_hint(got: torch.Tensor, ref: torch.Tensor, case: Case | None) -> Diagnosis:
    """Every element off by the same factor: a constant or a scale in the formula."""
    sizeable = ref.abs() > 1e-3 * float(ref.abs().max())
    if int(sizeable.sum()) == 0:
        return NO_HINT
    values = ref[sizeable]
    few = int(sizeable.sum()) < 4
    if not few and float(values.std()) <= 1e-3 * float(values.abs().mean()):
        return NO_HINT  # equal values (constant inputs): every mistake looks like a constant factor
    ratio = got[sizeable] / values
    c = float(ratio.median())
    if not (abs(c - 1) > 1e-3 and bool(((ratio - c).abs() <= 1e-4 * abs(c) + 1e-12).all())) or c == 0:
        return NO_HINT
    found = _named(c, case)
    # a factor of two (a count doubled or halved, a term added twice) is the commonest slip, and any size
    # or parameter that is 2 matches it by chance: none is named for it (a count of blocks still is: a
    # value added once per block is what the hint below asks)
    halved_or_doubled = any(abs(abs(c) - k) < 1e-6 * k for k in (2.0, 0.5))
    if halved_or_doubled:
        found = [name for name in found if name.startswith("the number of ")]
    whole = next((f"{k:g}" for k in (round(c), 1 / round(1 / c) if abs(c) < 1 else None) if k and abs(k - c) < 1e-6 * abs(c)), "")
    if not found and (few or not (whole and (abs(c) >= 1 or halved_or_doubled))):
        return NO_HINT  # a factor nothing names is no evidence of a constant in the formula
    names = f" (= {found[0]})" if found else ""
    if found and found[0].startswith("the number of "):
        return asking(f"every element is {c:.6g} times the expected value{names}: is a value added once per block "
                      f"where it belongs once — a term inside the loop over the blocks that should be outside it, or "
                      f"a sum over blocks that should be taken once?", "loop", "accumulate", "formula",
                      code="values.factor_blocks", data={"factor": c})
    if c == -1:
        return certain("every element is the expected value with its sign reversed: a sign in the formula (a − b "
                       "for b − a, a term added that should be subtracted).", "formula", code="values.sign")
    return asking(f"every element is {c:.6g} times the expected value{names}: a constant factor. A sum divided by the "
                  f"wrong count, a scale applied twice or not at all, a loop that covers the wrong range, or a sum "
                  f"started over where it should carry on (only the last of several terms kept)? Or, where the terms "
                  f"of a sum are alike, a mask that leaves some of them out, or row offsets that have programs take "
                  f"some of them twice and others never (a first row computed with the wrong block size)?",
                  "formula", "loop", "accumulate", "mask", "address", code="values.factor")


def row_factor_hint(got: torch.Tensor, ref: torch.Tensor, tol: Tolerance, scale: float, condition: float,
                    label: str, dtype: str = "float32") -> Diagnosis:
    """Each row (along the last dimension) off by a factor of its own, the factors differing from row
    to row: a per-row normalisation. Checked the other way too (each column its own factor). In a
    16-bit case (dtype), rows that are all short (factors between 0 and 1) are also what a running sum
    kept in that dtype leaves, once the shares added to it fall below half of its step: the hint asks
    about that too."""
    if ref.dim() < 2 or ref.shape[-1] < 2:
        return NO_HINT
    rows = ref.reshape(-1, ref.shape[-1])
    seen = got.reshape(rows.shape)
    for axis, what in ((1, "row"), (0, "column")):
        factor = _factors(seen, rows, axis)
        if factor is None:
            continue
        predicted = rows * (factor[:, None] if axis == 1 else factor[None, :])
        allowed = absolute_tolerance(tol, scale, condition) + tol.rtol * rows.abs()
        off = float(((seen - predicted).abs() / allowed).max())
        if off > 1.0 or off > 0.25 * float(((seen - rows).abs() / allowed).max()):
            continue  # the factors must explain the error, not merely sit inside the tolerance
        if float((factor - 1).abs().max()) < 0.02:
            continue  # factors within 2 % of 1: rounding (a 16-bit product), not a normalisation
        # a factor of 1 is a right row, one of 0 a row left empty: no scale. Most rows must be scaled
        scaled = factor[((factor - 1).abs() > 0.02) & (factor.abs() > 0.02)]
        if scaled.numel() < 2 or 2 * scaled.numel() < factor.numel():
            continue
        shown = ", ".join(f"{float(f):.3g}" for f in scaled[:4]) + (", …" if scaled.numel() > 4 else "")
        # a per-row scale is a per-row statistic gone wrong: its formula, its running value, lanes let
        # into it or left out of it, or the statistic read from another row
        # in a 16-bit case a running sum kept in that dtype stops taking in shares below half its step: whole
        # rows come out short by the shares they lost (p31's running output kept in bf16), the same pattern.
        # Lost shares only shorten a row: a row scaled up, or turned over, is no rounding's doing; and rows
        # lose different shares: factors that agree to within two bf16 steps are one factor, rounded
        short = (bool(((scaled > 0) & (scaled < 1)).all())
                 and float(factor.max() - factor.min()) > 2 ** -7 * float(factor.abs().max()))
        narrow = (f" Or, this being a {dtype} case, is a running sum kept in {dtype}? Once it is large, the small "
                  f"shares added to it fall below half of its step and are lost; the float32 cases tell that "
                  f"apart from a wrong normalisation." if dtype != "float32" and short else "")
        return asking(f"each {what} of `{label}` is its expected {what} times a factor of its own (× {shown}): a "
                      f"per-{what} scale. Is a normalisation missing or applied twice — a division by the {what}'s "
                      f"sum or count (1/l, 1/n)? Is the running value it divides by carried wrongly from block to "
                      f"block? Does the {what}'s statistic take in lanes it should not (a mask, what padded lanes "
                      f"load) or miss some (a loop's range), or is it read from another {what} (its offset)?{narrow}",
                      "formula", "accumulate", "mask", "fill", "loop", "address", *(("precision",) if narrow else ()),
                      code=f"values.{what}_factor", data={"factors": shown})
    return NO_HINT


def _factors(got: torch.Tensor, ref: torch.Tensor, axis: int) -> torch.Tensor | None:
    """Per row (axis 1) or column (axis 0), the least-squares factor got ≈ f · ref; None unless the
    factors differ from one another and from 1 (one factor for all is ratio_hint's)."""
    if ref.shape[1 - axis] < 2 or ref.shape[axis] < PER_FACTOR:
        return None  # a factor fitted to a few numbers fits almost anything
    norm = (ref * ref).sum(axis)
    if bool((norm == 0).any()):
        return None
    factor = (got * ref).sum(axis) / norm
    spread = float(factor.max() - factor.min())
    if spread <= 1e-3 * float(factor.abs().max()) or bool(((factor - 1).abs() < 1e-6).all()):
        return None
    return factor


def slice_hint(got: torch.Tensor, ref: torch.Tensor, tol: Tolerance, scale: float, condition: float,
               label: str, dims: tuple[str, ...] = (), case: Case | None = None) -> Diagnosis:
    """The wrong elements fill exactly one half of one dimension (RoPE's two halves) and every other
    element is right: where in the kernel to look. Where the sign is reversed on exactly the wrong
    part (any contiguous part of a dimension), that too: a sign is no block's doing."""
    allowed = absolute_tolerance(tol, scale, condition) + tol.rtol * ref.abs()
    wrong = (got - ref).abs() > allowed
    if not bool(wrong.any()) or bool(wrong.all()):
        return NO_HINT
    for dim in reversed(range(ref.dim())):
        n = ref.shape[dim]
        if n < 2:
            continue
        along = wrong.transpose(0, dim).reshape(n, -1)
        hit = along.any(1)
        if not bool(hit.any()) or bool(hit.all()):
            continue
        where = hit.nonzero().reshape(-1)
        lo, hi = int(where.min()), int(where.max()) + 1
        if not bool(hit[lo:hi].all()):
            continue  # not one contiguous part
        name = dims[dim] if dim < len(dims) else f"dimension {dim}"
        if dim >= len(dims) or case is not None and f"wide_{name}" in case.tags:
            continue  # a dimension walked in blocks: its halves may be blocks, and loops decide those
        half = lo == 0 and 2 * hi == n or hi == n and 2 * lo == n
        part = (f"the first half of {name} (indices 0 to {hi - 1} of {n})" if lo == 0 and 2 * hi == n else
                f"the second half of {name} (indices {lo} to {n - 1} of {n})" if hi == n and 2 * lo == n else
                f"indices {lo} to {hi - 1} of {name} ({n})")
        region = [slice(None)] * ref.dim()
        region[dim] = slice(lo, hi)
        g, r = got[tuple(region)], ref[tuple(region)]
        a = allowed[tuple(region)]
        if bool(((g + r).abs() <= a).all()):
            return certain(f"only {part} of `{label}` is wrong, and there its sign is reversed; the rest is right. "
                           f"Look at the sign of the formula that computes that part.", "formula",
                           code="values.slice_sign", data={"dim": name, "from": lo, "to": hi})
        if not half:
            # any other part may be a block's (a last partial block, a tile): masks and loops decide
            # those as often as formulas do, and its place alone does not say which
            continue
        return asking(f"only {part} of `{label}` is wrong; the rest is right. Look at the code that computes that "
                      f"part: its formula (a sign, a term, an operand), the offsets it loads and stores at, and "
                      f"what it carries from one block to the next (a running value rescaled, a sum added to). "
                      f"Or is a size it divides by written in as a number?",
                      "formula", "address", "accumulate", "hardcoded", code="values.slice",
                      data={"dim": name, "from": lo, "to": hi})
    return NO_HINT

