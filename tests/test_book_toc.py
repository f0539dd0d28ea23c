"""The book's sources, no build needed: the reading order (_toc.yml) against the chapters' and
puzzles' numbers and the text's references to them, and the puzzle pages against their
notebooks (no notebook plumbing, nothing said twice).

    pytest tests/test_book_toc.py
"""

from __future__ import annotations

import re
import sys
from difflib import SequenceMatcher

import pytest

from book_pages import PUZZLE_PAGES, ROOT, _title, _toc

# Sources only, no build: not marked `book`, so `pytest -m "p33 and not book"` (a contributor's quick
# loop) runs them too; over every puzzle, so `-m p33` selects each (tests/conftest.py)
pytestmark = [pytest.mark.every_puzzle]

sys.path.insert(0, str(ROOT / "book"))
import puzzle_page  # noqa: E402  (book/puzzle_page.py: what a puzzle page shows of its notebook)


# ------------------------------------------------------------------------------------------
# The reading order: _toc.yml, the titles, the registry and the text agree (no build needed)
# ------------------------------------------------------------------------------------------
def _chapters() -> dict[int, str]:
    return {int(m.group(1)): stem for _, stem in _toc() if (m := re.match(r"Chapter (\d+): ", _title(stem)))}


def test_parts_are_numbered_in_reading_order():
    captions = list(dict.fromkeys(caption for caption, _ in _toc() if caption))
    numbers = [int(m.group(1)) for c in captions if (m := re.match(r"Part (\d+): ", c))]
    assert numbers == list(range(1, len(numbers) + 1)), captions


def test_every_part_but_the_first_is_numbered_and_teaches_before_it_asks():
    """After "Getting started", every part is "Part N: ..." (a part without a number reads as an
    aside, and breaks the count the reader keeps), and within a part no chapter comes after a
    puzzle: the chapters teach what the puzzles then ask."""
    parts: dict[str, list[str]] = {}
    for caption, stem in _toc()[1:]:
        parts.setdefault(caption, []).append(stem)
    problems = []
    for caption, stems in list(parts.items())[1:]:
        if not re.match(r"Part \d+: ", caption):
            problems.append(f"{caption!r} has no part number")
        puzzles = [i for i, stem in enumerate(stems) if re.fullmatch(r"p\d\d", stem)]
        chapters = [i for i, stem in enumerate(stems) if i not in puzzles]
        if puzzles and chapters and max(chapters) > min(puzzles):
            problems.append(f"{caption!r}: a chapter comes after a puzzle: {stems}")
    assert not problems, "\n".join(problems)


def test_chapters_and_puzzles_are_numbered_in_reading_order():
    """Every page but the first is "Chapter N: ..." or "Puzzle N: ...", and each kind counts up by
    one along the sidebar: a chapter or a part added later takes the next number."""
    chapters, puzzles = [], []
    for _, stem in _toc()[1:]:
        title = _title(stem)
        m = re.match(r"(Chapter|Puzzle) (\d+): ", title)
        assert m, f"{stem}.md: the title {title!r} carries no chapter or puzzle number"
        (chapters if m.group(1) == "Chapter" else puzzles).append(int(m.group(2)))
        if m.group(1) == "Puzzle":
            assert stem == f"p{int(m.group(2)):02d}", f"{stem}.md is titled {title!r}"
    assert chapters == list(range(1, len(chapters) + 1)), chapters
    assert puzzles == list(range(1, len(puzzles) + 1)), puzzles


def test_each_puzzle_sits_in_its_part():
    """The registry names each puzzle's part (`chapter` in its spec); the sidebar puts it there."""
    from checker import registry

    where = dict((stem, caption) for caption, stem in _toc())
    for puzzle in registry.all_puzzles():
        caption = re.sub(r"^Part \d+: ", "", where[puzzle.key])
        assert caption.lower() == puzzle.chapter.lower(), (puzzle.key, where[puzzle.key], puzzle.chapter)


def _shown_text() -> dict[str, str]:
    """Each page's markdown as the reader gets it: the page, and on a puzzle page what it shows
    of the notebook (code cells dropped; a puzzle page's statement put in)."""
    out = {}
    for _, stem in _toc():
        text = (ROOT / "book" / f"{stem}.md").read_text(encoding="utf-8")
        text = re.sub(r"```\{code-cell\}.*?\n```", "", text, flags=re.S)
        text = re.sub(r"^# .*$", "", text, count=1, flags=re.M)  # the title
        if re.fullmatch(r"p\d\d", stem):
            text += "\n\n" + "\n\n".join(s for kind, s in puzzle_page.statement(stem) if kind == "markdown")
        out[stem] = text
    return out


