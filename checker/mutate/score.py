"""The score: per bug class, how many mutants the checker caught and how precise its hints were;
the survivors first, as PIT and mutmut put them.

A survivor is a failure unless tests/bugs/pNN.py's EQUIVALENT lists it with the reason no check can
catch it. One kind of survivor is told apart by rule instead: a `precision` mutant (a cast to fp32
removed, an fp32 accumulator made bf16) changes nothing in fp32 cases, and the interpreter's few small
bf16 cases (where a puzzle has them) may round its loss away; the puzzle's large bfloat16 cases, which
run on a GPU only, are what judge it. A precision mutant that survives the interpreter in a puzzle with
such cases is counted as "GPU only" (run `--backend gpu` on a GPU host to check those).

Hint counts are per distinct hint of a caught mutant's report (checker/mutate/run.py says which
are distinct); "no hint" counts reports that name no class at all. The two last columns read each
caught mutant's report as a learner does, every sentence shown: a report is misleading where any of
its hints names another class or asks only about others, whatever else it says (the earlier
precision counted hints, and a right hint outweighed a wrong one beside it). Mutants caught before any case
ran (a syntax or load error) have no hints to score.
precision = right / (right + misleading); with candidates = (right + candidates) / (right +
candidates + misleading).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, fields

from checker.mutate.operators import CLASSES
from checker.mutate.run import Outcome, exemptions
from checker.puzzle.model import Puzzle


@dataclass
class Tally:
    mutants: int = 0
    caught: int = 0
    compile: int = 0
    equivalent: int = 0
    gpu_only: int = 0
    survived: int = 0
    right: int = 0
    candidates: int = 0
    misleading: int = 0
    none: int = 0
    # per caught mutant, its whole report as a learner reads it (Outcome.report_verdict)
    reports_misleading: int = 0
    reports_none: int = 0
    reports: int = 0

    def add(self, other: "Tally") -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def catchable(self) -> int:
        return self.mutants - self.equivalent - self.gpu_only

    @property
    def caught_rate(self) -> float | None:
        return self.caught / self.catchable if self.catchable else None

    @property
    def precision(self) -> float | None:
        named = self.right + self.misleading
        return self.right / named if named else None

    @property
    def precision_with_candidates(self) -> float | None:
        named = self.right + self.candidates + self.misleading
        return (self.right + self.candidates) / named if named else None

    def to_json(self) -> dict:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "caught_rate": self.caught_rate,
                "precision": self.precision, "precision_with_candidates": self.precision_with_candidates}


@dataclass
class Scored:
    """One puzzle's outcomes, judged against the list of equivalent mutants."""
    puzzle: Puzzle
    outcomes: list[Outcome]
    equivalent: dict[str, str]              # id -> reason, as listed
    gpu_only: bool                          # some GPU-only case is bf16: precision survivors are judged there
    complete: bool                          # every mutant of the puzzle was run (no --class, --sample)
    seconds: float = 0.0
    status: dict[str, str] = field(default_factory=dict)   # id -> caught, equivalent, gpu_only, survived

    def __post_init__(self) -> None:
        for o in self.outcomes:
            if o.caught:
                self.status[o.mutant.id] = "caught"
            elif o.mutant.id in self.equivalent:
                self.status[o.mutant.id] = "equivalent"
            elif o.mutant.cls == "precision" and self.gpu_only:
                self.status[o.mutant.id] = "gpu_only"
            else:
                self.status[o.mutant.id] = "survived"

    @property
    def survivors(self) -> list[Outcome]:
        return [o for o in self.outcomes if self.status[o.mutant.id] == "survived"]

    @property
    def wrongly_listed(self) -> list[Outcome]:
        """Listed as equivalent, yet caught: the listing is wrong."""
        return [o for o in self.outcomes if o.caught and o.mutant.id in self.equivalent]

    @property
    def stale(self) -> list[str]:
        """Listed ids no mutant has any more (the solution changed there): only known after a full run."""
        if not self.complete:
            return []
        ids = {o.mutant.id for o in self.outcomes}
        return sorted(i for i in {*self.equivalent, *exemptions(self.puzzle.key).same_bug} if i not in ids)

    @property
    def misleading(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.caught and "misleading" in o.verdicts]

    @property
    def ok(self) -> bool:
        return not (self.survivors or self.wrongly_listed or self.stale)

    def tallies(self) -> dict[str, Tally]:
        by_class = {cls: Tally() for cls in CLASSES}
        for o in self.outcomes:
            t = by_class[o.mutant.cls]
            t.mutants += 1
            status = self.status[o.mutant.id]
            if status == "caught":
                t.caught += 1
                if o.stage == "compile":
                    t.compile += 1
                    continue
                for v in o.verdicts:
                    setattr(t, v, getattr(t, v) + 1)
                t.reports += 1
                t.reports_misleading += o.report_verdict == "misleading"
                t.reports_none += o.report_verdict == "none"
            elif status == "equivalent":
                t.equivalent += 1
            elif status == "gpu_only":
                t.gpu_only += 1
            else:
                t.survived += 1
        return by_class

    def to_json(self) -> dict:
        tallies = self.tallies()
        total = Tally()
        for t in tallies.values():
            total.add(t)
        return {"puzzle": self.puzzle.key, "title": self.puzzle.title, "seconds": round(self.seconds, 1),
                "ok": self.ok, "complete": self.complete,
                "classes": {cls: t.to_json() for cls, t in tallies.items() if t.mutants},
                "total": total.to_json(),
                "mutants": [{**o.to_json(), "status": self.status[o.mutant.id],
                             "reason": self.equivalent.get(o.mutant.id, "")} for o in self.outcomes],
                "wrongly_listed": [o.mutant.id for o in self.wrongly_listed], "stale": self.stale}


