"""The book's experiment scripts whose designs a page describes: their CPU smoke runs (the
interpreter, tiny sizes) still check out against PyTorch, so that a change to the kernels they
build on (the solutions) cannot leave a page describing a design that no longer computes the step."""
from pathlib import Path

from checker.experiments import module_at

ROOT = Path(__file__).resolve().parent.parent


def test_p28_recomputing_design_matches_pytorch():
    """p28's page: the logits recomputed per vocabulary slice give PyTorch's loss, dx and dW
    (several chunkings, short last chunks, ignored rows); with the gradient filter, the step that
    zeroes the same tiles of the gradient, some tiles kept and some skipped."""
    module_at(ROOT / "book/experiments/linear_ce/recompute.py", "recompute").cpu_smoke()


def test_p28_products_in_halves_match_the_solution():
    """p28's products with the epilogue in two halves (an experiment against the solution's spills)
    give the solution's step bit for bit."""
    module_at(ROOT / "book/experiments/linear_ce/epilogue.py", "epilogue").cpu_smoke()
