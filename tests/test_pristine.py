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


def test_the_suite_reads_puzzle_notebooks_as_git_holds_them():
    notebook = registry.get("p01").notebook  # tests/conftest.py points it at the pristine copy
    committed = indexed_text(REPO_ROOT / "puzzles" / notebook.name, REPO_ROOT)
    if committed is None:
        pytest.skip("not a git checkout")
    assert notebook.read_bytes() == committed
    assert notebook.parent != REPO_ROOT / "puzzles"
