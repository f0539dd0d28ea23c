"""python -m checker.new 33 gelu --parts forward,backward: a new puzzle's five files, from templates.

Writes checker/specs/pNN_<slug>.py (the declaration), solutions/pNN_<slug>.py (the reference
kernels), puzzles/pNN_<slug>.ipynb (the learner's notebook: per part its text, kernel cells and check
cell, stubs derived from the solution), book/pNN.md (the page, hints in the book's three grades) and
tests/bugs/pNN.py (three known bugs and two right kernels the contract accepts), adds book/pNN to
_toc.yml (the last part, or --chapter's), and measures the template's hang limit. Refuses to
overwrite. The templates pass `python -m pytest -m pNN` but for the TODO text; what to do next is
printed at the end.
"""
from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path

from checker.puzzle.edition import NO_SOLUTIONS, student_edition
from checker.puzzle.model import REPO_ROOT
from checker.stubs import NOTEBOOK_METADATA

def _part_names(parts: list[str]) -> list[tuple[str, bool]]:
    """(name, is a backward part) of each part asked for: at most one backward part (the gradient
    of x), after at least one forward part."""
    named = [(name, name.startswith("backward")) for name in parts]
    if not named or named[0][1] or sum(b for _, b in named) > 1 or len({n for n, _ in named}) < len(named):
        raise ValueError("parts: one forward part first, at most one backward part, each name once "
                         f"(got {', '.join(parts)})")
    return named


def kernel_name(slug: str, name: str, parts: int) -> str:
    return f"{slug}_kernel" if parts == 1 else f"{slug}_{name}_kernel"


def _output(name: str, first: bool) -> str:
    return "z" if first else f"z_{name}"


def spec_text(number: int, slug: str, title: str, parts: list[str], chapter: str) -> str:
    """The declaration: z = 2·x per forward part (each its own output), dx = 2·dz for a backward part."""
    named = _part_names(parts)
    forward = [n for n, backward in named if not backward]
    outputs = {n: _output(n, i == 0) for i, n in enumerate(forward)}
    inputs = ['"x": randn("N")'] + (['"dz": randn("like z")'] if len(forward) < len(named) else [])
    lines = []
    for name, backward in named:
        kernel = kernel_name(slug, name, len(named))
        if backward:
            lines.append(f'part("{name}", "dx = 2 · dz", ["{kernel}"], outputs=["dx"], grads={{"dx": "x"}},\n'
                         f'                upstream={{"z": "dz"}},\n'
                         f'                launch=lambda k, dz, dx, N, BLOCK: k.{kernel}[(cdiv(N, BLOCK),)](dz, dx, N, BLOCK=BLOCK))')
        else:
            z = outputs[name]
            lines.append(f'part("{name}", "{z} = 2 · x", ["{kernel}"], outputs=["{z}"],\n'
                         f'                launch=lambda k, x, {z}, N, BLOCK: k.{kernel}[(cdiv(N, BLOCK),)](x, {z}, N, BLOCK=BLOCK))')
    reference = ", ".join(f'"{z}": 2 * x' for z in outputs.values())
    first = outputs[forward[0]]
    formulas = [f'"eq-p{number:02d}-{first}": ("{first}", lambda x: 2 * x)']
    if len(forward) < len(named):
        formulas.append(f'"eq-p{number:02d}-dx": ("dx", lambda x, dz: 2 * dz)')
    declared_formulas = ",\n              ".join(formulas)
    declared_inputs, declared_parts = ", ".join(inputs), ",\n           ".join(lines)
    return f'''"""Puzzle {number}: {title}."""
from checker.puzzle import case, cdiv, part, puzzle, randn, variant

PUZZLE = puzzle(
    {number}, "{slug}", "{title}",
    skill="TODO: the skill this puzzle teaches, in one line",
    chapter="{chapter}",
    inputs={{{declared_inputs}}},
    reference=lambda x: {{{reference}}},
    parts=[{declared_parts}],
    params={{"BLOCK": 32}},
    # each labelled equation of the page, by its label: a test evaluates it against autograd
    formulas={{{declared_formulas}}},
    # what a known bug computes: a wrong output that matches it gets this hint, naming its cause
    variants=[variant("factor_dropped", "formula", "{first} matches x itself: the factor 2 is missing.",
                      lambda x: {{"{first}": x}})],
    # randn("N", mean=, std=), uniform("N", low, high), randn("like z") (an upstream gradient's shape);
    # a case's own inputs= (a wider spread), dtype="bfloat16", gpu_only=True (too large for the CPU)
    cases=[case(N=8, documented=True), case(N=1), case(N=20), case(N=64), case(N=100), case(N=1000)],
)
'''