# -- text --------------------------------------------------------------------------------------
COLUMNS = ("class", "mutants", "caught", "at compile", "equivalent", "GPU only", "survived", "hint right",
           "among candidates", "misleading", "no hint", "caught %", "precision", "with candidates",
           "reports misleading", "reports with no hint")


GPU_ONLY_NOTE = ("GPU only: precision mutants, which change nothing in fp32; the interpreter runs the fp32 cases, "
                 "the GPU the bfloat16 ones too (`--backend gpu` on a GPU host checks them).")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _share(n: int, of: int) -> str:
    return f"{n} ({100 * n / of:.1f} %)" if of else "-"


def _row(name: str, t: Tally) -> str:
    cells = [name, t.mutants, t.caught, t.compile, t.equivalent, t.gpu_only, t.survived, t.right, t.candidates,
             t.misleading, t.none, _pct(t.caught_rate), _pct(t.precision), _pct(t.precision_with_candidates),
             _share(t.reports_misleading, t.reports), _share(t.reports_none, t.reports)]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(tallies: dict[str, Tally]) -> list[str]:
    """A markdown table: one row per class that has mutants, and the total."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    total = Tally()
    for cls, t in tallies.items():
        if t.mutants:
            lines.append(_row(cls, t))
            total.add(t)
    lines.append(_row("**total**", total))
    return lines


def _hint_example(o: Outcome) -> str:
    bad = next(h for h in o.hints if h["verdict"] == "misleading")
    named = bad["cause"] or "one of " + ", ".join(bad["candidates"])
    text = " ".join(bad["hint"].split())
    return f"names {named} ({bad['source']}): \"{text[:200]}{'...' if len(text) > 200 else ''}\""


def puzzle_section(scored: Scored) -> list[str]:
    p = scored.puzzle
    lines = [f"## {p.key} {p.title}: {len(scored.outcomes)} mutants, {scored.seconds:.0f} s", ""]
    if scored.survivors:
        lines += [f"**Survivors** (not listed in tests/bugs/{p.key}.py's EQUIVALENT):", ""]
        lines += [f"- `{o.mutant.id}` ({o.mutant.cls}) {o.mutant.description}" for o in scored.survivors]
        lines.append("")
    if scored.wrongly_listed:
        lines += ["**Listed as equivalent, but caught** (remove them from the list):", ""]
        lines += [f"- `{o.mutant.id}`: {o.first_failure}" for o in scored.wrongly_listed]
        lines.append("")
    if scored.stale:
        lines += ["**Listed as equivalent, but no such mutant any more** (the solution changed):", ""]
        lines += [f"- `{i}`" for i in scored.stale]
        lines.append("")
    lines += table(scored.tallies())
    also = exemptions(p.key).same_bug
    same = [(o, also[o.mutant.id]) for o in scored.outcomes if o.mutant.id in also]
    if same:
        lines += ["", f"Judged as a second class too (tests/bugs/{p.key}.py, SAME_BUG):", ""]
        lines += [f"- `{o.mutant.id}` ({o.mutant.cls}, also {cls}): {reason}" for o, (cls, reason) in same]
    if any(t.gpu_only for t in scored.tallies().values()):
        lines += ["", GPU_ONLY_NOTE]
    if scored.misleading:
        lines += ["", "Misleading hints:", ""]
        lines += [f"- `{o.mutant.id}` ({o.mutant.cls}) {o.mutant.description}: {_hint_example(o)}"
                  for o in scored.misleading]
    lines.append("")
    return lines


def overall(all_scored: list[Scored]) -> list[str]:
    """Every puzzle together: per class, then one line per puzzle."""
    by_class = {cls: Tally() for cls in CLASSES}
    for s in all_scored:
        for cls, t in s.tallies().items():
            by_class[cls].add(t)
    lines = [f"## All {len(all_scored)} puzzles", ""] + table(by_class) + [""]
    lines += ["| puzzle | mutants | caught % | survived | precision | with candidates | seconds |",
              "|---|---|---|---|---|---|---|"]
    for s in all_scored:
        total = Tally()
        for t in s.tallies().values():
            total.add(t)
        lines.append(f"| {s.puzzle.key} | {total.mutants} | {_pct(total.caught_rate)} | {total.survived} | "
                     f"{_pct(total.precision)} | {_pct(total.precision_with_candidates)} | {s.seconds:.0f} |")
    lines.append("")
    lines += misleading_kinds(all_scored)
    return lines


def _gist(hint: str) -> str:
    """A hint's words with its particulars blanked: numbers, and the `names` of pointers and kernels."""
    text = re.split(r" in program | at `", " ".join(hint.split()))[0]  # an error's place: who and where
    text = re.sub(r"`[^`]*`", "`…`", text)
    return re.sub(r"[-+]?\d[\d.e+-]*", "#", text)[:90]


def misleading_kinds(all_scored: list[Scored]) -> list[str]:
    """The misleading hints grouped by what they say (numbers blanked) and the classes they name,
    most frequent first: which hints to sharpen, and for which bug classes."""
    groups: dict[tuple[str, str], list[str]] = {}
    for s in all_scored:
        for o in s.misleading:
            for h in o.hints:
                if h["verdict"] == "misleading":
                    named = h["cause"] or "one of " + ", ".join(h["candidates"])
                    words = _gist(h["hint"])
                    groups.setdefault((named, f"{h['source']}: {words}"), []).append(f"{s.puzzle.key} {o.mutant.cls}")
    if not groups:
        return []
    lines = ["Misleading hints by kind (mutants, and their puzzles and classes):", "",
             "| names | hint | mutants | where |", "|---|---|---|---|"]
    for (named, text), where in sorted(groups.items(), key=lambda item: -len(item[1])):
        counts = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in Counter(where).most_common())
        lines.append(f"| {named} | {text.replace('|', '/')} | {len(where)} | {counts} |")
    lines.append("")
    return lines
