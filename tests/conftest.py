"""Shared test setup: kernels run in Triton's interpreter unless a test asks the checker for a GPU."""
import os

# must be set before any test module imports triton
os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402


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
