"""Learner bugs for puzzle 10 (row mean and variance), and correct kernels written differently."""
from entries import Bug, Kernel, Right

SECOND = "    # are ~1, so their squares keep all their digits.\n    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
FIRST_LOOP = "    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        acc += tl.load"

BUGS = [
    Bug("second_pass_not_zeroed", "forward",
        ((SECOND, "    # are ~1, so their squares keep all their digits.\n", 1),),
        "accumulate", "the second pass adds onto the first pass's sum: its accumulator is not started from zero"),
    Bug("standard_deviation_stored", "forward",
        (("var = tl.sum(acc, axis=0) / N", "var = tl.sqrt(tl.sum(acc, axis=0) / N)", 1),),
        "formula", "the square root taken: the standard deviation stored as the variance"),
    Bug("outputs_swapped", "forward",
        (("tl.store(mean_ptr + row, mean)\n    tl.store(var_ptr + row, var)",
          "tl.store(mean_ptr + row, var)\n    tl.store(var_ptr + row, mean)", 1),),
        "formula", "the mean stored into var and the variance into mean", accept=("address",)),
    Bug("rows_block_apart", "forward",
        (("x_row = x_ptr + row * N", "x_row = x_ptr + row * BLOCK_N", 1),),
        "address", "row i read from x_ptr + i * BLOCK_N"),
    Bug("ragged_chunk_skipped", "forward",
        ((FIRST_LOOP, FIRST_LOOP.replace("range(0, N, BLOCK_N)", "range(0, N // BLOCK_N * BLOCK_N, BLOCK_N)"), 1),),
        "loop", "the first pass stops before the ragged last chunk (or reads nothing when N < BLOCK_N)"),
    Bug("mean_over_the_documented_n", "forward",
        (("mean = tl.sum(acc, axis=0) / N", "mean = tl.sum(acc, axis=0) / 20", 1),),
        "hardcoded", "the mean divided by 20, the documented N"),
    Bug("mean_stored_as_fp16", "forward",
        (("tl.store(mean_ptr + row, mean)", "tl.store(mean_ptr + row, mean.to(tl.float16))", 1),),
        "precision", "the mean squeezed through fp16 before the store (mean is fp32)"),
]

RIGHT = [
    Right("shifted_by_the_first_element", (Kernel("row_mean_var_kernel", '''
        @triton.jit
        def row_mean_var_kernel(x_ptr, mean_ptr, var_ptr, N, BLOCK_N: tl.constexpr):
            row = tl.program_id(0)
            x_row = x_ptr + row * N
            shift = tl.load(x_row).to(tl.float32)  # any value near the row's mean keeps the sums small
            s1 = tl.zeros([BLOCK_N], dtype=tl.float32)
            s2 = tl.zeros([BLOCK_N], dtype=tl.float32)
            for start in range(0, N, BLOCK_N):
                cols = start + tl.arange(0, BLOCK_N)
                ok = cols < N
                d = tl.where(ok, tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32) - shift, 0.0)
                s1 += d
                s2 += d * d
            m1 = tl.sum(s1, axis=0) / N
            tl.store(mean_ptr + row, shift + m1)
            tl.store(var_ptr + row, tl.sum(s2, axis=0) / N - m1 * m1)
        '''),), "one pass over data shifted by the row's first element (the shifted-data algorithm)"),
    Right("two_pass_with_correction", (("        acc += diff * diff\n    var = tl.sum(acc, axis=0) / N",
        "        acc += diff * diff\n        err += diff\n    e = tl.sum(err, axis=0)\n"
        "    var = (tl.sum(acc, axis=0) - e * e / N) / N", 1),
        (SECOND, SECOND + "    err = tl.zeros([BLOCK_N], dtype=tl.float32)\n", 1)),
          "the corrected two-pass algorithm: the second pass also sums the deviations and subtracts their square"),
]
