"""Turn a wrong output into the likely reason: the hints a teacher would give, each a hypothesis
checked against the evidence (checker/diagnosis/model.py).

Per output, in order: never-written elements (what is missing, and the questions that raises);
the right numbers stored transposed or rounded to 16 bits; the right values at the wrong places
(a permutation or a shifted copy: addresses); a known-bug variant the puzzle computed, when no
other explanation fits as well; NaN or Inf the kernel computed; for accumulated outputs the
signatures of lost or overwritten shares, worded by what the kernel did (atomics or plain stores);
and, when nothing is singled out, what the wrong elements have in common.
Hints across cases live in diagnose_summary.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from checker.evidence.compare import Comparison, absolute_tolerance, matches
from checker.tensors import unravel
from checker.diagnosis.model import NO_HINT, Diagnosis, asking, certain, observed
from checker.diagnosis.degenerate import degenerate, degenerate_hint
from checker.diagnosis.factors import ratio_hint, row_factor_hint, slice_hint
from checker.diagnosis.operands import Operands, operand_hint
from checker.diagnosis.undefined_lanes import lanes_reached, lanes_suspected
from checker.diagnosis.variants import combine, known_bugs
from checker.puzzle.model import Case, Output, Puzzle, Reference, Tolerance
from checker.words import counted

ATOMIC_HINT = ("Every program must add its share: use tl.atomic_add on the shared output "
               "(a plain load + add + store races between programs on a GPU).")


@dataclass
class Evidence:
    """What the run saw besides the values. kinds: per output, what the kernels did to it
    ("load", "store", "atomic"), from the sanitizer (None where it did not run: a GPU, --no-sanitize).
    uses_atomics: the kernels' text calls tl.atomic_* (any backend). poison_read: outputs the kernels
    read while they still held the checker's NaN fill, with the line. sanitized: the sanitizer ran, so
    an access outside a tensor would have been stopped. input_peak: how large this case's inputs are
    (NaN from inputs far from zero points at an overflow, not at a mask). unwritten: outputs of the
    part with elements still holding the fill after the run, and how many (a kernel that reads one
    of them spreads its NaN, with or without the sanitizer watching). unfilled: the kernels' loads
    with a mask and no other=, by line (checker/diagnosis/undefined_lanes.py)."""
    kinds: dict[str, set[str]] | None = None
    uses_atomics: bool = False
    poison_read: dict[str, str] = field(default_factory=dict)
    sanitized: bool = False
    input_peak: float = 0.0    # the largest |value| among the case's floating-point inputs
    unwritten: dict[str, int] = field(default_factory=dict)
    # the kernels' text writes −inf (a load's other=, a running max's start, tl.full): a lane that
    # holds −inf and has it subtracted from itself computes −inf − (−inf) = NaN
    minus_inf: bool = False
    unfilled: list[tuple[str, str]] = field(default_factory=list)

    def atomics_on(self, name: str) -> bool | None:
        """Did the kernels add into this output with atomics? None if unknown."""
        if self.kinds is not None and self.kinds.get(name):
            return "atomic" in self.kinds[name]
        return None if self.uses_atomics else False

    def plain_stores_on(self, name: str) -> bool:
        return self.kinds is not None and "store" in self.kinds.get(name, set())


# ---------------------------------------------------------------------------------------------
# Never written


def _unexplained(count: int, case: Case | None) -> bool:
    """A count of elements that no size or block parameter of the case accounts for (nor any
    multiple of a block): a number written into the kernel?"""
    if case is None:
        return False
    known = [v for v in {**case.sizes, **case.params}.values() if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    return bool(known) and not any(count == v or count % v == 0 for v in known if v > 1) and count not in known


def _unwritten_hint(got: torch.Tensor, comparison: Comparison, case: Case | None = None) -> Diagnosis:
    if comparison.n_unwritten == comparison.n_total:
        return asking("never written: no store reached this output (still the checker's NaN fill). Is the store "
                      "there, through this output's pointer; is it reached (a loop that never runs?); and does its "
                      "mask let any lane through?", "address", "loop", "mask", code="values.unwritten")
    hint = (f"{comparison.n_unwritten} of {counted(comparison.n_total, 'element')} "
            f"{'was' if comparison.n_unwritten == 1 else 'were'} never written")
    if got.dim() == 2:
        written_cols = (~torch.isnan(got)).any(dim=0).nonzero()
        first_missing = int(written_cols.max()) + 1 if written_cols.numel() else 0
        cols_missing = torch.isnan(got[:, first_missing:]).all()
        if 0 < first_missing < got.shape[1] and bool(cols_missing) and not torch.isnan(got[:, :first_missing]).any():
            # two designs reach every column: more programs along the row, or a loop over it
            return asking(f"{hint}: every column from {first_missing} on. No program stored past the first "
                          f"{_columns(first_missing)} of a row: does each program move to its own block of "
                          f"columns (tl.program_id), or loop over the whole row in blocks, and does the mask let "
                          f"the last block through?", "address", "loop", "mask", code="values.unwritten")
        rows_missing = torch.isnan(got).all(dim=1)
        if rows_missing.any() and not torch.isnan(got[~rows_missing]).any():
            rows = rows_missing.nonzero().reshape(-1).tolist()
            return asking(f"{hint}: whole rows {rows[:6]}{'...' if len(rows) > 6 else ''}. Does every row have a "
                          f"program that stores it (the row offset from tl.program_id), and does the row mask let "
                          f"it through?", "address", "mask", "loop", code="values.unwritten")
    flat = torch.isnan(got.reshape(-1))
    first = int(flat.nonzero().min())
    if bool(flat[first:].all()):
        if _unexplained(first, case):
            return asking(f"{hint}: every element from {first} on, and {first} is none of this case's sizes or "
                          f"blocks: is a size hard-coded (a number written into the kernel)? Otherwise: do the blocks "
                          f"(or the loop) reach the end, and does the last block's mask let its lanes through?",
                          "hardcoded", "address", "loop", "mask", code="values.unwritten")
        return asking(f"{hint}: every element from {first} on. Do the programs' blocks (or the loop) reach the "
                      f"end, and does the last block's mask let its lanes through?", "address", "loop", "mask", code="values.unwritten")
    return asking(hint + ". Which program should store them: are its offsets right, and does its mask let "
                         "them through?", "address", "mask", "loop", code="values.unwritten")


# ---------------------------------------------------------------------------------------------
# Accumulated outputs: lost and overwritten shares


def _atomic_advice(evidence: Evidence, name: str) -> tuple[str, str, tuple[str, ...]]:
    """(advice, cause, candidates) for shares that did not all arrive, by what the kernel did."""
    if evidence.kinds and {"atomic_xchg"} & evidence.kinds.get(name, set()) and \
            not {"atomic_add"} & evidence.kinds.get(name, set()):
        return ("The kernel puts its shares in with tl.atomic_xchg, which replaces what is there: each share "
                "overwrites the ones before it. Add them with tl.atomic_add.", "atomic", ())
    if evidence.atomics_on(name) and not evidence.plain_stores_on(name):
        return ("The kernel does add into it with atomics, so the shares went astray before that: do the atomic's "
                "offsets put each share where it belongs, does every program add all of its rows (an accumulator "
                "overwritten in a loop?), and does the atomic's mask let every lane through?", "",
                ("address", "accumulate", "mask"))
    if evidence.atomics_on(name) and evidence.plain_stores_on(name):
        return ("The kernel adds into it with atomics but also writes it with a plain tl.store: the store "
                "overwrites what other programs added. Add every share with tl.atomic_add.", "atomic", ())
    if evidence.atomics_on(name) is None:
        return ("If the programs add their shares with a plain load + add + store, use tl.atomic_add (those race "
                "on a GPU); if they already use atomics, does every program add all of its rows (an accumulator "
                "overwritten in a loop?), and does the atomic's mask let every lane through?", "",
                ("atomic", "accumulate"))
    return ATOMIC_HINT, "atomic", ()


def _share_hint(got: torch.Tensor, shares: torch.Tensor, touched: torch.Tensor, tol: Tolerance, scale: float,
                unit: str, evidence: Evidence, name: str) -> Diagnosis:
    """Does each element that sums several shares equal one single share? Then shares were
    overwritten, not summed."""
    m = shares.shape[0]
    counts = touched.sum(0)
    several = (counts >= 2).reshape(-1)   # an element with one share always equals it
    if m < 2 or not bool(several.any()):
        return NO_HINT
    flat_shares = shares.reshape(m, -1)[:, several]
    flat_touched = touched.reshape(m, -1)[:, several]
    flat = got.reshape(1, -1)[:, several]
    allowed = 4 * (absolute_tolerance(tol, scale / float(counts.max()) ** 0.5) + tol.rtol * flat_shares.abs())
    hits = ((flat - flat_shares).abs() <= allowed) & flat_touched   # [S, elements]
    if not bool(hits.any(dim=0).all()):
        return NO_HINT
    advice, cause, candidates = _atomic_advice(evidence, name)
    if _equal_shares(flat_shares, flat_touched, allowed):
        # every share of an element is the same here (identical rows): one share is also the total
        # divided by the count, so a sum divided by the count looks just like overwritten shares
        return asking(f"each element equals a single {unit}'s share. Every share of an element is the same here (each "
                      f"{unit} adds the same value), so one share is also the sum divided by the number of shares: "
                      f"either the shares overwrote each other instead of adding up ({advice}) or the sum was divided "
                      f"by the count.",
                      *dict.fromkeys(((cause,) if cause else ()) + candidates + ("formula",)), code="values.one_share")
    for row in range(m):
        if bool((hits[row] | ~flat_touched[row]).all()) and bool(flat_touched[row].all()):
            return Diagnosis(f"equals the share of {unit} {row} alone: the other {unit}s' contributions were "
                        f"overwritten or never added. " + advice, cause, candidates, code="values.one_share")
    return Diagnosis(f"each element equals one {unit}'s share: the shares overwrote each other instead of adding up. "
                + advice, cause, candidates, code="values.one_share")


def _equal_shares(shares: torch.Tensor, touched: torch.Tensor, allowed: torch.Tensor) -> bool:
    """Is every share of each element the same (within the tolerance)?"""
    first = torch.where(touched, shares, torch.nan).nanmean(0)
    return bool((((shares - first).abs() <= allowed) | ~touched).all())


def _columns(n: int) -> str:
    """'column' (the first column), '3 columns' (the first 3 columns)."""
    return "column" if n == 1 else counted(n, "column")


def _empty_hint(got: torch.Tensor, ref: torch.Tensor, unit: str) -> Diagnosis:
    """Elements no program added to (still exactly the zero they started at): which ones."""
    sizeable = ref.abs() > 1e-6 * float(ref.abs().max())
    empty = sizeable & (got.abs() <= 1e-6 * ref.abs())
    n_empty, n_sizeable = int(empty.sum()), int(sizeable.sum())
    if n_empty == 0:
        return NO_HINT
    if n_empty == n_sizeable:
        # a kernel that never adds and a formula whose every share is 0 here look alike
        return observed("still exactly 0 everywhere, as the checker left it: nothing non-zero was added to it (no "
                        "store or atomic reached it, or every share the kernel added was 0).", code="values.nothing_added")
    as_rows = lambda t: t.reshape(-1, t.shape[-1]) if t.dim() > 1 else t.reshape(1, -1)  # noqa: E731
    flat, unknown = as_rows(empty), as_rows(~sizeable)  # elements whose reference is ~0 say nothing
    start = int(flat.any(dim=0).nonzero().min())
    if start > 0 and bool((flat | unknown)[:, start:].all()) and not bool(flat[:, :start].any()):
        return asking(f"every element from column {start} on received nothing from any {unit}: only the first "
                      f"{_columns(start)} {'was' if start == 1 else 'were'} handled. Does each program move to its "
                      f"own block of columns (tl.program_id), or loop over the row in blocks, and does the mask let "
                      f"the last block through?", "address", "loop", "mask", code="values.nothing_added")
    if n_empty > n_sizeable // 4:
        return observed(f"{n_empty} of {counted(n_sizeable, 'element')} received nothing from any {unit}.",
                        code="values.nothing_added")
    return NO_HINT


def _lost_hint(got: torch.Tensor, ref: torch.Tensor, shares: torch.Tensor, touched: torch.Tensor,
               tol: Tolerance, scale: float, evidence: Evidence, name: str) -> Diagnosis:
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
        return NO_HINT
    k = flat_got[keep] / first[keep]
    whole = ((k - k.round()).abs() * first[keep].abs() <= allowed[keep]) & (k.round() >= 1) & (k.round() < counts[keep])
    if float(whole.double().mean()) < 0.9:
        return NO_HINT
    fraction = float((flat_got[keep] / flat_ref[keep]).median())
    advice, cause, candidates = _atomic_advice(evidence, name)
    return Diagnosis(f"about {fraction:.0%} of the expected total, and a whole number of equal shares: some shares were "
                f"lost on the way. " + advice, cause, candidates, code="values.shares_lost")


# ---------------------------------------------------------------------------------------------
# Right numbers, wrong places


def _layout_hint(got: torch.Tensor, ref: torch.Tensor, scale: float, tol: Tolerance, condition: float) -> Diagnosis:
    """Right numbers, wrong layout (stored transposed) or squeezed through a 16-bit type."""
    if ref.dim() == 2 and ref.shape[0] > 1 and ref.shape[1] > 1:
        as_transposed = got.reshape(-1).reshape(ref.shape[1], ref.shape[0]).T
        if matches(as_transposed, ref, scale, tol, condition=condition):
            if ref.shape[0] == ref.shape[1]:
                return certain(f"the right numbers, transposed: element [i, j] was stored where [j, i] belongs. "
                               f"Element [i, j] goes to i * {ref.shape[1]} + j.", "address", code="values.transposed")
            return certain(f"the right numbers in the wrong shape: stored as [{ref.shape[1]}, {ref.shape[0]}] "
                           f"(transposed) instead of {list(ref.shape)}. Element [i, j] goes to "
                           f"i * {ref.shape[1]} + j.", "address", code="values.transposed")
    for dtype, bits in ((torch.bfloat16, 8), (torch.float16, 11)):
        # every value exactly representable in 16 bits, and within one 16-bit step of the truth
        # (a step, not half: the interpreter truncates where a GPU rounds to nearest); and the wrong
        # ones are the truth rounded (or truncated) to 16 bits, not merely near it: a count off by
        # one is within a bf16 step of a count past 256
        representable = bool((got.to(dtype).double() == got).all())
        close = bool(((got - ref).abs() <= 2.0 ** (1 - bits) * ref.abs() + absolute_tolerance(tol, scale, condition)).all())
        if (representable and close and not bool((ref.to(dtype).double() == ref).all())
                and _mostly_rounded(got, ref, dtype, bits)):
            return certain(f"the values were rounded to {str(dtype).replace('torch.', '')} before the store, but "
                           f"this output is fp32: keep the fp32 value (no .to(...) to a 16-bit type).", "precision", code="values.rounded")
    return NO_HINT


def _mostly_rounded(got: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype, bits: int) -> bool:
    """At least 90 % of the elements that differ from the truth (four at least) are the truth
    rounded to `dtype`, to nearest (a GPU) or toward zero (the interpreter). The rest: fp32 values
    that sat at a rounding boundary."""
    wrong = got != ref
    if int(wrong.sum()) < 4:  # one count off by one can land on a bf16 value by chance (257 -> 256)
        return False
    truth = ref[wrong]
    nearest = truth.to(dtype).double()
    magnitude = nearest.abs().clamp(min=torch.finfo(dtype).tiny)
    ulp = torch.exp2(torch.floor(torch.log2(magnitude)) - (bits - 1))
    toward_zero = torch.where(nearest.abs() > truth.abs(), nearest - torch.sign(nearest) * ulp, nearest)
    seen = got[wrong]
    return float(((seen == nearest) | (seen == toward_zero)).double().mean()) >= 0.9


def _moved_hint(got: torch.Tensor, ref: torch.Tensor, scale: float, tol: Tolerance, condition: float,
               unwritten: int = 0) -> Diagnosis:
    """The right values at the wrong places: nearly every wrong element holds a value the
    reference has elsewhere. Only where the reference's values are distinct (random data), so that
    a match cannot be chance; a constant shift of the flat index is named. unwritten: elements still
    holding the checker's NaN fill, left out of the search (a shifted store leaves a few behind)."""
    flat_got, flat_ref = got.reshape(-1), ref.reshape(-1)
    n = flat_ref.numel()
    written = ~torch.isnan(flat_got) if unwritten else torch.ones_like(flat_got, dtype=torch.bool)
    if n < 8 or not bool(torch.isfinite(flat_got[written]).all()):
        return NO_HINT
    allowed = absolute_tolerance(tol, scale, condition) + tol.rtol * flat_ref.abs()
    wrong = (((flat_got - flat_ref).abs() > allowed) & written).nonzero().reshape(-1)
    if wrong.numel() < 4:
        return NO_HINT
    order = torch.argsort(flat_ref)
    ordered = flat_ref[order]
    spacing = ordered.diff().abs()
    if int((spacing <= 2 * float(allowed.max())).sum()) > n // 20:
        return NO_HINT  # values too close together for a match to mean anything
    values = flat_got[wrong]
    pos = torch.searchsorted(ordered, values).clamp(1, n - 1)
    below, above = ordered[pos - 1], ordered[pos]
    nearest = torch.where((values - below).abs() <= (values - above).abs(), pos - 1, pos)
    source = order[nearest]
    hit = (flat_ref[source] - values).abs() <= allowed[source]
    if float(hit.double().mean()) < 0.9:
        return NO_HINT
    shifts = (source - wrong)[hit]
    common, count = torch.mode(shifts)
    example = int(wrong[hit][0]), int(source[hit][0])
    where = (f"e.g. {str(list(unravel(example[0], tuple(ref.shape))))} holds the value expected at "
             f"{str(list(unravel(example[1], tuple(ref.shape))))}")
    if int((shifts == common).sum()) >= 0.9 * shifts.numel():
        k = int(common)
        side = "after" if k > 0 else "before"
        left = (f" The {unwritten} element{'s' if unwritten > 1 else ''} never written {'are' if unwritten > 1 else 'is'} "
                f"where nothing landed." if unwritten else "")
        return certain(f"the right values at the wrong places: {int(hit.sum())} of the {wrong.numel()} wrong elements "
                       f"hold the value of the element {abs(k)} place{'s' if abs(k) > 1 else ''} {side} them ({where}). "
                       f"An offset is off by {abs(k)}: check the offsets of the loads and the store.{left}", "address", code="values.moved")
    return certain(f"the right values at the wrong places: {int(hit.sum())} of the {wrong.numel()} wrong elements hold "
                   f"values that belong elsewhere in this output ({where}). The addresses are off, not the "
                   f"arithmetic: check each offset, the strides, and which program id picks which block.", "address", code="values.moved")


