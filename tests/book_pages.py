"""Where the book's sources are and where it is built to, and the reading order as _toc.yml
gives it: what the book's test modules share besides the build (tests/book_fixtures.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
HTML = BUILD / "html"
ARTIFACTS = BUILD / "artifacts"
# every registered puzzle has a page (book/pNN.md) showing the checker's report for its solution
PUZZLE_PAGES = sorted(p.stem for p in (ROOT / "book").glob("p[0-9][0-9].md"))


# ------------------------------------------------------------------------------------------
# The reading order: _toc.yml and the pages' titles
# ------------------------------------------------------------------------------------------
def _toc() -> list[tuple[str, str]]:
    """(caption, page stem) in reading order, the root page first."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    order = [("", Path(toc["root"]).stem)]
    for part in toc["parts"]:
        order += [(part["caption"], Path(entry["file"]).stem) for entry in part["chapters"]]
    return order


def _title(stem: str) -> str:
    return re.search(r"^# (.+)$", (ROOT / "book" / f"{stem}.md").read_text(encoding="utf-8"), re.M).group(1)
