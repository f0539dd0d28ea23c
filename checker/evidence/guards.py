"""Guard bands after the outputs: what a store past an output's end did, where nothing stops it.

The interpreter's sanitizer stops an out-of-bounds access before it touches memory. A GPU does not:
a store past the end of `z` lands in whatever the allocator put there, and z's own elements can
come out right, so the values alone pass such a kernel (puzzle 2's kernel without any mask did, on an
H100). Where the sanitizer is off (a GPU, or the interpreter with --no-sanitize), each contiguous
output is therefore made as the head of a longer buffer whose tail holds a known bit pattern; after
the kernels run, a changed tail is a store past the end, reported as a failure of that output
(`overruns` gives the facts; checker/diagnosis/faults.py's `past_the_end` words them).

A load past the end cannot be seen this way (it changes nothing); the sanitizer's CPU run shows those.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from checker.poison import GUARD_BITS

# elements after each output: a stray block of a few thousand lanes past the end lands inside it
GUARD_ELEMENTS = 16384
_INT_VIEW = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@dataclass
class Guard:
    """The tail after one output: `band` (as integers) must still equal `expected` after the run."""
    name: str
    band: torch.Tensor
    expected: torch.Tensor


def guard_outputs(outputs: dict) -> list[Guard]:
    """Replace each contiguous tensor in `outputs` by the head of a buffer GUARD_ELEMENTS longer, with
    the same values; the tails carry the pattern."""
    guards = []
    for name, tensor in list(outputs.items()):
        if not torch.is_tensor(tensor) or not tensor.is_contiguous() or tensor.element_size() not in _INT_VIEW:
            continue
        buffer = torch.empty(tensor.numel() + GUARD_ELEMENTS, dtype=tensor.dtype, device=tensor.device)
        head = buffer[:tensor.numel()].view(tensor.shape)
        head.copy_(tensor)
        band = buffer[tensor.numel():].view(_INT_VIEW[tensor.element_size()])
        band.fill_(GUARD_BITS[tensor.element_size()])
        outputs[name] = head
        guards.append(Guard(name, band, band.clone()))
    return guards


def overruns(guards: list[Guard]) -> dict[str, int]:
    """Per output whose tail changed: how far past its end the first changed element is."""
    found = {}
    for g in guards:
        changed = (g.band != g.expected).nonzero()
        if changed.numel():
            found[g.name] = int(changed[0, 0])
    return found

