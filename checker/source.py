"""Where the kernels come from: a saved notebook, a solution file, or a live notebook namespace.

All three become one `KernelSource`: Python text plus a map from its lines back to what the
learner sees ("`add_kernel`, line 3 of its cell"). Static checks (syntax, missing kernels, untouched stubs) run here,
without importing torch or triton, so they answer instantly.
"""
from __future__ import annotations

import ast
import inspect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from checker.cell_history import CELL_OF, StaleKernel, stale_kernels  # CELL_OF: a cell named by its first function
from checker.parsed import tree_of

KERNEL_TAG = "kernel"  # notebook cells holding the learner's @triton.jit code carry this tag
DEF = re.compile(r"^[ \t]*def[ \t]+(\w+)[ \t]*\(", re.M)
CODE_CELL = "code cell "  # one that defines none, by its rank among the code cells
PRELUDE = "import torch\nimport triton\nimport triton.language as tl\n"


@dataclass
class Chunk:
    """A run of lines in the combined text that came from one place (a cell, a file, a function)."""
    first_line: int      # 1-based line in the combined text
    n_lines: int
    place: str           # "cell 5", "solutions/p22_layernorm_linear.py"
    line_offset: int = 0  # added to the line within the chunk (a function defined at line 40)


@dataclass
class KernelSource:
    text: str
    origin: str                      # what to call it in reports
    filename: str                    # the code object's filename (registered in linecache)
    chunks: list[Chunk] = field(default_factory=list)
    # kernel name -> where its code is but the checker cannot take it from (an untagged cell, a cell
    # whose last run failed): for a message that says what is actually missing. Not sent to workers.
    elsewhere: dict[str, tuple[str, str]] = field(default_factory=dict)   # name -> (place, code)
    no_kernel_cells: bool = False    # a saved notebook without a single cell tagged `kernel`
    # live kernels whose cell no longer holds what defined them (checker/cell_history.py): left out
    # of the text unless asked for, so that no part reports on code the learner no longer has
    stale: dict[str, StaleKernel] = field(default_factory=dict)
    _loop_lines: set | None = field(default=None, repr=False, compare=False)  # lines inside loops (lazily)

    def chunk_text(self, chunk: Chunk) -> str:
        lines = self.text.split("\n")
        return "\n".join(lines[chunk.first_line - 1:chunk.first_line - 1 + chunk.n_lines])

    def without(self, broken: list[Chunk]) -> "KernelSource":
        """The same source with these chunks blanked (line numbers kept), so one cell's syntax
        error does not stop the parts whose kernels live in other cells."""
        lines = self.text.split("\n")
        for chunk in broken:
            for i in range(chunk.first_line - 1, chunk.first_line - 1 + chunk.n_lines):
                if i < len(lines):
                    lines[i] = ""
        return KernelSource("\n".join(lines), self.origin, self.filename, self.chunks, stale=self.stale)

    def describe_line(self, lineno: int, name_function: bool = True) -> str:
        """'`add_kernel`, line 3 of its cell': JupyterLab shows no cell numbers, so a notebook's cell
        is named by the kernel it defines, and the line is the line within that cell."""
        function = self.function_at(lineno) if name_function else ""
        prefix = f"`{function}`, " if function else ""
        chunk = self._chunk_at(lineno)
        if chunk is not None:
            line = self.learner_line(lineno)
            if chunk.place.startswith((CELL_OF, CODE_CELL)):
                cell = "its cell" if chunk.place == _cell_of(function) else chunk.place
                return f"{prefix}line {line} of {cell}"
            place = chunk.place if chunk.place != f"`{function}`" else ""
            where = f"{place}, line" if place else "line"
            return f"{prefix}{where} {line}"
        return f"{prefix}line {lineno}"

    def learner_line(self, lineno: int) -> int:
        """A line of the combined text as the learner counts it: within its cell, or its file."""
        chunk = self._chunk_at(lineno)
        return lineno if chunk is None else lineno - chunk.first_line + 1 + chunk.line_offset

    def _chunk_at(self, lineno: int) -> Chunk | None:
        return next((c for c in self.chunks if c.first_line <= lineno < c.first_line + c.n_lines), None)

    def function_at(self, lineno: int) -> str:
        """The outermost function whose body holds this line ('' if none, or the text does not parse)."""
        tree = tree_of(self.text)
        if tree is None:
            return ""
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
                return node.name
        return ""

    def in_loop(self, lineno: int) -> bool:
        """Is this line inside a for or while loop of a function (a kernel's loop)?"""
        if self._loop_lines is None:
            self._loop_lines = set()
            tree = tree_of(self.text)
            if tree is None:
                return False
            for node in ast.walk(tree):
                if isinstance(node, (ast.For, ast.While)):
                    self._loop_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        return lineno in self._loop_lines

    def loop_around(self, lineno: int) -> int | None:
        """The header line of the innermost for or while loop whose body holds this line (None if the
        line is in no loop's body): where a hang's sampled line sits in a spin loop's body, the loop
        is what never ends."""
        tree = tree_of(self.text)
        if tree is None:
            return None
        headers = [node.lineno for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While))
                   and node.body and node.body[0].lineno <= lineno <= (node.end_lineno or node.lineno)]
        return max(headers, default=None)

    def line_text(self, lineno: int) -> str:
        lines = self.text.splitlines()
        return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""

    def to_json(self) -> dict:
        return {"text": self.text, "origin": self.origin, "filename": self.filename,
                "chunks": [vars(c) for c in self.chunks]}

    @classmethod
    def from_json(cls, data: dict) -> "KernelSource":
        return cls(data["text"], data["origin"], data["filename"], [Chunk(**c) for c in data["chunks"]])