FP16_MAX = 65504.0
LARGE_INPUT = 30.0   # randn inputs stay below ~6; a case that means its inputs to be large goes far past this


def _nonfinite_hint(got: torch.Tensor, ref: torch.Tensor, comparison: Comparison, evidence: Evidence, name: str,
                    case: Case | None, puzzle: Puzzle | None = None) -> Diagnosis:
    n = comparison.n_nonfinite
    elements = f"{n} element{'s are' if n > 1 else ' is'}"
    if name in evidence.poison_read:
        return asking(f"{elements} NaN: the kernel read this output before writing it ({evidence.poison_read[name]}), "
                      f"and got the NaN the checker fills outputs with. Outputs start as garbage: does it read "
                      f"through the right pointer, and start its sums from zero instead of from the output?",
                      "accumulate", "address", code="values.nonfinite")
    if evidence.poison_read:
        # another buffer read unwritten (a scratch buffer of partial rows, another output): its NaN
        # is what spread here
        other, where = next(iter(evidence.poison_read.items()))
        return asking(f"{elements} NaN, and the kernels read `{other}` where nothing had been written to it "
                      f"({where}): the checker fills the buffers it hands the kernels with NaN, and that NaN "
                      f"spread to this output. Which elements of `{other}` are stored before that read: are the "
                      f"offsets of the store (and of the read) right, does the store's mask let every lane "
                      f"through, does its loop cover every row? Or, if the read is meant to add to what is there, "
                      f"start from zero instead.", "address", "mask", "loop", "accumulate", code="values.nonfinite")
    left = {other: n for other, n in evidence.unwritten.items() if other != name}
    if left:
        # a NaN that no arithmetic made sits in another output: whatever read it spread it here
        other, count = next(iter(left.items()))
        return asking(f"{elements} NaN or Inf, and `{other}`, another output of these kernels, has {count} element"
                      f"{'s' if count > 1 else ''} that were never written (still the checker's NaN fill): a kernel "
                      f"that reads `{other}` spreads that NaN here. Fix `{other}` first: do the store's offsets, its "
                      f"mask and its loop reach every element?", "mask", "address", "loop", code="values.nonfinite")
    if not evidence.sanitized and evidence.kinds and "load" in evidence.kinds.get(name, set()):
        return asking(f"{elements} NaN or Inf, and the kernel loads this output: outputs start as garbage (the "
                      f"checker fills them with NaN), so a sum started from the output, or a load through the "
                      f"wrong pointer, reads NaN. Or, if the load is meant, where else could NaN come from: an "
                      f"overflow, a division by zero?", "accumulate", "address", "stability", code="values.nonfinite")
    bad = ~torch.isfinite(got)
    if not bool(got[bad].isnan().any()) and bool((ref[bad].abs() > FP16_MAX).all()):
        # Inf exactly where the answer is beyond float16's range: nothing else singles out those elements
        return Diagnosis(f"{elements} Inf where the expected value is beyond float16's range (up to "
                    f"{float(ref[bad].abs().max()):.4g}; float16 holds at most 65 504): a value or a running sum "
                    f"was kept in float16. Keep it in fp32 (tl.float32) until the final store.", "precision", code="values.nonfinite")
    if evidence.input_peak >= LARGE_INPUT:
        return asking(f"{elements} NaN or Inf, and this case's inputs are large (up to {evidence.input_peak:.4g}). "
                      f"Does the formula overflow with them: exp of a large number (fp32 overflows past exp(88.7)), "
                      f"a square or a sum that leaves the type's range? The numerically stable form of the formula "
                      f"(subtract the maximum, centre before squaring) stays in range: is a term of it missing? Or, "
                      f"with inputs far below 0, does a running max start at 0 instead of −inf (every exp then "
                      f"underflows, and 0 / 0 is NaN)? Or does a loop skip part of the row, so that the max it "
                      f"subtracts misses the largest values, or is the running max never updated?",
                      "stability", "precision", "formula", "fill", "loop", "accumulate", code="values.nonfinite")
    suspected = lanes_suspected(elements, evidence.unfilled, getattr(puzzle, "solution", None))
    if suspected:
        return suspected
    if evidence.minus_inf and bool(got[bad].isnan().all()):
        return asking(f"{elements} NaN, computed by the kernel, and the kernel writes −inf (a load's other=, a running "
                      f"max's start, a tl.full): a lane that holds −inf where −inf is subtracted from it computes "
                      f"−inf − (−inf) = NaN, and exp or a sum spreads it. A lane that is padding in every block it "
                      f"sees (a row shorter than the block, a lane past the end in every chunk) keeps its max at −inf: "
                      f"is it kept out of x − max (tl.where(lane valid, x − m, −inf), or a max that starts finite)? "
                      f"So does a running max never updated from −inf (m = m_new left out), and a row whose walk never "
                      f"reaches its keys (a loop that stops short). Or: a division by zero (a sum over no lanes), an "
                      f"overflow?", "stability", "fill", "mask", "accumulate", "loop", "formula",
                      code="values.nonfinite_minus_inf")
    ones = [k for k, v in (case.sizes.items() if case is not None else ()) if v == 1 and _rare_one(puzzle, k)]
    if ones:
        sizes, minus = " and ".join(f"{k} = 1" for k in ones), " or ".join(f"{k} - 1" for k in ones)
        # the kernel writes −inf: a fill of −inf where 0 belongs makes NaN in a product (−inf · 0)
        filled = (" Or a −inf the kernel fills in (a tl.where's, an other=) where 0 belongs: −inf · 0 is NaN."
                  if evidence.minus_inf else "")
        return asking(f"{elements} NaN or Inf, in a case with {sizes}. A division by zero there: by "
                      f"{minus}, or by a count of lanes or elements that is 0 in this case? Or 0 / 0, a sum "
                      f"whose loop never ran for so small a size, or offsets that leave a row no valid element? Or "
                      f"a running sum that ends at 0: rescaled by exp(m_old − m_new) after the new block's terms "
                      f"are added, it is 0 after the first block (m_old = −inf)?{filled}",
                      "formula", "loop", "mask", "address", "accumulate", *(("fill",) if filled else ()),
                      code="values.nonfinite")
    past = "" if evidence.sanitized else ", a load past the end of a tensor (garbage)"
    return asking(f"{elements} NaN or Inf, computed by the kernel. Where from: an overflow "
                  f"(exp of a large number, a 16-bit type's range), a division by zero (padded lanes counted, a "
                  f"mask that keeps the wrong lanes, or a sum whose loop never ran?), the square root of a negative "
                  f"number{past}? Or offsets that leave a row no valid element at all (its max −inf, its sum 0), or a "
                  f"running value never updated or carried (a max left at −inf)?",
                  "stability", "formula", "fill", "mask", "loop", "address", "accumulate", code="values.nonfinite")


