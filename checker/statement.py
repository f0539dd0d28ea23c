"""A puzzle's statement against its declaration: every fact the notebook gives (the tensors' names,
shapes and dtypes, the launches, what runs where, the tolerances) is the declaration's.

What the declaration says is computed in checker/puzzle/facts.py, by a dry launch of each part. Two
things are rendered from it into the notebook by `python -m checker.stubs --write`: the facts cell
(a markdown cell tagged `facts`: what the interpreter runs and what only a GPU runs, the
tolerances) and the dtype column of the statement's tensor tables. The rest is checked
(`differences`): each table row names tensors the kernels receive, with their shapes; each launch
line in a code block agrees with a launch the checker makes; no sentence says a dtype runs on a GPU
only when the interpreter runs it, a tolerance a sentence gives is one the declaration has, and an
output is named as the declaration (and so the report) names it.
tests/test_statements.py runs the checks on every puzzle's notebook and page.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Iterator

from checker.puzzle import facts
from checker.puzzle.model import Puzzle

FACTS_TAG = facts.FACTS_TAG
DTYPE_WORDS = re.compile(r"\b(float32|bfloat16|float16|fp32|bf16|fp16|int32|int64|tf32)\b", re.I)


# ---------------------------------------------------------------------------------------------
# The facts cell
# ---------------------------------------------------------------------------------------------
def _text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def facts_cells(notebook: dict) -> list[dict]:
    return [c for c in notebook["cells"] if FACTS_TAG in c.get("metadata", {}).get("tags", [])]


def with_facts(puzzle: Puzzle, notebook: dict) -> dict:
    """The notebook with its facts cell rendered from the declaration: in place, or as a new cell
    after the statement (the first markdown cell) where it has none."""
    text = facts.facts_cell(puzzle)
    cells = facts_cells(notebook)
    if cells:
        cells[0]["source"] = text
        return notebook
    first = next(i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "markdown")
    notebook["cells"].insert(first + 1, {"cell_type": "markdown", "id": FACTS_TAG,
                                         "metadata": {"tags": [FACTS_TAG]}, "source": text})
    return notebook


# ---------------------------------------------------------------------------------------------
# Tensor tables: | tensor | shape | dtype | notes |
# ---------------------------------------------------------------------------------------------
@dataclass
class Row:
    names: list[str]
    cells: list[str]      # the row's cells, stripped


@dataclass
class Table:
    header: list[str]
    rows: list[Row]

    def column(self, name: str) -> int | None:
        return self.header.index(name) if name in self.header else None


TABLE = re.compile(r"(?:^\|[^\n]*\|[ \t]*(?:\n|$))+", re.M)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(markdown: str) -> Iterator[tuple[re.Match, Table]]:
    """The tables whose first column is `tensor`, with where they are in the text."""
    for m in TABLE.finditer(markdown):
        lines = m.group(0).rstrip("\n").split("\n")
        header = [h.lower() for h in _cells(lines[0])]
        if header[0] != "tensor" or len(lines) < 2:
            continue
        rows = [Row(re.findall(r"`([^`]+)`", cells[0]), cells) for cells in map(_cells, lines[2:])]
        yield m, Table(header, rows)


def _render(table: Table) -> str:
    lines = ["| " + " | ".join(table.header) + " |", "|" + "---|" * len(table.header)]
    lines += ["| " + " | ".join(r.cells) + " |" for r in table.rows]
    return "\n".join(lines) + "\n"


def with_dtypes(markdown: str, words: dict[str, str]) -> str:
    """The markdown with each tensor table's dtype column rendered (added after `shape` where the
    table has none): the dtype in words of the row's tensors, where they have one."""
    out, last = [], 0
    for m, table in tables(markdown):
        column = table.column("dtype")
        if column is None:
            column = (table.column("shape") or 0) + 1
            table.header.insert(column, "dtype")
            for row in table.rows:
                row.cells.insert(column, "")
        for row in table.rows:
            found = list(dict.fromkeys(words[n] for n in row.names if n in words))
            if len(found) == 1:
                row.cells[column] = found[0]
        out += [markdown[last:m.start()], _render(table)]
        last = m.end()
    return "".join(out) + markdown[last:]


# ---------------------------------------------------------------------------------------------
# Checking a notebook against the declaration
# ---------------------------------------------------------------------------------------------
class _Unknown(Exception):
    """An expression names something the launch does not have: it cannot be checked."""


