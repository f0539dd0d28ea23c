"""The book's text as a reader meets it, in reading order (_toc.yml): each page's visible text (its
markdown and the code cells it shows, less the cells whose input is removed and less the reference
solution's dropdown) and, after a puzzle's page, its notebook's markdown cells. And the code in it,
as tokens: what tests/test_book_teaching.py compares with the solutions' kernels.
"""
from __future__ import annotations

import ast
import io
import json
import keyword
import re
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

from book_pages import ROOT, _toc

PUZZLE = re.compile(r"p\d\d")
# a code cell the reader does not see: its input removed (remove-cell, remove-input)
HIDDEN = re.compile(r"^:tags:\s*\[[^\]]*remove-(?:cell|input)", re.M)
FENCE = re.compile(r"^(`{3,})([^\n]*)\n(.*?)^\1[ \t]*$", re.S | re.M)
SOLUTION = re.compile(r"^:::\{dropdown\} The reference solution.*?^:::[ \t]*$", re.S | re.M)
HINT = re.compile(r"^:::\{dropdown\} (Hint \d+[^\n]*)\n(.*?)^:::[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Text:
    stem: str      # the page's stem ("p11", "02_triton_model"); a notebook's is its puzzle's
    kind: str      # "chapter", "page" (a puzzle's) or "notebook"
    text: str      # what the reader sees


def visible(page: str) -> str:
    """A MyST page as its reader sees it: the front matter, the hidden cells' code and the reference
    solution's dropdown left out (a cell whose input is removed shows only what it prints)."""
    page = re.sub(r"\A---\n.*?\n---\n", "", page, flags=re.S)
    page = SOLUTION.sub("", page)

    def cell(m: re.Match) -> str:
        head, body = m.group(2), m.group(3)
        if head.startswith("{code-cell}") and HIDDEN.search(body):
            return ""
        return m.group(0)
    return FENCE.sub(cell, page)


def notebook_markdown(stem: str) -> str:
    path = next((ROOT / "puzzles").glob(f"{stem}_*.ipynb"))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                       for c in cells if c["cell_type"] == "markdown")


def reading(pages: dict[str, str] | None = None, notebooks: dict[str, str] | None = None) -> list[Text]:
    """Every page in reading order, each puzzle's notebook after its page. `pages` and `notebooks`
    replace the texts they name (stem -> markdown), for a test that changes one."""
    found = []
    for _, stem in _toc():
        raw = (pages or {}).get(stem) or (ROOT / "book" / f"{stem}.md").read_text(encoding="utf-8")
        if PUZZLE.fullmatch(stem):
            notebook = (notebooks or {}).get(stem) or notebook_markdown(stem)
            found += [Text(stem, "page", visible(raw)), Text(stem, "notebook", notebook)]
        else:
            found.append(Text(stem, "chapter", visible(raw)))
    return found


def hints(page: str) -> dict[str, str]:
    """A puzzle page's hints: title -> body."""
    return {m.group(1): m.group(2) for m in HINT.finditer(page)}


# ---------------------------------------------------------------------------------------------
# Code as tokens
# ---------------------------------------------------------------------------------------------
SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
LOOSE = re.compile(r"\d+\.\d*(?:e-?\d+)?|\.\d+|\w+|\*\*|//|<<|>>|[<>=!+\-*/%&|^]=|\S")


def tokens(code: str) -> list[str]:
    """Python's tokens of a piece of code, comments and layout left out; a piece that is not Python
    (an inline span such as `x[i, j]`, `...`) by a looser cut."""
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(textwrap.dedent(code)).readline)
                if t.type not in SKIP]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return LOOSE.findall(re.sub(r"#[^\n]*", "", code))


def code_pieces(markdown: str) -> list[str]:
    """The code a text shows: its fenced blocks (code cells included) and its inline spans."""
    pieces = []

    def fence(m: re.Match) -> str:
        body = re.sub(r"^:\w[\w-]*:[^\n]*\n", "", m.group(3), flags=re.M)  # a cell's options (:tags:)
        if "literalinclude" not in m.group(2) and not m.group(2).startswith("{math}"):
            pieces.append(body)
        return " "
    prose = FENCE.sub(fence, markdown)
    return pieces + re.findall(r"`([^`\n]+)`", prose)


@dataclass(frozen=True)
class Kernel:
    name: str
    lines: list[list[str]]   # the body's logical lines, as tokens (the signature and docstring aside)

    @property
    def tokens(self) -> list[str]:
        return [t for line in self.lines for t in line]


