"""The float64 references of the cases, kept across checks in one process."""
from __future__ import annotations

import torch


class ReferenceCache:
    """Float64 references by (puzzle, case, seed), kept across checks in one process (a warm
    worker, a test run): the reference of a case depends only on its inputs, and every kernel checked
    against the same case (a class's notebooks, a catalog, the parts of a puzzle) shares it. Least
    recently used first out, past a total size (the GPU cases' references are large)."""

    def __init__(self, limit_bytes: int = 1 << 31):
        self.limit = limit_bytes
        self.entries: dict[tuple, tuple] = {}   # key -> (reference, bytes), oldest first

    def get(self, key: tuple):
        entry = self.entries.pop(key, None)
        if entry is None:
            return None
        self.entries[key] = entry
        return entry[0]

    def put(self, key: tuple, reference) -> None:
        size = _size(reference)
        self.entries[key] = (reference, size)
        while sum(s for _, s in self.entries.values()) > self.limit and len(self.entries) > 1:
            self.entries.pop(next(iter(self.entries)))


def _size(reference) -> int:
    tensors = list(reference.outputs.values()) + list(reference.contributions.values())
    tensors += list(reference.touched.values()) + [t for alt in reference.alternatives.values() for t in alt.values()]
    return sum(t.numel() * t.element_size() for t in tensors if torch.is_tensor(t))


REFERENCES = ReferenceCache()