def _evaluate(expr: str | ast.AST, env: dict[str, Any]) -> Any:
    node = ast.parse(expr, mode="eval") if isinstance(expr, str) else ast.Expression(expr)
    for name in (n.id for n in ast.walk(node) if isinstance(n, ast.Name)):
        if name not in env:
            raise _Unknown(name)
    if any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(node)):
        raise _Unknown("...")
    return eval(compile(node, "<statement>", "eval"), {"__builtins__": {"min": min, "max": max}}, env)  # noqa: S307


def _same(said: Any, made: Any) -> bool:
    if facts._is_tensor(said) or facts._is_tensor(made):
        return said is made or (facts._is_tensor(said) and facts._is_tensor(made) and said.shape == made.shape
                                and said.dtype == made.dtype and said.data_ptr() == made.data_ptr())
    if isinstance(said, tuple) and isinstance(made, (tuple, list)):
        return len(said) == len(made) and all(_same(a, b) for a, b in zip(said, made))
    return said == made


@dataclass
class DryCase:
    """One case's dry launch: the names a statement may use, the tensors and the launches."""
    dtype: str
    env: dict[str, Any]
    seen: dict[str, Any]
    launches: list[facts.Launch]


def dry_cases(puzzle: Puzzle) -> list[DryCase]:
    """The documented case in each dtype the puzzle runs."""
    out = []
    for dtype in facts.dtypes(puzzle):
        case = facts.documented(puzzle, dtype)
        launches, seen = facts.dry_run(puzzle, case)
        cdiv = lambda a, b: -(-a // b)  # noqa: E731
        env = {**facts.names(puzzle, case), **seen, "cdiv": cdiv, "triton": SimpleNamespace(cdiv=cdiv)}
        out.append(DryCase(dtype, env, seen, launches))
    return out


def _shape_problems(row: Row, shape_cell: str, dry: list[DryCase]) -> list[str]:
    spans = re.findall(r"`\[([^`\]]*)\]`", shape_cell)
    if not spans:
        return [f"its shape {shape_cell!r} is not one `[...]`"] if shape_cell else []
    if len(spans) != 1:
        return [f"its shape {shape_cell!r} gives several shapes: one row per shape"]
    dims = [re.sub(r"(\d)\s*([A-Za-z_])", r"\1 * \2", d.strip()) for d in spans[0].split(",") if d.strip()]
    problems = []
    for case in dry:
        bound: dict[str, Any] = {}
        for name in row.names:
            tensor = case.seen.get(name)
            if tensor is None:
                continue
            actual = tuple(tensor.shape)
            if len(actual) != len(dims):
                problems.append(f"`{name}` is {list(actual)} in the {case.dtype} documented case, not [{spans[0]}]")
                continue
            for dim, size in zip(dims, actual):
                try:
                    value = _evaluate(dim, {**case.env, **bound})
                except _Unknown:
                    if re.fullmatch(r"[A-Za-z_]\w*", dim):   # a size the table names itself: bound once
                        bound[dim] = size
                        continue
                    continue
                if value != size:
                    problems.append(f"`{name}` has {dim} = {size} in the {case.dtype} documented case, "
                                    f"where the table's [{spans[0]}] says {value}")
    return problems


def table_problems(markdown: str, words: dict[str, str], dry: list[DryCase]) -> list[str]:
    problems = []
    known = set(words)
    for _, table in tables(markdown):
        shape, dtype = table.column("shape"), table.column("dtype")
        notes = [i for i, h in enumerate(table.header) if h == "notes"]
        if dtype is None:
            problems.append("a tensor table has no dtype column")
        for row in table.rows:
            where = f"the row of {', '.join(f'`{n}`' for n in row.names) or row.cells[0]!r}"
            unknown = [n for n in row.names if n not in known]
            if unknown or not row.names:
                problems.append(f"{where} names {unknown or 'no tensor'}: no kernel receives a tensor of that name "
                                f"(the names are the declaration's and the kernels' parameters', less _ptr)")
            found = list(dict.fromkeys(words[n] for n in row.names if n in words))
            if len(found) > 1:
                problems.append(f"{where}: its tensors have different dtypes ({', '.join(found)}): one row each")
            elif dtype is not None and found and row.cells[dtype] != found[0]:
                problems.append(f"{where} says dtype {row.cells[dtype]!r}, the declaration {found[0]!r}")
            if shape is not None:
                problems += [f"{where}: {p}" for p in _shape_problems(row, row.cells[shape], dry)]
            for i in notes:
                said = DTYPE_WORDS.search(row.cells[i])
                if said:
                    problems.append(f"{where}: its notes name a dtype ({said.group(0)}): the dtype column says it")
    return problems


# -- launch lines --------------------------------------------------------------------------------
def _code_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python[^\n]*\n(.*?)^```", markdown, re.S | re.M)


def _calls(code: str, kernels: set[str]) -> Iterator[tuple[ast.Subscript, ast.Call, list]]:
    """Each launch of a kernel in the code, with the assignments made before it (grid = ...)."""
    code = re.sub(r"=\s*\.\.(?=[,)\s])", "=...", code)  # `BLOCK_M=..`: a value the text leaves out
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)
                and isinstance(node.func.value, ast.Name) and node.func.value.id in kernels):
            yield node.func, node, [a for a in assigns if a.lineno < node.lineno]


def _launch_problem(sub: ast.Subscript, call: ast.Call, assigns: list, case: DryCase) -> str | None:
    """Why a launch line agrees with none of the case's launches of its kernel (None if one agrees)."""
    kernel = sub.value.id
    env = dict(case.env)
    for a in assigns:  # grid = (...), G = min(...): the names the block defines before the launch
        if len(a.targets) == 1 and isinstance(a.targets[0], ast.Name):
            try:
                env[a.targets[0].id] = _evaluate(a.value, env)
            except Exception:  # noqa: BLE001 (a name it cannot know: the launch line's use of it is not checked)
                pass
    made = [l for l in case.launches if l.kernel == kernel]
    if not made:
        return f"`{kernel}` is launched by no part of the declaration"

    def said(node, names) -> tuple[bool, Any]:
        try:
            return True, _evaluate(node, names)
        except Exception:  # noqa: BLE001 (a name the text leaves open, `..`: nothing to check)
            return False, None

    reasons = []
    for launch in made:
        params = list(launch.args)
        names = {**env, **launch.tensors}
        # the grid's names are the values this launch passes by keyword (BLOCK_M=.. leaves one open)
        grid_names = {**names, **{kw.arg: launch.args[kw.arg] for kw in call.keywords if kw.arg in launch.args}}
        wrong = []
        known, grid = said(sub.slice, grid_names)
        if known and not _same(tuple(grid) if isinstance(grid, (tuple, list)) else grid, launch.grid):
            wrong.append(f"grid {ast.unparse(sub.slice)} = {grid}, the checker's {launch.grid}")
        for i, arg in enumerate(call.args):
            if i >= len(params):
                wrong.append(f"argument {i + 1} ({ast.unparse(arg)}) is one too many")
                break
            known, value = said(arg, names)
            if known and not _same(value, launch.args[params[i]]):
                wrong.append(f"argument {i + 1} ({ast.unparse(arg)}) is not what the checker passes as {params[i]}")
        for kw in call.keywords:
            if kw.arg in ("num_warps", "num_stages") or kw.arg is None:
                continue
            known, value = said(kw.value, names)
            if kw.arg not in launch.args:
                wrong.append(f"{kw.arg}= is not passed by the checker")
            elif known and not _same(value, launch.args[kw.arg]):
                wrong.append(f"{kw.arg}={ast.unparse(kw.value)} = {value}, the checker's {launch.args[kw.arg]}")
        if not wrong:
            return None
        reasons.append("; ".join(wrong))
    return f"the launch of `{kernel}` in the {case.dtype} documented case: {min(reasons, key=len)}"


def launch_problems(markdown: str, puzzle: Puzzle, dry: list[DryCase]) -> list[str]:
    kernels = set(facts.signatures(puzzle))
    problems = []
    for block in _code_blocks(markdown):
        for sub, call, assigns in _calls(block, kernels):
            for case in dry:
                problem = _launch_problem(sub, call, assigns, case)
                if problem:
                    problems.append(problem)
                    break
    return problems


# -- sentences -----------------------------------------------------------------------------------
# "GPU only", "the GPU's bf16 cases"; "on a GPU" where the sentence does not name the interpreter too
GPU_ONLY = re.compile(r"GPU[- ]only|only (?:on )?a GPU|GPU's (?:bf16|bfloat16)", re.I)
ON_A_GPU = re.compile(r"\bon a GPU\b", re.I)
BENCH = re.compile(r"--bench\b")  # a benchmark runs on a GPU only, whatever the dtype
LOW = re.compile(r"\b(bf16|bfloat16)\b", re.I)
TOLERANCE_WORDS = re.compile(r"toleran|compared at|holds? (?:them|it|\S+) to\b|within\b", re.I)
FIGURE = re.compile(r"\b(\d+(?:\.\d+)?)e-(\d+)\b")


def sentences(markdown: str) -> list[str]:
    """The prose of a markdown text (code blocks and math left out), cut into sentences."""
    prose = re.sub(r"^```.*?^```", " ", markdown, flags=re.S | re.M)
    prose = re.sub(r"\$\$.*?\$\$", " ", prose, flags=re.S)
    return [s.strip() for s in re.split(r"(?<=[.;!?])\s+|\n\s*\n|\n\s*[*-] ", prose) if s.strip()]


def declared_figures(puzzle: Puzzle) -> set[float]:
    found = set()
    for part in puzzle.parts:
        for output in part.outputs:
            for dtype in facts.dtypes(puzzle):
                t = puzzle.tolerance(dtype, output)
                found |= {t.atol, t.rtol}
    return found


def sentence_problems(markdown: str, puzzle: Puzzle) -> list[str]:
    """Sentences that say a low-precision dtype runs on a GPU only where the interpreter runs it,
    or give a tolerance the declaration does not have."""
    low_here = any(c.dtype != "float32" and not c.gpu_only for c in puzzle.cases())
    figures = declared_figures(puzzle)
    problems = []
    for s in sentences(markdown):
        gpu_only = GPU_ONLY.search(s) or (ON_A_GPU.search(s) and "interpreter" not in s)
        if low_here and gpu_only and LOW.search(s) and not BENCH.search(s):
            problems.append(f"says bf16 runs on a GPU only, but the interpreter runs a bf16 case: {s[:160]!r}")
        if TOLERANCE_WORDS.search(s):
            for m in FIGURE.finditer(s):
                value = float(f"{m.group(1)}e-{m.group(2)}")
                if not any(abs(value - f) <= 1e-12 for f in figures):
                    problems.append(f"gives the tolerance {m.group(0)}, which the declaration does not have "
                                    f"({', '.join(sorted(facts._figure(f) for f in figures))}): {s[:160]!r}")
    return problems


def name_problems(markdown: str, puzzle: Puzzle) -> list[str]:
    """Code spans that name an output otherwise than the declaration does (`dW` for `dw`): the
    report, its JSON and the gradebook use the declaration's name, and so does the text."""
    outputs = {o.label for part in puzzle.parts for o in part.outputs}
    by_lower = {o.lower(): o for o in outputs}
    prose = re.sub(r"^```.*?^```", " ", markdown, flags=re.S | re.M)
    said = set(re.findall(r"`([A-Za-z_]\w*)`", prose))
    return [f"names the output `{by_lower[s.lower()]}` as `{s}`" for s in sorted(said)
            if s.lower() in by_lower and s not in outputs]


# -- all of it -----------------------------------------------------------------------------------
def markdown_of(notebook: dict) -> str:
    return "\n\n".join(_text(c) for c in notebook["cells"] if c["cell_type"] == "markdown"
                       and FACTS_TAG not in c.get("metadata", {}).get("tags", []))


def differences(puzzle: Puzzle, notebook: dict, dry: list[DryCase] | None = None,
                words: dict[str, str] | None = None) -> list[str]:
    """How the notebook's statement disagrees with the declaration ([] where it does not)."""
    dry = dry if dry is not None else dry_cases(puzzle)
    words = words if words is not None else facts.dtype_words({case.dtype: case.seen for case in dry})
    name = puzzle.notebook.name
    problems = []
    cells = facts_cells(notebook)
    if len(cells) != 1 or _text(cells[0]) != facts.facts_cell(puzzle):
        problems.append("its facts cell is not the declaration's (python -m checker.stubs --write)")
    markdown = markdown_of(notebook)
    problems += table_problems(markdown, words, dry)
    problems += launch_problems(markdown, puzzle, dry)
    problems += sentence_problems(markdown, puzzle)
    problems += name_problems(markdown, puzzle)
    return [f"{name}: {p}" for p in problems]
