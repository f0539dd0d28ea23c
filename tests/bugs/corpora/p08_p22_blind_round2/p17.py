"""Blind corpus (round 2 for p08-p22), puzzle 17 (Histogram): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("atomic_unmasked", "forward",
        (("tl.atomic_add(hist_ptr + bins, 1, mask=mask)", "tl.atomic_add(hist_ptr + bins, 1)", 1),),
        "mask", "masks the load but not the atomic add: padded lanes of the last block count into a bin"),
    Bug("load_unmasked", "forward",
        (("bins = tl.load(x_ptr + offsets, mask=mask)", "bins = tl.load(x_ptr + offsets)", 1),),
        "mask", "loads the last block without its mask: reads past the end of x"),
    Bug("plain_load_add_store", "forward",
        (("tl.atomic_add(hist_ptr + bins, 1, mask=mask)",
          "count = tl.load(hist_ptr + bins, mask=mask)\n    tl.store(hist_ptr + bins, count + 1, mask=mask)", 1),),
        "atomic", "increments the bins with a plain load, add and store: colliding lanes and programs lose counts"),
    Bug("offsets_no_block_stride", "forward",
        (("offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.program_id(0) + tl.arange(0, BLOCK)", 1),),
        "address", "forgets to multiply the program id by BLOCK: blocks overlap and most of x is counted many times"),
    Bug("mask_inclusive", "forward",
        (("mask = offsets < N", "mask = offsets <= N", 1),),
        "mask", "uses <= N for the bound: one lane past the end is read and counted"),
    Bug("adds_value_not_one", "forward",
        (("tl.atomic_add(hist_ptr + bins, 1, mask=mask)", "tl.atomic_add(hist_ptr + bins, bins, mask=mask)", 1),),
        "formula", "adds the element's value into its bin instead of 1"),
    Bug("n_hardcoded_documented", "forward",
        (("mask = offsets < N", "mask = offsets < 20", 1),),
        "hardcoded", "bounds the mask by the documented N = 20 instead of the argument N"),
    Bug("program_id_axis_1", "forward",
        (("offsets = tl.program_id(0) * BLOCK", "offsets = tl.program_id(1) * BLOCK", 1),),
        "address", "takes the block index from program axis 1 of a one-dimensional grid: every program counts block 0"),
]

RIGHT = [
    Right("where_instead_of_mask",
          (("bins = tl.load(x_ptr + offsets, mask=mask)", "bins = tl.load(x_ptr + offsets, mask=mask, other=0)", 1),
           ("tl.atomic_add(hist_ptr + bins, 1, mask=mask)",
            "tl.atomic_add(hist_ptr + tl.where(mask, bins, 0), tl.where(mask, 1, 0))", 1)),
          "padded lanes add 0 into bin 0 instead of being masked off: the counts are unchanged"),
    Right("sub_block_while_loop",
          (Kernel("histogram_kernel", '''@triton.jit
def histogram_kernel(x_ptr, hist_ptr, N, BLOCK: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 2
    base = tl.program_id(0) * BLOCK
    start = 0
    while start < BLOCK:
        offsets = base + start + tl.arange(0, HALF)
        ok = offsets < N
        bins = tl.load(x_ptr + offsets, mask=ok, other=0)
        ones = tl.full([HALF], 1, dtype=tl.int32)
        tl.atomic_add(hist_ptr + bins, ones, mask=ok)
        start += HALF
'''),),
          "walks the program's block in two halves with a while loop, adding a vector of ones"),
]
