"""The report as HTML, for a notebook: built from the Report's data (its cases, outputs, hints and
faults), never from its text.

The verdict comes first, then one table of cases per part (a case's sizes in a column of their own,
its label as true of that part), a note on what was not run, then the first failure in full (the
error-map figure goes right after it), its memory map (which program touched which element, beside
the reference solution's: open where the failure is one of addresses or ownership), then the other
failures folded. An explanation already shown
for an earlier case (the same hint, the same paragraph of an out-of-bounds message) is not repeated:
a line says it is the same as above, and for which case. Everything that comes from the learner or
the checker's messages is escaped.
"""
from __future__ import annotations

import html
import re

from checker.diagnosis.model import Diagnosis
from checker.report.model import BAD, OK, CaseResult, OutputResult, Report
from checker.report.sentences import how_far_off, in_a_line
from checker.words import counted

STYLE = """<style>
div.tgp-report { font-size: 14px; line-height: 1.45; overflow-wrap: normal; word-break: normal;
  hyphens: none; text-align: left; }
div.tgp-report p { margin: 0.25em 0; white-space: normal; overflow-wrap: normal; word-break: normal; }
div.tgp-report .tgp-verdict { font-size: 1.15em; font-weight: 600; padding: 0.3em 0.6em; border-radius: 4px; }
div.tgp-report .tgp-pass { background: rgba(46, 160, 67, 0.15); }
div.tgp-report .tgp-fail { background: rgba(248, 81, 73, 0.15); }
div.tgp-report .tgp-note { opacity: 0.85; }
div.tgp-report h4 { font-size: 1.05em; font-weight: 600; margin: 0.9em 0 0.3em; }
div.tgp-report pre.tgp-code { white-space: pre-wrap; overflow-wrap: normal; word-break: normal;
  margin: 0.15em 0 0.35em 1.5em; padding: 0.25em 0.5em; font-size: 13px; background: rgba(127, 127, 127, 0.1);
  border: none; }
div.tgp-report table.tgp-t { border-collapse: collapse; margin: 0.3em 0; table-layout: auto; width: auto;
  font-size: 13px; }
div.tgp-report table.tgp-t th, div.tgp-report table.tgp-t td { text-align: left; vertical-align: top;
  padding: 0.15em 0.7em 0.15em 0.2em; border: none; border-bottom: 1px solid rgba(127, 127, 127, 0.25);
  white-space: normal; line-height: 1.35; }
div.tgp-report table.tgp-t td.tgp-nowrap, div.tgp-report table.tgp-t td code { white-space: nowrap; }
div.tgp-report .tgp-title { margin: 0.2em 0 0.4em; }
div.tgp-report table.tgp-values td { font-family: var(--jp-code-font-family, monospace); }
div.tgp-report .tgp-scroll { overflow-x: auto; }
div.tgp-report details { margin: 0.3em 0; padding-left: 0.2em; }
div.tgp-report details > div { margin-left: 1.2em; }
div.tgp-report summary { cursor: pointer; }
div.tgp-report .tgp-same { font-style: italic; opacity: 0.8; }
div.tgp-report img.tgp-map-image { max-width: 100%; height: auto; margin: 0.3em 0; }
</style>"""

SUMMARY_WORDS = 100  # characters of a hint or an error shown in a line (cut at a word)
NOT_RUN_NAMED = 4   # GPU-only cases named in the note; the rest counted
TRACEBACK_SHOWN = ("not_implemented", "out_of_bounds", "race", "lock")  # kinds whose message says it all
# the memory map's pixels per inch, and the CSS pixels per inch it is shown at: its smallest text
# (8 points) then reads at 14 px like the report's own, and the picture stays sharp
MAP_DPI, MAP_SHOWN_PPI = 150, 125


