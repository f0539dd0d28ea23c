"""The learner's text parsed once: every explainer that reads its syntax (which function holds a
line, which loads have a mask and no other=, the numbers written in, the pointers a store names)
asks `tree_of(text)` and gets the same tree, parsed at the first question of a check.

The trees are shared: a reader walks them and never changes them. None where the text does not
parse (a syntax error is the compiler's message, checker/diagnosis/compile_errors.py).
"""
from __future__ import annotations

import ast
import functools


@functools.lru_cache(maxsize=16)
def tree_of(text: str) -> ast.Module | None:
    """The module `text` parses to (shared: never modify it), or None where it does not parse."""
    try:
        return ast.parse(text)
    except SyntaxError:
        return None
