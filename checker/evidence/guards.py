"""Guard bands after the outputs: what a store past an output's end did, where nothing stops it.

The interpreter's sanitizer stops an out-of-bounds access before it touches memory. A GPU does not:
a store past the end of `z` lands in whatever the allocator put there, and z's own elements can
come out right, so the values alone pass such a kernel (puzzle 2's kernel without any mask did, on an
H100). Where the sanitizer is off (a GPU, or the interpreter with --no-sanitize), each contiguous
output is therefore made as the head of a longer buffer whose tail holds a known bit pattern; after
the kernels run, a changed tail is a store past the end, reported as a failure of that output
(`overruns` gives the facts; checker/diagnosis/faults.py's `past_the_end` words them).

A load past the end changes nothing, but what it reads need not be left to chance: each float input
that owns its storage is made the same way (`guard_inputs`), its band a NaN of its own payload
(checker/poison.py's BAND_NAN32), so a load past its end reads that NaN on every run and every
machine, never whatever the heap or the allocator held there (zeros one run, NaN the next), and an
output element that holds it traces back to such a load (checker/diagnosis/values.py). The
sanitizer's CPU run names such a load by its line; these bands make its values fail the same way
each time. Integer inputs keep no band: a loud integer read past the end would index far out.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from checker.poison import GUARD_BITS, band_bits

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


def guard_inputs(inputs: dict) -> None:
    """Replace each float tensor in `inputs` that alone spans its storage (contiguous, or a transposed
    contiguous one) by the same view of a buffer GUARD_ELEMENTS longer whose tail carries the pattern.
    Tensors sharing storage with another input keep theirs: copying them apart would undo the sharing."""
    storages: dict[int, int] = {}
    for tensor in inputs.values():
        if torch.is_tensor(tensor):
            ptr = tensor.untyped_storage().data_ptr()
            storages[ptr] = storages.get(ptr, 0) + 1
    for name, tensor in list(inputs.items()):
        if (not torch.is_tensor(tensor) or band_bits(tensor) is None or tensor.storage_offset() != 0
                or storages[tensor.untyped_storage().data_ptr()] > 1 or tensor.requires_grad
                or tensor.untyped_storage().nbytes() != tensor.numel() * tensor.element_size()
                or not (tensor.is_contiguous() or (tensor.dim() == 2 and tensor.T.is_contiguous()))):
            continue
        buffer = torch.empty(tensor.numel() + GUARD_ELEMENTS, dtype=tensor.dtype, device=tensor.device)
        head = buffer.as_strided(tensor.shape, tensor.stride(), 0)
        head.copy_(tensor)
        view, bits = band_bits(tensor)
        buffer[tensor.numel():].view(view).fill_(bits)
        inputs[name] = head


def overruns(guards: list[Guard]) -> dict[str, int]:
    """Per output whose tail changed: how far past its end the first changed element is."""
    found = {}
    for g in guards:
        changed = (g.band != g.expected).nonzero()
        if changed.numel():
            found[g.name] = int(changed[0, 0])
    return found

