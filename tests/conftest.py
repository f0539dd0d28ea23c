"""Shared test setup: kernels run in Triton's interpreter unless a test asks the checker for a GPU;
one marker per puzzle (pytest -m p07), registered from the checker's registry."""
import os
import sys
from pathlib import Path

# must be set before any test module imports triton
os.environ.setdefault("TRITON_INTERPRET", "1")
# `python -m checker` in a test runs in its own process and starts no warm server (none is left
# behind); tests/test_server.py starts and stops its own in a folder of its own
os.environ["TRITON_PUZZLES_NO_SERVER"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/catalog*.py

import pytest  # noqa: E402


def pytest_configure(config):
    from checker import registry
    for puzzle in registry.all_puzzles():
        config.addinivalue_line("markers", f"{puzzle.key}: puzzle {puzzle.number} ({puzzle.title})")


def _cuda() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def pytest_collection_modifyitems(config, items):
    if _cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
