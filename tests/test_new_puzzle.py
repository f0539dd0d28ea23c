"""python -m checker.new (checker/new.py): the scaffold writes every part asked for and places the
page in the sidebar where puzzles keep counting up. The whole trial (the new puzzle's
`pytest -m pNN`) runs in a copy of the checkout; this checks the pieces, in a temporary folder."""
from __future__ import annotations

import ast

import pytest

from checker import new

TOC = '''parts:
  - caption: "Getting started"
    chapters:
      - file: book/01_how_to_use
  - caption: "Part 1: programs, blocks and masks"
    chapters:
      - file: book/p01
  - caption: "Part 2: attention"
    chapters:
      - file: book/02_attention
      - file: book/p02
'''


def test_the_page_goes_to_the_end_of_its_part_or_a_new_part_never_before_the_last_puzzle():
    toc, caption = new.toc_with(TOC, "p03", "Attention")
    assert caption == "Part 2: attention" and toc.endswith("      - file: book/p02\n      - file: book/p03\n")
    toc, caption = new.toc_with(TOC, "p03", "the rest of a training step")
    assert caption == "Part 3: the rest of a training step"
    assert toc.endswith('  - caption: "Part 3: the rest of a training step"\n    chapters:\n      - file: book/p03\n')
    with pytest.raises(ValueError, match="count up"):
        new.toc_with(TOC, "p03", "programs, blocks and masks")
    assert new.last_chapter(TOC) == "attention"


def test_every_part_gets_its_kernel_its_launch_and_its_cells():
    parts = ["forward", "backward"]
    spec = new.spec_text(33, "gelu", "GELU", parts, "attention")
    solution = new.solution_text(33, "gelu", "GELU", parts)
    catalog = new.catalog_text(33, "gelu", "GELU", parts)
    for text in (spec, solution, catalog):
        ast.parse(text)
    assert "gelu_forward_kernel" in spec and "gelu_backward_kernel" in spec and 'grads={"dx": "x"}' in spec
    kernels = [n.name for n in ast.parse(solution).body if isinstance(n, ast.FunctionDef)]
    assert kernels == ["gelu_forward_kernel", "gelu_backward_kernel"]
    assert catalog.count("Bug(") == 3  # the contract wants three
    cells = new.notebook(33, "GELU", [(p, p.capitalize(), [new.kernel_name("gelu", p, 2)]) for p in parts])["cells"]
    assert [c["source"] for c in cells if c["cell_type"] == "code" and "check(" in c["source"]
            and "import" not in c["source"]] == ['check("p33", "forward")', 'check("p33", "backward")']
    with pytest.raises(ValueError):
        new.spec_text(33, "gelu", "GELU", ["backward"], "attention")  # nothing to differentiate


def test_it_writes_five_files_and_the_toc_and_refuses_to_overwrite(tmp_path):
    for folder in ("checker/specs", "solutions", "puzzles", "book", "tests/bugs"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "_toc.yml").write_text(TOC, encoding="utf-8")
    written = new.create(3, "gelu", "GELU", ["forward", "backward"], None, root=tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == sorted([
        "checker/specs/p03_gelu.py", "solutions/p03_gelu.py", "book/p03.md", "tests/bugs/p03.py",
        "puzzles/p03_gelu.ipynb", "_toc.yml"])
    assert "chapter=\"attention\"" in (tmp_path / "checker/specs/p03_gelu.py").read_text(encoding="utf-8")
    with pytest.raises(FileExistsError):
        new.create(3, "gelu", "GELU", ["forward"], None, root=tmp_path)
