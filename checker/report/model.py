"""The report of a check as data: what every renderer (text, HTML, JSON) lays out.

A worker sends each case's result as a dict (it crosses a process boundary as JSON); here it is
read once into typed records — a case, its outputs, their diagnoses — so that the three renderers
read the same fields and say the same thing. Pure Python: no torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from checker.diagnosis.model import NO_HINT, Diagnosis, from_json

OK, BAD = "✅", "❌"
# what makes a failure one of addresses or ownership, whose memory map the report opens: an error
# of these kinds, or a shown diagnosis naming (or asking about) one of these causes
MEMORY_ERRORS = ("out_of_bounds", "race", "lock")
MEMORY_CAUSES = frozenset({"mask", "address", "atomic", "loop"})


@dataclass
class OutputResult:
    """One output of one case: its numbers against the reference, and the diagnosis of a failure."""
    label: str
    ok: bool
    title: str = ""
    forward: bool = True
    compared: bool = True               # False: no values to compare (a wrong shape, a store past the end)
    max_diff: float | None = None
    n_bad: int = 0
    n_total: int = 0
    n_unwritten: int = 0
    n_nonfinite: int = 0
    allowed: float = 0.0
    rtol: float = 0.0
    first_bad: list = field(default_factory=list)   # [(index, expected, got)]
    diagnosis: Diagnosis = NO_HINT
    refuted: tuple[str, ...] = ()       # the known bugs this case rules out for this output (their names)

    @classmethod
    def from_dict(cls, c: dict) -> "OutputResult":
        return cls(label=c["label"], ok=c["ok"], title=c.get("title") or "", forward=c.get("forward", True),
                   compared="max_diff" in c, max_diff=c.get("max_diff"), n_bad=c.get("n_bad", 0),
                   n_total=c.get("n_total", 0), n_unwritten=c.get("n_unwritten", 0) or 0,
                   n_nonfinite=c.get("n_nonfinite", 0) or 0, allowed=c.get("allowed", 0.0) or 0.0,
                   rtol=c.get("rtol", 0.0) or 0.0, first_bad=list(c.get("first_bad", [])),
                   refuted=tuple(c.get("refuted", ())),
                   diagnosis=from_json(c) if c.get("hint") or c.get("cause") or c.get("candidates") else NO_HINT)

    @property
    def never_written(self) -> bool:
        return self.compared and self.n_unwritten == self.n_total


@dataclass
class CaseResult:
    """One case of one part on one backend: its verdict, its outputs, the case's own diagnoses (the
    addresses), or the error that stopped it."""
    part: str
    case: str
    dims: str
    dtype: str
    status: str                         # "pass", "fail", "error"
    backend: str = ""
    documented: bool = False
    outputs: list[OutputResult] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    error: dict | None = None           # the error's message, kind, where, code, cause, candidates
    mutated: list[str] = field(default_factory=list)
    title: str = ""                     # the case's name as its part's report shows it (default: the name)
    label: str | None = None            # what the case is without its sizes and dtype (None: not known)
    # what checker/report/build.py decided the report shows (None: no builder decided, all is shown):
    # output label -> whether its diagnosis is shown, and the notes that stand for those left out
    decided_shown: dict[str, bool] | None = None
    notes: dict[str, str] = field(default_factory=dict)
    # which program touched which element, from the interpreter's trace (checker/evidence/memory_map.py),
    # with the reference solution's beside it ("reference"); only the cases that carry one
    memory_map: dict | None = None

    @classmethod
    def from_event(cls, r: dict) -> "CaseResult":
        return cls(part=r["part"], case=r["case"], dims=r.get("dims", ""), dtype=r.get("dtype", "float32"),
                   status=r["status"], backend=r.get("backend", ""), documented=bool(r.get("documented")),
                   outputs=[OutputResult.from_dict(c) for c in r.get("comparisons", [])],
                   diagnoses=[from_json(h) for h in r.get("hints", [])], error=r.get("error"),
                   mutated=list(r.get("mutated", [])), title=r.get("title") or r["case"], label=r.get("label"),
                   decided_shown=dict(r["decided"]["shown"]) if "decided" in r else None,
                   notes=dict(r.get("decided", {}).get("notes", {})), memory_map=r.get("memory_map"))

    def shows(self, o: OutputResult) -> bool:
        """Whether the report shows this failing output's diagnosis (as decided once)."""
        if o.ok or not o.diagnosis:
            return False
        return True if self.decided_shown is None else self.decided_shown.get(o.label, False)

    @property
    def shown(self) -> list[Diagnosis]:
        """Every diagnosis the report shows for this case, in its order: the error's, the case's own
        (the addresses the run saw), then its failing outputs' that are shown."""
        if self.status == "pass":
            return []
        found = [self.error_diagnosis] if self.error_diagnosis else []
        found += [d for d in self.diagnoses if d]
        return found + [o.diagnosis for o in self.outputs if self.shows(o)]

    @property
    def about_memory(self) -> bool:
        """A failure of addresses or ownership (out of bounds, a race, elements never written, a
        diagnosis of masks, addresses, atomics or loops): its memory map is worth opening."""
        if self.status == "pass":
            return False
        if self.error and self.error.get("kind") in MEMORY_ERRORS:
            return True
        if any(o.n_unwritten for o in self.outputs if not o.ok):
            return True
        return any(d.cause in MEMORY_CAUSES or MEMORY_CAUSES & set(d.candidates) for d in self.shown)

    @property
    def explanation(self) -> Diagnosis:
        """What the case's one-line summary quotes: its error's diagnosis, else its own, else its
        first shown output's."""
        if self.status == "error":
            return self.error_diagnosis
        return next((d for d in self.shown if d.text), NO_HINT)

    @property
    def explanation_text(self) -> str:
        """The words of that line: an error's whole message."""
        return self.error["message"] if self.status == "error" and self.error else self.explanation.text

    @property
    def heading(self) -> str:
        """How a line names this case: its name, and its sizes where the name lacks them."""
        title = self.title or self.case
        return title if title.startswith(self.dims) else f"{title}, {self.dims}"

    @property
    def description(self) -> str:
        """What the case is without its sizes (a table gives them a column of their own)."""
        if self.label is not None:
            return self.label
        title = self.title or self.case
        return title[len(self.dims):].lstrip(":, ") if title.startswith(self.dims) else title

    @property
    def error_diagnosis(self) -> Diagnosis:
        """The error's cause or candidates, as a diagnosis (its words are the error's message)."""
        if not self.error:
            return NO_HINT
        if self.error.get("diagnosis"):
            return from_json({**self.error["diagnosis"], "hint": self.error.get("message", "")})
        return Diagnosis(self.error.get("message", ""), self.error.get("cause", ""),
                         tuple(self.error.get("candidates", [])), code=self.error.get("code_id", ""))