def solution_text(number: int, slug: str, title: str, parts: list[str]) -> str:
    named = _part_names(parts)
    forward = [n for n, backward in named if not backward]
    kernels, launches = [], []
    for name, backward in named:
        kernel = kernel_name(slug, name, len(named))
        if backward:
            launches.append(f"    {kernel}[(triton.cdiv(N, BLOCK),)](dz, dx, N, BLOCK=BLOCK)")
            kernels.append(f'''@triton.jit
def {kernel}(dz_ptr, dx_ptr, N, BLOCK: tl.constexpr):
    """dx = 2 · dz, the gradient of z = 2 · x. Grid: (cdiv(N, BLOCK),)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    dz = tl.load(dz_ptr + offsets, mask=mask)
    tl.store(dx_ptr + offsets, 2.0 * dz, mask=mask)
''')
        else:
            z = _output(name, name == forward[0])
            launches.append(f"    {kernel}[(triton.cdiv(N, BLOCK),)](x, {z}, N, BLOCK=BLOCK)")
            kernels.append(f'''@triton.jit
def {kernel}(x_ptr, {z}_ptr, N, BLOCK: tl.constexpr):
    """{z} = 2 · x, one block per program. Grid: (cdiv(N, BLOCK),)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < N
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store({z}_ptr + offsets, 2.0 * x, mask=mask)
''')
    tensors = ", ".join(["x"] + [_output(n, n == forward[0]) for n in forward]
                        + (["dz", "dx"] if len(forward) < len(named) else []))
    launched = "\n".join(launches)
    return (f'''"""Puzzle {number} reference kernels: {title}.

    {tensors}: [N] float32, contiguous

The checker launches one program per block of BLOCK elements:
{launched}
"""
import triton
import triton.language as tl


''' + "\n\n".join(kernels))


