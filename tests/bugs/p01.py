"""Every known kernel of puzzle 1 (add a constant): the bugs tests/test_contract.py pins (PINNED) and
the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right

PINNED = [
    Bug("one_pointer_not_a_block", "forward",
        (("x = tl.load(x_ptr + offsets)", "x = tl.load(x_ptr)", 1),),
        cause="address",
        reasons=(("elements off",), ("expected",)),
        not_causes=("atomic", "mask"),
        notes="loads x[0] only and broadcasts it: every element gets x[0] + 10", code='values.one_element'),
    Bug("block_hard_coded_to_8", "forward",
        (("offsets = tl.arange(0, BLOCK)", "offsets = tl.arange(0, 8)", 1),),
        cause="hardcoded", named="candidates",
        reasons=(("never written",), ("hard-coded",)),
        not_causes=("atomic",),
        notes="right for the documented N = 8 only; N = 1 also reads past the end", code='fault.oob'),
    Bug("stored_into_the_input", "forward",
        (("tl.store(z_ptr + offsets, x + 10.0)", "tl.store(x_ptr + offsets, x + 10.0)", 1),),
        cause="inplace", named="none",
        reasons=(("never written",), ("changed its inputs: x",)),
        not_causes=("atomic",), code='values.inplace'),
    Bug("added_one_instead_of_ten", "forward",
        (("x + 10.0", "x + 1.0", 1),),
        cause="formula", named="none",
        reasons=(("elements off",),),
        not_causes=("mask", "atomic", "hardcoded")),
]

PASSING = [
    Right("pointer_block_first", (("    x = tl.load(x_ptr + offsets)  # a block of pointers loads a block of values\n"
                                         "    tl.store(z_ptr + offsets, x + 10.0)",
                                         "    src = x_ptr + offsets\n    dst = z_ptr + offsets\n"
                                         "    tl.store(dst, 10.0 + tl.load(src))", 1),),
                notes="the pointer blocks named first, the constant on the left"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
LOAD = "x = tl.load(x_ptr + offsets)"
STORE = "tl.store(z_ptr + offsets, x + 10.0)"

MEASURED = [
    Bug("offsets_in_bytes", "forward",
        ((LOAD, "x = tl.load(x_ptr + offsets * 4)", 1),),
        "address", "offsets scaled by 4 (the size of a float32 in bytes): Triton pointers step in elements"),
    Bug("offsets_start_at_one", "forward",
        (("offsets = tl.arange(0, BLOCK)", "offsets = tl.arange(1, BLOCK + 1)", 1),),
        "address", "one-based lanes: element i read and written at i + 1, the last past the end"),
    Bug("ten_added_to_the_pointer", "forward",
        ((LOAD, "x = tl.load(x_ptr + offsets + 10)", 1), (STORE, "tl.store(z_ptr + offsets, x)", 1)),
        "address", "the constant added to the address instead of the value"),
    Bug("mask_with_the_documented_size", "forward",
        ((STORE, "tl.store(z_ptr + offsets, x + 10.0, mask=offsets < 8)", 1),),
        "hardcoded", "the store masked with 8, the documented N, instead of the N argument"),
    Bug("times_ten", "forward",
        ((STORE, "tl.store(z_ptr + offsets, x * 10.0)", 1),),
        "formula", "multiplies by 10 instead of adding it"),
    Bug("through_int32", "forward",
        ((STORE, "tl.store(z_ptr + offsets, (x + 10.0).to(tl.int32))", 1),),
        "precision", "the sum converted to an integer before the store: the fraction is lost",
        accept=("formula",)),
]

RIGHT = [
    Right("masked_with_n_and_a_full_constant", (Kernel("add_constant_kernel", '''
        @triton.jit
        def add_constant_kernel(x_ptr, z_ptr, N, BLOCK: tl.constexpr):
            lanes = tl.arange(0, BLOCK)
            keep = lanes < N
            ten = tl.full([BLOCK], 10.0, dtype=tl.float32)
            tl.store(z_ptr + lanes, tl.load(x_ptr + lanes, mask=keep, other=0.0) + ten, mask=keep)
        '''),), "masked against N although BLOCK == N; the constant as a full block"),
    Right("sum_in_float64", ((STORE, "tl.store(z_ptr + offsets, x.to(tl.float64) + 10.0)", 1),),
          "the add in fp64, rounded to fp32 by the store: the same correctly rounded sum"),
]
