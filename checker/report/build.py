"""The report decided once: which diagnosis each failing case shows, which the report's story leaves
out (and the note in its place), what a case's one-line summary quotes, what the part's experiment
found and which claims across cases it lets through.

The worker's events come in here in the report's order; each case's decision is written into its
event ("decided"), so that the Report carries it and every reader — the text, the HTML, the JSON,
the gradebook, the mutation tool and the corpus measure — renders or scores the same decision and
none makes it again (tests/test_report_renderers.py holds them to it). The rules themselves are in
checker/diagnosis/arbitrate.py and checker/diagnosis/across_cases.py; this is the one caller.
Pure Python: no torch.
"""
from __future__ import annotations

from checker.diagnosis import arbitrate, experiments
from checker.diagnosis.across_cases import summary_hints
from checker.diagnosis.launch_assumed import with_launch_asked
from checker.diagnosis.written_numbers import written_to_an_input
from checker.diagnosis.experiments import Finding
from checker.diagnosis.model import Diagnosis
from checker.puzzle.launch import READS
from checker.puzzle.model import Puzzle
from checker.report.model import CaseResult


class ReportBuilder:
    """Feed it the events in order; it decides and records what the report shows."""

    def __init__(self, puzzle: Puzzle) -> None:
        self.puzzle = puzzle
        self.stories = arbitrate.Stories()   # one story a part: a later, weaker, contradicting hint is left out
        self.cases = {case.name: case for case in puzzle.cases()}
        self.findings: dict[tuple[str, str], Finding] = {}   # (part, backend) -> its experiment
        self.experiments: list[dict] = []    # as the report carries them
        self.hints: list[dict] = []          # the claims across cases that are shown
        self.mutated: dict[str, list[str]] = {}   # part -> the inputs its kernels wrote, in any case so far
        # the values a launch chooses that the kernels must read (a persistent grid's program count)
        self.launch_params = sorted({name for case in puzzle.cases() if case.variation_of
                                     for name in case.params if name in READS})

    def case(self, event: dict) -> CaseResult:
        """Decide one case_result event (its "backend" set): what its failing outputs show."""
        if self.launch_params and event.get("status") != "pass":
            self._ask_about_the_launch(event)
        # an input the kernels wrote in one case explains an output left unwritten in another, where the
        # write happened to leave the input's values as they were (a rotation by 0, a scale of 1)
        written = self.mutated.setdefault(event.get("part", ""), [])
        written += [m for m in event.get("mutated", []) if m not in written]
        if written and event.get("status") != "pass":
            event["comparisons"] = [written_to_an_input(c, written) for c in event.get("comparisons", [])]
        case = CaseResult.from_event(event)
        decided: dict = {"shown": {}, "notes": {}}
        if case.status != "pass":
            left = self.stories.read(case)
            if case.status == "fail":
                cut = arbitrate.sharper(case.diagnoses)
                decided["shown"] = {o.label: bool(o.diagnosis) and arbitrate.shown(o.diagnosis, cut)
                                    and o.label not in left for o in case.outputs if not o.ok}
                decided["notes"] = left
        event["decided"] = decided
        return CaseResult.from_event(event)

    def _ask_about_the_launch(self, event: dict) -> None:
        """Where the launch chooses a value the kernels must read, a case's hints about addresses,
        masks and loops ask whether the kernel assumes it, too (checker/diagnosis/launch_assumed.py)."""
        ask = lambda entry: with_launch_asked(entry, self.launch_params)  # noqa: E731
        event["comparisons"] = [ask(c) if not c.get("ok") else c for c in event.get("comparisons", [])]
        event["hints"] = [ask(h) for h in event.get("hints", [])]
        error = event.get("error")
        if error and error.get("diagnosis"):
            asked = ask({**error["diagnosis"], "hint": "", "message": error.get("message", "")})
            event["error"] = {**error, "message": asked.pop("message"), "diagnosis": asked}
        elif error and (error.get("cause") or error.get("candidates")):
            event["error"] = ask(error)

    def experiment(self, event: dict, backend: str) -> Finding | None:
        """An experiment on a part's cases (checker/experiment.py), read and recorded."""
        finding = experiments.read(self.puzzle, event, backend)
        if finding is None:
            return None
        self.findings[(finding.part, backend)] = finding
        said = experiments.sentences(finding, self.puzzle)
        self.experiments.append({
            "part": finding.part, "backend": backend, "sentences": said,
            "smallest_failing_case": experiments.settings(finding.smallest, self.puzzle),
            "what_failed": experiments.what_failed(finding.result),
            "nearest_passing": [{"property": n.prop, "from": n.before, "to": n.after,
                                 "case": experiments.settings(n.case, self.puzzle),
                                 "why": experiments.why_it_differs(n, finding, self.puzzle),
                                 # a pair on the way: the larger failing case it differs from
                                 **({"failing_case": experiments.settings(n.base, self.puzzle)} if n.base else {})}
                                for n in finding.passing],
            "minimal": finding.minimal, "stopped": finding.stopped, "trials": finding.trials,
            "seconds": finding.seconds})
        return finding

    def part_end(self, part: str, backend: str, results: list[dict]) -> list[Diagnosis]:
        """The claims across cases the part's results and its experiment let through."""
        pairs = [(self.cases[r["case"]], r) for r in results if r["case"] in self.cases]
        found = summary_hints(self.puzzle, pairs, self.findings.get((part, backend)))
        self.hints += [{"part": part, "backend": backend, **d.to_json()} for d in found]
        return found
