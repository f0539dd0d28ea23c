"""Render worker events as the learner's report: the documented case in full, one line per other
case, details only for what failed, a summary per part and backend, and the overall verdict."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from checker.diagnosis.model import Diagnosis
from checker.puzzle.model import Puzzle
from checker.report.build import ReportBuilder
from checker.report.model import BAD, OK, CaseResult, OutputResult, PartTally, Report
from checker.report.repeats import Repeats, same_line
from checker.report.sentences import fmt as _fmt
from checker.report.sentences import how_far_off

INDENT = "   "


def _comparison_lines(o: OutputResult, depth: int = 2, hint_shown: bool = False, hint: bool = True) -> list[str]:
    """hint_shown: this hint was printed for an earlier case of the part: one line, no repeat.
    hint: False where a sharper hint of the same case follows (the addresses), so that a question
    does not pull the other way."""
    pad = INDENT * depth
    said = o.diagnosis.text
    if not o.compared:  # a failure with no values to compare (a wrong shape, a store past the end)
        if hint and hint_shown and said:
            return [f"{pad}{o.label}: the same as above"]
        return [f"{pad}{o.label}: {said or 'wrong'}"]
    head = f"{pad}{o.label}: {how_far_off(o)}"
    if hint and hint_shown and said:
        return [head + "; the same hint as above"]
    lines = [head]
    if not o.never_written:
        for index, expected, got in o.first_bad:
            lines.append(f"{pad}{INDENT}at {list(index)}: expected {expected:.6g}, got {got:.6g}")
    if hint and said:
        lines.append(f"{pad}hint: {said}")
    return lines


def _case_hint_lines(diagnoses: list[Diagnosis], depth: int = 2, earlier: Callable[[Diagnosis], str] = lambda d: ""
                     ) -> list[str]:
    """earlier: the case a diagnosis was said for in full ('' if none): then one line says so."""
    pad = INDENT * depth
    lines = []
    for d in diagnoses:
        first_said = earlier(d)
        if first_said:
            lines.append(f"{pad}hint: {same_line(d, first_said)}")
            continue
        first, *rest = d.text.split("\n")
        lines.append(f"{pad}hint: {first}")
        lines += [f"{pad}{INDENT}{line}" for line in rest]
    return lines


def _error_lines(error: dict, verbose: bool, depth: int = 2) -> list[str]:
    pad = INDENT * depth
    lines = [f"{pad}{line}" for line in error["message"].rstrip().split("\n")]
    if error.get("where") and error["where"] not in error["message"]:  # a fault's message names its place
        code = f": {error['code']}" if error.get("code") else ""
        lines.append(f"{pad}at {error['where']}{code}")
    if verbose and error.get("traceback"):
        lines += [f"{pad}{line}" for line in error["traceback"].rstrip().split("\n")]
    elif error.get("traceback") and error["kind"] not in ("not_implemented", "out_of_bounds", "race", "lock"):
        lines.append(f"{pad}(the full traceback: --verbose)")
    return lines


class EarlyMap:
    """The PNG of a case's memory map, drawn in a thread as soon as its result comes: the drawing
    (and matplotlib's import, the first time) overlaps the cases and experiments still running,
    instead of adding to the check's end."""

    def __init__(self, event: dict) -> None:
        import threading
        self.drawn = event["memory_map"]
        self.heading = CaseResult.from_event(event).heading
        self.picture: bytes | None = None
        self.thread = threading.Thread(target=self._draw, name="checker-memory-map", daemon=True)
        self.thread.start()

    def _draw(self) -> None:
        from checker.report import map_figure
        try:
            self.picture = map_figure.png(self.drawn, self.heading, captions=True)
        except Exception:  # noqa: BLE001 - drawn again where it is needed, where the error is said
            self.picture = None

    def png(self) -> bytes | None:
        self.thread.join()
        return self.picture


class ReportWriter:
    """Feed it events; it prints as it goes (so a slow case shows progress) and tallies verdicts."""

    def __init__(self, puzzle: Puzzle, write: Callable[[str], None] = print, verbose: bool = False,
                 timeout_advice: str = "--timeout SECONDS"):
        self.puzzle, self.write, self.verbose = puzzle, write, verbose
        self.timeout_advice = timeout_advice
        self.lines: list[str] = []
        self.tallies: dict[tuple[str, str], PartTally] = {}   # (part, backend label) -> tally
        self.backend = ""
        self.cases = {case.name: case for case in puzzle.cases()}
        self.pending_parts: list[str] = []   # parts the running backend was asked for
        self.current_part = ""
        self.last_error: tuple = ()          # repeated identical errors are shown once
        self.shown_hints: set = set()        # (part, hint) already printed: later cases say "as above"
        self.repeats = Repeats()             # diagnoses said in full: a later case's same one gets a line
        self.builder = ReportBuilder(puzzle)  # decides what the report shows; this only lays it out
        self.expected_cases: dict[str, int] = {}   # backend kind -> cases per part
        self.usage_error = ""
        self.saw_cuda = False
        self.sections = 0
        self.backends_run: set[str] = set()  # "interpreter", "gpu": which backends said hello
        self.only_documented = False         # a check of the documented case alone skips the rest by design
        self.faults: list[dict] = []         # a stub, cells that do not run, a hang, a crash: the lines said
        self.map_folder: Path | None = None  # where the memory map's PNG goes (None: no file is written)
        self.early_map: EarlyMap | None = None  # the first mapped case's PNG, drawn while the check goes on

    def say(self, text: str = "") -> None:
        self.lines.append(text)
        self.write(text)

    def tally(self, part: str) -> PartTally:
        return self.tallies.setdefault((part, self.backend),
                                       PartTally(self.backend, expected=self.expected_cases.get(self.backend, 0)))

    def title(self, origin: str, parts: list[str]) -> None:
        self.say(f"Puzzle {self.puzzle.number}: {self.puzzle.title} — checking {', '.join(parts)} "
                 f"from {origin}")

    def backend_section(self, label: str) -> bool:
        """Start a backend's section; False if it is the section already open (parallel workers)."""
        if self.backend == label and self.sections:
            return False
        self.backend = label
        self.sections += 1
        self.say()
        self.say(f"══ {label} ══")
        return True

    def part_problem(self, part: str, message: str, where: str = "", kind: str = "part") -> None:
        """The part could not run (a stub, a syntax error): one line, no traceback. kind: the static
        problem's (checker/source.py), kept with the fault for whoever grades it."""
        tally = self.tally(part)
        if not tally.problems:
            self.say(f"── {self.puzzle.part(part).title} ──")
        self.say(f"{INDENT}{BAD} {message}" + (f" ({where})" if where else ""))
        tally.problems.append(message)
        self.faults.append({"kind": kind, "part": part, "backend": self.backend, "case": "", "lines": self.lines[-1:],
                            "message": message, "where": where})

    def cell_problem(self, line: str) -> None:
        """A cell that does not run, said before any part (the parts it holds are not checked)."""
        self.say(f"{BAD} {line}")
        self.faults.append({"kind": "cell", "part": "", "backend": "", "case": "", "lines": self.lines[-1:]})

    def handle(self, event: dict) -> None:
        kind, said = event["type"], len(self.lines)
        self._handle(event)
        if kind in ("load_error", "hang", "crash", "stopped"):
            self.faults.append({"kind": kind, "part": event.get("part") or self.current_part, "backend": self.backend,
                                "case": event.get("case") or "", "lines": self.lines[said:]})

    def _handle(self, event: dict) -> None:
        kind = event["type"]
        if kind == "hello":
            self.saw_cuda = self.saw_cuda or bool(event.get("cuda"))
            if event["backend"] == "gpu" and not event.get("cuda"):
                self.usage_error = ("no CUDA device here: --backend gpu needs one. The interpreter runs "
                                    "anywhere: --backend interpreter.")
                self.say(f"{BAD} {self.usage_error}")
                return
            self.backends_run.add(event["backend"])
            label = "Interpreter (CPU)" if event["backend"] == "interpreter" else f"GPU ({event['device']})"
            self.expected_cases[label] = event.get("cases_per_part", 0)
            if self.backend_section(label):
                self.say(f"{INDENT}triton {event['triton']}, torch {event['torch']}")
        elif kind == "load_error":
            self.say(f"{INDENT}{BAD} the kernel cells do not run:")
            for line in _error_lines(event["error"], self.verbose):
                self.say(line)
            for part in self.pending_parts:
                self.tally(part).problems.append("kernel cells do not run")
        elif kind == "part_start":
            part = self.puzzle.part(event["part"])
            self.say(f"── {part.title}: {' + '.join(part.kernels)} ──")
            self.tally(part.name)
        elif kind == "case_result":
            if self.map_folder is not None and self.early_map is None and event.get("memory_map"):
                self.early_map = EarlyMap(event)
            self.case_result(event)
        elif kind == "experiment":
            self.experiment(event)
        elif kind == "part_end":
            self.part_end(event["part"])
        elif kind == "slow":
            self.say(f"{INDENT}… {event['case'] or 'the kernels'}: still running after {event['after']:g} s "
                     f"(stopped at {event['timeout']:g} s)")
        elif kind == "hang":
            why = f" ({event['why']})" if event.get("why") else ""
            self.say(f"{INDENT}{BAD} {event['case'] or 'starting up'}: still running after {event['timeout']:g} s{why}, "
                     f"so it was stopped. A loop that never ends? (check the loop bounds and the step, and that "
                     f"every lock taken is released; raise the limit with {self.timeout_advice})")
            if event.get("where"):
                self.say(f"{INDENT}{INDENT}it was at {event['where']}")
            self.stop_parts(f"hang in {event['case']}")
        elif kind == "crash":
            where = f" during {event['case']}" if event.get("case") else ""
            self.say(f"{INDENT}{BAD} {event['reason']}{where}.")
            detail = [ln for ln in event.get("stderr", "").strip().split("\n") if ln.strip()]
            if detail:
                self.say(f"{INDENT}{INDENT}last words: {detail[-1].strip()[:300]}")
            if any(sig in event["reason"] for sig in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL")):
                self.say(f"{INDENT}{INDENT}The kernel most likely reached memory outside its tensors. Check it on the "
                         f"CPU with the sanitizer on (the default; not --no-sanitize, not the GPU): it stops "
                         f"an out-of-bounds access before it happens and names the line.")
            if self.verbose:
                for line in detail[-40:]:
                    self.say(f"{INDENT}{INDENT}{line}")
            self.stop_parts(event["reason"])
        elif kind == "stopped":
            self.say(f"{INDENT}{BAD} stopped: the device cannot run more cases after this error.")
            self.stop_parts("stopped after a device error")

    def stop_parts(self, reason: str) -> None:
        for part in self.pending_parts:
            tally = self.tally(part)
            if not tally.passed or part == self.current_part:
                tally.problems.append(reason)

    def case_result(self, event: dict) -> None:
        event["backend"] = self.backend
        self.current_part = event["part"]
        tally = self.tally(event["part"])
        tally.results.append(event)
        if event["documented"]:
            self.documented(event)
            return
        ok = event["status"] == "pass"
        case = self.builder.case(event)  # decided; named as its part has it: notes true of the part's blocks
        title = case.title or case.case
        dims = "" if title.startswith(case.dims) else case.dims  # the name says it already
        self.say(f"{INDENT}{OK if ok else BAD} {title:<52} {dims}".rstrip())
        if event["status"] == "error":
            error = event["error"]
            key = (error["kind"], error["message"], error.get("where"))
            if key == self.last_error:
                self.say(f"{INDENT * 2}(the same error)")
                return
            self.last_error = key
            first_said = self._earlier(case.error_diagnosis, case)
            if first_said:
                self.say(f"{INDENT * 2}{same_line(case.error_diagnosis, first_said)}")
                return
            for line in _error_lines(error, self.verbose):
                self.say(line)
        elif not ok:
            for o in case.outputs:
                if not o.ok:
                    key = (case.part, o.diagnosis.text)
                    show = case.shows(o)
                    for line in _comparison_lines(o, hint_shown=key in self.shown_hints, hint=show):
                        self.say(line)
                    if show:
                        self.shown_hints.add(key)
                    elif o.label in case.notes:
                        self.say(f"{INDENT * 3}{case.notes[o.label]}")
            for line in _case_hint_lines(case.diagnoses, earlier=lambda d: self._earlier(d, case)):
                self.say(line)

    @staticmethod
    def _output_lines(o: OutputResult, case: CaseResult) -> list[str]:
        """The documented case's lines for a failing output; its hint, or the note that the story left it out."""
        lines = _comparison_lines(o, hint=case.shows(o))
        return lines + ([f"{INDENT * 2}{case.notes[o.label]}"] if o.label in case.notes else [])

    def _earlier(self, d: Diagnosis, case: CaseResult) -> str:
        """The case of this part and backend whose same diagnosis was said in full ('' if none yet)."""
        return self.repeats.earlier(d, case.heading, case.part, self.backend)

    def documented(self, event: dict) -> None:
        what = "sizes" if event.get("sized") else "dimensions"
        self.say(f"Testing with {what}: {event['dims']}" + ("" if event["dtype"] == "float32" else f" ({event['dtype']})"))
        self.say(f"{INDENT}Computing PyTorch autograd reference...")
        case = self.builder.case(event)
        if event["status"] == "error":
            error = event["error"]
            self.last_error = (error["kind"], error["message"], error.get("where"))
            self._earlier(case.error_diagnosis, case)  # said in full here: the later cases refer to it
            for line in _error_lines(error, self.verbose, depth=1):
                self.say(line)
            self.say(f"{INDENT}This case:    {BAD} INCORRECT")
            self.say("The other cases:")
            return
        forward = [o for o in case.outputs if o.forward]
        grads = [o for o in case.outputs if not o.forward]
        for o in forward:
            name = o.title or o.label
            if o.compared:
                self.say(f"{INDENT}{name} max difference: {_fmt(o.max_diff)}" + ("" if o.ok else f" {BAD}"))
            else:
                self.say(f"{INDENT}{name}: {OK if o.ok else BAD}")
            if not o.ok:
                for line in self._output_lines(o, case):
                    self.say(line)
        for o in grads:
            diff = _fmt(o.max_diff) if o.compared else "-"
            self.say(f"{INDENT}{o.label}: {diff} {OK if o.ok else BAD}")
            if not o.ok:
                for line in self._output_lines(o, case):
                    self.say(line)
        for line in _case_hint_lines(case.diagnoses, depth=1, earlier=lambda d: self._earlier(d, case)):
            self.say(line)
        verdict = lambda group: f"{OK} CORRECT" if all(o.ok for o in group) else f"{BAD} INCORRECT"  # noqa: E731
        part = self.puzzle.part(event["part"])
        width = max(len(part.forward_label), len(part.gradient_label), len("This case")) + 2
        if forward:
            self.say(f"{INDENT}{(part.forward_label + ':').ljust(width)}{verdict(forward)}")
        if grads:
            self.say(f"{INDENT}{(part.gradient_label + ':').ljust(width)}{verdict(grads)}")
        self.say(f"{INDENT}{'This case:'.ljust(width)}{OK + ' CORRECT' if event['status'] == 'pass' else BAD + ' INCORRECT'}")
        self.say("The other cases:")

    def experiment(self, event: dict) -> None:
        """The part's experiment: its smallest failing case and the nearest that pass."""
        if self.builder.experiment(event, self.backend) is None:
            return
        self.say(f"{INDENT}Narrowing it down (cases the checker made, one change at a time; they do not count "
                 f"toward the verdict):")
        for line in self.builder.experiments[-1]["sentences"]:
            self.say(f"{INDENT * 2}{line}")

    def part_end(self, part: str) -> None:
        for hint in self.builder.part_end(part, self.backend, self.tally(part).results):
            self.say(f"{INDENT}hint: {hint.text}")

    def memory_map_file(self) -> None:
        """The memory map of the first failure (or of the case asked for), as a PNG in the map
        folder, named in a line; the line that says why there is none, on a GPU."""
        results = [r for tally in self.tallies.values() for r in tally.results]
        case, drawn, why_none = Report(False, "", results).memory_map()
        if case is None or self.map_folder is None:
            return
        from checker.report import map_figure
        if drawn is None or not map_figure.worth_drawing(drawn):
            if why_none:
                self.say(why_none)
            return
        path = self.map_folder / f"{self.puzzle.key}_{case.part}.png"
        early = self.early_map
        try:
            picture = early.png() if early is not None and early.drawn is drawn else None
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(picture or map_figure.png(drawn, case.heading, captions=True))
        except Exception as err:  # noqa: BLE001 - a picture that cannot be drawn or written must not stop the report
            self.say(f"The memory map could not be drawn ({type(err).__name__}: {err}).")
            return
        shown = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
        self.say(f"Memory map of {case.heading} (which program wrote each element, beside the reference "
                 f"solution's): {shown}")

    def finish(self, parts: list[str]) -> Report:
        self.memory_map_file()
        self.say()
        everything_ok = True
        for part in [] if self.usage_error else parts:
            title = self.puzzle.part(part).title
            self.say(f"{title} Test Summary:")
            for (name, _), tally in self.tallies.items():
                if name != part:
                    continue
                n_ok = sum(r["status"] == "pass" for r in tally.results)
                total = len(tally.results)
                if tally.problems and tally.results:
                    # "1/1 correct" would read as a pass: say where it stopped, and why
                    detail = (f"{tally.problems[0]}: stopped after {total} of {tally.expected or total} cases "
                              f"({n_ok} correct)")
                elif tally.problems:
                    detail = tally.problems[0]
                    # the case a hang or a crash stopped in is counted where it was: not "not run"
                    unrun = tally.unrun - self._stopped_in(part, tally.backend)
                    if unrun and tally.problems[0] != "kernel cells do not run":
                        detail += f"; {unrun} of {tally.expected} cases not run"
                else:
                    detail = f"{n_ok}/{total} cases correct"
                    if tally.unrun:
                        detail += f"; {tally.unrun} of {tally.expected} cases not run"
                self.say(f"{INDENT}{tally.backend}: {OK if tally.passed else BAD} {detail}")
                everything_ok &= tally.passed
        if not self.tallies:
            everything_ok = False
        not_run = self._not_run()
        if not_run:
            names = "; ".join(c["sizes"] for c in not_run[:4]) + ("; …" if len(not_run) > 4 else "")
            self.say(f"Not run here: {len(not_run)} case{'s' if len(not_run) > 1 else ''} that only a GPU runs "
                     f"({names}). A CUDA machine checks them too.")
        verdict = OK + " ALL CORRECT" if everything_ok else BAD + " NOT ALL CORRECT"
        if everything_ok and not_run:
            verdict += f" in the interpreter; {len(not_run)} GPU-only case{'s' if len(not_run) > 1 else ''} not run"
        if not self.usage_error:  # nothing was checked: the line above says why, and no verdict is made up
            self.say(f"Overall Result: {verdict}")
        results = [r for tally in self.tallies.values() for r in tally.results]
        summary = [{"part": name, "title": self.puzzle.part(name).title, "backend": tally.backend,
                    "passed": tally.passed, "correct": sum(r["status"] == "pass" for r in tally.results),
                    "cases": len(tally.results), "unrun": tally.unrun,
                    "problem": tally.problems[0] if tally.problems else ""}
                   for (name, _), tally in self.tallies.items()]
        return Report(everything_ok and not self.usage_error, "\n".join(self.lines), results, summary,
                      self.usage_error, self.builder.hints, not_run, self.faults, self.builder.experiments)

    def _stopped_in(self, part: str, backend: str) -> int:
        """1 where a hang or a crash stopped this part's check in one of its cases, else 0."""
        return int(any(f["kind"] in ("hang", "crash") and f["part"] == part and f["backend"] == backend
                       and f["case"] for f in self.faults))

    def _not_run(self) -> list[dict]:
        """Cases that only a GPU runs, where no GPU section ran: named, so that an all-correct
        interpreter report does not pass for more than it checked."""
        if self.usage_error or self.only_documented or "gpu" in self.backends_run or not self.backends_run:
            return []
        # named by their sizes: a name's notes on blocks hold for some parts only
        return [{"case": c.name, "why": "bfloat16 on a GPU" if c.dtype == "bfloat16" else "GPU only (size)",
                 "sizes": c.dims if c.dtype == "float32" else f"{c.dims} {c.dtype}"}
                for c in self.puzzle.cases() if c.gpu_only]
