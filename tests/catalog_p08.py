"""Known-buggy kernels for puzzle 8 (long row sum), each the reference solution with one bug patched
in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

ACC = "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
LOOP = "    for start in range(0, N, BLOCK_N):\n"
LOAD = "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)\n"

BUGS = [
    Bug("no_loop_first_chunk_only", "forward",
        ((LOOP, "    for start in range(0, BLOCK_N, BLOCK_N):\n", 1),),
        reasons=(("first BLOCK_N elements",),),
        misleading=("atomic", "race", "out of bounds"),
        notes="one block per row, as in chapter 2's row_sum: right only while N <= BLOCK_N"),
    Bug("accumulator_created_inside_the_loop", "forward",
        # created before the loop too: an accumulator that exists only inside it does not compile
        ((ACC + LOOP, ACC + LOOP + "    " + ACC, 1),),
        reasons=(("starts over at every step",),),
        misleading=("atomic", "race", "out of bounds", "mask")),
    Bug("last_chunk_without_mask", "forward",
        ((LOAD, "        acc += tl.load(x_row + cols).to(tl.float32)\n", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        misleading=("atomic", "race"),
        notes="the last chunk reads past the end of its row: into the next row (a wrong sum), or past "
              "the end of x for the last row"),
    Bug("mask_against_the_block", "forward",
        ((LOAD, "        acc += tl.load(x_row + cols, mask=cols < BLOCK_N, other=0.0).to(tl.float32)\n", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        misleading=("atomic", "race"),
        notes="a mask that compares with the block size is always true past the first chunk"),
    Bug("rows_at_block_stride", "forward",
        (("    x_row = x_ptr + row * N\n", "    x_row = x_ptr + row * BLOCK_N\n", 1),),
        reasons=(("start at row * BLOCK_N", "out of bounds", "out-of-bounds"),),
        misleading=("atomic", "race"),
        notes="row i starts at i * N, not i * BLOCK_N: the rows overlap or leave gaps (or, for N < BLOCK_N, "
              "run past the end of x)"),
    Bug("accumulator_in_fp16", "forward",
        ((ACC, "    acc = tl.zeros([BLOCK_N], dtype=tl.float16)\n", 1),
         (LOAD, "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float16)\n", 1)),
        reasons=(("rounded to float16",),),
        misleading=("atomic", "race", "mask", "loop"),
        notes="a 16-bit running sum (fp16's 11 bits, in an fp32 case) loses "
              "digits on every case"),
    Bug("accumulator_in_the_input_dtype", "forward",
        ((ACC, "    acc = tl.zeros([BLOCK_N], dtype=x_ptr.dtype.element_ty)\n", 1),
         (LOAD, "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0)\n", 1)),
        reasons=(("only the bfloat16 cases fail",), ("keep the running sum in fp32",)),
        gpu_reasons=(("bfloat16",),),
        misleading=("atomic", "race", "mask"),
        notes="right for fp32 inputs; the bf16 cases keep a bf16 running sum and lose most of their digits "
              "(the CPU's small bf16 case, 2048 values near 1000 per row, already does)"),
]

ALTERNATIVES = [
    Alternative("scalar_accumulator", (
        (ACC, "    acc = 0.0\n", 1),
        (LOAD, "        acc += tl.sum(tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32), axis=0)\n", 1),
        ("    tl.store(y_ptr + row, tl.sum(acc, axis=0))\n", "    tl.store(y_ptr + row, acc)\n", 1)),
        notes="each chunk reduced inside the loop into one fp32 number: more reductions, one register"),
    Alternative("pointer_advanced_by_a_block", (
        (LOOP + "        cols = start + tl.arange(0, BLOCK_N)\n"
         "        # the last chunk sticks out past N: its extra lanes load 0, the identity of a sum\n" + LOAD,
         "    ptrs = x_row + tl.arange(0, BLOCK_N)\n    left = N\n"
         "    for _ in range(0, N, BLOCK_N):\n"
         "        acc += tl.load(ptrs, mask=tl.arange(0, BLOCK_N) < left, other=0.0).to(tl.float32)\n"
         "        ptrs += BLOCK_N\n        left -= BLOCK_N\n", 1),),
        notes="a block of pointers moved along the row, and a count of the elements left"),
]
