"""Turn a wrong output into the likely reason: the hints a teacher would give.

Per output: never-written elements, a match with a known-bug variant the puzzle computed, an
accumulated gradient that holds one row's share (overwritten, not accumulated) or only part of
the sum (lost updates).
Hints across cases live in diagnose_summary.
"""
from __future__ import annotations

import torch

from checker.compare import Comparison, absolute_tolerance, matches
from checker.spec import Output, Puzzle, Reference, Tolerance

ATOMIC_HINT = ("Every program must add its share: use tl.atomic_add on the shared output "
               "(a plain load + add + store races between programs on a GPU).")


def _unwritten_hint(got: torch.Tensor, comparison: Comparison) -> str:
    if comparison.n_unwritten == comparison.n_total:
        return "never written: the kernel did not store to this output at all."
    hint = f"{comparison.n_unwritten} of {comparison.n_total} elements were never written"
    if got.dim() == 2:
        written_cols = (~torch.isnan(got)).any(dim=0).nonzero()
        first_missing = int(written_cols.max()) + 1 if written_cols.numel() else 0
        cols_missing = torch.isnan(got[:, first_missing:]).all()
        if 0 < first_missing < got.shape[1] and bool(cols_missing) and not torch.isnan(got[:, :first_missing]).any():
            # two designs reach every column: more programs along the row, or a loop over it
            return (f"{hint}: every column from {first_missing} on. No program stored past the first "
                    f"{first_missing} columns of a row: does the grid cover every block of columns, or "
                    f"does each program loop over the row in blocks?")
        rows_missing = torch.isnan(got).all(dim=1)
        if rows_missing.any() and not torch.isnan(got[~rows_missing]).any():
            rows = rows_missing.nonzero().reshape(-1).tolist()
            return f"{hint}: whole rows {rows[:6]}{'...' if len(rows) > 6 else ''} (a grid or row-mask problem?)."
    return hint + "."


def _share_hint(got: torch.Tensor, shares: torch.Tensor, touched: torch.Tensor, tol: Tolerance, scale: float,
                unit: str) -> str:
    """Does each element that sums several shares equal one single share? Then shares were
    overwritten, not summed."""
    m = shares.shape[0]
    counts = touched.sum(0)
    several = (counts >= 2).reshape(-1)   # an element with one share always equals it
    if m < 2 or not bool(several.any()):
        return ""
    flat_shares = shares.reshape(m, -1)[:, several]
    flat_touched = touched.reshape(m, -1)[:, several]
    flat = got.reshape(1, -1)[:, several]
    allowed = 4 * (absolute_tolerance(tol, scale / float(counts.max()) ** 0.5) + tol.rtol * flat_shares.abs())
    hits = ((flat - flat_shares).abs() <= allowed) & flat_touched   # [S, elements]
    if not bool(hits.any(dim=0).all()):
        return ""
    for row in range(m):
        if bool((hits[row] | ~flat_touched[row]).all()) and bool(flat_touched[row].all()):
            return (f"equals the share of {unit} {row} alone: the other {unit}s' contributions were overwritten "
                    f"or never added. " + ATOMIC_HINT)
    return (f"each element equals one {unit}'s share: programs overwrote each other instead of accumulating. "
            + ATOMIC_HINT)


def _empty_hint(got: torch.Tensor, ref: torch.Tensor, unit: str) -> str:
    """Elements no program added to (still exactly the zero they started at): which ones."""
    sizeable = ref.abs() > 1e-6 * float(ref.abs().max())
    empty = sizeable & (got.abs() <= 1e-6 * ref.abs())
    n_empty, n_sizeable = int(empty.sum()), int(sizeable.sum())
    if n_empty == 0:
        return ""
    if n_empty == n_sizeable:
        # no directive: a kernel that never adds and a formula whose every share is 0 here look alike
        return ("still exactly 0 everywhere, as the checker left it: nothing non-zero was added to it (no "
                "store or atomic reached it, or every share the kernel added was 0).")
    as_rows = lambda t: t.reshape(-1, t.shape[-1]) if t.dim() > 1 else t.reshape(1, -1)  # noqa: E731
    flat, unknown = as_rows(empty), as_rows(~sizeable)  # elements whose reference is ~0 say nothing
    start = int(flat.any(dim=0).nonzero().min())
    if start > 0 and bool((flat | unknown)[:, start:].all()) and not bool(flat[:, :start].any()):
        return (f"every element from column {start} on received nothing from any {unit}: only the first "
                f"{start} columns were handled. Does the grid cover every block of columns, or does each "
                f"program loop over the row in blocks?")
    if n_empty > n_sizeable // 4:
        return f"{n_empty} of {n_sizeable} elements received nothing from any {unit}."
    return ""


