"""Mutants of the reference solutions that no check can catch, each with the reason.

`python -m checker.mutate` reports every surviving mutant not listed here as a failure, and every
listed one that is caught (or no longer exists) too: the list stays true as the solutions change.
Ids are those the tool prints (operator:function:site:occurrence); a reason says why the mutant
computes what the solution computes, for every input the puzzle allows.
"""

EQUIVALENT: dict[str, dict[str, str]] = {
}
