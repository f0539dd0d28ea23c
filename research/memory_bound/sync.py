"""A meeting point for the K programs that share one row (the row-split designs of kernels_ce.py and
kernels_ln.py): each stores its partial sums, arrives at the row's counter, waits until all K have
arrived, reads the K partials, and leaves. The last to leave puts the counter back to 0, so the
counters need no zeroing between launches (a memset would be one more launch in every step).

The counter of a row goes 0 .. K while the programs arrive and K .. 2K while they leave: a program
waiting for "at least K" cannot miss its partners, and the counter is 0 again once the row is done.

Waiting is safe only if the K programs are on the GPU at the same time (a persistent grid no larger
than what fits at once). If they are not, the wait gives up after LIMIT polls, raises the abort flag
(every later row then skips the wait) and the kernel writes NaN: a deadlock shows up as a wrong
answer, not as a hung GPU."""
import torch
import triton
import triton.language as tl

_BUFFERS = {}  # (device, counters) -> counters, abort flag, one more counter; zeroed once, kept at zero


def buffers(device, counters: int, fresh: bool = False):
    """The meeting's int32 memory: one counter per row (or step), the abort flag, and a spare counter
    (a ticket, a grid-wide meeting). Made once per device and size: the kernels leave them at zero."""
    key = (str(device), counters)
    if fresh or key not in _BUFFERS:
        z = dict(device=device, dtype=torch.int32)
        _BUFFERS[key] = (torch.zeros(counters, **z), torch.zeros(1, **z), torch.zeros(1, **z))
    return _BUFFERS[key]


@triton.jit
def arrive(count_ptr):
    """Call after storing this program's partials. acq_rel: release publishes our partials; acquire
    makes the others' visible when we arrive last."""
    return tl.atomic_add(count_ptr, 1, sem="acq_rel") + 1


@triton.jit
def wait(count_ptr, abort_ptr, seen, K: tl.constexpr, LIMIT: tl.constexpr):
    """Poll until the counter reaches K (seen: what arrive returned). Returns True once all K partials
    are visible. Each poll is an atomic add of 0 with acquire semantics: it reads the counter in L2
    (not a stale L1 line) and orders the partial loads after it."""
    # a program that already gave up on an earlier row does not wait again (one read per row)
    aborted = tl.load(abort_ptr, volatile=True)
    polls = 0
    while (seen < K) & (polls < LIMIT) & (aborted == 0):
        seen = tl.atomic_add(count_ptr, 0, sem="acquire")
        polls += 1
    if seen < K:
        tl.atomic_xchg(abort_ptr, 1)
    return seen >= K


@triton.jit
def leave(count_ptr, K: tl.constexpr):
    """Call after reading the partials: the K-th to leave resets the counter for the next launch."""
    old = tl.atomic_add(count_ptr, 1, sem="relaxed")
    if old == 2 * K - 1:
        tl.atomic_xchg(count_ptr, 0)
