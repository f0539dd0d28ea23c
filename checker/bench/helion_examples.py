"""Helion's published examples as benchmark columns ("helion"), where an example does a puzzle's work.

The examples are Helion's own code, run unchanged: pip's `helion` ships the library but not its
examples/ folder, so the column runs where HELION_EXAMPLES names that folder of a Helion checkout
(git clone https://github.com/pytorch/helion; HELION_EXAMPLES=helion/examples). Without Helion or
the folder the column is left out, and the table says why (`status`).

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
NOTE = ("helion: Helion's published example for the same work (examples/ of a Helion checkout), its default "
        "configuration, no autotuning.")


def _compatible_torch() -> None:
    import torch._inductor.runtime.triton_compat as compat
    if not hasattr(compat, "IntelGPUError"):
        compat.IntelGPUError = type("IntelGPUError", (RuntimeError,), {})


def status() -> str:
    """"ready", or why the column is left out: Helion not installed, or no examples folder."""
    folder = os.environ.get("HELION_EXAMPLES", "")
    if not folder or not (Path(folder) / "layer_norm.py").is_file():
        return "no examples (set HELION_EXAMPLES to a Helion checkout's examples/ folder)"
    try:
        _compatible_torch()
        import helion  # noqa: F401
    except Exception as error:  # not installed, or built for another PyTorch
        return f"not importable ({type(error).__name__})"
    return "ready"


@cache
def example(name: str) -> ModuleType | None:
    """examples/<name>.py of the checkout HELION_EXAMPLES names, imported, or None where status() is not ready."""
    if status() != "ready":
        return None
    os.environ.setdefault("HELION_AUTOTUNE_EFFORT", "none")  # read when the example declares its kernels
    folder = Path(os.environ["HELION_EXAMPLES"])
    spec = importlib.util.spec_from_file_location(f"helion_examples_{name}", folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Helion reads its kernels' source through the module
    spec.loader.exec_module(module)
    return module


def layernorm_backward(x: Any, gamma: Any, beta: Any, dz: Any) -> Callable[[], Any] | None:
    """examples/layer_norm.py's layer_norm_bwd: dx, dγ, dβ from dz, x and the row statistics. The
    example takes the mean and rstd its forward saved; they are computed here, outside the timed
    work (2 floats a row: the same bytes within 0.1 %, and two row reductions fewer than a kernel that
    recomputes them, as the puzzle's does)."""
    module = example("layer_norm")
    if module is None:
        return None
    import torch
    from checker.specs.families.layernorm import EPS
    x32 = x.float()
    mean = x32.mean(1)
    rstd = torch.rsqrt(x32.var(1, unbiased=False) + EPS)
    return lambda: module.layer_norm_bwd(dz, x, mean, rstd, gamma)


def swiglu_backward(a: Any, b: Any, dh: Any) -> Callable[[], Any] | None:
    """examples/swiglu.py's swiglu_bwd: da and db of silu(a)·b from dh, a and b."""
    module = example("swiglu")
    return None if module is None else (lambda: module.swiglu_bwd(dh, a, b))


# why a column is left out, for the table (checker/bench/columns.py reads it)
layernorm_backward.why_absent = swiglu_backward.why_absent = status
