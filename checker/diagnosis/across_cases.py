"""Hints that only show across cases: exactly the cases of one kind fail (non-power-of-two widths,
wide rows, bf16, ...). Which of the declared cases fail is a correlation: they differ in several
properties at once, and one of them always separates the failing from the passing by chance. So a
claim of this kind is shown only where an experiment shows it (checker/diagnosis/experiments.py: a
failing case and a passing one that differ in exactly the property the claim names); and it keeps
to its premise:

- the failing cases are all of the pattern's kind, enough of that kind fail (coverage), and cases
  of other kinds pass;
- a hint that only asks (it names no cause) stays quiet where the failing cases' own hints name
  causes it does not ask about: the learner has something better to go on, and a question beside
  it would only pull the other way;
- and where a failing case stopped with an error (an access the sanitizer saw), it stays quiet
  unless it asks about every cause that error names or asks about: which cases fail is weaker
  evidence than the access itself, and a question about one of its causes alone would narrow it.

Pure Python, so the report can use it without torch.
"""
from __future__ import annotations

from dataclasses import replace

from checker.diagnosis import arbitrate
from checker.diagnosis.experiments import Finding
from checker.diagnosis.launch_assumed import launch_assumed
from checker.diagnosis.model import Diagnosis, Strength, asking
from checker.puzzle.model import Case, Puzzle


def trivial(case: Case) -> bool:
    """A case with a blocked size of 1 (one row, one key, one element): the one case that a formula
    slip (a missing 1/n, a softmax not divided by its sum) cannot break. Its passing says nothing.
    (One batch or one head is no such case: nothing is reduced over them.)"""
    return "trivial" in case.tags


def summary_hints(puzzle: Puzzle, results: list[tuple[Case, dict]], finding: Finding | None = None) -> list[Diagnosis]:
    """results: (case, its case_result event); finding: the part's experiment (None: none ran, and
    no claim across cases is shown). The most specific pattern (fewest cases of its kind) that the
    experiment shows: a second, broader one over the same failures only adds a question that pulls
    elsewhere. Beside it: a number the experiment found written into the kernel, and the facts
    about the code (a documented size written in, a 16-bit type the solution does not use)."""
    failing = [(case, r) for case, r in results if r.get("status") != "pass"]
    passing = [case for case, r in results if r.get("status") == "pass"]
    if not failing:
        return []
    launched = launch_assumed(results, finding.written if finding is not None else None)
    if launched:
        # an experiment the cases make themselves (one launch value flips the verdict), shown first; the
        # kinds of cases that fail are read from the cases as declared, without their launches again
        declared = [(case, r) for case, r in results if not case.variation_of]
        failing = [(case, r) for case, r in declared if r.get("status") != "pass"]
        passing = [case for case, r in declared if r.get("status") == "pass"]
        return [launched] + (_summary_hints(puzzle, declared, failing, passing, finding) if failing else [])
    return _summary_hints(puzzle, results, failing, passing, finding)


def _summary_hints(puzzle: Puzzle, results: list[tuple[Case, dict]], failing: list, passing: list[Case],
                   finding: Finding | None) -> list[Diagnosis]:
    shown = _patterns(puzzle, results, failing, passing, finding) if passing and finding else []
    # the experiment's pair at a number the kernel writes, else the number that equals a documented size
    # (a documented size merely equal to a number in the kernel is a coincidence as often as not: said
    # only where no experiment ran, which would have tried the size at that number)
    passes_at = written_number_passes(finding)
    documented_size = number_written_in([r for _, r in failing]) if finding is None else None
    written = [d for d in (passes_at or documented_size, narrowed([r for _, r in failing])) if d]
    if not shown:
        # every case fails but the trivial ones (and a few with special inputs), and no case the
        # experiment made one change away passes: no kind of case explains it, the arithmetic may
        everywhere = with_written_constant(every_case_fails(results), finding)
        if everywhere and not _contradicts_everywhere(finding):
            kept = [everywhere] if arbitrate.keeps_pattern(everywhere, [r for _, r in failing]) else []
            return kept + written
    if not shown and passing and finding and not passes_at:
        # the narrower splits, where no pattern above holds and the experiment found no number written
        # in (stronger evidence than any split), each where the experiment shows it;
        # where two of them hold, the cases cannot tell which: both are shown, each a question
        shown += [found for found in (blocks_differ(results, finding), past_documented(puzzle, results, finding),
                                      one_size_for_another(results, finding))
                  if found and arbitrate.keeps_pattern(found, [r for _, r in failing])][:2]
    return shown + written


