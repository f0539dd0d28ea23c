"""What every puzzle page shows, read from the puzzle's own files when the book is built: the
statement and each part's instructions (the notebook's markdown cells), the stubs (its cells
tagged `kernel`). A page cannot drift from its notebook, because it has no copy of it."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from IPython.display import Markdown, display

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


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


def show_statement(key: str) -> None:
    """The notebook's markdown (its title dropped, headings one level down) and its stubs."""
    for cell in cells(key):
        if cell["type"] == "markdown":
            text = cell["text"]
            if text.lstrip().startswith("# "):  # the notebook's title: the page has its own
                text = text.split("\n", 1)[1] if "\n" in text else ""
            text = text.replace("\n## ", "\n### ")
            if text.lstrip().startswith("## "):
                text = "#" + text.lstrip()
            display(Markdown(text))
        elif "kernel" in cell["tags"]:
            display(Markdown("```python\n" + cell["text"].rstrip() + "\n```"))
