"""Every fact a puzzle's notebook and page state is its declaration's (checker/statement.py): the
facts cell (what the interpreter runs, what only a GPU runs, the tolerances) is rendered from it,
the tensor tables' names, shapes and dtypes are what the kernels receive, each launch line is one
the checker makes, and no sentence says bf16 runs on a GPU only where the interpreter runs it, or
gives a tolerance the declaration does not have. And the checks catch a statement that drifts.

    pytest tests/test_statements.py -m p08
"""
from __future__ import annotations

import copy
import functools
import json

import pytest

from checker import registry, statement
from checker.puzzle import facts
from checker.puzzle.model import REPO_ROOT

PUZZLES = registry.all_puzzles()


def by_puzzle():
    return [pytest.param(p, id=p.key, marks=getattr(pytest.mark, p.key)) for p in PUZZLES]


@functools.lru_cache(maxsize=None)
def declared(key: str) -> tuple[list, dict]:
    """The puzzle's dry launches and its tensors' dtypes, computed once per test run."""
    dry = statement.dry_cases(registry.get(key))
    return dry, facts.dtype_words({case.dtype: case.seen for case in dry})


def notebook(puzzle) -> dict:
    return json.loads(puzzle.notebook.read_text(encoding="utf-8"))


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_the_notebook_states_what_the_declaration_says(puzzle):
    dry, words = declared(puzzle.key)
    assert statement.differences(puzzle, notebook(puzzle), dry, words) == []


@pytest.mark.parametrize("puzzle", by_puzzle())
def test_the_page_states_what_the_declaration_says(puzzle):
    page = (REPO_ROOT / "book" / f"{puzzle.key}.md").read_text(encoding="utf-8")
    dry, _ = declared(puzzle.key)
    problems = (statement.sentence_problems(page, puzzle) + statement.launch_problems(page, puzzle, dry)
                + statement.name_problems(page, puzzle))
    assert problems == [], f"book/{puzzle.key}.md: {problems}"


# ---------------------------------------------------------------------------------------------
# The checks catch drift (p08: float32 and bfloat16 cases in the interpreter, y in float32 always)
# ---------------------------------------------------------------------------------------------
def _drifted(edit) -> list[str]:
    puzzle = registry.get("p08")
    dry, words = declared("p08")
    book = copy.deepcopy(notebook(puzzle))
    for cell in book["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell["source"] = edit(text, cell)
    return statement.differences(puzzle, book, dry, words)


def test_an_unchanged_notebook_has_no_differences():
    assert _drifted(lambda text, cell: text) == []


def test_a_facts_cell_typed_over_is_caught():
    found = _drifted(lambda text, cell: text.replace("bfloat16", "float16")
                     if statement.FACTS_TAG in cell.get("metadata", {}).get("tags", []) else text)
    assert any("facts cell" in p for p in found), found


@pytest.mark.parametrize("old, new, words", [
    ("| `y` | `[M]` | float32 |", "| `y` | `[M]` | float32 or bfloat16 |", "dtype"),
    ("| `y` | `[M]` |", "| `y` | `[N]` |", "[N]"),
    ("| `y` | `[M]` |", "| `out` | `[M]` |", "no kernel receives"),
    ("| the output, whatever", "| the float32 output, whatever", "notes name a dtype"),
    ("long_row_sum_kernel[(M,)](x, y, N", "long_row_sum_kernel[(M,)](y, x, N", "argument 1"),
    ("long_row_sum_kernel[(M,)]", "long_row_sum_kernel[(N,)]", "grid"),
    ("contiguous: row `i` starts", "contiguous (bfloat16 in the GPU-only cases): row `i` starts", "GPU only"),
    ("(the tolerance below)", "(a tolerance of `1e-6`)", "tolerance 1e-6"),
])
def test_a_statement_that_drifts_from_the_declaration_is_caught(old, new, words):
    seen = []

    def edit(text, cell):
        seen.append(old in text)
        return text.replace(old, new)
    found = _drifted(edit)
    assert any(seen), f"the p08 notebook no longer has {old!r}: update the test"
    assert any(words in p for p in found), found


def test_the_facts_cell_says_what_runs_where_and_how_close():
    cell = facts.facts_cell(registry.get("p06"))
    assert "The interpreter runs 9 cases, in float32 and bfloat16." in cell
    assert "A GPU runs them and 4 more, in float32 and bfloat16, with `N` up to 1 000 000." in cell
    assert "a = r = 1e-5 in float32, a = r = 1.6e-2 in bfloat16." in cell
