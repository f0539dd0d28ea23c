"""What the book's experiment scripts (book/experiments/) share: a puzzle's reference solution as a
module (the solutions are files, not a package), and the stamp every GPU run's JSON carries."""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from checker import registry


def module_at(path: str | Path, name: str) -> ModuleType:
    """The Python file at `path` as a module called `name` (a script or a solution: not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def solution(name: str) -> ModuleType:
    """The reference kernels of puzzle `name` ("p28"), loaded from solutions/ as a module."""
    return module_at(registry.get(name).solution, f"solution_{name}")


def run_stamp(**fields: Any) -> dict:
    """The day, the GPU and the versions a run measured on, then `fields` (its records)."""
    import torch
    import triton
    return {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "triton": triton.__version__, **fields}
