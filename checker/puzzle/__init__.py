"""What a puzzle is: its model, and the vocabulary a spec declares it with. The one module a spec
imports (besides its family in checker/specs/families/):

    from checker.puzzle import case, part, puzzle, randn

model.py       the Puzzle the checker runs (Case, Part, Output, Reference, Tolerance, ...)
declare.py     out, part, case, bench, variant: the records a spec writes
build.py       puzzle(): the short form to the model; call_by_name
summaries.py   the summary hints every puzzle gets for its kinds of cases (puzzle(hints=...))
inputs.py      randn, uniform, full, randint, custom, identical_rows, spread_rows: how inputs are drawn
tolerances.py  the default tolerances per dtype (TOLERANCES, CONDITIONED, ...)
launch.py      what a launch may call: scratch, shared, sm_count, persistent, cdiv, unwritten_where; next_pow2
helion.py      helion_example, helion_column, HELION_NOTE: Helion's published examples as bench baselines
tutorials.py   triton_tutorial, tutorial_column: Triton's own tutorials (from a checkout) as bench baselines
"""
from checker.puzzle.build import call_by_name, puzzle
from checker.puzzle.declare import bench, case, out, part, variant
from checker.puzzle.helion import HELION_NOTE, helion_column, helion_example
from checker.puzzle.inputs import (TensorInput, custom, full, identical_rows, randint, randn, spread_rows,
                                   uniform)
from checker.puzzle.launch import (cdiv, next_pow2, persistent, scratch, shared, sm_count, timing,
                                   unwritten_mask, unwritten_where)
from checker.puzzle.model import Case, SpecError, SummaryPattern, Tolerance
from checker.puzzle.tolerances import ACCUMULATED_TOLERANCES, CONDITIONED, EXACT, FP32_ROUNDING, TOLERANCES
from checker.puzzle.tutorials import triton_tutorial, tutorial_column
from checker.tensors import rms

__all__ = ["ACCUMULATED_TOLERANCES", "CONDITIONED", "Case", "EXACT", "FP32_ROUNDING", "HELION_NOTE", "SpecError",
           "SummaryPattern", "TOLERANCES", "TensorInput", "Tolerance", "bench", "call_by_name", "case", "cdiv",
           "custom", "full", "helion_column", "helion_example", "identical_rows", "next_pow2", "out", "part",
           "persistent", "puzzle", "randint", "randn", "rms", "scratch", "shared", "sm_count", "spread_rows", "timing",
           "triton_tutorial", "tutorial_column", "uniform", "unwritten_mask", "unwritten_where", "variant"]