def verdict(report: Report) -> str:
    """The report's last line, in the text report's words."""
    line = f"Overall Result: {OK} ALL CORRECT" if report.passed else f"Overall Result: {BAD} NOT ALL CORRECT"
    if report.passed and report.not_run:
        n = len(report.not_run)
        line += f" in the interpreter; {n} GPU-only case{'s' if n > 1 else ''} not run"
    return line


def to_html(report: Report) -> str:
    """The whole report in one piece (where no figure goes between)."""
    head, tail = report_html(report)
    return head + tail


def report_html(report: Report) -> tuple[str, str]:
    """(head, tail): the verdict, the tables and the first failure in full; then its memory map and the
    other failures, folded. The error-map figure of the first failure belongs between the two ('' when
    none failed)."""
    seen: dict[str, str] = {}   # an explanation already shown -> the case it was shown for
    cases = report.cases  # built afresh at each call: read once
    failures = [c for c in cases if c.status != "pass"]
    parts = {(p["part"], p["backend"]) for p in report.parts}
    cells = [f for f in report.faults if f["kind"] == "cell"]  # a cell that does not run: said before all
    head = [*_faults_html(cells), _verdict_html(report),
            *_faults_html([f for f in report.faults if (f["part"], f["backend"]) not in parts and f not in cells]),
            *_parts_html(report), *_not_run_html(report)]
    if failures:
        first = failures[0]
        head.append(f"<h4>First failure: {_inline(_where(report, first))}</h4>")
        head.append(_detail(first, seen))
    tail = _map_html(report)  # after the first failure's figure of where it differs, before the others
    if len(failures) > 1:
        tail.append(f"<h4>The other {len(failures) - 1} failure{'s' if len(failures) > 2 else ''} "
                    f"(click one to open it)</h4>")
        for above, r in zip(failures, failures[1:]):
            said = _summary(r, above.explanation_text, hint=False)
            tail.append(f"<details><summary>{BAD} {_inline(_where(report, r))}: {said}</summary>"
                        f"<div>{_detail(r, seen)}</div></details>")
    wrap = lambda parts: f'{STYLE}<div class="tgp-report">{"".join(parts)}</div>'  # noqa: E731
    return wrap(head), (wrap(tail) if tail else "")


# ---- the verdict, what stopped a part, the tables ----

def title_html(line: str) -> str:
    """The check's first line (what it checks, and from where), for a notebook: as HTML, whose words
    wrap whole (a notebook shows plain text output with word-break: break-all, "as las|t run")."""
    return f'{STYLE}<div class="tgp-report"><p class="tgp-title">{_inline(line)}</p></div>'


def _verdict_html(report: Report) -> str:
    if report.usage_error:  # nothing was checked: why, and no verdict
        return f'<p class="tgp-verdict tgp-fail">{BAD} {_inline(report.usage_error)}</p>'
    return f'<p class="tgp-verdict {"tgp-pass" if report.passed else "tgp-fail"}">{_e(verdict(report))}</p>'


def _not_run_html(report: Report) -> list[str]:
    """A note after the results: the cases only a GPU runs, where none ran."""
    if not report.not_run:
        return []
    n = len(report.not_run)
    names = "; ".join(c.get("sizes", c["case"]) for c in report.not_run[:NOT_RUN_NAMED])
    more = f"; and {n - NOT_RUN_NAMED} more" if n > NOT_RUN_NAMED else ""
    return [f'<p class="tgp-note">Not run here: {n} case{"s" if n > 1 else ""} that only a GPU runs '
            f"({_e(names)}{more}). A CUDA machine checks them too.</p>"]


def _faults_html(faults: list[dict]) -> list[str]:
    """A stub, cells that do not run, a hang, a crash: as the checker said them, with their line.
    Its first line says what happened; the lines under it (where, last words, what to do, the
    error's own message with its code) follow as paragraphs."""
    out = []
    for fault in faults:
        first, *rest = [line for line in fault["lines"] if line.strip()] or [""]
        if first:
            out.append(f"<p>{_inline(first.strip())}</p>" + (_message_html(_dedent("\n".join(rest))) if rest else ""))
    return out


