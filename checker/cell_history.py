"""Which kernels of a live notebook are no longer what their cells hold.

A notebook's kernel is the function its cell defined when that cell last ran *successfully*. When
the learner runs the cell again and it fails (a SyntaxError, an error raised before the `def`),
the old function stays in the namespace: a check would report on code the learner no longer has.
And a cell edited but not run yet holds text the namespace never saw.

The evidence, and nothing more: IPython keeps every cell as run (`_ih`, failed runs included) and
the text each function was compiled from (linecache). A function is stale when a later run of a
cell that defines its name is not the run that made it. The notebook as saved (its path from the
front end: `__session__` in JupyterLab and Notebook 7, `__vsc_ipynb_file__` in VS Code) tells of
a cell edited after its last run: the saved cell carries the number of that run, and its text
differs from the text that run had. Where the evidence is missing (a script, no history, an
older save, another kernel session) nothing is said. Pure Python: no torch.
"""
from __future__ import annotations

import ast
import json
import linecache
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

CELL_OF = "the cell that defines "


@dataclass(frozen=True)
class StaleKernel:
    """A kernel whose cell no longer holds what last defined it."""
    name: str
    cell: str       # "the cell that defines `add_kernel`"
    lead: str       # one line for the top of the report: what happened to the cell, what to do
    problem: str    # the line of each part that needs the kernel: why it is not checked


def _defines(text: str, name: str) -> bool:
    return re.search(rf"^[ \t]*def[ \t]+{re.escape(name)}[ \t]*\(", text or "", re.M) is not None


def _same(a: str, b: str) -> bool:
    """Two texts of a cell, equal but for trailing spaces and blank lines at either end."""
    norm = lambda text: "\n".join(line.rstrip() for line in (text or "").strip().splitlines())  # noqa: E731
    return norm(a) == norm(b)


def _compiled_text(fn: Callable) -> str | None:
    """The text the function's cell was compiled from ('' lines: not a notebook cell we can read)."""
    code = getattr(fn, "__code__", None)
    lines = linecache.getlines(code.co_filename) if code is not None else []
    return "".join(lines) if lines else None


def _failed_run(name: str, text: str) -> tuple[str, str]:
    """(lead, problem) for a cell whose last run did not define `name`."""
    cell = f"{CELL_OF}`{name}`"
    try:
        ast.parse(text)
    except SyntaxError as err:
        line = f", line {err.lineno}" if err.lineno else ""
        return (f"{cell[0].upper()}{cell[1:]} does not run (SyntaxError: {err.msg}{line}): the `{name}` it "
                f"defined before is not checked either. Fix it, run the cell, then check again.",
                _not_checked(name, "its cell does not run"))
    return (f"{cell[0].upper()}{cell[1:]} raised an error when it last ran, before it defined `{name}`: the "
            f"`{name}` it defined before is not checked either. Fix the error the cell shows, run it, then "
            f"check again.", _not_checked(name, "its cell raised an error when it last ran"))


def _not_checked(name: str, why: str) -> str:
    return (f"`{name}` is not checked: {why} (above), and the `{name}` it defined before is not what the "
            f"cell holds now; check(..., stale=True) checks that one anyway")


def _edited(name: str) -> tuple[str, str]:
    cell = f"{CELL_OF}`{name}`"
    return (f"{cell[0].upper()}{cell[1:]} changed after it last ran (the notebook as saved holds other "
            f"code than that run): its new code has not run, and the `{name}` it defined before is not "
            f"checked. Run the cell, then check again.",
            _not_checked(name, "its cell changed after it last ran"))


def notebook_file(namespace: dict) -> Path | None:
    """The notebook this namespace runs, as its front end names it (None where it says nothing)."""
    named = namespace.get("__vsc_ipynb_file__") or namespace.get("__session__")
    if not isinstance(named, str) or not named.endswith(".ipynb"):
        return None
    path = Path(named)
    if not path.is_absolute():  # an older server names it relative to its root: the kernel runs beside it
        path = Path.cwd() / path.name
    return path


def _saved_cells(path: Path | None) -> list[dict]:
    if path is None:
        return []
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    return [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"] if isinstance(cells, list) else []


def _transform(namespace: dict) -> Callable[[str], str]:
    """IPython keeps a cell as it ran it (magics turned into calls): a saved cell is compared alike."""
    shell = namespace.get("get_ipython")
    try:
        transform = shell().transform_cell if callable(shell) else None
    except Exception:  # noqa: BLE001 - no shell: compare the text as it is
        transform = None
    return transform or (lambda text: text)


def stale_kernels(namespace: dict, functions: dict[str, Callable]) -> dict[str, StaleKernel]:
    """Of these functions (name -> the Python function a @triton.jit wraps), those whose cell no
    longer holds what defined them, by the namespace's history and the notebook as saved."""
    history = [t if isinstance(t, str) else "" for t in (namespace.get("_ih") or [])]
    if not history:
        return {}
    saved = _saved_cells(notebook_file(namespace))
    transform = _transform(namespace)
    found = {}
    for name, fn in functions.items():
        runs = [i for i, text in enumerate(history) if _defines(text, name)]
        made = _compiled_text(fn)
        made_by = [i for i in runs if made is not None and _same(history[i], made)]
        if not made_by:
            continue  # defined elsewhere (a module, exec): its history is not this notebook's
        if runs[-1] > made_by[-1]:
            lead, problem = _failed_run(name, history[runs[-1]])
            found[name] = StaleKernel(name, f"{CELL_OF}`{name}`", lead, problem)
            continue
        for cell in saved:
            count, text = cell.get("execution_count"), cell.get("source", "")
            text = "".join(text) if isinstance(text, list) else str(text)
            if not isinstance(count, int) or count != runs[-1] or not _defines(text, name):
                continue  # not the save of this cell's last run (another session, or an older save)
            try:
                edited = not _same(transform(text), history[count])
            except Exception:  # noqa: BLE001 - a cell IPython cannot transform: compare as written
                edited = not _same(text, history[count])
            if edited:
                lead, problem = _edited(name)
                found[name] = StaleKernel(name, f"{CELL_OF}`{name}`", lead, problem)
    return found
