"""What every puzzle page shows, read from the puzzle's own files when the book is built: the
statement and each part's instructions (the notebook's markdown cells), the stubs (its cells
tagged `kernel`). A page cannot drift from its notebook, because it has no copy of it.

The notebook also speaks to someone working *in* the notebook: which cells to edit, the check
cell, the shell command that checks the saved notebook, what to do when done, "the book page
explains ...". None of that belongs on the book page, which is where the reader already is, so
it is left out by rule (`PLUMBING`, `plumbing()`), not by copying the rest. The rules are few
and named, and `tests/test_book_toc.py` checks that nothing else is dropped and that no trace of
the notebook's plumbing reaches a page.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# A markdown cell with this heading is the notebook's last word to its user (checker.new's DONE).
DONE_HEADING = "## When you are done"
# A paragraph that speaks of the notebook's cells or of the notebook itself is plumbing.
PLUMBING = [r"tagged `kernel`", r"\bthis notebook\b", r"\bsaved notebook\b", r"\bcheck cell\b"]
# A sentence or clause that sends the notebook's reader to "the book page": on that page, it
# points at itself. The clause ends at a full stop (taken with it), a semicolon or a parenthesis.
BOOK_PAGE = re.compile(r"(?:[;,]\s*|\s*)\b[Tt]he book page\b[^.;)]*(?:\.(?=\s|$))?")
# A stub's TODO tells the notebook's user to run the check cell (checker.stubs.TODO): the page
# keeps the TODO and drops that clause.
STUB_CHECK_CELL = re.compile(r",\s*then run the check cell[^.\n]*")
# "chapter 5" in a notebook: a link to that chapter on the page (its number is its title's)
CHAPTER = re.compile(r"(?<![`<])\b([Cc]hapter) (\d+)\b")


def _notebook(key: str) -> Path:
    found = sorted((ROOT / "puzzles").glob(f"{key}_*.ipynb"))
    if not found:
        raise FileNotFoundError(f"no notebook puzzles/{key}_*.ipynb")
    return found[0]


def cells(key: str) -> list[dict]:
    """The notebook's cells, each with its text and tags."""
    notebook = json.loads(_notebook(key).read_text(encoding="utf-8"))
    out = []
    for cell in notebook["cells"]:
        src = cell.get("source", "")
        out.append({"type": cell["cell_type"], "text": "".join(src) if isinstance(src, list) else src,
                    "tags": cell.get("metadata", {}).get("tags", [])})
    return out


def chapters() -> dict[int, str]:
    """Chapter number -> its page (file stem), from the titles ("# Chapter 3: ...")."""
    found = {}
    for page in (ROOT / "book").glob("[0-9][0-9]_*.md"):
        m = re.search(r"^# Chapter (\d+):", page.read_text(encoding="utf-8"), re.M)
        if m:
            found[int(m.group(1))] = page.stem
    return found


def _paragraphs(text: str) -> list[str]:
    """Markdown split at blank lines, a fenced block (code, math) kept whole."""
    out, current, fence = [], [], None
    for line in text.split("\n"):
        stripped = line.strip()
        if fence is None and not stripped and current:
            out.append("\n".join(current))
            current = []
            continue
        current.append(line)
        if fence is None and (stripped.startswith("```") or stripped == "$$"):
            fence = "```" if stripped.startswith("```") else "$$"
            if fence == "```" and stripped.count("```") > 1:
                fence = None
        elif fence is not None and (stripped == fence or (fence == "$$" and stripped.startswith("$$"))):
            fence = None
    if current:
        out.append("\n".join(current))
    return out


def plumbing(paragraph: str) -> bool:
    return not paragraph.lstrip().startswith(("```", "$$")) and any(
        re.search(p, paragraph) for p in PLUMBING)


def _normal_tex(tex: str) -> str:
    """A formula without its spacing and layout (alignment, line breaks), to tell whether two
    display equations say the same thing."""
    tex = re.sub(r"\\[,;:! ]|\\q?quad\b|\\(?:begin|end)\{(?:aligned|split|gathered)\}|&|\\\\", "", tex)
    return re.sub(r"\s+", "", tex).rstrip(".,")


def page_equations(key: str) -> dict[str, str]:
    """The page's own labelled display equations, normalised TeX -> label."""
    page = ROOT / "book" / f"{key}.md"
    text = page.read_text(encoding="utf-8") if page.is_file() else ""
    return {_normal_tex(m.group(1)): m.group(2)
            for m in re.finditer(r"^\$\$[ \t]*\n(.*?)\n\$\$[ \t]*\((eq-[\w-]+)\)", text, re.S | re.M)}