def _lost_hint(got: torch.Tensor, ref: torch.Tensor, shares: torch.Tensor, touched: torch.Tensor,
               tol: Tolerance, scale: float) -> str:
    """Lost updates have a signature: where every share of an element is the same (identical rows,
    constant inputs), a sum that lost updates holds a whole number k of shares, 1 <= k < n. A total
    that is merely off (a wrong formula, atomics everywhere) does not fit, and gets no such hint."""
    m = shares.shape[0]
    flat_shares = shares.reshape(m, -1)
    flat_touched = touched.reshape(m, -1)
    counts = flat_touched.sum(0)
    first = torch.where(flat_touched, flat_shares, torch.nan).nanmean(0)
    allowed = 4 * (absolute_tolerance(tol, scale / max(float(counts.max()), 1.0) ** 0.5) + tol.rtol * first.abs())
    equal = ((flat_shares - first).abs() <= allowed) | ~flat_touched
    flat_got, flat_ref = got.reshape(-1), ref.reshape(-1)
    wrong = (flat_got - flat_ref).abs() > 4 * (absolute_tolerance(tol, scale) + tol.rtol * flat_ref.abs())
    largest = float(torch.nan_to_num(first).abs().max())  # untouched elements have no share (NaN)
    keep = equal.all(0) & (counts >= 2) & (torch.nan_to_num(first).abs() > 1e-9 * max(largest, 1e-300)) & wrong
    if not bool(keep.any()):
        return ""
    k = flat_got[keep] / first[keep]
    whole = ((k - k.round()).abs() * first[keep].abs() <= allowed[keep]) & (k.round() >= 1) & (k.round() < counts[keep])
    if float(whole.double().mean()) < 0.9:
        return ""
    fraction = float((flat_got[keep] / flat_ref[keep]).median())
    return (f"about {fraction:.0%} of the expected total, and a whole number of equal shares: some programs' "
            f"additions were lost (overwritten by another program's read-modify-write). " + ATOMIC_HINT)


def _shape_or_dtype_hint(got: torch.Tensor, ref: torch.Tensor, scale: float, tol: Tolerance,
                         condition: float) -> str:
    """Right numbers, wrong layout (stored transposed) or squeezed through a 16-bit type."""
    if ref.dim() == 2 and ref.shape[0] > 1 and ref.shape[1] > 1:
        as_transposed = got.reshape(-1).reshape(ref.shape[1], ref.shape[0]).T
        if matches(as_transposed, ref, scale, tol, condition=condition):
            if ref.shape[0] == ref.shape[1]:
                return (f"the right numbers, transposed: element [i, j] was stored where [j, i] belongs. "
                        f"Element [i, j] goes to i * {ref.shape[1]} + j.")
            return (f"the right numbers in the wrong shape: stored as [{ref.shape[1]}, {ref.shape[0]}] "
                    f"(transposed) instead of {list(ref.shape)}. Element [i, j] goes to i * {ref.shape[1]} + j.")
    for dtype, bits in ((torch.bfloat16, 8), (torch.float16, 11)):
        # every value exactly representable in 16 bits, and within one 16-bit step of the truth
        # (a step, not half: the interpreter truncates where a GPU rounds to nearest)
        representable = bool((got.to(dtype).double() == got).all())
        close = bool(((got - ref).abs() <= 2.0 ** (1 - bits) * ref.abs() + absolute_tolerance(tol, scale, condition)).all())
        if representable and close and not bool((ref.to(dtype).double() == ref).all()):
            return (f"the values were rounded to {str(dtype).replace('torch.', '')} before the store, but this "
                    f"output is fp32: keep the fp32 value (no .to(...) to a 16-bit type).")
    return ""


def output_hint(puzzle: Puzzle, output: Output, got: torch.Tensor, reference: Reference, tol: Tolerance,
                comparison: Comparison) -> str:
    ref = reference.outputs[output.name]
    got = got.detach().double().cpu().reshape(ref.shape)
    scale = reference.scales[output.name]
    if comparison.n_unwritten:
        return _unwritten_hint(got, comparison)
    if not comparison.n_nonfinite:
        hint = _shape_or_dtype_hint(got, ref, scale, tol, reference.condition)
        if hint:
            return hint
    for pattern in puzzle.patterns:
        alternative = reference.alternatives.get(pattern.name, {}).get(output.name)
        # a variant that leaves this output right says nothing about why it is wrong
        if alternative is None or matches(alternative, ref, scale, tol, 1.0, reference.condition):
            continue
        if matches(got, alternative, scale, tol, condition=reference.condition):
            return pattern.hint
    if comparison.n_nonfinite:
        return (f"{comparison.n_nonfinite} elements are NaN or Inf, computed by the kernel: an overflow (exp of "
                f"a large number, a 16-bit type's range), a division by zero, the square root of a negative "
                f"number, or a load of garbage past the data?")
    if output.accumulated and output.name in reference.contributions:
        shares = reference.contributions[output.name].double()
        touched = reference.touched.get(output.name)
        if touched is None:
            touched = torch.ones_like(shares, dtype=torch.bool)
        if shares.shape[0] < 2:
            return ""
        unit = output.share_unit
        return (_empty_hint(got, ref, unit) or _share_hint(got, shares, touched, tol, scale, unit)
                or _lost_hint(got, ref, shares, touched, tol, scale))
    return ""