def catalog_text(number: int, slug: str, title: str, parts: list[str]) -> str:
    """Three known bugs of the first part, each of a class the contract names, and a right kernel."""
    first = _part_names(parts)[0][0]
    count = len(parts)  # each kernel starts from the same offsets line
    return f'''"""Every known kernel of puzzle {number} ({title}): the bugs tests/test_contract.py pins (PINNED)
and the correct kernels it passes (PASSING). What each list means: tests/bugs/__init__.py.
The three below fit the template; replace them with the bugs a learner of this puzzle writes."""
from bugs import Bug, Right

PINNED = [
    Bug("no_mask", "{first}",
        (("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)", 1),),
        cause="mask", reasons=(("out-of-bounds", "out of bounds"),)),
    Bug("program_offset_forgotten", "{first}",
        (("offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.arange(0, BLOCK)", {count}),),
        cause="address", reasons=(("program",),),
        notes="every program handles the first block"),
    # cause: the class the hint must name; where the evidence allows only a question among several,
    # named="candidates" asks that the class be among them (tests/bugs/__init__.py)
    Bug("factor_dropped", "{first}",
        (("2.0 * x", "x", 1),), cause="formula", reasons=(("factor 2 is missing",),),
        notes="matches the spec's variant of the same name, whose hint names the cause"),
]

PASSING = [
    Right("mask_written_the_other_way", (("mask = offsets < N", "mask = N > offsets", {count}),)),
    Right("sum_for_product", (("2.0 * x", "x + x", 1),)),
]
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

## The formula

{equations}

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

:::{{dropdown}} Hint 1 — the idea: TODO
TODO
:::

:::{{dropdown}} Hint 2 — the approach: TODO
TODO
:::

:::{{dropdown}} Hint 3 — the line to get right: TODO
TODO
:::

## Solution

:::{{dropdown}} The reference solution (`solutions/{key}_{slug}.py`)
```{{literalinclude}} ../solutions/{key}_{slug}.py
:language: python
```
:::
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


def toc_with(toc: str, key: str, chapter: str) -> tuple[str, str]:
    """_toc.yml's text with book/<key> added, and the part's caption: at the end of the part whose
    caption is "Part N: <chapter>" (any case), or in a new part after the last. Puzzles count up along
    the sidebar (tests/test_book_toc.py), so the part must be the last one holding a puzzle, or later."""
    lines = toc.splitlines(keepends=True)
    captions = [(i, m.group(1)) for i, line in enumerate(lines)
                if (m := re.match(r'\s*- caption: "(.*)"', line))]
    chosen = [(i, c) for i, c in captions if re.sub(r"^Part \d+: ", "", c).lower() == chapter.lower()]
    last_puzzle = max((i for i, line in enumerate(lines) if re.search(r"file: book/p\d\d\s*$", line)), default=-1)
    if chosen:
        index, caption = chosen[0]
        end = next((i for i, _ in captions if i > index), len(lines))
        if end <= last_puzzle:
            raise ValueError(f'"{caption}" comes before the part of the last puzzle: puzzles count up along the '
                             f"sidebar, so a new one goes in that part or a later one (--chapter)")
        while end > index and not lines[end - 1].strip().startswith("- file:"):
            end -= 1
        return "".join(lines[:end] + [f"      - file: book/{key}\n"] + lines[end:]), caption
    numbers = [int(m.group(1)) for _, c in captions if (m := re.match(r"Part (\d+): ", c))]
    caption = f"Part {max(numbers, default=0) + 1}: {chapter}"
    tail = "" if toc.endswith("\n") else "\n"
    return toc + tail + f'  - caption: "{caption}"\n    chapters:\n      - file: book/{key}\n', caption


def last_chapter(toc: str) -> str:
    """The last part's caption without its number: where a new puzzle goes by default."""
    captions = re.findall(r'- caption: "(.*)"', toc)
    return re.sub(r"^Part \d+: ", "", captions[-1]) if captions else "TODO"


def create(number: int, slug: str, title: str, parts: list[str] | None = None, chapter: str | None = None,
           root: Path = REPO_ROOT) -> list[Path]:
    """Write a new puzzle's five files and its line in _toc.yml; refuses to overwrite any of them."""
    import nbformat

    parts = parts or ["forward"]
    named = _part_names(parts)
    key = f"p{number:02d}"
    toc_path = root / "_toc.yml"
    toc = toc_path.read_text(encoding="utf-8")
    chapter = chapter or last_chapter(toc)
    new_toc, caption = toc_with(toc, key, chapter)
    chapter = re.sub(r"^Part \d+: ", "", caption)
    equations = f"$$\nz_i = 2 x_i\n$$ (eq-{key}-z)"
    if any(backward for _, backward in named):
        equations += f"\n\nand its gradient, with dz the gradient of the loss with respect to z:\n\n$$\ndx_i = 2 \\, dz_i\n$$ (eq-{key}-dx)"
    fields = {"n": number, "slug": slug, "title": title, "key": key, "equations": equations}
    files = {
        root / "checker" / "specs" / f"{key}_{slug}.py": spec_text(number, slug, title, parts, chapter),
        root / "solutions" / f"{key}_{slug}.py": solution_text(number, slug, title, parts),
        root / "book" / f"{key}.md": PAGE.format(**fields),
        root / "tests" / "bugs" / f"{key}.py": catalog_text(number, slug, title, parts),
    }
    existing = [p for p in files if p.exists()] + list((root / "puzzles").glob(f"{key}_*.ipynb"))
    if existing or f"book/{key}\n" in toc:
        where = existing[0].relative_to(root) if existing else f"book/{key} in _toc.yml"
        raise FileExistsError(f"{where} exists: not overwriting anything")
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    notebook_path = root / "puzzles" / f"{key}_{slug}.ipynb"
    cells = [(name, name.capitalize(), [kernel_name(slug, name, len(named))]) for name, _ in named]
    nbformat.write(notebook(number, title, cells), str(notebook_path))
    toc_path.write_text(new_toc, encoding="utf-8")
    return [*files, notebook_path, toc_path]


NEXT = """
next, in this order:
  1. write the declaration and the solution; `python -m checker {key} --solution` passes
  2. python -m checker.stubs --write {key}                    the notebook's stubs, from the solution
  3. python -m checker.selftime --slowest-cases {key} --write   its hang limit, measured (again after step 1 changes)
  4. the notebook's text, the page's hints, the catalog's bugs a learner writes
  5. python -m pytest -m "{key} and not book"                 a minute: every test that needs no built book
  6. python -m pytest -m {key}                                every test that concerns it (builds the book)"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m checker.new", description=__doc__.split("\n")[0])
    parser.add_argument("number", type=int)
    parser.add_argument("slug", help="snake_case name, e.g. softmax_backward")
    parser.add_argument("--title", help="the puzzle's title (default: from the slug)")
    parser.add_argument("--parts", default="forward",
                        help="its parts, comma-separated, forward first (e.g. forward,backward: a backward part "
                             "differentiates the first forward one); each gets a kernel and notebook cells")
    parser.add_argument("--chapter", help="the book part it belongs to, as _toc.yml's caption says it without "
                                          "\"Part N: \" (default: the last part); a new caption starts a new part")
    args = parser.parse_args(argv)
    if student_edition():  # a puzzle is five files, its solution and catalog among them
        print(f"python -m checker.new adds a puzzle to the full copy. {NO_SOLUTIONS}", file=sys.stderr)
        return 2
    title = args.title or args.slug.replace("_", " ").capitalize()
    key = f"p{args.number:02d}"
    try:
        written = create(args.number, args.slug, title, [p.strip() for p in args.parts.split(",") if p.strip()],
                         args.chapter)
    except (FileExistsError, ValueError) as err:
        print(err, file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path.relative_to(REPO_ROOT)}")
    caption = re.findall(rf'- caption: "(.*)"\n    chapters:\n(?:      - file: .*\n)*?      - file: book/{key}\n',
                         (REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    print(f"the page is in \"{caption[0] if caption else '?'}\" of the sidebar (--chapter names another part, "
          f"or a new one)")
    from checker.stubs import main as stubs_main
    stubs_main(["--write", key])
    from checker.selftime import slowest_cases
    from checker.run import hang_limits
    hang_limits.store(slowest_cases([key]))
    print(f"wrote {hang_limits.MEASURED.relative_to(REPO_ROOT)} (the template's hang limit, measured: step 3 "
          f"measures your solution's)")
    print(NEXT.format(key=key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