PER_SIZE = ("tail", "wide", "non_pow2")  # the generic patterns' kinds, each also tagged per size


def _contradicts_everywhere(finding: Finding | None) -> bool:
    """The experiment found a case one change from the smallest failing one that passes, and is not
    trivial: a slip in the arithmetic would break it too."""
    return finding is not None and any("trivial" not in n.case.tags for n in finding.passing)


def with_written_constant(d: Diagnosis | None, finding: Finding | None) -> Diagnosis | None:
    """Every case fails, and the kernels write a constant (a float: a scale, an eps) that the
    solution's do not: a value the kernel receives, written in, breaks every case as a slip in the
    formula does. Asks about it too, with its line."""
    if d is None or finding is None:
        return d
    floats = [(k, v) for k, v in finding.written.items() if "." in k or "e" in k.lower()]
    if not floats:
        return d
    value, [[kernel, line], *_] = floats[0]
    said = (f" Line {line} of `{kernel}` writes {value}, a constant the reference solution's kernel does not "
            f"write: is a value the kernel receives as an argument (a scale, an eps) written in there?")
    return replace(d, observed=d.observed + said, candidates=(*d.candidates, "hardcoded"))


def written_number_passes(finding: Finding | None) -> Diagnosis | None:
    """The smallest failing case passes with a size set to a number the kernels write (that the
    solution's do not): the number stands where the size belongs. An experiment, so it asks with
    the line."""
    if finding is None:
        return None
    for n in finding.passing:
        where = finding.written.get(str(n.after)) if isinstance(n.after, int) else None
        # a size, or a block the launch passes (a step written as the number of the default block)
        if where and n.prop not in ("dtype", "inputs") and not isinstance(n.after, bool):
            kernel, line = where[0]
            return asking(f"with {n.prop} = {n.after} the smallest failing case passes, and {n.after} is a number "
                          f"written on line {line} of `{kernel}`: is {n.prop} written into the kernel as a number? "
                          f"The kernel receives {n.prop} as an argument; use it.", "hardcoded",
                          code="experiment.written_number", strength=Strength.FIT,
                          data={"size": n.prop, "value": n.after, "line": line})
    return None


def _patterns(puzzle: Puzzle, results: list[tuple[Case, dict]], failing: list, passing: list[Case],
              finding: Finding) -> list[Diagnosis]:
    """The puzzle's patterns that hold and that the experiment shows (the most specific), a size the
    passing cases share, and NaN exactly where a size fits in one block."""
    found = []
    for pattern in puzzle.summary_patterns:
        per_size = pattern.diagnosis.code.removeprefix("cases.")  # the generic kinds are per size: tail_M, wide_N
        shown = finding.confirms(pattern.selects) or per_size in PER_SIZE and finding.confirms_tag(per_size)
        if not arbitrate.keeps_pattern(pattern, [r for _, r in failing]) or not shown:
            continue
        selected = [case for case, _ in results if pattern.selects(case)]
        covers = len(failing) >= pattern.coverage * len(selected)  # 3 wide rows failing is not "every H != 8"
        if (covers and all(pattern.selects(case) for case, _ in failing)
                and any(not pattern.selects(c) and not trivial(c) for c in passing)):
            found.append((len(selected), pattern.diagnosis))
    shown = arbitrate.most_specific(found)
    shared = same_size(puzzle, [c for c, _ in failing], passing, finding)
    if shared and not any(d.code == "cases.not_documented" for d in shown):
        shown.append(shared)
    empty = one_block_nonfinite(results)
    if empty:
        shown.append(empty)
    return shown


def _nonfinite(result: dict) -> bool:
    return any((o.get("n_nonfinite") or 0) > 0 for o in result.get("comparisons", ()))