def kernels(solution: Path, given: str = "") -> list[Kernel]:
    """The @triton.jit functions of a solution, but those that `given` (a notebook's markdown)
    hands over whole: the learner writes them."""
    text = solution.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    found = []
    for node in ast.parse(text).body:
        if not (isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list)):
            continue
        if f"def {node.name}(" in given:
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        if not body:
            continue
        source = textwrap.dedent("".join(lines[body[0].lineno - 1:node.end_lineno]))
        logical, current = [], []
        for t in tokenize.generate_tokens(io.StringIO(source).readline):
            if t.type == tokenize.NEWLINE:
                logical.append(current)
                current = []
            elif t.type not in SKIP:
                current.append(t.string)
        found.append(Kernel(node.name, [ln for ln in logical if ln]))
    return found


@dataclass(frozen=True)
class Run:
    """The longest run of a kernel's tokens, in order, that a piece of code shows."""
    size: int          # tokens
    lines: int         # the kernel's logical lines wholly inside it
    kernel: str
    text: str          # the run, as tokens joined
    where: str         # the text that shows it


# names a run must match as they are: Python's words and the few builtins kernels call
KEPT = set(keyword.kwlist) | {"range", "float", "int", "min", "max", "tl", "triton"}
NAME = re.compile(r"[A-Za-z_]\w*")


def _renamable(tokens: list[str]) -> list[bool]:
    """Which tokens are names a copy may rename: identifiers, but Python's words and the names that
    follow a dot (tl.load, x.to: an API is not renamed)."""
    return [bool(NAME.fullmatch(t)) and t not in KEPT and not (i and tokens[i - 1] == ".")
            for i, t in enumerate(tokens)]


def _distances(tokens: list[str], renamable: list[bool]) -> list[int]:
    """For each renamable token, how far back its name was last seen (a huge number if never)."""
    last: dict[str, int] = {}
    out = []
    for i, (t, r) in enumerate(zip(tokens, renamable)):
        out.append(i - last[t] if r and t in last else 1 << 30)
        if r:
            last[t] = i
    return out


def longest_run(kernel: Kernel, pieces: list[tuple[str, list[str]]], rename: bool = True) -> Run:
    """The longest run of the kernel's tokens that appears, contiguous and in order, in one piece
    (where, tokens) of code, up to a consistent renaming of its names (a copy with `rm` for `rows`
    everywhere is still a copy): two names match where each was last seen equally far back within
    the run, or neither was seen in it. rename=False: as written.)"""
    flat = kernel.tokens
    k_names = _renamable(flat) if rename else [False] * len(flat)
    k_back = _distances(flat, k_names)
    at: dict[str, list[int]] = {}
    for i, t in enumerate(flat):
        if not k_names[i]:
            at.setdefault(t, []).append(i)
    best, best_start, best_where = 0, 0, ""
    for where, piece in pieces:
        s_names = _renamable(piece) if rename else [False] * len(piece)
        s_back = _distances(piece, s_names)
        previous: dict[int, int] = {}
        for j, token in enumerate(piece):
            current: dict[int, int] = {}
            for i, n in previous.items():  # extend the runs that end just before
                i += 1
                if i >= len(flat) or k_names[i] != s_names[j]:
                    continue
                if k_names[i]:
                    a, b = k_back[i], s_back[j]
                    if not (a == b <= n or (a > n and b > n)):
                        continue
                elif flat[i] != token:
                    continue
                current[i] = n + 1
            if not s_names[j]:  # a run starts at a token that is not a name
                for i in at.get(token, ()):
                    current.setdefault(i, 1)
            for i, n in current.items():
                if n > best:
                    best, best_start, best_where = n, i - n + 1, where
            previous = current
    starts, position = [], 0
    for line in kernel.lines:
        starts.append((position, position + len(line)))
        position += len(line)
    whole = sum(1 for a, b in starts if best and best_start <= a and b <= best_start + best)
    return Run(best, whole, kernel.name, " ".join(flat[best_start:best_start + best]), best_where)




def lines_shown(kernel: Kernel, pieces: list[tuple[str, list[str]]], shortest: int = 6) -> list[str]:
    """The kernel's lines (of `shortest` tokens or more) that some piece of code shows whole, up to
    a consistent renaming of their names: what a reader can copy line for line."""
    shown = []
    for line in kernel.lines:
        if len(line) < shortest:
            continue
        if longest_run(Kernel(kernel.name, [line]), pieces).size == len(line):
            shown.append(" ".join(line))
    return shown
