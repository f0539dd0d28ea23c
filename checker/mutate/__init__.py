"""Mutation testing of the checker: `python -m checker.mutate pNN` changes a puzzle's reference
solution in small ways, one bug class at a time (operators.py), checks every mutant in the
interpreter (run.py), and counts how many the checker catches and how precise its hints are
(score.py). Survivors not listed in tests/bugs/pNN.py's EQUIVALENT are the headline."""