def one_block_nonfinite(results: list[tuple[Case, dict]]) -> Diagnosis | None:
    """Every case whose size S fits in one block gives NaN or Inf (two at least), and the cases with S
    wider than a block fail with finite values (two at least): a loop over S's blocks that runs once
    fewer than it should, never where there is one block (range(0, S - BLOCK, BLOCK)), leaves the sum
    it divides by at 0 there and short elsewhere."""
    for name in results[0][0].sizes if results else ():
        wide = f"wide_{name}"
        narrow = [(c, r) for c, r in results if name in c.sizes and wide not in c.tags]
        broad = [(c, r) for c, r in results if wide in c.tags]
        if not broad or len(narrow) < 2 or not all(r.get("status") != "pass" and _nonfinite(r) for _, r in narrow):
            continue
        finite_failures = [c for c, r in broad if r.get("status") != "pass" and not _nonfinite(r)]
        if len(finite_failures) < 2:
            continue
        return Diagnosis(f"every case whose {name} fits in one block gives NaN or Inf, and the cases with {name} "
                         f"wider than a block come out finite but wrong: does a loop over {name}'s blocks stop a "
                         f"block early (range(0, {name} - BLOCK, BLOCK), or a bound of cdiv({name}, BLOCK) - 1)? "
                         f"Where there is one block it never runs, and what it sums stays 0 (0 / 0 = NaN); where "
                         f"there are several it misses the last. Or is a running value (a max, a sum) not carried "
                         f"from one block to the next, so that the first block's start value (−inf, 0) is what "
                         f"one block leaves?", "", ("loop", "accumulate"), code="cases.one_block_nonfinite",
                         strength=Strength.PATTERN, data={"size": name})
    return None


def same_size(puzzle: Puzzle, failing: list[Case], passing: list[Case], finding: Finding) -> Diagnosis | None:
    """Every passing case has size S = v (three at least, and not all trivial), and every failing case
    (two at least) has another S: a number written into the kernel where S belongs? (Two passing
    cases that share a size share it by chance too often: p31's two cases with S = 32.)"""
    if len(passing) < 3 or len(failing) < 2 or all(trivial(c) for c in passing):
        return None
    kinds = ("tail", "non_pow2", "wide")
    for name in failing[0].sizes:
        for tag in kinds + tuple(f"{kind}_{name}" for kind in kinds):
            if all(tag in c.tags for c in failing) and not any(tag in c.tags for c in passing):
                return None  # a kind of case splits them too: the size value may only be where it shows
    for name in failing[0].sizes:
        values = {c.sizes.get(name) for c in passing}
        if len(values) != 1:
            continue
        value = next(iter(values))
        if value is None or value == 1 or any(c.sizes.get(name) == value for c in failing):
            continue
        shown = finding.neighbour(name)
        if shown is None or shown.after != value:
            continue  # the experiment did not pass by setting it to that value
        others = sorted({c.sizes.get(name) for c in failing if c.sizes.get(name) is not None})
        return asking(f"every case with {name} = {value} passes, and every case with another {name} "
                      f"({', '.join(map(str, others[:4]))}{', …' if len(others) > 4 else ''}) fails: is {name} — "
                      f"or a number made from it ({name} // 2, 1/√{name}, a block of {name}) — written into the "
                      f"kernel? Use the argument the kernel receives.", "hardcoded", code="cases.same_size",
                      strength=Strength.PATTERN, data={"size": name, "value": value})
    return None


# A value rounded to bf16 is off by up to 2^-9 of itself, to fp16 by 2^-12: an element off by more than
# 2^-6 of itself is more than a rounding.
ROUNDING = 2.0 ** -6


def _comparisons(result: dict) -> list[dict]:
    return list(result.get("comparisons", ()))


def _clean_failure(result: dict) -> bool:
    """A case that ran to the end and failed on values alone: no error, nothing left unwritten, no
    NaN or Inf. Which cases fail says something about the arithmetic only for such failures."""
    return (result.get("status") == "fail"
            and not any((o.get("n_unwritten") or 0) or (o.get("n_nonfinite") or 0) for o in _comparisons(result)))


def _typical_error(results: list[dict]) -> float:
    """How far the wrong elements are off, in their own terms: the largest of each wrong output's median."""
    return max((o.get("typical_error") or 0.0 for r in results for o in _comparisons(r) if not o.get("ok")),
               default=0.0)


