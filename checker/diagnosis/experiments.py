"""What an experiment found (checker/experiment.py), read in the parent: the smallest failing case,
the nearest cases that pass (each one declared property away from it), the sentences that say so,
and whether a pattern across cases is shown by it.

The pair is a fact, and the only evidence a claim across cases may rest on: "only the cases larger
than one block fail" is said only where a case that fails and one that passes differ in exactly that
(the pattern selects the first and not the second). The sentences say what was run and what each
case is (its blocks, the documented value, a number the kernel writes); they name no cause.
Pure Python: no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from checker.puzzle.model import Case, Puzzle
from checker.words import counted

SHOWN_NEIGHBOURS = 3  # passing neighbours named in the report


@dataclass(frozen=True)
class Neighbour:
    """A case one declared property away from a failing case, that passes: the smallest failing case,
    or (base) a larger case the shrinking went through, where the dtype or the inputs flipped the
    verdict there and not at the smallest case."""
    prop: str                  # a size or a parameter by name, "dtype" or "inputs"
    case: Case
    before: Any
    after: Any
    base: Case | None = None   # the failing case it differs from, where not the smallest


@dataclass(frozen=True)
class Finding:
    part: str
    backend: str
    smallest: Case
    result: dict | None        # the smallest failing case's case_result
    passing: tuple[Neighbour, ...]
    minimal: bool              # no simpler change of it fails (the search was not cut short)
    stopped: str               # "trials" or "time" where the budget ran out before the search ended
    trials: int
    seconds: float
    shrunk: bool               # the smallest failing case is a derived one (not a declared case)
    written: dict = field(default_factory=dict)   # number -> [[kernel, line]] the kernels write
    searched: bool = True      # every case one change away was tried (none left out by the budget)

    def confirms(self, selects: Callable[[Case], bool]) -> bool:
        """A pair shows what `selects` picks out decides the verdict: it selects the failing case and
        not a passing one that differs from it in one property."""
        try:
            return any(selects(n.base or self.smallest) and not selects(n.case) for n in self.passing)
        except (KeyError, TypeError, AttributeError):
            return False

    def confirms_tag(self, tag: str) -> bool:
        """A pair shows a kind of case decides the verdict where the kind is per size ("tail": some
        size's last block partly filled): the size the pair changes has the kind in the failing case
        (tail_M) and not in the passing one. (The other sizes, unchanged, may have it in both.)"""
        return any(f"{tag}_{n.prop}" in (n.base or self.smallest).tags and f"{tag}_{n.prop}" not in n.case.tags
                   for n in self.passing)

    def neighbour(self, prop: str) -> Neighbour | None:
        return next((n for n in self.passing if n.prop == prop), None)


def read(puzzle: Puzzle, event: dict, backend: str = "") -> Finding | None:
    """The finding of a worker's experiment event (None where the cases cannot be made again)."""
    if puzzle.derive is None:
        return None
    start = next((c for c in puzzle.cases() if c.name == event["start"]), None)
    if start is None:
        return None
    try:
        smallest = puzzle.derive(start, event["smallest"]) if event["smallest"] else start
        passing = []
        for entry in event.get("passing", []):
            prop, at = entry["property"], entry.get("at")
            if at is None:
                case = puzzle.derive(start, {**event["smallest"], **entry["change"]})
                passing.append(Neighbour(prop, case, _value(smallest, prop, puzzle), _value(case, prop, puzzle)))
                continue
            base = puzzle.derive(start, at) if at else start
            case = puzzle.derive(start, {**at, **entry["change"]})
            passing.append(Neighbour(prop, case, _value(base, prop, puzzle), _value(case, prop, puzzle), base))
    except Exception:  # noqa: BLE001 (a declaration changed under a warm worker: no finding)
        return None
    return Finding(event["part"], backend, smallest, event.get("smallest_result"), tuple(passing),
                   bool(event.get("minimal")), event.get("stopped", ""), int(event.get("trials", 0)),
                   float(event.get("seconds", 0.0)), bool(event["smallest"]), dict(event.get("written") or {}),
                   bool(event.get("searched", event.get("minimal"))))


def _value(case: Case, prop: str, puzzle: Puzzle) -> Any:
    if prop == "dtype":
        return case.dtype
    if prop == "inputs":
        return "own" if "recipe" in case.tags else "plain"
    sizes = dict(puzzle.sizes_of(case)) if puzzle.sizes_of is not None else dict(case.sizes)
    return sizes.get(prop, case.params.get(prop))


def settings(case: Case, puzzle: Puzzle, inputs: bool = True) -> str:
    """The case as a learner would set it up: its sizes, its blocks, its dtype; and whose inputs it
    takes, where they are a declared case's own (inputs=False: left out, where the sentence names it)."""
    sizes = dict(puzzle.sizes_of(case)) if puzzle.sizes_of is not None else dict(case.sizes)
    words = [f"{k}={v}" for k, v in sizes.items()]
    blocks = set(case.blocked.values())  # the parameters that block a size, whatever their names
    documented = next((c for c in puzzle.cases() if c.documented), None)
    usual = dict(documented.params) if documented is not None else {}
    # its blocks, and any other parameter it sets otherwise than the documented case (CAUSAL=True)
    words += [f"{k}={v}" for k, v in case.params.items()
              if k in blocks or k.startswith("BLOCK") or isinstance(v, (bool, int, str)) and usual.get(k, v) != v]
    if inputs and "recipe" in case.tags:
        # a derived case is named "<sizes, blocks> (<the declared case's name>)", a declared one by its name
        declared = any(c.name == case.name for c in puzzle.cases())
        own = case.name if declared or not case.name.endswith(")") else case.name.split(" (", 1)[1][:-1]
        words.append(f"inputs of “{own}”")
    text = ", ".join(words)
    return text if case.dtype == "float32" else f"{text}, {case.dtype}"


def what_failed(result: dict | None) -> str:
    """The smallest failing case's failure in a few words: the outputs off, or what stopped it."""
    if not result:
        return ""
    if result.get("status") == "error":
        error = result.get("error") or {}
        first = (error.get("message") or "").strip().split("\n")[0]
        return first.split(" in program ")[0].rstrip(":. ")[:140]
    said = []
    for c in result.get("comparisons", []):
        if c.get("ok"):
            continue
        if "n_bad" in c and c.get("n_total"):
            said.append(f"{c['label']}: {c['n_bad']} of {counted(c['n_total'], 'element')} off")
        else:
            said.append(f"{c['label']}: wrong")
    if result.get("mutated"):
        said.append(f"changed its inputs ({', '.join(result['mutated'])})")
    return "; ".join(said)


def why_it_differs(n: Neighbour, finding: Finding, puzzle: Puzzle) -> str:
    """What is true of the passing neighbour and not of the failing case, in facts: blocks, the
    documented value, a number the kernels write. '' where there is nothing more to say than the values."""
    f, p = finding.smallest, n.case
    if n.prop in ("dtype", "inputs"):
        return ""  # the sentence itself says it
    facts = []
    block_f, block_p = f.block_of(n.prop), p.block_of(n.prop)
    if isinstance(n.before, int) and isinstance(n.after, int) and block_f and block_p:
        name = f.blocked.get(n.prop, "its block")
        blocks_f, blocks_p = -(-n.before // block_f), -(-n.after // block_p)
        if blocks_f != blocks_p:
            facts.append(f"{n.prop} = {n.before} takes {counted(blocks_f, 'block')} of {name} = {block_f}, "
                         f"{n.prop} = {n.after} {'fits in one' if blocks_p == 1 else f'takes {blocks_p}'}")
        tail_f, tail_p = n.before % block_f, n.after % block_p
        if bool(tail_f) != bool(tail_p):
            partial, whole = (n.before, n.after) if tail_f else (n.after, n.before)
            facts.append(f"with {n.prop} = {partial} the last block is partly filled, with {n.prop} = {whole} "
                         f"every block is full")
    documented = next((c for c in puzzle.cases() if c.documented), None)
    if documented is not None and _value(documented, n.prop, puzzle) == n.after and n.prop not in ("dtype", "inputs"):
        facts.append(f"{n.after} is the documented case's {n.prop}")
    if str(n.after) in finding.written:
        kernel, line = finding.written[str(n.after)][0]
        facts.append(f"{n.after} is a number written on line {line} of `{kernel}`")
    if n.prop in f.blocks or n.prop.startswith("BLOCK"):
        sizes = dict(puzzle.sizes_of(f)) if puzzle.sizes_of is not None else dict(f.sizes)
        for size, param in f.blocked.items():
            if param == n.prop and isinstance(n.before, int) and isinstance(n.after, int) and size in sizes:
                before, after = -(-sizes[size] // n.before), -(-sizes[size] // n.after)
                if before != after:
                    facts.append(f"{size} = {sizes[size]} takes {counted(before, 'block')} of {n.before}, "
                                 f"{'one' if after == 1 else after} of {n.after}")
        equal = [k for k, v in p.params.items() if k != n.prop and k.startswith("BLOCK") and v == n.after]
        if equal:
            facts.append(f"then {n.prop} equals {' and '.join(equal)}")
    return "; ".join(facts)


def sentences(finding: Finding, puzzle: Puzzle) -> list[str]:
    """The experiment in the report's words: the smallest failing case, then each passing neighbour."""
    what = what_failed(finding.result)
    head = (f"smallest failing case: {settings(finding.smallest, puzzle)}"
            + (f" — {what}" if what else ""))
    lines = [head]
    for n in finding.passing[:SHOWN_NEIGHBOURS]:
        if n.base is not None:
            declared = any(c.name == n.base.name for c in puzzle.cases())
            base = (f"“{n.base.name}” ({settings(n.base, puzzle, inputs=False)})" if declared
                    else settings(n.base, puzzle))
            lines.append(f"before it was made smaller, {base} passed "
                         + (f"in {n.after} (only the dtype changed): there its {n.before} decides it"
                            if n.prop == "dtype" else
                            "with the puzzle's plain random inputs (only the inputs changed): there its own inputs "
                            "decide it"))
            continue
        if n.prop == "dtype":
            lines.append(f"the same case in {n.after} passes: only the {n.before} case fails")
            continue
        if n.prop == "inputs":
            lines.append("it passes with the puzzle's plain random inputs (only the inputs changed): this case's own "
                         "inputs decide it")
            continue
        why = why_it_differs(n, finding, puzzle)
        lines.append(f"it passes with {n.prop}={n.after} (only {n.prop} changed)" + (f": {why}" if why else ""))
    if not finding.passing and finding.searched:
        lines.append("no case one change away from it that the checker tried passes (sizes toward 1, a whole "
                     "block, the documented sizes, the other blocks the puzzle declares)")
    if finding.stopped:
        budget = "their time limit" if finding.stopped == "time" else "the number of cases they may run"
        left = ("a smaller failing case may exist" if not finding.minimal
                else "not every case one change away was tried")
        lines.append(f"(the experiments stopped at {budget}, after {counted(finding.trials, 'case')}: {left})")
    return [line for line in lines if line]