def _rare_one(puzzle: Puzzle, size: str) -> bool:
    """Is `size` = 1 special among the puzzle's cases (fewer than half have it)? Where most cases
    have one batch, B = 1 says nothing about why this one fails."""
    cases = [c for c in (puzzle.cases() if hasattr(puzzle, "cases") else ()) if size in c.sizes]
    return not cases or 2 * sum(c.sizes[size] == 1 for c in cases) < len(cases)


# ---------------------------------------------------------------------------------------------


def _read_past_an_input(label: str, got: torch.Tensor) -> Diagnosis | None:
    """The output holds the NaN of an input's guard band (checker/evidence/guards.py: where the
    sanitizer is off): a load read past the end of an input, and what it read reached this output."""
    from checker.poison import band_nan_mask
    n = int(band_nan_mask(got).sum())
    if not n:
        return None
    return asking(f"{n} of {counted(got.numel(), 'element')} of `{label}` {'is' if n == 1 else 'are'} the NaN that the checker puts just "
                  f"past the end of each input: a load read past an input's last element, and what it read "
                  f"reached this output (on a GPU such a load reads whatever lies there, or faults). Which "
                  f"load's lanes run past the end: is its mask missing, or looser than the tensor's size? Or "
                  f"do its offsets reach too far (a stride, a row or a block offset)?", "mask", "address",
                  code="values.read_past_input", subject=label,
                  data={"elements": n})