def _names(labels: list[str]) -> str:
    quoted = [f"`{label}`" for label in labels]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def every_case_fails(results: list[tuple[Case, dict]]) -> Diagnosis | None:
    """Every case that is not trivial fails (three at least; a case with inputs made for one purpose
    may pass, one in four at most), among them one that fits in one block and the documented one,
    each on its values alone. A slip in the blocks, a loop, a mask or a size
    spares the cases it does not reach; one in the arithmetic spares none. It asks about the formula
    of the outputs wrong in every case (and where every wrong element is off by a small fraction of
    itself, first about a value rounded to a narrower type); it names nothing."""
    # a case with inputs made for one purpose (a confident row, whose softmax sums to 1) may hide a
    # slip as a trivial case does: a few of them passing beside many failing leave the pattern be
    special = [c for c, r in results if not trivial(c) and "recipe" in c.tags and r.get("status") == "pass"]
    cases = [(c, r) for c, r in results if not trivial(c) and c not in special]
    if len(cases) < 3 or 3 * len(special) > len(cases) or not all(_clean_failure(r) for _, r in cases):
        return None
    if all("wide" in c.tags for c, _ in cases) or not any(c.documented for c, _ in cases):
        return None  # no case that fits in one block failed: a loop over blocks could still explain it
    labels = [o["label"] for o in _comparisons(cases[0][1])]
    always = [label for label in labels
              if all(any(o["label"] == label and not o.get("ok") for o in _comparisons(r)) for _, r in cases)]
    right = [label for label in labels
             if all(any(o["label"] == label and o.get("ok") for o in _comparisons(r)) for _, r in cases)]
    if not always:
        return None
    typical = _typical_error([r for _, r in cases])
    what = _names(always)
    seen = (f"every case that is not trivial fails{' (but ' + str(len(special)) + ' with special inputs)' if special else ''}, "
            f"whatever its sizes — those that fit in one block as well as wider ones, the documented case among "
            f"them — with {what} wrong in each")
    spared = (f"; {_names(right)} {'is' if len(right) == 1 else 'are'} right in every case, so look at what "
              f"{what} {'does' if len(always) == 1 else 'do'} apart from {'it' if len(right) == 1 else 'them'}"
              if right else "")
    if typical <= ROUNDING:
        return asking(f"{seen}, each wrong element off by a small fraction of itself (about {100 * typical:.2g} %){spared}. "
                      f"A bug in the blocks, a loop, a mask or a size would spare some of these cases. Is a value "
                      f"rounded to a narrower type on the way (bf16 keeps 8 bits: about 0.4 %; fp16 11) — an input "
                      f"converted after its load, a product or a sum kept in one? Or is a small term of the formula off?",
                      "precision", "formula", code="cases.every_case", strength=Strength.PATTERN,
                      data={"outputs": always, "typical": typical})
    return asking(f"{seen}{spared}. A bug in the blocks, a mask or a size would spare some of these cases; a slip "
                  f"in the arithmetic spares none. Compare how the kernel computes {what} with the page's formula, "
                  f"term by term: each operand, sign, constant and scale, a term left out or one too many — and "
                  f"where each operand is read from: a pointer copied from the line above, a table's row without its "
                  f"stride. (A few slips outside the formula break every case too: a sum that does not start from "
                  f"0, a mask or a loop bound one short (N - 1) that drops the last element, a loop that steps by "
                  f"less than its block and adds elements twice.)",
                  "formula", "address", "accumulate", "fill", "mask", "loop", code="cases.every_case",
                  strength=Strength.PATTERN,
                  data={"outputs": always, "typical": typical})


