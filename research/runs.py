"""What the research scripts (research/*/) share: a puzzle's reference solution as a module (the
solutions are files, not a package), the stamp every GPU run's JSON carries, and the reading of
Nsight Compute's raw CSV. A script imports it as `research.runs`, with the repository's root on
sys.path."""
from __future__ import annotations

import csv
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


def ncu_launches(path: str | Path) -> list[dict[str, str]]:
    """Nsight Compute's raw CSV (`ncu --page raw --csv`): a dict per profiled launch, from each metric's
    name to its value as ncu printed it. Lines before the header (the profiled program's own output,
    ncu's ==PROF== lines) and the line of units after it are skipped."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    top = next(i for i, row in enumerate(rows) if "Kernel Name" in row)
    return [dict(zip(rows[top], row)) for row in rows[top + 2:] if row]


def ncu_number(launch: dict[str, str], metric: str) -> float:
    """A metric of one of ncu_launches' launches as a number (ncu prints thousands with commas)."""
    return float(launch[metric].replace(",", ""))


STALLED = ("smsp__average_warps_issue_stalled_", "_per_issue_active.ratio")


def ncu_stalls(launch: dict[str, str], least: float = 0.05) -> dict[str, float]:
    """One launch's issue stalls (ncu's smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio:
    cycles per issued instruction that a warp spent stalled for <reason>), largest first, rounded to
    0.01 and from `least` up; "selected" (the warp issued) is not a stall."""
    found = {name[len(STALLED[0]):-len(STALLED[1])]: ncu_number(launch, name) for name in launch
             if name.startswith(STALLED[0]) and name.endswith(STALLED[1]) and launch[name] not in ("", "n/a")}
    found.pop("selected", None)
    return {k: round(v, 2) for k, v in sorted(found.items(), key=lambda kv: -kv[1]) if v >= least}
