"""What a part's launch may call besides the kernels: scratch buffers that start poisoned, buffers
shared on purpose, the GPU's SM count and a persistent grid's program count, grid arithmetic, and the
never-written mark for outputs the launch computes itself. And the case parameters' block sizes
(next_pow2), and what a kernel reads to learn a value its launch chooses (READS).

No torch at import time: each helper imports it when called, in the checker's worker.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from checker import instruments


def cdiv(a: int, b: int) -> int:
    """ceil(a / b) for a grid: the number of blocks of b that cover a (triton.cdiv)."""
    return -(-a // b)


def next_pow2(size: str, cap: int | None = None, floor: int = 1) -> Callable[..., int]:
    """A block parameter: the power of two at or above a size (capped), e.g. BLOCK=next_pow2("N")."""
    def block(**sizes) -> int:
        n = 1 << max(0, (int(sizes[size]) - 1).bit_length())
        return max(floor, min(n, cap) if cap else n)
    block.__signature__ = inspect.Signature([inspect.Parameter(size, inspect.Parameter.KEYWORD_ONLY)])
    return block


class _Timing:
    """While checker.bench.timing times a launch, scratch buffers are plain torch.empty, as in the learner's
    own code: the poison is the check's tool, and its fill kernels are not the learner's work (at
    p25's shortest bf16 rows, about a fifth of the time in ncu)."""
    active = False


def scratch(shape: int | Sequence[int], *, like: Any, dtype: Any = None) -> Any:
    """In a launch: a buffer the kernels pass results through (partial rows, saved statistics),
    made like torch.empty on `like`'s device (dtype: `like`'s unless given), but filled with the
    checker's poison, a NaN no arithmetic makes, as the outputs are. torch.empty's memory is often
    zeros on a fresh CPU allocation and garbage on a GPU, so a kernel that adds into a buffer it
    never cleared would pass or fail by luck; poisoned, it fails on both backends, every time.
    Not poisoned while a benchmark times the launch (timing())."""
    import torch
    from checker.poison import poison, poison_of
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    buffer = torch.empty(dims, dtype=dtype or like.dtype, device=like.device)
    if buffer.is_floating_point() and not _Timing.active:
        poison(buffer)
        guard = instruments.active()
        if guard is not None and poison_of(buffer) is not None:
            guard.watch_scratch(buffer, *poison_of(buffer))  # a read of the poison is evidence
    return buffer


class timing:
    """with timing(): launches made inside leave their scratch buffers unpoisoned (see _Timing)."""

    def __enter__(self) -> None:
        self.before, _Timing.active = _Timing.active, True

    def __exit__(self, *exc) -> None:
        _Timing.active = self.before


# A persistent grid's programs in the interpreter, where no case fixes them: fewer than most cases'
# rows or tiles, so that a program walks several
INTERPRETER_PROGRAMS = 3

# The case parameters whose value the launch chooses and a kernel must read, not assume (cases vary
# them: case(..., launches={"PROGRAMS": (2, 5)})), and what a kernel reads to learn each. A name not
# here is read from the kernel argument of that name (a block size a spec lets vary).
READS = {"PROGRAMS": "tl.num_programs(0)"}
# ... and what the launch takes where a case leaves the value to it (None)
CHOSEN = {"PROGRAMS": f"the launch's own choice ({INTERPRETER_PROGRAMS} in the interpreter, a few per SM on a GPU)"}


# The case parameters that are a value the kernels receive as an argument, the same on a GPU and in
# the interpreter, which a kernel must use rather than write in (cases vary them on the same data:
# case(..., launches={"IGNORE_INDEX": (-1,)})): the kernel argument that carries each, and where a
# kernel uses it
ARGUMENTS = {"IGNORE_INDEX": "ignore_index"}
USES = {"IGNORE_INDEX": "compare the targets with it (target != ignore_index), and fill the padded lanes of "
                        "the targets' load with it (other=ignore_index)"}


def reads(param: str) -> str:
    """What a kernel reads to learn the value of a launch parameter."""
    if param in ARGUMENTS:
        return f"its argument {ARGUMENTS[param]}"
    return READS.get(param, f"its argument {param}")


def chosen(param: str) -> str:
    """What a launch parameter is where the case leaves it to the launch."""
    return CHOSEN.get(param, "the launch's own choice")


def persistent(tensor: Any, work: int, per_sm: int = 1, programs: int | None = None) -> int:
    """In a launch: the program count of a persistent grid, whose programs each walk several rows or
    tiles (pid, pid + P, pid + 2P, ...): `programs` where the case fixes it (the PROGRAMS parameter),
    else per_sm per SM on a GPU and INTERPRETER_PROGRAMS in the interpreter; never more than the
    `work` (rows, tiles) there is. The kernel must read it (tl.num_programs(0)): the cases vary it."""
    if programs is None:
        programs = per_sm * sm_count(tensor) if tensor.is_cuda else INTERPRETER_PROGRAMS
    return max(1, min(work, programs))


def sm_count(tensor: Any) -> int:
    """In a launch: the number of SMs of the GPU `tensor` lives on (persistent grids size themselves by
    it), asked of the driver once per device, not per launch."""
    return _sm_count(tensor.device.index or 0)


@functools.lru_cache(maxsize=None)
def _sm_count(device_index: int) -> int:
    import torch
    return torch.cuda.get_device_properties(device_index).multi_processor_count


def shared(*tensors) -> None:
    """In a launch: these scratch buffers are added into by several programs on purpose (partial
    rows under locks, say). The interpreter's race check then asks for atomics or locks there, not
    for other offsets. Call before launching the kernels; a no-op on a GPU."""
    guard = instruments.active()
    if guard is not None:
        guard.expect_shared(guard.shared_tensors() + list(tensors))


def unwritten_mask(t: Any) -> Any:
    """In a launch: which elements of `t` (a scratch buffer) still hold the checker's poison, that is,
    were never written (a bool tensor on the CPU)."""
    from checker.poison import unwritten_mask as mask
    return mask(t)


def unwritten_where(out: Any, where: Any) -> Any:
    """In a launch: `out` (an output the launch computes itself, from what the kernels wrote), with
    the elements that `where` marks left as the checker's never-written fill: an output computed from
    elements the kernels never wrote is then reported as never written, not as a NaN the arithmetic
    made."""
    import torch
    from checker.poison import poison
    if not bool(where.any()):
        return out
    fill = torch.empty_like(out)
    poison(fill)
    return torch.where(where.to(out.device), fill, out)
