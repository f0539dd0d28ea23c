"""The one place that decides which diagnoses a learner sees, and in what order.

Producers (the explainers of values, addresses, faults and the patterns across cases) may find
several diagnoses for the same failure; the renderers show only what this module lets through:

- an output's diagnosis is shown unless it only asks about causes other than those the case's own
  sharper diagnoses (the addresses the run saw) name: a question beside a finding would pull the
  other way; one that includes the finding's cause agrees with it;
- a failing case's line quotes its error, else its own diagnosis, else its first shown output's;
- a diagnosis across cases keeps to its premise (checker/diagnosis/across_cases.py says which
  ones survive there); of those, the most specific is shown;
- one report, one story (Story): the first cause a report names, in the order it is read, stands;
  a later diagnosis that names another cause is left out unless its own evidence is stronger, and
  the report says that it left one out.

Pure Python, on the typed records of checker/report/model.py or on the worker's dicts.
"""
from __future__ import annotations

from typing import Iterable

from checker.diagnosis.model import NO_HINT, Diagnosis, Strength


def sharper(case_diagnoses: Iterable[Diagnosis]) -> set[str]:
    """The causes the case's own diagnoses (the addresses) name, beside the outputs' questions."""
    return {d.cause for d in case_diagnoses if d.cause}


def shown(output: Diagnosis, sharper_causes: set[str]) -> bool:
    """Show an output's diagnosis unless it only asks about causes other than the case's sharper
    one: a question beside a finding would pull the other way; one that includes it agrees."""
    return not sharper_causes or bool(output.cause) or bool(sharper_causes & set(output.candidates))


def explanation(case) -> str:
    """What a failing case's one-line summary quotes (a CaseResult): its error, or its own
    diagnosis, else the first shown diagnosis of its outputs."""
    if case.status == "error":
        return case.error["message"]
    return explaining(case).text


def explaining(case) -> Diagnosis:
    """The diagnosis `explanation` quotes (for an error, the error's own)."""
    if case.status == "error":
        return case.error_diagnosis
    cut = sharper(case.diagnoses)
    return next((d for d in case.diagnoses if d.text), None) or next(
        (o.diagnosis for o in case.outputs if not o.ok and o.diagnosis.text and shown(o.diagnosis, cut)), NO_HINT)


def most_specific(found: list[tuple[int, Diagnosis]]) -> list[Diagnosis]:
    """Of the patterns across cases that hold, the one over the fewest cases: a second, broader
    pattern over the same failures only adds a question that pulls elsewhere."""
    return [d for _, d in sorted(found, key=lambda item: item[0])[:1]]


def keeps_pattern(pattern, failing: list[dict]) -> bool:
    """Whether a pattern across cases (one that holds: only cases of its kind fail) may be shown,
    given the failing cases' results (the worker's dicts): a pattern that only asks stays quiet
    where the cases' own evidence names causes it does not ask about, or where a case stopped with
    an error whose causes it does not all ask about; one asking about atomics stays quiet where
    the kernels already add with atomics."""
    ruled_out = {(c["label"], name) for r in failing for c in r.get("comparisons", []) for name in c.get("refuted", ())}
    named = set().union(*[_named_causes(r, ruled_out) for r in failing])
    errors = set().union(*[_error_causes(r) for r in failing])
    if named and not pattern.cause and not named & set(pattern.candidates) or _contradicted(pattern, failing):
        return False
    return not (not pattern.cause and errors - set(pattern.candidates))


def _named_causes(result: dict, ruled_out: set = frozenset()) -> set[str]:
    """The causes this failing case's own evidence points at: those a fault, a known-bug variant or
    the addresses name, and those a fault or the addresses ask about (they saw the kernel run). A
    variant another case ruled out for the same output (ruled_out: (label, name)) points at nothing."""
    if result.get("status") == "error":
        error = result.get("error") or {}
        return {c for c in [error.get("cause", ""), *error.get("candidates", [])] if c}
    named = {c["cause"] for c in result.get("comparisons", []) if not c.get("ok") and c.get("cause")
             and (c["label"], (c.get("code") or "").removeprefix("variant.")) not in ruled_out}
    for h in result.get("hints", []):
        named |= {c for c in [h.get("cause", ""), *h.get("candidates", [])] if c}
    return named


def _error_causes(result: dict) -> set[str]:
    """The causes a failing case's error names or asks about (none if it did not stop with one)."""
    if result.get("status") != "error":
        return set()
    error = result.get("error") or {}
    return {c for c in [error.get("cause", ""), *error.get("candidates", [])] if c}


def _contradicted(pattern, failing: list[dict]) -> bool:
    """A hint that asks about atomics, where every failing case's kernels already add with atomics
    and store nothing plainly to the outputs they add into: asking 'add, not store?' would mislead."""
    if "atomic" not in set(pattern.candidates) | {pattern.cause}:
        return False
    def atomic_only(result: dict) -> bool:
        kinds = [set(k) for k in result.get("accesses", {}).values() if "atomic" in k]
        return bool(kinds) and all("store" not in k for k in kinds)
    return all(atomic_only(r) for r in failing)