def _parts_html(report: Report) -> list[str]:
    out = []
    for part in report.parts:
        results = [c for c in report.cases if c.part == part["part"] and c.backend == part["backend"]]
        faults = [f for f in report.faults if (f["part"], f["backend"]) == (part["part"], part["backend"])]
        # a problem the lines under the heading say in full (a kernel not defined, a stub) is said there once
        problem = part["problem"]
        if problem and any(problem in line for f in faults for line in f["lines"]):
            problem = "not run"
        # the case a hang or a crash stopped in is counted where it was, not as "not run"
        left = part["unrun"] - any(f["kind"] in ("hang", "crash") and f["case"] for f in faults)
        unrun = f"; {counted(left, 'case')} not run" if left > 0 else ""
        if problem and results:
            how = (f"{problem}: stopped after {part['cases']} of {counted(part['cases'] + part['unrun'], 'case')} "
                   f"({part['correct']} correct)")
        elif problem:
            how = problem + (unrun if problem not in ("kernel cells do not run", "not run") else "")
        else:
            how = f"{part['correct']} of {counted(part['cases'], 'case')} correct" + unrun
        out.append(f"<h4>{OK if part['passed'] else BAD} {_e(part['title'])} — {_e(part['backend'])}: "
                   f"{_inline(how)}</h4>")
        if results and part["passed"] and not report.passed:  # the failing parts matter now: this one folded
            out.append(f"<details><summary>its {len(results)} cases, all correct</summary>{_table(results)}</details>")
        elif results:
            out.append(_table(results))
        out += _faults_html(faults)
        out += _experiment_html([e for e in report.experiments
                                 if (e["part"], e["backend"]) == (part["part"], part["backend"])])
        out += [f"<p>hint: {_inline(d.text)}</p>" for name, backend, d in report.summaries
                if name == part["part"] and backend == part["backend"]]
    return out


def _experiment_html(found: list[dict]) -> list[str]:
    """The part's experiment: its smallest failing case and the nearest cases that pass."""
    out = []
    for e in found:
        first, *rest = e["sentences"]
        items = "".join(f"<li>{_inline(line)}</li>" for line in rest)
        out.append(f'<p class="tgp-experiment"><b>Narrowing it down</b> (cases the checker made, one change at a '
                   f"time; they do not count toward the verdict): {_inline(first)}</p>"
                   + (f"<ul>{items}</ul>" if items else ""))
    return out


