"""The README and chapter 1 say the same thing, and neither installs an unpinned torch (a CUDA
build of several GB on a CPU machine): both say how to get the CPU build from PyTorch's own index
where pip is not set up to find it; CI runs the README's install as written; the install gives the
learner JupyterLab; the virtual environment the README suggests is git-ignored."""
from __future__ import annotations

import re

from checker.puzzle.model import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
CHAPTER_1 = (REPO_ROOT / "book" / "01_how_to_use.md").read_text(encoding="utf-8")
CPU_TORCH = "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
INSTALL = "pip install torch==2.13.0 -r requirements.txt"


def test_chapter_1_gives_the_readme_install_command():
    assert INSTALL in README and CPU_TORCH in README and CPU_TORCH in CHAPTER_1 and INSTALL in CHAPTER_1
    assert "python -m checker lab" in CHAPTER_1 and "python -m checker lab" in README  # checker/lab.py


def test_ci_installs_as_the_readme_says_and_the_venv_is_ignored():
    assert INSTALL in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m venv .venv" in README
    ignored = (REPO_ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert ".venv/" in ignored


def test_no_page_installs_an_unpinned_torch():
    for name, text in [("README.md", README), ("01_how_to_use.md", CHAPTER_1)]:
        for line in re.findall(r"pip install[^\n`]*", text):  # a torch pinned, or installed before
            assert "torch==" in line or "-r requirements.txt" not in line or CPU_TORCH in text, f"{name}: {line}"


def test_the_install_gives_jupyterlab_and_widgets():
    requirements = (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").split()
    assert "jupyterlab" in requirements and "ipywidgets" in requirements


def test_chapter_1_describes_the_notebooks_as_they_are():
    for words in ("tagged `kernel`", "set-up cell", "check cell", "--reset"):
        assert words in CHAPTER_1, words
    assert "plain-PyTorch specification" not in CHAPTER_1
