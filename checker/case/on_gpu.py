"""A case on a GPU: each learner kernel waited for right after its launch, and the launches repeated
where a part must reproduce itself bit for bit."""
from __future__ import annotations

import torch

from checker.diagnosis.run_facts import not_reproducible
from checker.poison import poison
from checker.puzzle.model import Case, Part


class SyncedKernels:
    """On a GPU, wait for each learner kernel right after its launch: a fault then surfaces at the
    learner's kernel, not at whatever CUDA call comes next (a provided matmul, say)."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name: str):
        kernel = getattr(self.module, name)
        if not hasattr(kernel, "__getitem__"):
            return kernel
        return _SyncedLauncher(kernel)


class _SyncedLauncher:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        launch = self.kernel[grid]

        def run(*args, **kwargs):
            result = launch(*args, **kwargs)
            torch.cuda.synchronize()
            return result
        return run


def relaunched(part: Part, kernels, inputs: dict, case: Case, first: dict) -> list[dict]:
    """Launch again, part.repeat - 1 times, and compare every output bit for bit with the first run."""
    found = []
    for launch in range(2, part.repeat + 1):
        outputs = part.allocate(inputs, case)
        for output in part.outputs:
            if output.name in outputs and not output.accumulated:
                poison(outputs[output.name])
        again = part.launch(SyncedKernels(kernels), inputs, outputs, case)
        torch.cuda.synchronize()
        for output in part.outputs:
            a, b = first[output.name], again[output.name]
            differ = int((a.reshape(-1).view(torch.uint8 if a.element_size() == 1 else _same_width_int(a))
                          != b.reshape(-1).view(torch.uint8 if b.element_size() == 1 else _same_width_int(b))).sum())
            if differ and all(f["label"] != output.label for f in found):
                differs = not_reproducible(output.label, launch, part.repeat, differ, a.numel())
                found.append({"label": output.label, "ok": False, "forward": output.forward,
                              "title": output.title or output.label, **differs.to_json()})
    return found


def _same_width_int(t: torch.Tensor) -> torch.dtype:
    return {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
