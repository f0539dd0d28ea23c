"""Code the book shows fits its column: at 1280 px the content column holds 100 columns of code
(book/_theme/custom.css: the code's size, the sidebars' widths), and a longer line hides its end
behind a scroll bar. Checked on the code as written (no build needed): the stubs a puzzle's page
shows (from its notebook) and the code cells a chapter shows. The pages where a learner found lines
hidden (issue 48) are held to it; a sweep of the other pages' longest lines is still to come."""
from __future__ import annotations

import re
import sys

import pytest

from book_pages import ROOT

COLUMNS = 100
STUBS = ("p22", "p25", "p31")
CHAPTERS = ("02_triton_model", "03_layernorm_forward")
HIDDEN = re.compile(r"remove-input|remove-cell|hide-input")


def shown_code(page: str) -> list[str]:
    """The lines of the code cells a chapter shows (not those whose input is removed or folded)."""
    lines, shown, fence = [], False, None
    for line in (ROOT / "book" / f"{page}.md").read_text(encoding="utf-8").split("\n"):
        if fence is None:
            if re.match(r"^```+\{code-cell\}", line):
                fence, shown = line[:len(line) - len(line.lstrip("`"))], True
            continue
        if line.startswith(fence):
            fence = None
        elif line.startswith(":tags:") and HIDDEN.search(line):
            shown = False
        elif shown:
            lines.append(line)
    return lines


@pytest.mark.parametrize("key", STUBS)
def test_a_puzzle_pages_stubs_fit_the_column(key):
    sys.path.insert(0, str(ROOT / "book"))
    import puzzle_page
    long = [line for kind, text in puzzle_page.statement(key) if kind == "code"
            for line in text.split("\n") if len(line) > COLUMNS]
    assert not long, long


@pytest.mark.parametrize("page", CHAPTERS)
def test_a_chapters_code_fits_the_column(page):
    code = shown_code(page)
    assert code and not [line for line in code if len(line) > COLUMNS]
