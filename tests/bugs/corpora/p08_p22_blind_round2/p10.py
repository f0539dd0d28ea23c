"""Blind corpus (round 2 for p08-p22), puzzle 10 (row mean and variance): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

PASS2_LOAD = "        mask = cols < N\n        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)"

MEASURED = [
    Bug("padded_lanes_centred", "forward",
        (("diff = tl.where(mask, x - mean, 0.0)", "diff = x - mean", 1),),
        "mask", "the padded lanes are centred too: each adds (0 - mean)^2 to the variance", accept=("fill",)),
    Bug("one_pass_variance", "forward",
        (Kernel("row_mean_var_kernel", '''
@triton.jit
def row_mean_var_kernel(x_ptr, mean_ptr, var_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x
        acc2 += x * x
    mean = tl.sum(acc, axis=0) / N
    var = tl.sum(acc2, axis=0) / N - mean * mean
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, var)
'''),),
        "stability", "variance as E[x^2] - E[x]^2 in one pass: cancels catastrophically for rows far from zero"),
    Bug("mean_over_block", "forward",
        (("mean = tl.sum(acc, axis=0) / N", "mean = tl.sum(acc, axis=0) / BLOCK_N", 1),),
        "formula", "the mean divides by the block's lanes instead of the row's N elements"),
    Bug("unbiased_variance", "forward",
        (("var = tl.sum(acc, axis=0) / N", "var = tl.sum(acc, axis=0) / (N - 1)", 1),),
        "formula", "the variance divides by N - 1 (unbiased) where the biased N is asked for"),
    Bug("second_acc_not_reset", "forward",
        (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        mask",
          "    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        mask", 1),),
        "accumulate", "the second pass keeps adding into the first pass's sum instead of starting again from zero"),
    Bug("pass2_load_unmasked", "forward",
        ((PASS2_LOAD, "        mask = cols < N\n        x = tl.load(x_row + cols).to(tl.float32)", 1),),
        "mask", "the second pass's load has no mask: its last chunk reads past the end of the row"),
    Bug("pass2_forgets_row", "forward",
        ((PASS2_LOAD, "        mask = cols < N\n        x = tl.load(x_ptr + cols, mask=mask, other=0.0).to(tl.float32)", 1),),
        "address", "the second pass reads from x's start instead of the program's row"),
    Bug("pass2_full_chunks_only", "forward",
        (("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        mask",
          "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, (N // BLOCK_N) * BLOCK_N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        mask", 1),),
        "loop", "the second loop covers only whole chunks: the tail's deviations are never added"),
    Bug("pass1_step_one", "forward",
        (("    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n        acc += tl.load",
          "    for start in range(0, tl.cdiv(N, BLOCK_N)):\n        cols = start + tl.arange(0, BLOCK_N)\n        acc += tl.load", 1),),
        "loop", "the first loop counts chunks but uses the chunk index as a column offset: chunks overlap, most of the row is missed"),
    Bug("mean_var_swapped", "forward",
        (("    tl.store(mean_ptr + row, mean)\n    tl.store(var_ptr + row, var)",
          "    tl.store(mean_ptr + row, var)\n    tl.store(var_ptr + row, mean)", 1),),
        "address", "the two outputs are written through each other's pointers", accept=("formula",)),
]

RIGHT = [
    Right("other_is_mean", (
        ("        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n        # a padded lane loaded 0, and 0 - mean is not 0: it would add mean^2 to the sum\n        diff = tl.where(mask, x - mean, 0.0)",
         "        x = tl.load(x_row + cols, mask=mask, other=mean).to(tl.float32)\n        diff = x - mean", 1),),
        "padded lanes load the mean itself, so their deviation is exactly 0 without a tl.where"),
    Right("scalar_two_pass", (Kernel("row_mean_var_kernel", '''
@triton.jit
def row_mean_var_kernel(x_ptr, mean_ptr, var_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    mean0 = tl.zeros([], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mean0 += tl.sum(tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32), axis=0)
    mean = mean0 / N
    ss = tl.zeros([], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ok = cols < N
        x = tl.load(x_row + cols, mask=ok, other=0.0).to(tl.float32)
        d = tl.where(ok, x - mean, 0.0)
        ss += tl.sum(d * d, axis=0)
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, ss / N)
'''),), "scalar running sums, each chunk reduced inside its loop, still two passes with centred values"),
]
