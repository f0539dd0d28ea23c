"""Triton's own tutorials as benchmark columns ("tutorial"), where one does a puzzle's work: a spec's bench
names one with `extra={"tutorial": fn}`, fn decorated with @tutorial_column and running the tutorial it
gets from triton_tutorial(name).

The tutorials are Triton's own code, loaded from a Triton checkout and never copied here: pip's `triton`
ships no tutorials, so the column runs where TRITON_TUTORIALS names the python/tutorials/ folder of a
checkout (git clone https://github.com/triton-lang/triton; TRITON_TUTORIALS=triton/python/tutorials),
best at the tag of the Triton installed. Without the folder the column is left out, and the table says
why (`tutorial_status`).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

FUSED_ATTENTION = "06-fused-attention"  # the tutorial of the attention columns


def _file(name: str) -> tuple[Path | None, str]:
    """The tutorial's file, or None and why not."""
    folder = os.environ.get("TRITON_TUTORIALS", "")
    if not folder:
        return None, "no tutorials (set TRITON_TUTORIALS to a Triton checkout's python/tutorials/ folder)"
    path = Path(folder) / f"{name}.py"
    return (path, "ready") if path.is_file() else (None, f"no {name}.py in TRITON_TUTORIALS")


@cache
def _loaded(path: Path) -> tuple[ModuleType | None, str]:
    """The file imported (its kernels declared; a tutorial runs its benchmark only as a script), or None
    and why: a tutorial imports what its own Triton has, and declares its kernels on a GPU's driver."""
    spec = importlib.util.spec_from_file_location("triton_tutorial_" + path.stem.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Triton reads its kernels' source through the module
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # noqa: BLE001  (whatever stops the tutorial's import leaves the column out)
        del sys.modules[spec.name]
        return None, f"not importable ({type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''})"
    return module, "ready"


def tutorial_status(name: str = FUSED_ATTENTION) -> str:
    """"ready", or why the column is left out: no tutorials folder, the tutorial not in it, or not
    importable here."""
    path, why = _file(name)
    return why if path is None else _loaded(path)[1]


def triton_tutorial(name: str) -> ModuleType | None:
    """<name>.py of the folder TRITON_TUTORIALS names, imported, or None where tutorial_status(name) is
    not ready."""
    path, _ = _file(name)
    return None if path is None else _loaded(path)[0]


def tutorial_column(make: Callable[..., Callable[[], Any] | None]) -> Callable[..., Callable[[], Any] | None]:
    """Marks a bench baseline that runs a Triton tutorial: where it returns None (no tutorials folder),
    the benchmark's table says why (checker/bench/timing.py reads why_absent)."""
    make.why_absent = tutorial_status
    return make