def _combine(pieces: list[tuple[str, str, int]], origin: str, filename: str) -> KernelSource:
    """pieces: (text, place, line_offset). The prelude imports come first and map to nowhere."""
    text, chunks = PRELUDE, []
    line = PRELUDE.count("\n") + 1
    for piece, place, offset in pieces:
        piece = piece.rstrip("\n") + "\n\n"
        chunks.append(Chunk(line, piece.count("\n"), place, offset))
        text += piece
        line += piece.count("\n")
    return KernelSource(text, origin, filename, chunks)


def cell_text(cell: dict) -> str:
    """A notebook cell's source, stored either as one string or as a list of lines."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


class NotebookError(Exception):
    """A notebook that cannot be read: missing, or not a notebook. One line for the learner."""


def read_notebook(path: Path, shown: str | None = None) -> dict:
    """The notebook's JSON; a NotebookError names it as `shown` (default: its path)."""
    path = Path(path)
    shown = shown or str(path)
    if not path.is_file():
        raise NotebookError(f"no notebook at {shown}" + (" (a folder)" if path.is_dir() else ""))
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise NotebookError(f"{shown} is not a notebook (not valid JSON: {err})") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise NotebookError(f"{shown} is not a Jupyter notebook (no list of cells)")
    return notebook




def _cell_of(function: str) -> str:
    return f"{CELL_OF}`{function}`"


def _cell_place(text: str, number: int) -> str:
    """How a learner finds a code cell: by the function it defines, else by its rank among the
    code cells (markdown cells are not counted: they hold no code)."""
    names = DEF.findall(text)
    return _cell_of(names[0]) if names else f"{CODE_CELL}{number}"


def from_notebook(path: Path, display_name: str) -> KernelSource:
    """The cells tagged `kernel` of a saved notebook (plain JSON: no Jupyter needed here)."""
    notebook = read_notebook(path, display_name)
    pieces, untagged = [], {}
    code_cells = [cell for cell in notebook.get("cells", []) if cell.get("cell_type") == "code"]
    for number, cell in enumerate(code_cells, start=1):
        place = _cell_place(cell_text(cell), number)
        if KERNEL_TAG in cell.get("metadata", {}).get("tags", []):
            # IPython magics and shell escapes are not Python: blank them, keep line numbers
            lines = ["" if ln.lstrip().startswith(("%", "!")) else ln for ln in cell_text(cell).split("\n")]
            pieces.append(("\n".join(lines), place, 0))
        else:
            for name in DEF.findall(cell_text(cell)):
                untagged[name] = (f"{place}, which is not tagged `{KERNEL_TAG}`", cell_text(cell))
    source = _combine(pieces, display_name, f"<{display_name}>")
    source.elsewhere, source.no_kernel_cells = untagged, not pieces
    return source


