"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 17 (Histogram): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_ADD = "    tl.atomic_add(hist_ptr + bins, 1, mask=mask)\n"
_OFFS = "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
_MASK = "    mask = offsets < N  # the last block"
_LOAD = "    bins = tl.load(x_ptr + offsets, mask=mask)  # data"

_WHERE = '''
@triton.jit
def histogram_kernel(x_ptr, hist_ptr, N, BLOCK: tl.constexpr):
    """Padded lanes are not masked off the atomic: they add 0 to bin 0, which changes nothing."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    valid = offsets < N
    bins = tl.load(x_ptr + offsets, mask=valid, other=0)
    ones = tl.where(valid, 1, 0)
    tl.atomic_add(hist_ptr + bins, ones)
'''

_SCALAR_LOOP = '''
@triton.jit
def histogram_kernel(x_ptr, hist_ptr, N, BLOCK: tl.constexpr):
    """One element at a time: a scalar load and a scalar atomic per element of the block."""
    base = tl.program_id(0) * BLOCK
    end = tl.minimum(base + BLOCK, N)
    for i in range(base, end):
        b = tl.load(x_ptr + i)
        tl.atomic_add(hist_ptr + b, 1)
'''

MEASURED = [
    Bug("atomic_unmasked", "forward",
        ((_ADD, "    tl.atomic_add(hist_ptr + bins, 1)\n", 1),),
        "mask", "the atomic add is not masked: the padded lanes of the last block add 1 to whatever bin their (unloaded) value names"),
    Bug("mask_le_n", "forward",
        ((_MASK, "    mask = offsets <= N  # the last block", 1),),
        "mask", "the bound is offsets <= N: one lane past the end of x is read and counted"),
    Bug("load_add_store", "forward",
        ((_ADD, "    counts = tl.load(hist_ptr + bins, mask=mask)\n    tl.store(hist_ptr + bins, counts + 1, mask=mask)\n", 1),),
        "atomic", "a plain load + 1 + store: lanes (and programs) that hit the same bin all read the same old count, every hit but one is lost"),
    Bug("add_at_element_index", "forward",
        ((_ADD, "    tl.atomic_add(hist_ptr + offsets, 1, mask=mask)\n", 1),),
        "address", "the count added at the element's position instead of at its value: hist_ptr + offsets, not hist_ptr + bins"),
    Bug("offsets_missing_block_scale", "forward",
        ((_OFFS, "    offsets = tl.program_id(0) + tl.arange(0, BLOCK)\n", 1),),
        "address", "the program offset is not scaled by BLOCK: the blocks overlap by all but one element and the tail is never read"),
    Bug("adds_bin_value", "forward",
        ((_ADD, "    tl.atomic_add(hist_ptr + bins, bins, mask=mask)\n", 1),),
        "formula", "each element adds its own value to its bin instead of 1"),
    Bug("n_hardcoded", "forward",
        ((_MASK, "    mask = offsets < 20  # the last block", 1),),
        "hardcoded", "the bound written as the documented N = 20 instead of the N passed in"),
    Bug("pid_axis_one", "forward",
        ((_OFFS, "    offsets = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)\n", 1),),
        "address", "program_id(1) on a 1-D grid: always 0, so every program counts the first block"),
]

RIGHT = [
    Right("where_adds_zero", (Kernel("histogram_kernel", _WHERE),),
          "padded lanes load bin 0 (other=0) and add tl.where(valid, 1, 0): the extra adds are zeros"),
    Right("scalar_loop", (Kernel("histogram_kernel", _SCALAR_LOOP),),
          "a loop over the block's elements, one scalar load and scalar atomic each, the loop end clipped at N"),
]
