"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 10 (row mean and variance): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_PASS2_HEAD = ("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
               "    for start in range(0, N, BLOCK_N):\n"
               "        cols = start + tl.arange(0, BLOCK_N)\n"
               "        mask = cols < N\n")

MEASURED = [
    Bug("padded_lanes_in_deviation", "forward",
        (("        diff = tl.where(mask, x - mean, 0.0)\n", "        diff = x - mean\n", 1),),
        "mask", "the padded lanes of the second walk are not switched off: each one adds (0 - mean)^2 to the sum of squares",
        accept=("fill",)),
    Bug("mean_over_block", "forward",
        (("mean = tl.sum(acc, axis=0) / N", "mean = tl.sum(acc, axis=0) / BLOCK_N", 1),),
        "formula", "the mean divides the sum by BLOCK_N (the lanes) instead of N (the row's elements)"),
    Bug("unbiased_variance", "forward",
        (("var = tl.sum(acc, axis=0) / N", "var = tl.sum(acc, axis=0) / (N - 1)", 1),),
        "formula", "the variance is divided by N - 1 (Bessel's correction): the biased one, divided by N, is asked for"),
    Bug("one_pass_ex2_minus_mean2", "forward",
        (Kernel("row_mean_var_kernel", '''@triton.jit
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
        "stability", "one pass with E[x^2] - E[x]^2: for rows far from zero the two terms cancel and the fp32 variance is mostly rounding noise"),
    Bug("second_acc_not_reset", "forward",
        ((_PASS2_HEAD, _PASS2_HEAD.replace("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n", ""), 1),),
        "accumulate", "the second walk keeps adding into the first walk's accumulator: the sum of squares starts from the row's sum, not from zero"),
    Bug("second_load_unmasked", "forward",
        (("        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)\n",
          "        x = tl.load(x_row + cols).to(tl.float32)\n", 1),),
        "mask", "the second walk's load has no mask (the tl.where is trusted to fix it): the last chunk reads past the end of x"),
    Bug("second_walk_whole_chunks_only", "forward",
        ((_PASS2_HEAD, _PASS2_HEAD.replace("range(0, N, BLOCK_N)", "range(0, N - BLOCK_N + 1, BLOCK_N)"), 1),),
        "loop", "the second walk stops at the last whole chunk: the partial chunk at the row's end adds no squared deviations"),
    Bug("mean_stored_at_row_times_n", "forward",
        (("    tl.store(mean_ptr + row, mean)\n", "    tl.store(mean_ptr + row * N, mean)\n", 1),),
        "address", "the mean is stored at row * N (the row's offset in x) instead of at row: mean has one element per row"),
]

RIGHT = [
    Right("shifted_one_pass",
          (Kernel("row_mean_var_kernel", '''@triton.jit
def row_mean_var_kernel(x_ptr, mean_ptr, var_ptr, N, BLOCK_N: tl.constexpr):
    """One pass over data shifted by the row's first element: the shifted values are near 0, so
    E[d^2] - E[d]^2 does not cancel catastrophically; mean = shift + E[d]."""
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    shift = tl.load(x_row).to(tl.float32)
    s = tl.zeros([BLOCK_N], dtype=tl.float32)
    s2 = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - shift, 0.0)
        s += d
        s2 += d * d
    md = tl.sum(s, axis=0) / N
    var = tl.sum(s2, axis=0) / N - md * md
    tl.store(mean_ptr + row, shift + md)
    tl.store(var_ptr + row, tl.maximum(var, 0.0))
'''),),
          "a single pass over values shifted by the row's first element (the shifted-data variance): stable because the shifted values are small"),
    Right("chunk_stats_combined",
          (Kernel("row_mean_var_kernel", '''@triton.jit
def row_mean_var_kernel(x_ptr, mean_ptr, var_ptr, N, BLOCK_N: tl.constexpr):
    """One pass: each chunk's count, mean and sum of squared deviations, merged into the running
    ones with Chan's parallel formula (Welford by chunks)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * N
    n_a = 0.0
    mean = 0.0
    m2 = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        n_b = tl.sum(mask.to(tl.float32), axis=0)
        mean_b = tl.sum(x, axis=0) / n_b
        d = tl.where(mask, x - mean_b, 0.0)
        m2_b = tl.sum(d * d, axis=0)
        n = n_a + n_b
        delta = mean_b - mean
        mean = mean + delta * (n_b / n)
        m2 = m2 + m2_b + delta * delta * (n_a * n_b / n)
        n_a = n
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, m2 / N)
'''),),
          "one read of the row: per-chunk mean and squared deviations merged with Chan's update, never forming x^2"),
]
