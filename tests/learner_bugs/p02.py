"""Learner bugs for puzzle 2 (blocks and masks), and correct kernels written differently."""
from entries import Bug, Kernel, Right

OFFSETS = "offsets = pid * BLOCK + tl.arange(0, BLOCK)"

BUGS = [
    Bug("program_id_of_axis_1", "forward",
        (("pid = tl.program_id(0)", "pid = tl.program_id(1)", 1),),
        "address", "the program id of axis 1, always 0 on a 1-D grid: every program takes block 0"),
    Bug("blocks_n_apart", "forward",
        ((OFFSETS, "offsets = pid * N + tl.arange(0, BLOCK)", 1),),
        "address", "program p starts at p * N instead of p * BLOCK"),
    Bug("block_start_in_bytes", "forward",
        ((OFFSETS, "offsets = pid * BLOCK * 4 + tl.arange(0, BLOCK)", 1),),
        "address", "the block's start in bytes (4 per float32) instead of elements"),
    Bug("mask_against_the_block", "forward",
        (("mask = offsets < N", "mask = offsets < BLOCK", 1),),
        "mask", "the mask compares with the block size instead of N"),
    Bug("loads_unmasked", "forward",
        (("x = tl.load(x_ptr + offsets, mask=mask)", "x = tl.load(x_ptr + offsets)", 1),
         ("y = tl.load(y_ptr + offsets, mask=mask)", "y = tl.load(y_ptr + offsets)", 1)),
        "mask", "the store is masked, the loads are not: the last block reads past the end"),
    Bug("difference_not_sum", "forward",
        (("tl.store(z_ptr + offsets, x + y, mask=mask)", "tl.store(z_ptr + offsets, x - y, mask=mask)", 1),),
        "formula", "x - y instead of x + y"),
    Bug("mask_with_the_documented_size", "forward",
        (("mask = offsets < N", "mask = offsets < 10", 1),),
        "hardcoded", "mask = offsets < 10, the documented N"),
]

RIGHT = [
    Right("mask_from_what_is_left", ((OFFSETS, "start = pid * BLOCK\n    lanes = tl.arange(0, BLOCK)\n"
                                      "    offsets = start + lanes", 1),
                                     ("mask = offsets < N", "mask = lanes < N - start", 1)),
          "the mask as lanes < N - start: how many elements are left for this program"),
    Right("base_pointers_per_block", (Kernel("add_vectors_kernel", '''
        @triton.jit
        def add_vectors_kernel(x_ptr, y_ptr, z_ptr, N, BLOCK: tl.constexpr):
            start = tl.program_id(0) * BLOCK
            lanes = tl.arange(0, BLOCK)
            ok = start + lanes < N
            x_block, y_block, z_block = x_ptr + start, y_ptr + start, z_ptr + start
            a = tl.load(x_block + lanes, mask=ok, other=1.0)
            b = tl.load(y_block + lanes, mask=ok, other=-1.0)
            tl.store(z_block + lanes, a + b, mask=ok)
        '''),), "each program moves the base pointers to its block first; padded lanes load +1 and -1"),
]
