"""Triton GPU Puzzles checker: `python -m checker pNN`, or `check(...)` and `progress()` in a notebook."""


def check(*args, **kwargs):
    """See checker.notebook.check."""
    from checker.notebook import check as _check
    return _check(*args, **kwargs)


def progress():
    """See checker.notebook.progress."""
    from checker.notebook import progress as _progress
    return _progress()
