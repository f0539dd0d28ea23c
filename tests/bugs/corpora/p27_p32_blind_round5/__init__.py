"""The fifth blind corpus of puzzles 27-32: learner bugs and correct rewrites, written apart from the hint code."""
