"""Known-buggy kernels for puzzle 10 (row mean and variance), each the reference solution with one bug
patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from pathlib import Path

from catalog import Alternative, Bug

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

BUGS = [
    Bug("one_pass_e_x2_minus_mean2", "forward", ONE_PASS,
        reasons=(("cancels catastrophically",), ("second pass", "Welford")),
        gpu_reasons=(("cancels catastrophically",),),
        misleading=("mask", "atomic", "race", "padded", "out of bounds", "biased"),
        notes="right to 1e-7 while the mean is near 0; at mean 1000, std 1 the variance is the rounding "
              "noise of E[x²] ≈ 1e6"),
    Bug("padded_lanes_leak_into_the_variance", "forward",
        (("        diff = tl.where(mask, x - mean, 0.0)\n", "        diff = x - mean\n", 1),),
        reasons=(("tl.where(mask, x - mean, 0.0)",), ("mean²",)),
        misleading=("atomic", "race", "out of bounds", "cancel"),
        notes="a lane past N loaded 0 and adds (0 - mean)² to the sum: wrong wherever N is not a multiple "
              "of BLOCK_N"),
    Bug("divided_by_block_instead_of_n", "forward",
        ((MEAN, "    mean = tl.sum(acc, axis=0) / BLOCK_N", 1), (VAR, "    var = tl.sum(acc, axis=0) / BLOCK_N", 1)),
        reasons=(("divided by BLOCK_N instead of N",),),
        misleading=("atomic", "race", "out of bounds", "cancel")),
    Bug("variance_divided_by_block", "forward",
        ((VAR, "    var = tl.sum(acc, axis=0) / BLOCK_N", 1),),
        reasons=(("var matches the sum of squared deviations divided by BLOCK_N",),),
        misleading=("atomic", "race", "cancel")),
    Bug("unbiased_n_minus_1", "forward",
        ((VAR, "    var = tl.sum(acc, axis=0) / (N - 1)", 1),),
        reasons=(("biased variance, divided by N",),),
        misleading=("atomic", "race", "mask", "cancel"),
        notes="torch.var's default; N = 1 divides by 0"),
    Bug("no_loop_first_chunk_only", "forward",
        ((LOOP, "    for start in range(0, BLOCK_N, BLOCK_N):\n", 2),),
        reasons=(("first BLOCK_N elements",), ("loop over the whole row",)),
        misleading=("atomic", "race", "out of bounds", "cancel"),
        notes="one block per row: right only while N <= BLOCK_N"),
    Bug("variance_pass_without_loop", "forward",
        ((PASS2, PASS2.replace(LOOP, "    for start in range(0, BLOCK_N, BLOCK_N):\n"), 1),),
        reasons=(("second pass must loop",),),
        misleading=("atomic", "race", "out of bounds", "cancel")),
    Bug("first_pass_load_without_mask", "forward",
        ((PASS1_LOAD, "        acc += tl.load(x_row + cols).to(tl.float32)\n", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        # without the sanitizer the last row reads whatever lies past x: where that is zeros, M = 1, N = 1
        # comes out right, and the failing cases are then "not powers of two" rather than "a tail"
        reasons_unsanitized=(("last chunk sticks out past N", "sizes are not powers of two"),
                             ("Load them masked", "what its padded lanes load")),
        misleading=("atomic", "race", "cancel"),
        notes="the last chunk reads past the end of its row: into the next row, or past the end of x"),
    Bug("running_sum_in_the_input_dtype", "forward",
        (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n" + LOOP + "        cols = start + tl.arange(0, BLOCK_N)\n"
          + PASS1_LOAD,
          "    acc = tl.zeros([BLOCK_N], dtype=x_ptr.dtype.element_ty)\n" + LOOP
          + "        cols = start + tl.arange(0, BLOCK_N)\n"
          + "        acc += tl.load(x_row + cols, mask=cols < N, other=0.0)\n", 1),),
        reasons=(("only the bfloat16 cases fail",), ("keep the sums in fp32",)),
        misleading=("atomic", "race", "out of bounds", "mask"),
        notes="right for fp32 inputs; with bf16 inputs the first pass sums in bf16 (8 bits): the CPU's small "
              "bf16 case (2 rows of 1000) already shows the mean off"),
]

# the whole body between the row's pointer and the stores, for the alternative that rewrites it
_TEXT = (Path(__file__).resolve().parents[1] / "solutions" / "p10_row_mean_var.py").read_text(encoding="utf-8")
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

ALTERNATIVES = [
    Alternative("welford_one_pass", ((BODY, WELFORD, 1),),
                notes="one read of the row: Welford's running mean and M2 per lane, then the lanes merged"),
    Alternative("scalar_accumulators", (
        ("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", "    acc = 0.0\n", 2),
        (PASS1_LOAD, "        acc += tl.sum(tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32),"
                     " axis=0)\n", 1),
        ("        acc += diff * diff\n", "        acc += tl.sum(diff * diff, axis=0)\n", 1),
        ("tl.sum(acc, axis=0) / N", "acc / N", 2)),
        notes="each chunk reduced inside the loop into one fp32 number, in both passes"),
]