@dataclass
class PartTally:
    backend: str
    results: list = field(default_factory=list)     # case_result events
    problems: list = field(default_factory=list)    # one-line reasons the part could not run
    expected: int = 0                               # cases this backend runs for the part

    @property
    def passed(self) -> bool:
        return not self.problems and bool(self.results) and all(r["status"] == "pass" for r in self.results)

    @property
    def unrun(self) -> int:
        return max(0, self.expected - len(self.results))


@dataclass(frozen=True)
class Shown:
    """One diagnosis a report shows: where it stands ("error", "case" or "output" of a case, or
    "summary" across cases), its part, backend and case, and the output it is about."""
    source: str
    part: str
    backend: str
    case: str
    diagnosis: Diagnosis
    output: str = ""


@dataclass
class Report:
    """What a check returns: the verdict, the text, the raw case results (for plots), and one entry
    per part and backend (for --all and --json)."""
    passed: bool
    text: str
    results: list
    parts: list = field(default_factory=list)   # {"part", "title", "backend", "passed", "correct", "cases", "unrun", "problem"}
    usage_error: str = ""                       # the check could not be asked (no CUDA for --backend gpu, ...)
    hints: list = field(default_factory=list)   # hints across cases: {"part", "backend", "hint", "cause", "candidates", ...}
    not_run: list = field(default_factory=list)  # cases no backend here could run: {"case", "why", "sizes"}
    faults: list = field(default_factory=list)   # what stopped a part, as said: {"kind", "part", "backend", "case", "lines"}
    # each failing part's experiment (checker/report/build.py): {"part", "backend", "sentences",
    # "smallest_failing_case", "nearest_passing", ...}
    experiments: list = field(default_factory=list)

    @property
    def cases(self) -> list[CaseResult]:
        """The case results, typed: what the renderers read."""
        return [CaseResult.from_event(r) for r in self.results]

    @property
    def summaries(self) -> list[tuple[str, str, Diagnosis]]:
        """The diagnoses across cases: (part, backend, diagnosis)."""
        return [(h["part"], h["backend"], from_json(h)) for h in self.hints]

    def diagnoses(self) -> list[Diagnosis]:
        """Every diagnosis the report holds, in report order: each case's outputs', its own, its
        error's, then those across cases (shown or not: see shown())."""
        found = []
        for case in self.cases:
            found += [o.diagnosis for o in case.outputs if not o.ok and o.diagnosis]
            found += [d for d in case.diagnoses if d]
            if case.error_diagnosis:
                found.append(case.error_diagnosis)
        return found + [d for _, _, d in self.summaries]

    def shown(self) -> list["Shown"]:
        """Every diagnosis the report shows, as decided once (checker/report/build.py), in report
        order: each case's error's, its own, its shown outputs'; then the claims across cases. What
        the readers render and the measures score."""
        found = []
        for case in self.cases:
            if case.status == "pass":
                continue
            if case.error_diagnosis:
                found.append(Shown("error", case.part, case.backend, case.case, case.error_diagnosis))
            found += [Shown("case", case.part, case.backend, case.case, d) for d in case.diagnoses if d]
            found += [Shown("output", case.part, case.backend, case.case, o.diagnosis, o.label)
                      for o in case.outputs if case.shows(o)]
        return found + [Shown("summary", part, backend, "", d) for part, backend, d in self.summaries]

    def memory_map(self) -> tuple[CaseResult | None, dict | None, str]:
        """The case whose memory map the report shows, the map, and where there is none, why ('' where
        none is owed). The case the learner asked to see, else the first failure. The interpreter's
        section comes first and maps its own first failure; a first failure on a GPU (which records
        no accesses) is one the interpreter passed or does not run, and the sentence says which."""
        cases = self.cases
        asked = next((c for c in cases if c.memory_map and c.memory_map.get("asked")), None)
        if asked is not None:
            return asked, asked.memory_map, ""
        first = next((c for c in cases if c.status != "pass"), None)
        if first is None or first.memory_map or not first.backend.startswith("GPU"):
            return first, first.memory_map if first else None, ""
        ran = any((c.part, c.case) == (first.part, first.case) and not c.backend.startswith("GPU") for c in cases)
        why = "the interpreter passed this case" if ran else "the interpreter does not run this case"
        return first, None, f"No memory map: a GPU records no accesses, and {why}."

    def __repr__(self) -> str:
        return self.text

    def __bool__(self) -> bool:
        return self.passed

    def _ipython_display_(self) -> None:
        # the report was already printed line by line while the check ran
        print(f"Report: {OK + ' ALL CORRECT' if self.passed else BAD + ' NOT ALL CORRECT'} (details above)")
