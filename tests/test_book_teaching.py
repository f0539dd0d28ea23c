"""The book teaches before it asks, and its hints teach rather than hand the kernel over.

Taught before used: every `tl.<name>` a puzzle's reference solution calls appears as `tl.<name>` in
the text a reader has met by the end of that puzzle's page and notebook (tests/book_text.py: the
pages in _toc.yml's order, each puzzle's notebook after its page); every `triton.<name>` the
notebook's code makes the reader use (its stubs, its launch lines) appears before the notebook's
code does.

Given away: the longest run of a kernel's tokens (its body: the signature and docstring aside) that
the code of the puzzle's hints, page and notebook shows, in order and up to a consistent renaming
of its names, or that the code of a chapter before it shows as written, is at most GIVEAWAY tokens:
about one line's worth. A helper the notebook hands over whole is not the learner's to write, and
not measured.

    pytest tests/test_book_teaching.py
"""
from __future__ import annotations

import ast
import functools
import re

import pytest

import book_text
from book_pages import ROOT
from checker import registry

PUZZLES = registry.all_puzzles()
NAME = re.compile(r"\b(tl|triton)\.([A-Za-z_]\w*)")
# about one line's worth: the solutions' median logical line is 14 tokens, their longest lines (a
# masked two-dimensional load or store) 35 to 45; a chapter's example of a simpler problem shares such
# a line with a puzzle, or the three short lines that open a walk over a row, and no more
GIVEAWAY = 40


@functools.lru_cache(maxsize=1)
def book() -> tuple[book_text.Text, ...]:
    """The book in reading order, read once per test run."""
    return tuple(book_text.reading())


def by_puzzle():
    return [pytest.param(p, id=p.key, marks=getattr(pytest.mark, p.key)) for p in PUZZLES]


# ---------------------------------------------------------------------------------------------
# Taught before used
# ---------------------------------------------------------------------------------------------
def named(text: str) -> set[str]:
    return {f"{a}.{b}" for a, b in NAME.findall(text)}


def tl_calls(solution: str) -> set[str]:
    """The tl.<name> the solution's code uses (its comments and docstrings aside)."""
    return {f"tl.{n.attr}" for n in ast.walk(ast.parse(solution))
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "tl"}


def triton_calls(puzzle) -> set[str]:
    """The triton.<name> the notebook's code cells and launch lines use (the import aside)."""
    import json
    cells = json.loads(puzzle.notebook.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    code += "\n".join(re.findall(r"^```python\n(.*?)^```", markdown, re.S | re.M))
    return {n for n in named(code) if n.startswith("triton.") and n != "triton.language"}


def untaught(pages: dict[str, str] | None = None, notebooks: dict[str, str] | None = None) -> dict[str, list[str]]:
    """Puzzle -> the names it uses that the text has not taught by then (`pages`, `notebooks`: texts
    that replace theirs)."""
    taught: set[str] = set()
    missing = {}
    texts = book_text.reading(pages, notebooks) if pages or notebooks else book()
    for i, text in enumerate(texts):
        if text.kind == "chapter":
            taught |= named(text.text)
        elif text.kind == "page":
            notebook = texts[i + 1].text
            prose = re.sub(r"^```.*?^```", "", notebook, flags=re.S | re.M)
            puzzle = registry.get(text.stem)
            here = taught | named(text.text)
            gaps = sorted(tl_calls(puzzle.solution.read_text(encoding="utf-8")) - here - named(notebook))
            gaps += sorted(triton_calls(puzzle) - here - named(prose))
            if gaps:
                missing[text.stem] = gaps
            taught |= named(text.text) | named(notebook)
    return missing


def test_every_name_a_puzzle_uses_is_taught_by_its_page_or_before():
    assert untaught() == {}


@pytest.mark.parametrize("name", ["tl.full", "tl.cast", "tl.log2", "tl.num_programs"])
def test_a_name_taken_off_the_text_that_teaches_it_is_missed(name):
    """The check is live: a name taken off every page and notebook up to the first puzzle that uses
    it is reported there."""
    order = [t.stem for t in book() if t.kind == "page"]
    user = next(stem for stem in order if name in tl_calls(registry.get(stem).solution.read_text(encoding="utf-8")))
    stems = [stem for _, stem in book_text._toc()][:[s for _, s in book_text._toc()].index(user) + 1]
    off = lambda text: re.sub(re.escape(name) + r"\b", "tl.something", text)  # noqa: E731
    pages = {stem: off((ROOT / "book" / f"{stem}.md").read_text(encoding="utf-8")) for stem in stems}
    notebooks = {stem: off(book_text.notebook_markdown(stem)) for stem in stems if book_text.PUZZLE.fullmatch(stem)}
    assert name in untaught(pages, notebooks).get(user, []), (name, user)
    assert name not in untaught().get(user, [])


# ---------------------------------------------------------------------------------------------
# Given away
# ---------------------------------------------------------------------------------------------
def giveaway(stem: str) -> book_text.Run:
    """The longest run of the puzzle's kernels' tokens in the code its reader has seen (see the
    module's docstring)."""
    texts = book()
    chapters, own = [], []
    for i, text in enumerate(texts):
        if text.kind == "chapter":
            chapters += [(text.stem, book_text.tokens(p)) for p in book_text.code_pieces(text.text)]
        elif text.kind == "page" and text.stem == stem:
            own = [(f"{stem}'s page", book_text.tokens(p)) for p in book_text.code_pieces(text.text)]
            own += [(f"{stem}'s notebook", book_text.tokens(p)) for p in book_text.code_pieces(texts[i + 1].text)]
            notebook = texts[i + 1].text
            break
    puzzle = registry.get(stem)
    runs = [run for kernel in book_text.kernels(puzzle.solution, notebook)
            for run in (book_text.longest_run(kernel, own), book_text.longest_run(kernel, chapters, rename=False))]
    return max(runs, key=lambda r: r.size)


GRADES = ("the idea: ", "the approach: ", "the line to get right: ")


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_the_hints_go_from_the_idea_to_the_approach_to_one_line(puzzle):
    """Hint 1 gives the idea, hint 2 the approach, hint 3 the one line that is hard to get right;
    any later hint answers what a report may say."""
    titles = list(book_text.hints((ROOT / "book" / f"{puzzle.key}.md").read_text(encoding="utf-8")))
    assert [re.sub(r"^Hint \d+ — ", "", t)[:len(g)] for t, g in zip(titles, GRADES)] == list(GRADES), titles
    assert [int(re.match(r"Hint (\d+)", t).group(1)) for t in titles] == list(range(1, len(titles) + 1))


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_no_hint_page_or_chapter_gives_the_kernel_away(puzzle):
    run = giveaway(puzzle.key)
    assert run.size <= GIVEAWAY, (f"{run.where} shows {run.size} tokens of {run.kernel} in a row "
                                  f"({run.lines} whole lines): {run.text}")


def test_the_measure_sees_a_kernel_handed_over():
    """Pasted into a hint, renamed, a kernel is seen whole."""
    puzzle = registry.get("p08")
    kernel = book_text.kernels(puzzle.solution)[0]
    source = ast.get_source_segment(puzzle.solution.read_text(encoding="utf-8"),
                                    next(n for n in ast.parse(puzzle.solution.read_text(encoding="utf-8")).body
                                         if isinstance(n, ast.FunctionDef)))
    body = source.split('"""')[-1].replace("acc", "total").replace("cols", "idx")
    run = book_text.longest_run(kernel, [("a hint", book_text.tokens(body))])
    assert run.size >= len(kernel.tokens) - 1  # a run starts at a token that is not a name: `row = ...` at `=`
