"""One module per puzzle, each defining PUZZLE with checker.puzzle's short form (see
checker/puzzle/__init__.py). families/ holds what several specs share; it defines no PUZZLE, so the
registry passes over it."""
