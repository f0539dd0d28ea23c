"""The book's build, shared by tests/test_book_build.py and tests/test_book_browser.py.

A module loads it with ``pytest_plugins = ["book_fixtures"]`` and never imports it by name: a
fixture imported by name into two modules is two fixtures, and the book would be built twice.
`built_book` is session-scoped, and the book's tests share one xdist worker, so one build serves
both modules.

    BOOK_SKIP_BUILD=1 pytest -m book ...          # reuse an existing _build/html
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from book_pages import ARTIFACTS, BUILD, HTML, ROOT


# ------------------------------------------------------------------------------------------
# Build
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def built_book():
    if os.environ.get("BOOK_SKIP_BUILD"):
        assert (HTML / "index.html").is_file(), "BOOK_SKIP_BUILD set but _build/html is missing"
        return {"rc": 0, "seconds": None, "log": "(build skipped)"}
    # a clean build: no stale pages from an earlier table of contents
    for stale in (HTML, BUILD / ".doctrees", BUILD / "jupyter_execute"):
        shutil.rmtree(stale, ignore_errors=True)
    cmd = [sys.executable, "book/build_book.py"]  # the README's command: jupyter-book, a line per page
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - start
    full = ARTIFACTS / "build.log"  # written by book/build_book.py
    log = (full.read_text(encoding="utf-8", errors="replace") if full.is_file() else proc.stdout) + proc.stderr
    print(f"\n`{' '.join(cmd)}` finished in {seconds:.1f} s (rc={proc.returncode})")
    return {"rc": proc.returncode, "seconds": seconds, "log": log}
