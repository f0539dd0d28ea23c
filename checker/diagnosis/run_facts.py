"""Hints about the run itself rather than an output's values: an output of the wrong shape, inputs the
kernels wrote to, and a GPU run that does not reproduce itself bit for bit."""
from __future__ import annotations

from checker.diagnosis.model import Diagnosis, Strength, certain
from checker.words import counted


def wrong_shape(label: str, expected: list, got: list | None) -> Diagnosis:
    return Diagnosis(f"wrong shape: expected {expected}, got {got}", code="values.shape",
                     strength=Strength.PROOF, subject=label)


def inputs_changed(mutated: list[str]) -> Diagnosis:
    return certain(f"the kernel changed its inputs: {', '.join(mutated)}. Inputs are read-only (the "
                   f"caller still needs them: a backward reads what the forward read); write only to the "
                   f"outputs, and keep a value you need to change in a register or a scratch buffer.",
                   "inplace", code="values.inplace", strength=Strength.PROOF, data={"inputs": mutated})


def not_reproducible(label: str, launch: int, launches: int, differ: int, elements: int) -> Diagnosis:
    return certain(f"not reproducible: launch {launch} of {launches} differs from launch 1 in "
                   f"{differ} of {counted(elements, 'element')}, bit for bit. Atomic additions "
                   f"land in a different order every run, and floating-point addition is not "
                   f"associative: sum each program's share into its own slot, then reduce "
                   f"the slots in a fixed order.", "determinism", code="values.not_reproducible",
                   strength=Strength.PROOF, subject=label, data={"differ": differ})
