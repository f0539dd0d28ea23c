"""Triton GPU Puzzles checker: `python -m checker pNN`, or `check(...)` in a notebook."""


def check(*args, **kwargs):
    """See checker.notebook.check."""
    from checker.notebook import check as _check
    return _check(*args, **kwargs)