def from_file(path: Path, display_name: str) -> KernelSource:
    return from_text(Path(path).read_text(encoding="utf-8"), display_name)


def from_text(text: str, display_name: str) -> KernelSource:
    """Kernels given as Python text (a file's contents, a patched solution)."""
    return _combine([(text, display_name, 0)], display_name, f"<{display_name}>")


def from_namespace(namespace: dict, origin: str = "this notebook", stale_too: bool = False) -> KernelSource:
    """Every @triton.jit function defined in a live namespace (the notebook's globals), as last run;
    but those whose cell no longer holds them (`source.stale`), unless stale_too."""
    pieces, functions = [], {}
    # IPython keeps every cell as run (_ih): a kernel that is not defined may sit in a cell whose
    # last run failed (a syntax error, say): find it, to say so instead of "not defined"
    tried = {}
    for text in namespace.get("_ih", []) or []:
        for name in DEF.findall(text or ""):
            tried[name] = ("the cell that defines it (its last run failed)", text)
    for name, obj in namespace.items():
        fn = getattr(obj, "fn", None)
        if fn is None or not callable(fn) or type(obj).__module__.split(".")[0] != "triton":
            continue
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            continue
        functions[name] = fn
        pieces.append((name, "".join(lines), f"`{name}`", start - 1 if start else 0))
    stale = stale_kernels(namespace, functions)
    source = _combine([piece for name, *piece in pieces if stale_too or name not in stale], origin, f"<{origin}>")
    source.elsewhere = {k: v for k, v in tried.items() if k not in namespace}
    source.stale = stale
    return source


@dataclass
class StaticProblem:
    kind: str          # "syntax", "missing", "untagged", "not_implemented", "stale"
    kernel: str        # kernel name, or "" for a syntax error
    message: str
    where: str = ""
    # a cell that does not run (or no longer holds what ran), in one line for the top of the report:
    # what happened to it and what to do; "" for a problem of one kernel (a stub, an untagged cell)
    lead: str = ""


def _raises_not_implemented(fn: ast.FunctionDef) -> str | None:
    for node in ast.walk(fn):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                if isinstance(node.exc, ast.Call) and node.exc.args and isinstance(node.exc.args[0], ast.Constant):
                    return str(node.exc.args[0].value)
                return "not implemented yet"
    return None


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _syntax_problem(err: SyntaxError, where: str, cell: str, fix: str, line: int) -> StaticProblem:
    """cell: how the learner finds what does not run ("the cell that defines `k`", a file's name) and
    line its line there (0: none); fix: what makes the fixed text count ("save the notebook")."""
    code = (err.text or "").strip()
    at = f", line {line}" if line else ""
    lead = f"{_capital(cell)} does not run (SyntaxError: {err.msg}{at}): nothing in it is checked. " \
           f"Fix it{', ' + fix if fix else ''}, then check again."
    return StaticProblem("syntax", "", f"SyntaxError: {err.msg}" + (f"\n   {code}" if code else ""), where, lead)


def _fix_of(place: str) -> str:
    """What makes a fixed cell count: a saved notebook's cell is read when saved; a file when written."""
    return "save the notebook" if place.startswith((CELL_OF, CODE_CELL)) else ""


def broken_chunks(source: KernelSource) -> list[tuple[Chunk, SyntaxError]]:
    """The chunks (cells) that do not parse on their own."""
    broken = []
    for chunk in source.chunks:
        try:
            ast.parse(source.chunk_text(chunk))
        except SyntaxError as err:
            broken.append((chunk, err))
    return broken


