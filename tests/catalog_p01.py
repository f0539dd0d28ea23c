"""Known-buggy kernels for puzzle 1 (add a constant), and correct ones written differently."""
from catalog import Alternative, Bug

BUGS = [
    Bug("one_pointer_not_a_block", "forward",
        (("x = tl.load(x_ptr + offsets)", "x = tl.load(x_ptr)", 1),),
        reasons=(("elements off",), ("expected",)),
        misleading=("atomic", "mask"),
        notes="loads x[0] only and broadcasts it: every element gets x[0] + 10"),
    Bug("block_hard_coded_to_8", "forward",
        (("offsets = tl.arange(0, BLOCK)", "offsets = tl.arange(0, 8)", 1),),
        reasons=(("never written",), ("hard-coded",)),
        misleading=("atomic",),
        notes="right for the documented N = 8 only; N = 1 also reads past the end"),
    Bug("stored_into_the_input", "forward",
        (("tl.store(z_ptr + offsets, x + 10.0)", "tl.store(x_ptr + offsets, x + 10.0)", 1),),
        reasons=(("never written",), ("changed its inputs: x",)),
        misleading=("atomic",)),
    Bug("added_one_instead_of_ten", "forward",
        (("x + 10.0", "x + 1.0", 1),),
        reasons=(("elements off",),),
        misleading=("mask", "atomic", "hard-coded")),
]

ALTERNATIVES = [
    Alternative("pointer_block_first", (("    x = tl.load(x_ptr + offsets)  # a block of pointers loads a block of values\n"
                                         "    tl.store(z_ptr + offsets, x + 10.0)",
                                         "    src = x_ptr + offsets\n    dst = z_ptr + offsets\n"
                                         "    tl.store(dst, 10.0 + tl.load(src))", 1),),
                notes="the pointer blocks named first, the constant on the left"),
]
