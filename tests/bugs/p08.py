"""Every known kernel of puzzle 8 (long row sum): the bugs tests/test_contract.py pins (PINNED) and the
correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py measures
(MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What each list means:
tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right, summed_without_other
from bugs.reasons import PROMOTED

ACC = "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
LOOP = "    for start in range(0, N, BLOCK_N):\n"
LOAD = "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)\n"

PINNED = [
    Bug("no_loop_first_chunk_only", "forward",
        ((LOOP, "    for start in range(0, BLOCK_N, BLOCK_N):\n", 1),),
        cause="loop",
        reasons=(("first BLOCK_N elements",),),
        not_causes=("atomic",), not_words=("out of bounds",),
        notes="one block per row, as in chapter 2's row_sum: right only while N <= BLOCK_N", code='variant.first_chunk_only'),
    Bug("accumulator_created_inside_the_loop", "forward",
        # created before the loop too: an accumulator that exists only inside it does not compile
        ((ACC + LOOP, ACC + LOOP + "    " + ACC, 1),),
        cause="accumulate",
        reasons=(("starts over at every step",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",), code='variant.last_chunk_only'),
    Bug("last_chunk_without_mask", "forward",
        ((LOAD, "        acc += tl.load(x_row + cols).to(tl.float32)\n", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        not_causes=("atomic",),
        notes="the last chunk reads past the end of its row: into the next row (a wrong sum), or past "
              "the end of x for the last row", code='fault.oob'),
    Bug("mask_against_the_block", "forward",
        ((LOAD, "        acc += tl.load(x_row + cols, mask=cols < BLOCK_N, other=0.0).to(tl.float32)\n", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        not_causes=("atomic",),
        notes="a mask that compares with the block size is always true past the first chunk", code='fault.oob'),
    Bug("rows_at_block_stride", "forward",
        (("    x_row = x_ptr + row * N\n", "    x_row = x_ptr + row * BLOCK_N\n", 1),),
        cause="address",
        reasons=(("start at row * BLOCK_N", "out of bounds", "out-of-bounds"),),
        not_causes=("atomic",),
        notes="row i starts at i * N, not i * BLOCK_N: the rows overlap or leave gaps (or, for N < BLOCK_N, "
              "run past the end of x)", code='variant.rows_at_block_stride'),
    summed_without_other("forward", LOAD),
    Bug("accumulator_in_fp16", "forward",
        ((ACC, "    acc = tl.zeros([BLOCK_N], dtype=tl.float16)\n", 1),
         (LOAD, "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float16)\n", 1)),
        cause="precision",
        reasons=(("rounded to float16",),),
        not_causes=("atomic", "mask", "loop"),
        notes="a 16-bit running sum (fp16's 11 bits, in an fp32 case) loses "
              "digits on every case", code='values.rounded'),
    Bug("accumulator_in_the_input_dtype", "forward",
        ((ACC, "    acc = tl.zeros([BLOCK_N], dtype=x_ptr.dtype.element_ty)\n", 1),
         (LOAD, "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0)\n", 1)),
        cause="precision",
        reasons=(("only the bfloat16 cases fail",), ("keep the running sum in fp32",)),
        gpu_reasons=(("bfloat16",),),
        not_causes=("atomic", "mask"),
        notes="right for fp32 inputs; the bf16 cases keep a bf16 running sum and lose most of their digits "
              "(the CPU's small bf16 case, 2048 values near 1000 per row, already does)"),
]

PASSING = [
    Right("scalar_accumulator", (
        (ACC, "    acc = 0.0\n", 1),
        (LOAD, "        acc += tl.sum(tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32), axis=0)\n", 1),
        ("    tl.store(y_ptr + row, tl.sum(acc, axis=0))\n", "    tl.store(y_ptr + row, acc)\n", 1)),
        notes="each chunk reduced inside the loop into one fp32 number: more reductions, one register"),
    Right("pointer_advanced_by_a_block", (
        (LOOP + "        cols = start + tl.arange(0, BLOCK_N)\n"
         "        # the last chunk sticks out past N: its extra lanes load 0, the identity of a sum\n" + LOAD,
         "    ptrs = x_row + tl.arange(0, BLOCK_N)\n    left = N\n"
         "    for _ in range(0, N, BLOCK_N):\n"
         "        acc += tl.load(ptrs, mask=tl.arange(0, BLOCK_N) < left, other=0.0).to(tl.float32)\n"
         "        ptrs += BLOCK_N\n        left -= BLOCK_N\n", 1),),
        notes="a block of pointers moved along the row, and a count of the elements left"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
LOOP_LINE = "for start in range(0, N, BLOCK_N):"
ACC_LINE = "acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)"

MEASURED = [
    Bug("row_start_without_n", "forward",
        (("x_row = x_ptr + row * N", "x_row = x_ptr + row", 1),),
        "address", "row i starts at x_ptr + i: the rows overlap, the last ones read past the end"),
    Bug("loop_steps_by_one", "forward",
        ((LOOP_LINE, "for start in range(0, N):", 1),),
        "loop", "the loop steps by 1 instead of BLOCK_N: every element summed up to BLOCK_N times"),
    Bug("loop_stops_a_block_early", "forward",
        ((LOOP_LINE, "for start in range(0, N - BLOCK_N, BLOCK_N):", 1),),
        "loop", "range(0, N - BLOCK_N, BLOCK_N): the last chunk (or the only one) is never read"),
    Bug("max_not_sum", "forward",
        (("tl.store(y_ptr + row, tl.sum(acc, axis=0))", "tl.store(y_ptr + row, tl.max(acc, axis=0))", 1),),
        "formula", "the lanes' partial sums reduced with tl.max instead of tl.sum"),
    Bug("padded_lanes_load_one", "forward",
        ((ACC_LINE, ACC_LINE.replace("other=0.0", "other=1.0"), 1),),
        "fill", "the padded lanes of the last chunk load 1.0: each adds 1 to the sum"),
    Bug("row_length_hard_coded", "forward",
        ((LOOP_LINE, "for start in range(0, 20, BLOCK_N):", 1),),
        "hardcoded", "the loop bound written as 20, the documented N"),
    Bug("stored_at_row_times_n", "forward",
        (("tl.store(y_ptr + row, tl.sum(acc, axis=0))", "tl.store(y_ptr + row * N, tl.sum(acc, axis=0))", 1),),
        "address", "y[i] stored at i * N, as if y had the rows' layout"),
]

RIGHT = [
    Right("two_chunks_per_step", (Kernel("long_row_sum_kernel", '''
        @triton.jit
        def long_row_sum_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
            row = tl.program_id(0)
            x_row = x_ptr + row * N
            a = tl.zeros([BLOCK_N], dtype=tl.float32)
            b = tl.zeros([BLOCK_N], dtype=tl.float32)
            for start in range(0, N, 2 * BLOCK_N):
                first = start + tl.arange(0, BLOCK_N)
                second = first + BLOCK_N
                a += tl.load(x_row + first, mask=first < N, other=0.0).to(tl.float32)
                b += tl.load(x_row + second, mask=second < N, other=0.0).to(tl.float32)
            tl.store(y_ptr + row, tl.sum(a + b, axis=0))
        '''),), "two chunks per step into two accumulators, added at the end"),
    Right("counted_chunks", ((LOOP_LINE + "\n        cols = start + tl.arange(0, BLOCK_N)",
                              "for i in range(0, tl.cdiv(N, BLOCK_N)):\n        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)", 1),),
          "the loop counts chunks, for i in range(cdiv(N, BLOCK_N))"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "precision.cast:long_row_sum_kernel:2549400f:0": PROMOTED,
}