def _missing(source: KernelSource, name: str) -> StaticProblem:
    if name in source.elsewhere:
        place, code = source.elsewhere[name]
        cell = f"{CELL_OF}`{name}`"
        try:
            ast.parse(code)
        except SyntaxError as err:
            line = f", line {err.lineno}" if err.lineno else ""
            return _syntax_problem(err, f"`{name}`, in {place}{line}", cell, "run the cell", err.lineno or 0)
        if "not tagged" in place:
            return StaticProblem("untagged", name, f"`{name}` is in {place}: the checker reads the kernels "
                                 f"from the cells tagged `{KERNEL_TAG}` only. Add the tag (JupyterLab: the "
                                 f"property inspector, gear icon at the top right, Cell Tags).")
        return StaticProblem("missing", name, f"`{name}` is not defined: {place} raised an error. Run that "
                             f"cell again and fix the error it shows.",
                             lead=f"{_capital(cell)} raised an error when it last ran, before it defined "
                                  f"`{name}`. Fix the error the cell shows, run it, then check again.")
    if source.no_kernel_cells:
        return StaticProblem("missing", name, f"no cell of {source.origin} is tagged `{KERNEL_TAG}`, and none "
                             f"defines `{name}`: is this the puzzle's notebook?")
    return StaticProblem("missing", name, f"`{name}` is not defined in {source.origin}: run the cell that defines "
                         f"it, and keep the kernel's name as the puzzle gives it.")


def _stale_problems(source: KernelSource, kernels: tuple[str, ...], defined: dict) -> list[StaticProblem]:
    """The part's kernels, and the functions they call, that are left out as stale."""
    called = {node.id for k in kernels if k in defined for node in ast.walk(defined[k]) if isinstance(node, ast.Name)}
    return [StaticProblem("stale", name, s.problem, lead=s.lead) for name, s in source.stale.items()
            if name not in defined and (name in kernels or name in called)]


def static_problems(source: KernelSource, kernels: tuple[str, ...]) -> list[StaticProblem]:
    """Problems visible without running anything, for the kernels one part needs. A cell with a
    syntax error is a problem only for the parts whose kernels it defines."""
    broken = broken_chunks(source)
    try:
        tree = ast.parse(source.without([c for c, _ in broken]).text, filename=source.filename)
    except SyntaxError as err:  # not cell by cell (a plain file): the whole text is one piece
        return [_syntax_problem(err, source.describe_line(err.lineno or 0), source.origin, "",
                                source.learner_line(err.lineno or 0))]
    defined = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    problems = _stale_problems(source, kernels, defined)
    for name in kernels:
        node = defined.get(name)
        if node is None:
            if name in source.stale:
                continue  # said above
            cell = next(((c, e) for c, e in broken if name in DEF.findall(source.chunk_text(c))), None)
            if cell is not None:
                chunk, err = cell
                line = (err.lineno or 1) + chunk.line_offset
                problems.append(_syntax_problem(err, f"{chunk.place}, line {line}", chunk.place,
                                                _fix_of(chunk.place), line))
            else:
                problems.append(_missing(source, name))
            continue
        reason = _raises_not_implemented(node)
        if reason is not None:
            message = reason if name in reason else f"{name}: {reason}"
            problems.append(StaticProblem("not_implemented", name, message,
                                          source.describe_line(node.lineno, name_function=False)))
    unique = []  # one cell's syntax error is one problem, however many kernels it holds
    for problem in problems:
        if all((p.message, p.where) != (problem.message, problem.where) for p in unique):
            unique.append(problem)
    return unique


def not_started(source: KernelSource, kernels: tuple[str, ...]) -> bool:
    """Every one of these kernels is still its stub (raises NotImplementedError): nothing to run."""
    stubs = [p for p in static_problems(source, kernels) if p.kind == "not_implemented"]
    return bool(kernels) and len(stubs) == len(kernels)
