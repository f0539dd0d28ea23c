"""The default tolerances a short-form puzzle's outputs get, per dtype (an output may declare its own).

|out - ref| <= (atol + per_condition * condition) * scale + rtol * |ref|: checker/puzzle/model.py Tolerance.
"""
from __future__ import annotations

from checker.puzzle.model import Tolerance

FP32_ROUNDING = 2.0 ** -24
# |out - ref| <= atol * scale + rtol * |ref|, scale = RMS of the reference output (model.Tolerance).
# fp32: a few roundings of a short computation; bf16 keeps 8 significant bits (rounding 2**-9), so
# an output stored in bf16 is off by up to ~4e-3 relative before any arithmetic error.
# A puzzle whose inputs cost digits before any kernel runs (a row mean of 1000 against a spread of
# 1 loses 3 digits when centred) declares condition= (the digits' factor, >= 1): it widens atol by
# 16 fp32 roundings per unit of condition, as p22 does.
CONDITIONED = 16 * FP32_ROUNDING
TOLERANCES = {
    "float32": Tolerance(atol=1e-5, rtol=1e-5, per_condition=CONDITIONED),
    "bfloat16": Tolerance(atol=1.6e-2, rtol=1.6e-2, per_condition=CONDITIONED),
}
# shares summed into an fp32 buffer drift by about one rounding per share (model.Tolerance.per_row);
# from bf16 inputs the shares are exact products, so the sum stays much closer than a bf16 output
ACCUMULATED_TOLERANCES = {
    "float32": Tolerance(atol=1e-5, rtol=1e-5, per_condition=CONDITIONED, per_row=FP32_ROUNDING),
    "bfloat16": Tolerance(atol=2e-3, rtol=2e-3, per_condition=CONDITIONED, per_row=FP32_ROUNDING),
}
EXACT = Tolerance(atol=0.0, rtol=0.0)  # integer outputs (counts, indices) are exact
