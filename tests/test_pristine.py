"""The suite reads the repository's notebooks (tests/pristine.py), not a learner's working copies."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from checker import registry
from checker.puzzle.model import REPO_ROOT
from pristine import indexed_text, pristine


def _git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_notebook_a_learner_changed_is_read_as_committed(tmp_path):
    repo = tmp_path / "repo"
    (repo / "puzzles").mkdir(parents=True)
    _git(repo, "init", "-q")
    worked_on, new = repo / "puzzles" / "p98_x.ipynb", repo / "puzzles" / "p99_new.ipynb"
    worked_on.write_text("stub")
    _git(repo, "add", "puzzles/p98_x.ipynb")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "stub")
    worked_on.write_text("the learner's kernel: while True: pass")
    new.write_text("a puzzle not in git yet")
    assert pristine(worked_on, repo).read_text() == "stub"
    assert pristine(new, repo) == new


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_solved_notebook_staged_or_committed_is_read_as_the_project_gave_it(tmp_path):
    """A learner who stages (or commits) a solved notebook must not fail the suite's tests of the
    stubs: the notebook is read from the newest commit whose kernels are the stubs."""
    import json

    from conftest import _stubs
    from learner_notebooks import solved_notebook
    p01 = registry.get("p01")
    repo = tmp_path / "repo"
    (repo / "puzzles").mkdir(parents=True)
    _git(repo, "init", "-q")
    notebook = repo / "puzzles" / "p01_in_a_clone.ipynb"  # a copy's name of its own: copies are kept by name
    given = p01.notebook.read_bytes()  # the stubs, as the project gives them
    notebook.write_bytes(given)
    commit = ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm"]
    _git(repo, "add", "puzzles")
    _git(repo, *commit, "the puzzles")
    solved_notebook(p01, notebook)
    _git(repo, "add", "puzzles")  # staged
    shipped = lambda text: _stubs(text, p01)  # noqa: E731
    assert not shipped(indexed_text(notebook, repo)) and shipped(given)
    assert pristine(notebook, repo, shipped).read_bytes() == given
    pristine(notebook, repo, shipped).unlink()  # one copy per process: read it again
    _git(repo, *commit, "my work")  # committed
    assert pristine(notebook, repo, shipped).read_bytes() == given
    assert json.loads(given)["cells"]


def test_the_suite_reads_puzzle_notebooks_as_git_holds_them():
    notebook = registry.get("p01").notebook  # tests/conftest.py points it at the pristine copy
    committed = indexed_text(REPO_ROOT / "puzzles" / notebook.name, REPO_ROOT)
    if committed is None:
        pytest.skip("not a git checkout")
    assert notebook.read_bytes() == committed
    assert notebook.parent != REPO_ROOT / "puzzles"