def _stated(tex: str, equations: dict[str, str]) -> list[str]:
    """The labels of the page's equations that together make up the display equation `tex`
    (one equation, or several side by side, separated by commas), in its order; else []."""
    parts = sorted((tex.index(t), label, t) for t, label in equations.items() if t and t in tex)
    rest = tex
    for _, _, t in parts:
        rest = rest.replace(t, "", 1)
    return [label for _, label, _ in parts] if parts and re.fullmatch(r"[,;.]*", rest) else []


def statement(key: str) -> list[tuple[str, str]]:
    """What the page shows of the notebook, in order: ("markdown", text), ("code", stub), and
    ("equation", "label ...") where the notebook has a display equation that the page states
    itself, labelled and checked against autograd (`page_equations`): no formula is shown twice.

    The notebook's title is dropped (the page has its own) and its headings go one level down;
    the notebook's plumbing is left out (see the module's docstring)."""
    chapter_pages = chapters()
    equations = page_equations(key)
    out: list[tuple[str, str]] = []

    def flush(kept):
        text = "\n\n".join(kept).strip()
        if text:
            out.append(("markdown", text))

    for cell in cells(key):
        if cell["type"] == "markdown":
            text = cell["text"]
            if text.lstrip().startswith(DONE_HEADING):
                continue
            if text.lstrip().startswith("# "):  # the notebook's title: the page has its own
                text = text.split("\n", 1)[1] if "\n" in text else ""
            kept: list[str] = []
            for para in _paragraphs(text):
                if plumbing(para):
                    continue
                if para.lstrip().startswith("$$"):
                    labels = _stated(_normal_tex(para.strip().strip("$")), equations)
                    if labels:
                        flush(kept)
                        kept = []
                        out.append(("equation", " ".join(labels)))
                        continue
                elif not para.lstrip().startswith("```"):
                    para = BOOK_PAGE.sub("", para)
                    para = CHAPTER.sub(
                        lambda m: f"{{doc}}`{m.group(1)} {m.group(2)} <{chapter_pages[int(m.group(2))]}>`"
                        if int(m.group(2)) in chapter_pages else m.group(0), para)
                    para = re.sub(r"^## ", "### ", para, flags=re.M)
                kept.append(para)
            flush(kept)
        elif "kernel" in cell["tags"]:
            out.append(("code", STUB_CHECK_CELL.sub("", cell["text"].rstrip())))
    return out


def show_statement(key: str, until: str | None = None, after: str | None = None) -> None:
    """Display the statement and the stubs (see `statement`). A page that states one of the
    notebook's equations itself shows the statement in two pieces around it:
    `show_statement(key, until=label)`, the labelled equation, `show_statement(key, after=label)`.
    Where a page does not, a reference to its equation stands in the statement's place."""
    from IPython.display import Markdown, display

    items = statement(key)
    if until or after:
        where = next(i for i, (kind, text) in enumerate(items)
                     if kind == "equation" and (until or after) in text.split())
        items = items[:where] if until else items[where + 1:]
    for kind, text in items:
        if kind == "equation":
            refs = ", ".join(f"{{eq}}`{label}`" for label in text.split())
            display(Markdown(f"(equation{'s' if ' ' in text else ''} {refs})"))
        else:
            display(Markdown(text if kind == "markdown" else "```python\n" + text + "\n```"))


def show_memory_map(key: str, part: str | None = None, tensors: list[str] | None = None) -> None:
    """The memory map the checker draws (checker/report/map_figure.py) of the reference solution on
    the documented case, traced in the interpreter while the page is built: the picture a failing
    check shows beside the learner's own map. tensors: the outputs and inputs to draw (default:
    the part's outputs)."""
    from IPython.display import display

    from checker import registry
    from checker.report import map_figure
    from checker.report.model import CaseResult
    from checker.run.session import run_check
    from checker.source import from_file

    puzzle = registry.get(key)
    part = part or puzzle.parts[0].name
    case = next(c for c in puzzle.cases() if c.documented)
    solution = from_file(puzzle.solution, f"solutions/{puzzle.solution.name}")
    report = run_check(puzzle, [part], solution, backend="interpreter", only_documented=True, in_process=True,
                       write=lambda line: None, map_case=case.name, experiments=0.0)
    result = next(r for r in report.results if r.get("memory_map"))
    display(map_figure.figure(result["memory_map"], CaseResult.from_event(result).heading, reference_only=True,
                              tensors=tensors))
