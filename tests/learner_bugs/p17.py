"""Learner bugs for puzzle 17 (histogram), and correct kernels written differently."""
from entries import Bug, Kernel, Right

ADD = "tl.atomic_add(hist_ptr + bins, 1, mask=mask)"

BUGS = [
    Bug("bins_in_bytes", "forward",
        ((ADD, "tl.atomic_add(hist_ptr + bins * 4, 1, mask=mask)", 1),),
        "address", "the bin's offset multiplied by 4 (the bytes of an int32)"),
    Bug("bins_counted_from_one", "forward",
        ((ADD, "tl.atomic_add(hist_ptr + bins - 1, 1, mask=mask)", 1),),
        "address", "bin b counted at b - 1, as if bins were numbered from 1"),
    Bug("mask_le", "forward",
        (("mask = offsets < N", "mask = offsets <= N", 1),),
        "mask", "mask = offsets <= N: lane N reads past x and counts a bin that does not exist"),
    Bug("blocks_one_apart", "forward",
        (("offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "offsets = tl.program_id(0) + tl.arange(0, BLOCK)", 1),),
        "address", "program p starts at element p instead of p * BLOCK: the blocks overlap, elements are counted "
        "several times"),
    Bug("store_one", "forward",
        ((ADD, "tl.store(hist_ptr + bins, 1, mask=mask)", 1),),
        "atomic", "each hit stores 1 into its bin instead of adding 1"),
    Bug("size_hard_coded", "forward",
        (("mask = offsets < N", "mask = offsets < 20", 1),),
        "hardcoded", "the mask written with 20, the documented N"),
]

RIGHT = [
    Right("block_in_two_halves", (Kernel("histogram_kernel", '''
        @triton.jit
        def histogram_kernel(x_ptr, hist_ptr, N, BLOCK: tl.constexpr):
            half = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK // 2)
            for offsets in (half, half + BLOCK // 2):
                ok = offsets < N
                tl.atomic_add(hist_ptr + tl.load(x_ptr + offsets, mask=ok, other=0), 1, mask=ok)
        '''),), "each program's block counted in two halves (a static loop over two offset blocks)"),
    Right("ones_as_a_block", ((ADD, "tl.atomic_add(hist_ptr + bins, tl.full([BLOCK], 1, dtype=tl.int32), mask=mask)", 1),),
          "the ones added as an int32 block instead of a scalar"),
]