class Story:
    """The cause a report tells first, and how strong its evidence is. Fed the diagnoses in the order
    the report shows them (each failing case's error and own diagnoses, then its outputs'), it says
    which to keep: a later one naming another cause on evidence no stronger than the first's would
    tell a second, contradicting story (a race proven by the run, then a known-bug variant that fits
    the numbers in the next case); so would a question that asks only about other causes. A
    question only sets no story: it names no cause."""

    def __init__(self) -> None:
        self.cause = ""
        self.strength = Strength.PATTERN
        self.case = ""
        # output label -> known bug -> the cases that ruled it out (its output was not that bug's there),
        # and those whose output it fitted
        self.ruled_out: dict[str, dict[str, list[str]]] = {}
        self.fitted: dict[str, dict[str, int]] = {}

    # causes that tell no story of their own: code the compiler rejects (its message is about
    # the code, and a case whose kernel compiles may show what the code means), a stub, an input
    # written to (a fact beside any other bug)
    ASIDE = frozenset({"compile", "stub", "inplace"})

    def admits(self, diagnosis: Diagnosis, case: str = "") -> bool:
        if diagnosis.cause in self.ASIDE:
            return True
        if not diagnosis.cause:
            # a question agrees where it asks about the story's cause too; one that asks only about
            # others pulls the other way, and is left out unless its evidence is stronger
            return not self.cause or self.cause in diagnosis.candidates or diagnosis.strength > self.strength
        if not self.cause:
            self.cause, self.strength, self.case = diagnosis.cause, diagnosis.strength, case
            return True
        if diagnosis.cause == self.cause:
            return True
        if diagnosis.strength > self.strength:
            # stronger evidence: it is the story now (what came before it stays shown)
            self.cause, self.strength, self.case = diagnosis.cause, diagnosis.strength, case
            return True
        return False

    def proven(self, diagnosis: Diagnosis, case: str = "") -> None:
        """A diagnosis the run proved (an error, an address the sanitizer saw): always shown; it
        becomes the story where none is told yet or where its evidence is stronger."""
        if diagnosis.cause in self.ASIDE:
            return
        if diagnosis.cause and diagnosis.cause != self.cause and (not self.cause or diagnosis.strength > self.strength):
            self.cause, self.strength, self.case = diagnosis.cause, diagnosis.strength, case

    def read(self, case) -> dict[str, str]:
        """Feed one case (a CaseResult) in the report's order. Its outputs' shown diagnoses are judged
        against the story the earlier cases told (within a case, `shown` arbitrates: a finding and an
        output's named cause may stand side by side); then its error and its own diagnoses (shown
        whatever the story) and, where no story is told yet, its outputs' named causes tell it.
        Returns the outputs whose diagnosis is left out: label -> the note that stands in its place."""
        if case.status == "pass":
            return {}
        cut = sharper(case.diagnoses)
        outputs = [o for o in case.outputs if not o.ok and o.diagnosis and shown(o.diagnosis, cut)]
        left = self._coincidences(case, outputs)
        outputs = [o for o in outputs if o.label not in left]
        told = bool(self.cause)
        if told:
            for o in outputs:
                if not self.admits(o.diagnosis, case.heading):
                    left[o.label] = self.note(o.diagnosis)
        for d in ([case.error_diagnosis] if case.error_diagnosis else []) + list(case.diagnoses):
            self.proven(d, case.heading)
        if not told:
            for o in outputs:
                self.proven(o.diagnosis, case.heading)
        return left

    def _coincidences(self, case, outputs: list) -> dict[str, str]:
        """The outputs whose known bug more earlier cases ruled out than it fitted: a coincidence here
        (a confident row, where leaving out the softmax's sum changes nothing), with the note that
        stands in its place. Then what this case rules out, for the cases after it."""
        left = {}
        for o in outputs:
            if not o.diagnosis.code.startswith("variant."):
                continue
            name = o.diagnosis.code.removeprefix("variant.")
            fitted = self.fitted.setdefault(o.label, {})
            fitted[name] = fitted.get(name, 0) + 1
            against = self.ruled_out.get(o.label, {}).get(name, [])
            if len(against) >= fitted[name]:
                left[o.label] = (f"(these numbers sit near a known mistake, but `{o.label}` in {against[0]} is not "
                                 f"that mistake's: a coincidence here, left out)")
        for o in case.outputs:
            for name in o.refuted:
                self.ruled_out.setdefault(o.label, {}).setdefault(name, []).append(case.heading)
        return left

    def note(self, diagnosis: Diagnosis) -> str:
        """The line that stands where a left-out diagnosis would have been."""
        where = f" in {self.case}" if self.case else ""
        pointed = diagnosis.cause or " or ".join(diagnosis.candidates[:3])
        return (f"(a hint here pointed at {pointed}, on weaker evidence than the {self.cause} named{where}: "
                f"left out; fix that first, then check again)")


class Stories:
    """A Story for each part on each backend: two parts check different kernels, and may have
    different bugs."""

    def __init__(self) -> None:
        self.by_scope: dict[tuple[str, str], Story] = {}

    def read(self, case) -> dict[str, str]:
        return self.by_scope.setdefault((case.part, case.backend), Story()).read(case)
