"""The book's experiment scripts whose designs a page describes: their CPU smoke runs (the
interpreter, tiny sizes) still check out against PyTorch, so that a change to the kernels they
build on (the solutions) cannot leave a page describing a design that no longer computes the step."""
import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _load(relative: str):
    os.environ.setdefault("ROOT", str(ROOT))
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_p28_recomputing_design_matches_pytorch():
    """p28's page: the logits recomputed per vocabulary slice give PyTorch's loss, dx and dW
    (several chunkings, short last chunks, ignored rows)."""
    _load("book/experiments/linear_ce/recompute.py").cpu_smoke()