def blocks_differ(results: list[tuple[Case, dict]], finding: Finding) -> Diagnosis | None:
    """Every failing case has two block sizes that differ (two failing cases at least), and every case
    that is not trivial where those two are equal passes (two at least): one block size used where
    the other belongs (a loop stepping by BLOCK_M over blocks of BLOCK_K columns), which equal
    blocks hide. Where several pairs split the cases so, it names them all (the cases cannot tell
    which), the pair with most equal cases first."""
    failing = [c for c, r in results if r.get("status") != "pass"]
    if len(failing) < 2:
        return None
    names = sorted(set.intersection(*[set(c.blocks) for c, _ in results])) if results else []
    found = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            equal = [(c, r) for c, r in results if not trivial(c) and c.params[a] == c.params[b]]
            if (len(equal) >= 2 and all(r.get("status") == "pass" for _, r in equal)
                    and all(c.params[a] != c.params[b] for c in failing)
                    and finding.confirms(lambda c, a=a, b=b: c.params[a] != c.params[b])):
                found.append((len(equal), a, b))
    if not found:
        return None
    pairs = [(a, b) for _, a, b in sorted(found, reverse=True)]
    example = failing[0].params
    split = " or ".join(f"{x} ≠ {y}" for x, y in pairs)
    return asking(f"only cases where {split} fail (e.g. {', '.join(f'{n} = {example[n]}' for n in sorted({n for p in pairs for n in p}))}), "
                  f"and the cases where {'the two are' if len(pairs) == 1 else 'they are'} equal pass: is one block "
                  f"size used where another belongs — a loop that steps by one while its loads cover the other, or "
                  f"an offset, a mask or a count built from the wrong one?",
                  "loop", "address", "mask", code="cases.blocks_differ", strength=Strength.PATTERN,
                  data={"blocks": [list(p) for p in pairs]})


def past_documented(puzzle: Puzzle, results: list[tuple[Case, dict]], finding: Finding) -> Diagnosis | None:
    """Every failing case (two at least) has a size S larger than the documented case's value v, and
    the cases with S at most v pass (two at least that are not trivial): v written into the kernel
    where S belongs, as a loop bound or a mask that keeps the smaller sizes right (a larger S may
    pass too, where one block of the loop covers it). Not where a block boundary splits the cases
    the same way."""
    documented = next((c for c, _ in results if c.documented), None)
    failing = [c for c, r in results if r.get("status") != "pass"]
    passing = [c for c, r in results if r.get("status") == "pass" and not trivial(c)]
    if documented is None or len(failing) < 2 or len(passing) < 2:
        return None
    for name, value in documented.sizes.items():
        if not all(name in c.sizes for c in failing + passing) or value <= 1:
            continue
        within = [c for c in passing if c.sizes[name] <= value]
        beyond = [c for c, _ in results if name in c.sizes and c.sizes[name] > value and not trivial(c)]
        if (len(within) < 2 or not all(c.sizes[name] > value for c in failing)
                or len([c for c in beyond if c in failing]) * 2 < len(beyond)):
            continue  # half the larger cases at least: a chance split of a few cases says nothing
        wide = f"wide_{name}"
        if all(wide in c.tags for c in failing) and not any(wide in c.tags for c in passing):
            continue  # the cases wider than a block split them the same way
        if not finding.confirms(lambda c, name=name, value=value: puzzle.sizes_of(c)[name] > value):
            continue  # no pair shows that crossing the documented value decides it
        larger = sorted({c.sizes[name] for c in failing})
        return asking(f"every case with {name} ≤ {value} (the documented {name}) passes, and only cases with a larger "
                      f"{name} fail ({', '.join(map(str, larger[:4]))}{', …' if len(larger) > 4 else ''}): is "
                      f"{value} written into the kernel where {name} belongs — a loop's bound, a mask, a count? Use "
                      f"the argument the kernel receives.", "hardcoded", "loop", code="cases.past_documented",
                      strength=Strength.PATTERN, data={"size": name, "value": value})
    return None