def output_hint(puzzle: Puzzle, output: Output, got: torch.Tensor, reference: Reference, tol: Tolerance,
                comparison: Comparison, evidence: Evidence | None = None, case: Case | None = None,
                others: dict | None = None, operands: Operands | None = None) -> Diagnosis:
    """The hint for one wrong output. others: the case's other outputs, name -> (got, tolerance);
    operands: the case's hypotheses about its operands (checker/diagnosis/operands.py)."""
    evidence = evidence or Evidence()
    ref = reference.outputs[output.name]
    undefined = ((lanes_reached(output.label, got, evidence.unfilled, getattr(puzzle, "solution", None))
                  or _read_past_an_input(output.label, got)) if comparison.n_nonfinite else None)
    got = got.detach().double().cpu().reshape(ref.shape)
    scale = reference.scales[output.name]
    if comparison.n_unwritten:
        return (_moved_hint(got, ref, scale, tol, reference.condition, unwritten=comparison.n_unwritten)
                or _unwritten_hint(got, comparison, case))
    if undefined:  # proof: the output holds what only masked-off lanes, or a load past an input, read
        return undefined
    if not comparison.n_nonfinite:
        hint = _layout_hint(got, ref, scale, tol, reference.condition)
        if hint:
            return hint
    share = NO_HINT
    if output.accumulated and output.name in reference.contributions and not comparison.n_nonfinite:
        shares = reference.contributions[output.name].double()
        touched = reference.touched.get(output.name)
        if touched is None:
            touched = torch.ones_like(shares, dtype=torch.bool)
        if shares.shape[0] >= 2:
            unit = output.share_unit
            share = (_empty_hint(got, ref, unit)
                     or _share_hint(got, shares, touched, tol, scale, unit, evidence, output.name)
                     or _lost_hint(got, ref, shares, touched, tol, scale, evidence, output.name))
    inputs = operands.values if operands is not None else {}
    if not share and not comparison.n_nonfinite and degenerate(got, ref, inputs, scale, tol, reference.condition):
        # zeros, one value, an input passed through: a plain reading every fit would also match
        plain = degenerate_hint(output.label, got, ref, inputs, scale, tol, reference.condition)
        if plain:
            return plain
    else:
        variants = known_bugs(puzzle, output, got, reference, tol, others)
        if variants:
            return combine(variants, share)
    if comparison.n_nonfinite:
        return _nonfinite_hint(got, ref, comparison, evidence, output.name, case, puzzle)
    if share:
        return share
    if bool((got == 0).all()) and bool((ref != 0).any()):
        # the store ran (the fill is gone) and stored zeros: what should have been added up never was
        narrow = case is not None and case.dtype != "float32"
        rounded = (f" Or, in this {case.dtype} case, is a difference computed from values rounded to {case.dtype} "
                   f"(8 bits of mantissa for bfloat16): two values that agree to 2 or 3 digits round to the same "
                   f"number, and their difference is 0." if narrow else "")
        return asking(f"every element of `{output.label}` is exactly 0: the stores ran, with nothing in them. Does "
                      f"the loop that builds the value run at all (its range: a bound that is 0 or below its start "
                      f"for these sizes), is the running value added to inside it (with a sum, not a max), does "
                      f"the load's mask let any lane through, and do its offsets reach the values (not a region of "
                      f"zeros), or do the values masked off hold what cancels the rest (a score set to 0, not −inf)?"
                      f"{rounded}", "loop", "accumulate", "mask", "formula", "address", "fill",
                      *(("precision",) if narrow else ()), code="values.zero")
    dims = next((d for n, d in getattr(puzzle, "input_dims", {}).items()
                 if operands is not None and n in operands.values and tuple(operands.values[n].shape) == tuple(ref.shape)), ())
    return (_moved_hint(got, ref, scale, tol, reference.condition)
            or operand_hint(operands, output, got, reference, tol, others)
            or ratio_hint(got, ref, case)
            or row_factor_hint(got, ref, tol, scale, reference.condition, output.label,
                               case.dtype if case is not None else "float32")
            or slice_hint(got, ref, tol, scale, reference.condition, output.label, dims, case))
