"""Shared test setup: kernels run in Triton's interpreter unless a test asks the checker for a GPU;
one marker per puzzle (pytest -m p07), registered from the checker's registry."""
import os
import sys
from pathlib import Path

# must be set before any test module imports triton
os.environ.setdefault("TRITON_INTERPRET", "1")
# pytest-xdist's workers share the cores: each one's torch (and the checker's worker processes it
# starts, which inherit this) takes its share of threads instead of one thread per core each. On a
# 16-core GPU host, 16 workers of 16 threads each slowed the GPU suite's checks past their time limits.
if "PYTEST_XDIST_WORKER_COUNT" in os.environ and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
# the experiments' time limit is a safety net under their count of cases (checker/experiment.py): on
# two cores shared by two workers p26's experiments met the 12 s net after 14 cases, and the hint they
# give went with them. The tests judge the report the counts give, as a machine with time to spare
# shows it
os.environ.setdefault("TRITON_PUZZLES_EXPERIMENT_SECONDS", "60")
# `python -m checker` in a test runs in its own process and starts no warm server (none is left
# behind); tests/test_server.py starts and stops its own in a folder of its own
os.environ["TRITON_PUZZLES_NO_SERVER"] = "1"
# every check of a notebook records the learner's progress (checker/history/store.py): the tests'
# checks go to a folder of their own, never into the checkout's .checker/
if "TRITON_PUZZLES_STATE" not in os.environ:
    import atexit
    import shutil
    import tempfile
    os.environ["TRITON_PUZZLES_STATE"] = tempfile.mkdtemp(prefix="triton-puzzles-state-")
    atexit.register(shutil.rmtree, os.environ["TRITON_PUZZLES_STATE"], True)
sys.path.insert(0, str(Path(__file__).resolve().parent))  # import bugs (tests/bugs/), block_steps

import pytest  # noqa: E402


def _read_the_repositorys_notebooks() -> None:
    """Every test reads a puzzle's notebook as git holds it (tests/pristine.py), not the learner's
    working copy in puzzles/: the suite checks the repository, whatever a learner has written there,
    staged or committed (a notebook whose kernels are not all stubs is a learner's)."""
    from checker.puzzle.model import REPO_ROOT, Puzzle
    from pristine import pristine
    working = Puzzle.notebook.fget
    Puzzle.notebook = property(lambda puzzle: pristine(working(puzzle), REPO_ROOT, lambda text: _stubs(text, puzzle)),
                               doc="the notebook as git holds it, as the project gives it (tests/conftest.py)")


def _stubs(text: bytes, puzzle) -> bool:
    """Does this notebook hold the puzzle's stubs, every kernel not written yet (as the project gives it)?"""
    import json

    from checker.source import KERNEL_TAG, cell_text, from_text, not_started
    try:
        notebook = json.loads(text)
        cells = [c for c in notebook["cells"] if KERNEL_TAG in c.get("metadata", {}).get("tags", [])]
    except (ValueError, KeyError, TypeError, AttributeError):
        return False
    code = "\n\n".join(cell_text(c) for c in cells)
    return bool(cells) and not_started(from_text(code, "notebook"), puzzle.kernel_names)


_read_the_repositorys_notebooks()


def pytest_addoption(parser):
    parser.addoption("--repeat-module", action="append", default=[], metavar="FILE:N",
                     help="run the tests of one test file N times (e.g. tests/test_server.py:50), "
                          "among the rest of the suite: a flaky test shows under load, not alone")


def pytest_generate_tests(metafunc):
    """--repeat-module tests/test_server.py:50: each test of that file N times, each a test of its own
    (so pytest-xdist spreads the repeats among the rest of the suite)."""
    for spec in metafunc.config.getoption("repeat_module"):
        path, _, times = spec.rpartition(":")
        if Path(metafunc.definition.fspath).resolve() == Path(path).resolve() and int(times) > 1:
            metafunc.fixturenames.append("repeat_index")
            metafunc.parametrize("repeat_index", range(int(times)), ids=lambda i: f"repeat{i}")


def pytest_configure(config):
    from checker import registry
    for puzzle in registry.all_puzzles():
        config.addinivalue_line("markers", f"{puzzle.key}: puzzle {puzzle.number} ({puzzle.title})")
    config.addinivalue_line("markers", "every_puzzle: one test over every puzzle (pytest -m pNN selects it too)")


def _cuda() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def _puzzle_markers(items) -> None:
    """`pytest -m p07` selects every test that concerns puzzle 7: those parametrized by it (a puzzle,
    its key or its page's stem among the parameters, however the test file builds them) and those
    marked `every_puzzle` (one test over all of them: the sidebar's order, the hang limits), which
    concern a new puzzle as much as any."""
    from checker import registry
    keys = [p.key for p in registry.all_puzzles()]
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        mine = [k for k in (getattr(v, "key", v) for v in params.values()) if isinstance(k, str) and k in keys]
        if not mine and item.get_closest_marker("every_puzzle"):
            mine = keys  # a test of one puzzle among a file's tests over all of them is that puzzle's alone
        for key in mine:
            if not item.get_closest_marker(key):
                item.add_marker(getattr(pytest.mark, key))


def pytest_collection_modifyitems(config, items):
    _puzzle_markers(items)
    if _cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
