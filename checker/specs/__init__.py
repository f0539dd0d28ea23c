"""One module per puzzle, each defining PUZZLE (see checker/puzzle/model.py)."""