def test_every_chapter_reference_names_the_chapter_it_links():
    """"chapter 5" is a link to the page titled "Chapter 5: ...", never a bare number the reader
    must look up; "chapters 3 to 7" names chapters that exist. The sidebar shows the numbers
    (the titles carry them), so a reference and the sidebar cannot disagree."""
    chapters = _chapters()
    problems = []
    for stem, text in _shown_text().items():
        for m in re.finditer(r"\{doc\}`([^`<]*?)\s*<([^>]+)>`", text):
            said = re.fullmatch(r"[Cc]hapter (\d+)", m.group(1).strip())
            if said and chapters.get(int(said.group(1))) != m.group(2):
                problems.append(f"{stem}: {m.group(0)} links to {m.group(2)}, "
                                f"chapter {said.group(1)} is {chapters.get(int(said.group(1)))}")
        bare = re.sub(r"\{doc\}`[^`]*`", "{doc}", text)
        for m in re.finditer(r"\b[Cc]hapter\s+(?:\{doc\}|\d+)", bare):
            problems.append(f"{stem}: {m.group(0)!r} is not a link of the form {{doc}}`chapter N <page>`")
        for m in re.finditer(r"\b[Cc]hapters (\d+) (?:to|and) (\d+)", bare):
            if not {int(m.group(1)), int(m.group(2))} <= set(chapters):
                problems.append(f"{stem}: {m.group(0)!r}: no such chapter")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------------
# Puzzle pages and their notebooks (no build needed)
# ------------------------------------------------------------------------------------------
# what speaks to someone working in the notebook, not to the reader of the page
PLUMBING_WORDS = ["notebook", "check cell", "tagged `kernel`", "When you are done", "book page",
                  "Edit only", "--reset"]


@pytest.mark.parametrize("stem", PUZZLE_PAGES)
def test_puzzle_page_shows_no_notebook_plumbing(stem):
    shown = "\n\n".join(s for _, s in puzzle_page.statement(stem))
    found = [w for w in PLUMBING_WORDS if w.lower() in shown.lower()]
    assert not found, f"{stem}: the statement on the page still says {found}"


@pytest.mark.parametrize("stem", PUZZLE_PAGES)
def test_puzzle_page_keeps_the_rest_of_the_notebook(stem):
    """Only plumbing is left out: every stub, every heading, and every paragraph that is not
    plumbing reaches the page (a sentence pointing at "the book page" aside)."""
    shown = "\n\n".join(s for _, s in puzzle_page.statement(stem))
    shown_words = re.findall(r"\w+", shown)
    for cell in puzzle_page.cells(stem):
        if cell["type"] == "code" and "kernel" in cell["tags"]:
            assert puzzle_page.STUB_CHECK_CELL.sub("", cell["text"].rstrip()) in shown, f"{stem}: a stub is missing"
        if cell["type"] != "markdown" or cell["text"].lstrip().startswith(puzzle_page.DONE_HEADING):
            continue
        for para in puzzle_page._paragraphs(cell["text"]):
            if puzzle_page.plumbing(para) or para.lstrip().startswith(("# ", "$$")):
                continue
            words = re.findall(r"\w+", puzzle_page.BOOK_PAGE.sub("", para))
            m = SequenceMatcher(None, shown_words, words, autojunk=False).find_longest_match(
                0, len(shown_words), 0, len(words))
            assert m.size >= 0.8 * len(words), f"{stem}: this paragraph did not reach the page:\n{para}"


def _prose(markdown: str) -> list[str]:
    return [p for p in puzzle_page._paragraphs(markdown)
            if not p.lstrip().startswith(("```", "$$", ":::", "#", "|", "{"))]


def _words(text: str) -> list[str]:
    text = re.sub(r"\{doc\}`([^`<]*)<[^>]*>`", r"\1", text)
    return re.findall(r"[a-z0-9]+", re.sub(r"\{doc\}`p(\d+)`", r"puzzle \1", text).lower())


@pytest.mark.parametrize("stem", PUZZLE_PAGES)
def test_puzzle_page_does_not_repeat_its_statement(stem):
    """The page's own prose says what the statement does not: no run of 9 words in a row is in
    both, and no display equation of the page is (part of) one the statement shows."""
    page = (ROOT / "book" / f"{stem}.md").read_text(encoding="utf-8")
    page_prose = re.sub(r"```\{code-cell\}.*?\n```", "", page, flags=re.S)
    statement = "\n\n".join(s for kind, s in puzzle_page.statement(stem) if kind == "markdown")
    repeats = []
    for a in _prose(page_prose):
        wa = _words(a)
        for b in _prose(statement):
            wb = _words(b)
            m = SequenceMatcher(None, wa, wb, autojunk=False).find_longest_match(0, len(wa), 0, len(wb))
            if m.size >= 9:
                repeats.append(" ".join(wa[m.a:m.a + m.size]))
    shown = [puzzle_page._normal_tex(m.group(1)) for m in re.finditer(r"\$\$(.*?)\$\$", statement, re.S)]
    for m in re.finditer(r"^\$\$[ \t]*\n(.*?)\n\$\$", page, re.S | re.M):
        mine = puzzle_page._normal_tex(m.group(1))
        repeats += [f"the equation {m.group(1).strip()[:60]}" for s in shown if mine and mine in s]
    assert not repeats, f"{stem}: the page repeats its statement: {repeats}"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v", "-s"]))
