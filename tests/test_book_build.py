"""Build the book (jupyter-book 1.x): the build is clean, within its time budget, and the built
pages name no outside host.

    pytest -m book tests/test_book_build.py -s    # builds the book
    BOOK_SKIP_BUILD=1 pytest -m book ...          # reuse an existing _build/html

The build is the session-scoped fixture `built_book` (tests/book_fixtures.py), which
tests/test_book_browser.py browses. Like the browser's tests, these are skipped without chromium,
except in CI (env CI set), where that is a failure.
"""

from __future__ import annotations

import os
import re
import sys

import pytest

from book_pages import HTML
from browser import CHROMIUM

# The book's tests share one xdist worker (--dist loadgroup), so the book builds once there:
# built_book is session-scoped, in tests/book_fixtures.py.
pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]
pytest_plugins = ["book_fixtures"]

# 8 chapters and 26 puzzle pages, each executed (a puzzle page runs the checker on its solution)
BUILD_BUDGET_S = float(os.environ.get("BOOK_BUILD_BUDGET_S", "600"))

if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("chromium is not installed (apt-get install chromium); in CI this is an error",
                allow_module_level=True)


def test_build_is_clean(built_book):
    if built_book["rc"] != 0:
        lines = [ln for ln in built_book["log"].splitlines() if "WARNING" in ln or "ERROR" in ln]
        pytest.fail("jupyter-book build -W failed:\n" + "\n".join(lines[-40:] or
                                                                   built_book["log"].splitlines()[-40:]))


def test_build_time(built_book):
    if built_book["seconds"] is None:
        pytest.skip("build skipped (BOOK_SKIP_BUILD)")
    assert built_book["seconds"] <= BUILD_BUDGET_S, (
        f"the build took {built_book['seconds']:.0f} s; the budget is {BUILD_BUDGET_S:.0f} s")


def test_built_html_names_no_outside_host(built_book):
    """No page may load a script, style, image or font from another host."""
    pattern = re.compile(r"""<(?:script|link|img|iframe|source)\b[^>]*\b(?:src|href)=["'](?:https?:)?//""",
                         re.I)
    offenders = []
    for page in HTML.rglob("*.html"):
        for m in pattern.finditer(page.read_text(errors="replace")):
            offenders.append(f"{page.relative_to(HTML)}: {m.group(0)[:120]}")
    assert not offenders, "\n".join(offenders)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-v", "-s"]))
