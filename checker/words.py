"""Counts in words: '1 element', '3 elements'. Every message that counts something says it here, so
that none says 'by 1 elements'."""
from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """'1 element', '0 elements', '3 elements' (plural: the noun's plural where it is not noun + 's')."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
