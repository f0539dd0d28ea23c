"""`python book/build_book.py`, the README's build command: a line of progress per page while jupyter-book
runs (issue 35, item 20: four minutes with no sign of how far it had come). Read from jupyter-book's
own log lines, as a build writes them (colours included); no build needed."""
from __future__ import annotations

import sys

from book_pages import ROOT

sys.path.insert(0, str(ROOT / "book"))
import build_book as build  # noqa: E402  (book/build_book.py)

LOG = """\
Running Jupyter-Book v1.0.4.post1
\x1b[01mupdating environment: \x1b[39;49;00m[new config] 42 added, 0 changed, 0 removed
\x1b[01mreading sources... \x1b[39;49;00m[  2%] \x1b[35mbook/01_how_to_use\x1b[39;49;00m
/work/book/01_how_to_use.md: Executing notebook using local CWD [mystnb]
/work/book/01_how_to_use.md: Executed notebook in 4.65 seconds [mystnb]
\x1b[01mreading sources... \x1b[39;49;00m[  5%] \x1b[35mbook/02_triton_model\x1b[39;49;00m
/work/book/02_triton_model.md: Executed notebook in 16.08 seconds [mystnb]
/work/book/p22.md:12: WARNING: a made-up warning
\x1b[01mwriting output... \x1b[39;49;00m[  2%] \x1b[32mbook/01_how_to_use\x1b[39;49;00m
\x1b[01mwriting output... \x1b[39;49;00m[  5%] \x1b[32mbook/02_triton_model\x1b[39;49;00m
\x1b[01mbuild succeeded.\x1b[39;49;00m
"""


def test_each_page_gets_a_line_with_its_place_and_time():
    said = []
    seconds = iter(range(0, 1000, 30))
    progress = build.Progress(said.append, clock=lambda: next(seconds))
    for line in LOG.splitlines(keepends=True):
        progress.line(line)
    assert said == [
        "42 pages to run, then to write",
        "[ 1/42] book/01_how_to_use …",
        "[ 1/42] book/01_how_to_use: ran in 5 s (0:30 so far)",
        "[ 2/42] book/02_triton_model …",
        "[ 2/42] book/02_triton_model: ran in 16 s (1:00 so far)",
        "/work/book/p22.md:12: WARNING: a made-up warning",
        "writing the HTML pages (1:30 so far) …",
        "build succeeded.",
    ]


def test_the_readme_builds_the_book_with_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python book/build_book.py" in readme