def _table(results: list[CaseResult]) -> str:
    failed = any(r.status != "pass" for r in results)  # else no column for what failed
    rows, above = [], ""
    for r in results:
        ok = r.status == "pass"
        # one place for the sizes: their own column; the case column says what else the case is
        sizes = r.dims if r.dtype == "float32" else f"{r.dims} {r.dtype}".strip()
        what = f"<td>{'' if ok else _summary(r, above)}</td>" if failed else ""
        rows.append(f'<tr><td>{OK if ok else BAD}</td><td class="tgp-nowrap">{_e(sizes)}</td>'
                    f'<td>{_e(r.description)}</td>{what}</tr>')
        above = r.explanation_text if not ok else above
    what = "<th>what failed</th>" if failed else ""
    return ('<div class="tgp-scroll"><table class="tgp-t tgp-cases"><thead><tr><th></th><th>sizes</th><th>case</th>'
            f'{what}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def _summary(r: CaseResult, above: str = "", hint: bool = True) -> str:
    """One line: which outputs, how many elements, the hint's first words (or the error's).
    above: the explanation of the failing line above ("the same" where equal); hint: False where the
    line quotes none (a folded failure, whose details say it)."""
    if r.status == "error":
        if above == r.error["message"]:
            return "the same error as above"
        return _inline(_first_words(r.error["message"].strip().split("\n")[0]))
    outputs = [in_a_line(o) for o in r.outputs if not o.ok]
    if r.mutated:
        outputs.append(f"changed its inputs ({', '.join(r.mutated)})")
    text = _e("; ".join(outputs))
    said = r.explanation_text if hint else ""
    if said and said == above:
        return text + " — the same hint as above"
    return text + (f" — hint: {_inline(_first_words(_gist(r.explanation), 60))}" if said else "")


def _gist(d: Diagnosis) -> str:
    """A diagnosis in a line: its first line, or where that line only says where (a heading over the
    diagnosis's own line of code), the first line of the paragraph after it: what is wrong there."""
    blocks = _blocks(d.text)
    first, _, code = blocks[0].partition("\n")
    if len(blocks) > 1 and d.where is not None and d.where.code and d.where.code in code:
        return blocks[1].split("\n")[0]
    return first


# ---- one failing case in full ----

def _detail(r: CaseResult, seen: dict[str, str]) -> str:
    """One failing case in full: its outputs, each with its hint where the report shows it (or the
    note that stands for one its story left out), its own hints."""
    label = _label(r)
    if r.status == "error":
        return _error_html(r.error, label, seen)
    out = []
    for o in r.outputs:
        out.append(_output_html(o, label, seen, r.shows(o)))
        if o.label in r.notes:
            out.append(f"<p class=\"tgp-note\">{_inline(r.notes[o.label])}</p>")
    for d in r.diagnoses:
        out.append(_hint_html(d.text, label, seen))
    if r.mutated:
        out.append(f"<p>{BAD} the kernel changed its inputs: {_e(', '.join(r.mutated))} "
                   "(inputs are read-only; write only to outputs)</p>")
    return "".join(out)


def _output_html(o: OutputResult, label: str, seen: dict[str, str], show_hint: bool) -> str:
    name = _e(o.label) + (f" ({_e(o.title)})" if o.title and o.title != o.label else "")
    if o.ok:
        diff = f": max difference {o.max_diff:.2e}" if o.compared else ""
        return f"<p>{OK} {name}{diff}</p>"
    if not o.compared:
        return f"<p>{BAD} {name}: {_inline(o.diagnosis.text or 'wrong')}</p>"
    out = [f"<p>{BAD} {name}: {_e(how_far_off(o))}</p>"]
    if not o.never_written:
        rows = "".join(f"<tr><td>{_e(str(list(index)))}</td><td>{_number(expected)}</td><td>{_number(got)}</td></tr>"
                       for index, expected, got in o.first_bad)
        if rows:
            out.append('<div class="tgp-scroll"><table class="tgp-t tgp-values"><thead><tr><th>at</th><th>expected</th>'
                       f"<th>got</th></tr></thead><tbody>{rows}</tbody></table></div>")
    if show_hint and o.diagnosis.text:
        out.append(_hint_html(o.diagnosis.text, label, seen))
    return "".join(out)


def _hint_html(hint: str, label: str, seen: dict[str, str]) -> str:
    if hint in seen:
        return f'<p class="tgp-same">hint: {_same(seen[hint], label)}: “{_inline(_first_words(hint))}”</p>'
    seen[hint] = label
    return _message_html(f"hint: {hint}")


def _error_html(error: dict, label: str, seen: dict[str, str]) -> str:
    whole = "\n".join([error["message"], error.get("where", ""), error.get("code", "")])
    if whole in seen:
        return f'<p class="tgp-same">The error: {_same(seen[whole], label)}.</p>'
    seen[whole] = label
    out = []
    for block in _blocks(error["message"]):
        if block in seen:  # a paragraph an earlier case's message had word for word
            first = block.split("\n")[0]
            out.append(f'<p class="tgp-same">“{_inline(_first_words(first))}” — {_same(seen[block], label)}.</p>')
        else:
            seen[block] = label
            out.append(_message_html(block))
    if error.get("where") and error["where"] not in error["message"]:  # a fault's message names its place
        out.append(f"<p>at {_inline(error['where'])}</p>")
        if error.get("code"):
            out.append(_code(error["code"]))
    if error.get("traceback") and error.get("kind") not in TRACEBACK_SHOWN:
        out.append(f"<details><summary>the full traceback</summary>{_code(error['traceback'].rstrip())}</details>")
    return "".join(out)


def _same(first_shown: str, label: str) -> str:
    return "the same as above" + ("" if first_shown == label else f" (for {_e(first_shown)})")


# ---- the memory map ----

def _map_html(report: Report) -> list[str]:
    """The memory map of the case the report opens first (or the one the learner asked for), folded;
    open where the failure is one of addresses or ownership. A sentence instead where a GPU's
    failure has none; nothing where no launch touched memory (it did not compile, say)."""
    case, drawn, why_none = report.memory_map()
    if case is None:
        return []
    if drawn is None:
        return [f'<p class="tgp-note">{_inline(why_none)}</p>'] if why_none else []
    from checker.report import map_figure
    if not map_figure.worth_drawing(drawn):
        return []
    try:
        image = map_figure.png(drawn, case.heading, dpi=MAP_DPI)
    except Exception as err:  # noqa: BLE001 - a picture that cannot be drawn must not take the report with it
        return [f'<p class="tgp-note">The memory map could not be drawn ({_e(type(err).__name__)}: {_e(err)}).</p>']
    import base64
    width = round(map_figure.PAGE_IN * MAP_SHOWN_PPI)
    said = "".join(f'<p class="tgp-note">{_inline(line)}</p>' for line in map_figure.notes(drawn))
    opened = " open" if case.about_memory or drawn.get("asked") else ""
    title = "Memory map" + ("" if case.status != "pass" and not drawn.get("asked") else f" of {_e(case.heading)}")
    return [f'<details class="tgp-map"{opened}><summary>{title}: which program wrote (or read) each element, '
            f"yours beside the reference solution's</summary>"
            f'<img class="tgp-map-image" width="{width}" alt="{_e(map_figure.describe(drawn))}" '
            f'src="data:image/png;base64,{base64.b64encode(image).decode()}">{said}</details>']


# ---- text to HTML ----

def _blocks(message: str) -> list[str]:
    """A message's paragraphs: a line and the indented lines under it (code, or its continuation)."""
    blocks: list[list[str]] = []
    for line in message.rstrip().split("\n"):
        if blocks and (line.startswith(" ") or not line.strip()):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return ["\n".join(b).rstrip() for b in blocks]


def _message_html(text: str) -> str:
    """Paragraph lines as paragraphs, each one's indented lines under it as code."""
    out = []
    for block in _blocks(text):
        first, _, rest = block.partition("\n")
        out.append(f"<p>{_inline(first)}</p>")
        if rest.strip():
            out.append(_code(_dedent(rest)))
    return "".join(out)


def _code(text: str) -> str:
    return f'<pre class="tgp-code">{_e(text)}</pre>'


def _inline(text: str) -> str:
    """Escaped; `names` in backticks as code."""
    return re.sub(r"`([^`\n]+)`", r"<code>\1</code>", _e(text))


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _dedent(text: str) -> str:
    lines = text.split("\n")
    pad = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[pad:] for line in lines)


def _first_words(text: str, limit: int = SUMMARY_WORDS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text.rstrip(":")
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + " …" if cut.count("`") % 2 == 0 else cut + "` …"


def _number(value) -> str:
    return "—" if value is None else _e(f"{value:.6g}")


def _label(r: CaseResult) -> str:
    """How a later line names this case: its name, and its sizes where the name lacks them."""
    return r.heading


def _where(report: Report, r: CaseResult) -> str:
    """The case, with its part where the report has several parts or backends."""
    if len(report.parts) <= 1:
        return _label(r)
    title = next((p["title"] for p in report.parts if p["part"] == r.part), r.part)
    backend = f", {r.backend}" if len({p["backend"] for p in report.parts}) > 1 else ""
    return f"{title}{backend}: {_label(r)}"
