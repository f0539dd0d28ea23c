"""The progress view: in puzzle order, each part's last outcome in the interpreter and on a GPU, when
it was last checked, and the best --bench fraction of the roofline. As text (`python -m checker
--progress`) and as an HTML table (`progress()` in a notebook), both from the same rows."""
from __future__ import annotations

import html
import unicodedata
from dataclasses import dataclass

from checker import registry
from checker.history.store import Progress, load
from checker.history.verdicts import CRASH, DOES_NOT_RUN, HANG
from checker.puzzle.model import REPO_ROOT, Puzzle
from checker.report.model import BAD, OK

NOT_CHECKED = "·"
HOW_TO_CHECK = "Each check updates this: python -m checker pNN, or the check cells of a puzzle's notebook."


@dataclass
class Row:
    """One line of the view: a part that was checked, or a whole puzzle that never was (part None)."""
    puzzle: Puzzle
    part: str | None
    title: str
    interpreter: str
    gpu: str
    last: str
    bench: str


def _outcome(outcome: dict | None) -> str:
    """"✅ 6/6", "❌ 3/6"; what stopped a check as what it was: "❌ hang", "❌ crash", "❌ does not run"."""
    if outcome is None:
        return NOT_CHECKED
    mark = OK if outcome.get("passed") else BAD
    if outcome.get("verdict") in (HANG, CRASH, DOES_NOT_RUN):
        return f"{mark} {outcome['verdict']}"
    return f"{mark} {outcome.get('correct', 0)}/{outcome['cases']}" if outcome.get("cases") else f"{mark} not run"


def _when(stamp: str) -> str:
    return stamp.replace("T", " ")[:16]


def bench_words(best: dict | None) -> str:
    """'0.87 of the roofline (NVIDIA H100)', or, where the work is counted in flops, the best other
    column's time over yours."""
    if not best:
        return ""
    device = f" ({best['device']})" if best.get("device") else ""
    if best.get("fraction") is not None:
        return f"{best['fraction']:.2f} of the roofline{device}"
    if best.get("other_over_yours"):
        return f"{best['other_over_yours']:.2f}× {best['other']}'s speed{device}"
    return ""


def rows(progress: Progress) -> list[Row]:
    """Every puzzle of the registry in order: a row per part (in the puzzle's order) of a puzzle with
    records, one 'not checked yet' row for a puzzle without."""
    found = []
    for puzzle in registry.all_puzzles():
        record = progress.puzzles.get(puzzle.key, {})
        parts = record.get("parts", {})
        bench = bench_words(record.get("bench"))
        if not parts:
            found.append(Row(puzzle, None, "not checked yet", NOT_CHECKED, NOT_CHECKED, "", bench))
            continue
        for part in puzzle.parts:  # all of them, once one was checked: those left to do show too
            outcomes = parts.get(part.name, {})
            stamps = [o.get("checked", "") for o in outcomes.values() if isinstance(o, dict)]
            found.append(Row(puzzle, part.name, part.title, _outcome(outcomes.get("interpreter")),
                             _outcome(outcomes.get("gpu")), _when(max(stamps, default="")),
                             bench if puzzle.bench and puzzle.bench.part == part.name else ""))
    return found


def totals(progress: Progress) -> str:
    """'3 of 47 parts pass in the interpreter, 1 on a GPU.'"""
    every = [(p.key, part.name) for p in registry.all_puzzles() for part in p.parts]
    passed = {backend: sum(bool((progress.outcome(key, part, backend) or {}).get("passed")) for key, part in every)
              for backend in ("interpreter", "gpu")}
    return f"{passed['interpreter']} of {len(every)} parts pass in the interpreter, {passed['gpu']} on a GPU."


def _width(text: str) -> int:
    """Columns a terminal gives the text: ✅ and ❌ take two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _where(progress: Progress) -> str:
    try:
        return str(progress.path.relative_to(REPO_ROOT))
    except ValueError:
        return str(progress.path)


def text_lines(progress: Progress | None = None) -> list[str]:
    """The view for a terminal."""
    progress = progress or load()
    table = rows(progress)
    head = ("puzzle", "part", "interpreter", "GPU", "last check", "best --bench")
    cells = [(f"{r.puzzle.key} {r.puzzle.title}", r.title, r.interpreter, r.gpu, r.last, r.bench) for r in table]
    widths = [max(_width(c[i]) for c in [head, *cells]) for i in range(len(head))]
    lines = [f"Your progress: {totals(progress)} (kept in {_where(progress)})"]
    if progress.problem:
        lines.append(f"(The record could not be read: {progress.problem}.)")
    lines.append("")
    for cell in [head, *cells]:
        lines.append("  ".join(c + " " * (w - _width(c)) for c, w in zip(cell, widths)).rstrip())
    return [*lines, "", HOW_TO_CHECK]


# Two classes on every selector: JupyterLab's own rules for an output's tables (`:not(.jp-RenderedMarkdown)
# .jp-RenderedHTMLCommon td`: right-aligned; `table`: centred, a fixed layout) must not win. A table
# wider than the output scrolls in its own box instead of running past the output's edge.
STYLE = """<style>
div.tgp-progress div.tgp-scroll { overflow-x: auto; max-width: 100%; }
div.tgp-progress table.tgp-progress { border-collapse: collapse; font-size: 13px; width: auto;
  table-layout: auto; margin: 0 0 0.5em 0; }
div.tgp-progress table.tgp-progress th, div.tgp-progress table.tgp-progress td { text-align: left;
  padding: 0.15em 0.8em 0.15em 0.2em; border: none; border-bottom: 1px solid rgba(127, 127, 127, 0.25);
  white-space: nowrap; }
div.tgp-progress table.tgp-progress tr.tgp-unchecked td { opacity: 0.6; }
</style>"""


def html_table(progress: Progress | None = None) -> str:
    """The view for a notebook: one table, a puzzle's name on its first row only."""
    progress = progress or load()
    e = html.escape
    out = [STYLE, "<div class='tgp-progress'>", f"<p><b>Your progress</b>: {e(totals(progress))}</p>"]
    if progress.problem:
        out.append(f"<p>The record could not be read: {e(progress.problem)}.</p>")
    out.append("<div class='tgp-scroll'><table class='tgp-progress'><tr><th>puzzle</th><th>part</th><th>interpreter</th><th>GPU</th>"
               "<th>last check</th><th>best --bench</th></tr>")
    previous = None
    for r in rows(progress):
        name = "" if r.puzzle.key == previous else f"{r.puzzle.key} {r.puzzle.title}"
        previous = r.puzzle.key
        unchecked = " class='tgp-unchecked'" if r.part is None else ""
        out.append(f"<tr{unchecked}>" + "".join(f"<td>{e(c)}</td>" for c in
                                                (name, r.title, r.interpreter, r.gpu, r.last, r.bench)) + "</tr>")
    out.append(f"</table></div><p>{e(HOW_TO_CHECK)}</p></div>")
    return "\n".join(out)


class ProgressView:
    """What progress() returns: shown as the HTML table in a notebook, as text elsewhere."""

    def __init__(self, progress: Progress | None = None):
        self.progress = progress or load()

    def _repr_html_(self) -> str:
        return html_table(self.progress)

    def __repr__(self) -> str:
        return "\n".join(text_lines(self.progress))
