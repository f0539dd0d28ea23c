"""One module per puzzle, each defining PUZZLE (see checker/spec.py)."""
