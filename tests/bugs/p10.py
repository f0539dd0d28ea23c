"""Every known kernel of puzzle 10 (row mean and variance): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from pathlib import Path

from bugs import Bug, Kernel, Right, summed_without_other
from bugs.reasons import WHERE_ZEROES

LOOP = "    for start in range(0, N, BLOCK_N):\n"
PASS2 = """    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        # a padded lane loaded 0, and 0 - mean is not 0: it would add mean^2 to the sum
        diff = tl.where(mask, x - mean, 0.0)
        acc += diff * diff
    var = tl.sum(acc, axis=0) / N"""
PASS1_LOAD = "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)\n"
MEAN = "    mean = tl.sum(acc, axis=0) / N"
VAR = "    var = tl.sum(acc, axis=0) / N"

# E[x²] − E[x]²: both sums in the first loop, no second pass over the row
ONE_PASS = (
    ("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n" + LOOP + "        cols = start + tl.arange(0, BLOCK_N)\n"
     + PASS1_LOAD,
     "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    acc_sq = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
     + LOOP + "        cols = start + tl.arange(0, BLOCK_N)\n"
     "        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)\n"
     "        acc += x\n        acc_sq += x * x\n", 1),
    (PASS2, "    var = tl.sum(acc_sq, axis=0) / N - mean * mean", 1),
)

PINNED = [
    Bug("one_pass_e_x2_minus_mean2", "forward", ONE_PASS,
        cause="stability",
        reasons=(("cancels catastrophically",), ("second pass", "Welford")),
        gpu_reasons=(("cancels catastrophically",),),
        not_causes=("mask", "atomic"), not_words=("padded", "out of bounds", "biased"),
        notes="right to 1e-7 while the mean is near 0; at mean 1000, std 1 the variance is the rounding "
              "noise of E[x²] ≈ 1e6"),
    Bug("padded_lanes_leak_into_the_variance", "forward",
        (("        diff = tl.where(mask, x - mean, 0.0)\n", "        diff = x - mean\n", 1),),
        cause="fill",
        reasons=(("tl.where(mask, x - mean, 0.0)",), ("mean²",)),
        not_causes=("atomic", "stability"), not_words=("out of bounds",),
        notes="a lane past N loaded 0 and adds (0 - mean)² to the sum: wrong wherever N is not a multiple "
              "of BLOCK_N", code='variant.padded_lanes'),
    summed_without_other("forward", PASS1_LOAD),
    Bug("divided_by_block_instead_of_n", "forward",
        ((MEAN, "    mean = tl.sum(acc, axis=0) / BLOCK_N", 1), (VAR, "    var = tl.sum(acc, axis=0) / BLOCK_N", 1)),
        cause="formula",
        reasons=(("divided by BLOCK_N instead of N",),),
        not_causes=("atomic", "stability"), not_words=("out of bounds",), code='variant.over_block'),
    Bug("variance_divided_by_block", "forward",
        ((VAR, "    var = tl.sum(acc, axis=0) / BLOCK_N", 1),),
        cause="formula",
        reasons=(("var matches the sum of squared deviations divided by BLOCK_N",),),
        not_causes=("atomic", "stability"), code='variant.var_over_block'),
    Bug("unbiased_n_minus_1", "forward",
        ((VAR, "    var = tl.sum(acc, axis=0) / (N - 1)", 1),),
        cause="formula",
        reasons=(("biased variance, divided by N",),),
        not_causes=("atomic", "mask", "stability"),
        notes="torch.var's default; N = 1 divides by 0", code='variant.unbiased'),
    Bug("no_loop_first_chunk_only", "forward",
        ((LOOP, "    for start in range(0, BLOCK_N, BLOCK_N):\n", 2),),
        cause="loop",
        reasons=(("first BLOCK_N elements",), ("loop over the whole row",)),
        not_causes=("atomic", "stability"), not_words=("out of bounds",),
        notes="one block per row: right only while N <= BLOCK_N", code='variant.first_chunk'),
    Bug("variance_pass_without_loop", "forward",
        ((PASS2, PASS2.replace(LOOP, "    for start in range(0, BLOCK_N, BLOCK_N):\n"), 1),),
        cause="loop",
        reasons=(("second pass must loop",),),
        not_causes=("atomic", "stability"), not_words=("out of bounds",), code='variant.var_first_chunk'),
    Bug("first_pass_load_without_mask", "forward",
        ((PASS1_LOAD, "        acc += tl.load(x_row + cols).to(tl.float32)\n", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        # without the sanitizer the last row reads whatever lies past x: where that is zeros, M = 1, N = 1
        # comes out right, and the failing cases are then "not powers of two" rather than "a tail"
        reasons_unsanitized=(("last chunk sticks out past N", "sizes are not powers of two"),
                             ("Load them masked", "loaded masked", "what its padded lanes load")),
        not_causes=("atomic", "stability"),
        notes="the last chunk reads past the end of its row: into the next row, or past the end of x", code='fault.oob'),
    Bug("running_sum_in_the_input_dtype", "forward",
        (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n" + LOOP + "        cols = start + tl.arange(0, BLOCK_N)\n"
          + PASS1_LOAD,
          "    acc = tl.zeros([BLOCK_N], dtype=x_ptr.dtype.element_ty)\n" + LOOP
          + "        cols = start + tl.arange(0, BLOCK_N)\n"
          + "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0)\n", 1),),
        cause="precision",
        reasons=(("only the bfloat16 cases fail",), ("keep the sums in fp32",)),
        not_causes=("atomic", "mask"), not_words=("out of bounds",),
        notes="right for fp32 inputs; with bf16 inputs the first pass sums in bf16 (8 bits): the CPU's small "
              "bf16 case (2 rows of 1000) already shows the mean off"),
]

# the whole body between the row's pointer and the stores, for the alternative that rewrites it
_TEXT = (Path(__file__).resolve().parents[2] / "solutions" / "p10_row_mean_var.py").read_text(encoding="utf-8")
BODY = _TEXT[_TEXT.index("    # pass 1"):_TEXT.index("    tl.store(mean_ptr")]
WELFORD = """    # Welford's update per lane: a running count, mean and sum of squared deviations (M2), in
    # one read of the row; the update adds deviations from the running mean, which stay ~1
    count = tl.zeros([BLOCK_N], dtype=tl.float32)
    lane_mean = tl.zeros([BLOCK_N], dtype=tl.float32)
    m2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        count += tl.where(mask, 1.0, 0.0)
        delta = tl.where(mask, x - lane_mean, 0.0)
        lane_mean += delta / tl.maximum(count, 1.0)
        m2 += delta * (x - lane_mean)
    # the lanes merged (Chan et al.): M2 = sum of the lanes' M2 + count * (lane mean - mean)^2
    mean = tl.sum(count * lane_mean, axis=0) / N
    spread = lane_mean - mean
    var = (tl.sum(m2, axis=0) + tl.sum(count * spread * spread, axis=0)) / N

"""

PASSING = [
    Right("welford_one_pass", ((BODY, WELFORD, 1),),
                notes="one read of the row: Welford's running mean and M2 per lane, then the lanes merged"),
    Right("scalar_accumulators", (
        ("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", "    acc = 0.0\n", 2),
        (PASS1_LOAD, "        acc += tl.sum(tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32),"
                     " axis=0)\n", 1),
        ("        acc += diff * diff\n", "        acc += tl.sum(diff * diff, axis=0)\n", 1),
        ("tl.sum(acc, axis=0) / N", "acc / N", 2)),
        notes="each chunk reduced inside the loop into one fp32 number, in both passes"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
SECOND = "    # are ~1, so their squares keep all their digits.\n    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
FIRST_LOOP = "    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        acc += tl.load"

MEASURED = [
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


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:row_mean_var_kernel:2c95eea7:0": WHERE_ZEROES,
}