def one_size_for_another(results: list[tuple[Case, dict]], finding: Finding) -> Diagnosis | None:
    """Every failing case (two at least) has a size S larger than what another size T covers (T
    itself, or T rounded up to whole blocks of one of the block sizes: a loop over T's blocks), half
    the cases with S beyond it at least fail, and three cases or more that are not trivial with S
    within it pass: T used where S belongs (a loop over S bounded by T, a mask comparing with T),
    which the cases where T covers S hide. Only where one pair of sizes splits the cases so."""
    failing = [c for c, r in results if r.get("status") != "pass"]
    if len(failing) < 2 or not all(c.sizes for c, _ in results):
        return None  # one failing case is unique in too many ways to single out a pair of sizes
    names = list(results[0][0].sizes)
    blocks = [None, *sorted(set.intersection(*[set(c.blocks) for c, _ in results]))]
    found = set()
    for s in names:
        for t in names:
            if s == t or not all(s in c.sizes and t in c.sizes for c, _ in results):
                continue
            for block in blocks:
                def reach(c: Case, t=t, block=block) -> int:
                    return c.sizes[t] if block is None else -(-c.sizes[t] // c.params[block]) * c.params[block]
                # a trivial case's pass says nothing, its failure does
                beyond = [r for c, r in results if c.sizes[s] > reach(c) and not (trivial(c) and r.get("status") == "pass")]
                covered = [c for c, r in results if c.sizes[s] <= reach(c) and not trivial(c) and r.get("status") == "pass"]
                # the pair must change one of the two sizes the claim is about (a block's change is no
                # evidence that one size stands for the other)
                if (all(c.sizes[s] > reach(c) for c in failing) and len(covered) >= 3
                        and 2 * sum(r.get("status") != "pass" for r in beyond) >= len(beyond)
                        and any(n.prop in (s, t) and n.case.sizes[s] <= reach(n.case) for n in finding.passing
                                if s in n.case.sizes and t in n.case.sizes)):
                    found.add((s, t))
    if len(found) != 1:
        return None  # none, or several pairs the cases cannot tell apart
    s, t = next(iter(found))
    return asking(f"only cases where {s} is larger than {t} fail ({'; '.join(f'{s} = {c.sizes[s]}, {t} = {c.sizes[t]}' for c in failing[:3])}), "
                  f"and the others pass: is {t} used where {s} belongs — a loop over {s} bounded by {t}, a mask or an "
                  f"offset built from {t}?", "loop", "mask", "address", code="cases.one_size_for_another",
                  strength=Strength.PATTERN, data={"size": s, "used": t})


def _source_facts(failing: list[dict], kind: str) -> dict[tuple, dict]:
    """The worker's facts of one kind about the code (checker/diagnosis/literals.py), once each: every
    failing case reports the same lines."""
    seen: dict[tuple, dict] = {}
    for result in failing:
        for found in result.get(kind) or ():
            seen.setdefault((found["kernel"], found["line"], found.get("value")), found)
    return seen


def number_written_in(failing: list[dict]) -> Diagnosis | None:
    """A number in the kernels that is one of the documented case's sizes (or half of one, or one of its
    parameters), that the solution's kernel does not write, in failing cases whose own size differs
    (the worker's `literals`, checker/diagnosis/literals.py). A fact about the code beside any pattern:
    it asks, with the line."""
    seen = _source_facts(failing, "literals")
    if not seen:
        return None
    lines = []
    for found in list(seen.values())[:3]:
        means = found["means"]
        what = (f"{means[0]} is" if len(means) == 1 else f"{', '.join(means[:-1])} and {means[-1]} are")
        lines.append(f"line {found['line']} of `{found['kernel']}` has the number {found['value']} (`{found['code']}`), "
                     f"and in the documented case {what} {found['value']}")
    sizes = sorted({m.split(" ")[0] for f in seen.values() for m in f["means"]})
    return asking(f"{'; '.join(lines)}, and the failing cases have another {' or '.join(sizes)}: is the number "
                  f"written where the argument belongs? The kernel receives the sizes of each case; the page's "
                  f"example sizes are one case among many.", "hardcoded", code="cases.number_written_in",
                  strength=Strength.FIT, data={"values": [f["value"] for f in seen.values()]})


def narrowed(failing: list[dict]) -> Diagnosis | None:
    """float32 cases fail, and a kernel names bfloat16 or float16 on more lines than the solution's
    (the worker's `narrowed`): a value rounded to 8 or 11 bits on the way, which float32 inputs show."""
    seen = _source_facts(failing, "narrowed")
    if not seen:
        return None
    where = "; ".join(f"line {f['line']} of `{f['kernel']}` (`{f['code']}`)" for f in list(seen.values())[:3])
    return asking(f"float32 cases fail, and the kernel converts to a 16-bit type where the reference solution does "
                  f"not: {where}. A value rounded to bfloat16 (8 bits) or float16 (11) keeps fewer digits than a "
                  f"float32 case needs: is it meant? Keep float32 from the loads to the store, and convert once, to "
                  f"the output's type, at the store.", "precision", code="cases.narrowed", strength=Strength.FIT)
