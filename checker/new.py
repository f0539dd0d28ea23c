"""python -m checker.new 07 softmax_backward: a new puzzle's five files, from templates.

Writes checker/specs/pNN_<slug>.py (the declaration), solutions/pNN_<slug>.py (the reference
kernel), puzzles/pNN_<slug>.ipynb (the learner's notebook, stubs derived from the solution),
book/pNN.md (the page) and tests/bugs/pNN.py (known kernels). Refuses to overwrite.
Then: fill in the spec and the solution, `python -m checker pNN --solution`, rewrite the stubs with
`python -m checker.stubs --write pNN`, write the notebook's text, the page's hints and the known bugs,
and list the page in _toc.yml. `python -m pytest -m pNN` runs the puzzle's contract tests.
"""
from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

from checker.puzzle.edition import NO_SOLUTIONS, student_edition
from checker.puzzle.model import REPO_ROOT
from checker.stubs import NOTEBOOK_METADATA

SPEC = '''"""Puzzle {n}: {title}."""
from checker.puzzle import case, cdiv, part, puzzle, randn

PUZZLE = puzzle(
    {n}, "{slug}", "{title}",
    skill="TODO: the skill this puzzle teaches, in one line",
    chapter="TODO: the book part",
    inputs={{"x": randn("N")}},
    reference=lambda x: {{"z": x}},
    parts=[part("forward", "{title}", ["{kernel}"], outputs=["z"],
                launch=lambda k, x, z, N, BLOCK: k.{kernel}[(cdiv(N, BLOCK),)](x, z, N, BLOCK=BLOCK))],
    params={{"BLOCK": 32}},
    cases=[case(N=8, documented=True), case(N=1), case(N=100), case(N=1000)],
)
'''

SOLUTION = '''"""Puzzle {n} reference kernel: {title}.

    x, z: [N] float32, contiguous
"""
import triton
import triton.language as tl


@triton.jit
def {kernel}(x_ptr, z_ptr, N, BLOCK: tl.constexpr):
    """z = x, one block per program. Grid: (cdiv(N, BLOCK),)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask), mask=mask)
'''

PAGE = '''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# Puzzle {n}: {title}

```{{code-cell}} ipython3
:tags: [remove-cell]
import os
os.environ.setdefault("TRITON_INTERPRET", "1")  # run Triton on the CPU; must precede `import triton`
import figures.base
import puzzle_page
```

```{{code-cell}} ipython3
:tags: [remove-input]
puzzle_page.show_statement("{key}")
```

## Which program handles what

```{{code-cell}} ipython3
:tags: [remove-input]
figures.base.lanes(10, 4, title="TODO: the picture of this puzzle's programs");
```

## What the checker says about the reference solution

Run when this page was built, on the CPU interpreter; your kernels pass when your report looks
like this one.

```{{code-cell}} ipython3
from checker import check

check("{key}", solution=True, plot=False);
```

## Hints

:::{{dropdown}} Hint 1 — TODO
TODO
:::

## Solution

:::{{dropdown}} The reference solution (`solutions/{key}_{slug}.py`)
```{{literalinclude}} ../solutions/{key}_{slug}.py
:language: python
```
:::
'''

CATALOG = '''"""Every known kernel of puzzle {n} ({title}): the bugs tests/test_contract.py pins (PINNED)
and the correct kernels it passes (PASSING). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right

PINNED = [
    Bug("no_mask", "forward",
        (("tl.load(x_ptr + offsets, mask=mask)", "tl.load(x_ptr + offsets)", 1),),
        cause="mask", reasons=(("out-of-bounds",),)),
]

PASSING = [
    Right("other_block_size", (("mask = offsets < N", "mask = N > offsets", 1),)),
]
'''


def notebook(number: int, title: str, parts: list[tuple[str, str, list[str]]]) -> dict:
    """A notebook in the book's layout: statement, set-up, then per part its text, its kernel
    cells (tagged `kernel`, stubs filled in by checker.stubs) and a check cell."""
    import nbformat
    from nbformat import v4

    key = f"p{number:02d}"
    cells = [v4.new_markdown_cell(f"# Puzzle {number}: {title}\n\nTODO: the statement."),
             v4.new_code_cell(SETUP)]
    for name, part_title, kernels in parts:
        cells.append(v4.new_markdown_cell(f"## {part_title}\n\nTODO: what this part asks for."))
        for kernel in kernels:
            cells.append(v4.new_code_cell(f"# {kernel}", metadata={"tags": ["kernel"]}))
        cells.append(v4.new_code_cell(f'check("{key}", "{name}")'))
    cells.append(v4.new_markdown_cell(DONE.format(key=key)))
    nb = v4.new_notebook(cells=cells, metadata=copy.deepcopy(NOTEBOOK_METADATA))
    nbformat.validate(nb)
    return nb


SETUP = '''# Run this cell first. Without a GPU, Triton runs kernels in its interpreter on the CPU,
# and that must be decided before triton is imported.
import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

import triton
import triton.language as tl

from checker import check'''

DONE = '''## When you are done

* `python -m checker {key}` from a shell checks the saved notebook.
* On a machine with a CUDA GPU the checker also compiles and runs your kernels there.
* `python -m checker {key} --reset` restores the stubs after backing your version up next to this notebook.'''


def create(number: int, slug: str, title: str, root: Path = REPO_ROOT) -> list[Path]:
    import nbformat

    key = f"p{number:02d}"
    kernel = f"{slug}_kernel"
    fields = {"n": number, "slug": slug, "title": title, "kernel": kernel, "key": key}
    files = {
        root / "checker" / "specs" / f"{key}_{slug}.py": SPEC.format(**fields),
        root / "solutions" / f"{key}_{slug}.py": SOLUTION.format(**fields),
        root / "book" / f"{key}.md": PAGE.format(**fields),
        root / "tests" / "bugs" / f"{key}.py": CATALOG.format(**fields),
    }
    existing = [p for p in files if p.exists()] + list((root / "puzzles").glob(f"{key}_*.ipynb"))
    if existing:
        raise FileExistsError(f"{existing[0].relative_to(root)} exists: not overwriting anything")
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    notebook_path = root / "puzzles" / f"{key}_{slug}.ipynb"
    nbformat.write(notebook(number, title, [("forward", title, [kernel])]), str(notebook_path))
    return [*files, notebook_path]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.new", description=__doc__.split("\n")[0])
    parser.add_argument("number", type=int)
    parser.add_argument("slug", help="snake_case name, e.g. softmax_backward")
    parser.add_argument("--title", help="the puzzle's title (default: from the slug)")
    args = parser.parse_args(argv)
    if student_edition():  # a puzzle is five files, its solution and catalog among them
        print(f"python -m checker.new adds a puzzle to the full copy. {NO_SOLUTIONS}", file=sys.stderr)
        return 2
    title = args.title or args.slug.replace("_", " ").capitalize()
    try:
        written = create(args.number, args.slug, title)
    except FileExistsError as err:
        print(err, file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(REPO_ROOT)}")
    from checker.stubs import main as stubs_main
    stubs_main(["--write", f"p{args.number:02d}"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
