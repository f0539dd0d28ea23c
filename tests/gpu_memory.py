"""What each puzzle's GPU check holds at its peak, against a learner's card.

The GPU worker records each case's peak (torch.cuda.max_memory_allocated and max_memory_reserved,
reset at the case's start: inputs, the float64 reference, the kernels' buffers) in its case_result
event (checker/run/worker.py); `peak(report)` takes the largest. tests/test_contract.py's
test_solution_passes_on_the_gpu asserts it fits (BUDGET) and stays within what the spec declares
(Puzzle.gpu_memory); on a GPU host,

    python tests/gpu_memory.py [p27 p31 ...]

prints one line per puzzle: its peak, the case that reaches it, and what the spec declares.
"""
from __future__ import annotations

import sys
from pathlib import Path

GIB = 2 ** 30
LEARNER_CARD = 16.0   # GiB: an RTX 4080, an A4000, a 16 GB laptop GPU
# GiB a check may allocate: the card less room for the CUDA context (about 0.5 GiB) and for the
# allocator's fragmentation
BUDGET = 14.0
# GiB a peak may exceed its declaration by (one run to the next, one torch to the next)
SLACK = 0.5


def peak(report) -> tuple[float, float, str]:
    """(GiB allocated, GiB reserved, the case) at the largest peak of a GPU check's cases."""
    found = [(r["gpu_memory"]["allocated"] / GIB, r["gpu_memory"]["reserved"] / GIB, r["case"])
             for r in report.results if r.get("gpu_memory")]
    return max(found, default=(0.0, 0.0, ""))


def allowed(puzzle) -> float:
    """GiB the puzzle's check may reach: what its spec declares, or SMALL_GPU_CHECK where it declares nothing."""
    from checker.puzzle.model import SMALL_GPU_CHECK
    return (puzzle.gpu_memory or SMALL_GPU_CHECK) + SLACK


def main(keys: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from checker import registry
    from checker.run.session import run_check
    from checker.source import from_text
    puzzles = [registry.get(k) for k in keys] if keys else registry.all_puzzles()
    worst = 0
    for puzzle in puzzles:
        report = run_check(puzzle, [p.name for p in puzzle.parts],
                           from_text(puzzle.solution.read_text(encoding="utf-8"), "solution.py"),
                           backend="gpu", write=lambda line: None)
        allocated, reserved, case = peak(report)
        fits = allocated <= min(BUDGET, allowed(puzzle))
        worst = max(worst, 0 if fits and report.passed else 1)
        declared = f"declared {puzzle.gpu_memory:g}" if puzzle.gpu_memory else "declares none"
        print(f"{puzzle.key}  {allocated:6.2f} GiB allocated, {reserved:6.2f} reserved  ({case}; {declared})"
              f"{'' if report.passed else '  CHECK FAILED'}{'' if fits else '  TOO LARGE'}", flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
