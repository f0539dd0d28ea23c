"""Helion's published examples as benchmark columns ("helion"), where an example does a puzzle's work:
a spec's bench names one with `extra={"helion": fn}`, fn decorated with @helion_column and running
the example it gets from helion_example(name).

The examples are Helion's own code, run unchanged: pip's `helion` ships the library but not its
examples/ folder, so the column runs where HELION_EXAMPLES names that folder of a Helion checkout
(git clone https://github.com/pytorch/helion; HELION_EXAMPLES=helion/examples). Without Helion or
the folder the column is left out, and the table says why (`helion_status`).

Each example runs at Helion's default configuration, no autotuning (HELION_AUTOTUNE_EFFORT=none,
unless already set): the column is what a Helion user gets before a tuning run, which takes minutes
per size.

Compatibility: Helion 1.5.1 imports torch._inductor's IntelGPUError, a name PyTorch 2.11 does not
have; Helion uses it only to classify an Intel GPU's build errors. Where the name is missing it is
defined (an exception no code raises) before Helion is imported, so Helion 1.5.1 runs on PyTorch 2.11.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Callable


# the table's line for the column (Bench.notes)
HELION_NOTE = ("helion: Helion's published example for the same work (examples/ of a Helion checkout), its default "
        "configuration, no autotuning.")


def _compatible_torch() -> None:
    import torch._inductor.runtime.triton_compat as compat
    if not hasattr(compat, "IntelGPUError"):
        compat.IntelGPUError = type("IntelGPUError", (RuntimeError,), {})


def helion_status() -> str:
    """"ready", or why the column is left out: Helion not installed, or no examples folder."""
    folder = os.environ.get("HELION_EXAMPLES", "")
    if not folder or not (Path(folder) / "layer_norm.py").is_file():  # one of the examples the columns run
        return "no examples (set HELION_EXAMPLES to a Helion checkout's examples/ folder)"
    try:
        _compatible_torch()
        import helion  # noqa: F401
    except Exception as error:  # not installed, or built for another PyTorch
        return f"not importable ({type(error).__name__})"
    return "ready"


@cache
def helion_example(name: str) -> ModuleType | None:
    """examples/<name>.py of the checkout HELION_EXAMPLES names, imported, or None where helion_status()
    is not ready."""
    if helion_status() != "ready":
        return None
    os.environ.setdefault("HELION_AUTOTUNE_EFFORT", "none")  # read when the example declares its kernels
    folder = Path(os.environ["HELION_EXAMPLES"])
    spec = importlib.util.spec_from_file_location(f"helion_examples_{name}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Helion reads its kernels' source through the module
    spec.loader.exec_module(module)
    return module


def helion_column(make: Callable[..., Callable[[], Any] | None]) -> Callable[..., Callable[[], Any] | None]:
    """Marks a bench baseline that runs a Helion example: where it returns None (no Helion, no examples),
    the benchmark's table says why (checker/bench/timing.py reads why_absent)."""
    make.why_absent = helion_status
    return make
