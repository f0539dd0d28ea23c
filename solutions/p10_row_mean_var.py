"""Puzzle 10 reference kernel: the mean and the (biased) variance of each row, in two passes.

    x: [M, N], contiguous (row i starts at x + i * N)    mean, var: [M], float32 whatever x's dtype
    mean[i] = (1/N) * sum_j x[i, j]        var[i] = (1/N) * sum_j (x[i, j] - mean[i])^2

The checker launches one program per row:
    row_mean_var_kernel[(M,)](x, mean, var, N, BLOCK_N=BLOCK_N)
BLOCK_N is fixed (64 by default) while N goes from 1 to 100 000: each program walks its row in
chunks of BLOCK_N, twice.
"""
import triton
import triton.language as tl


@triton.jit
def row_mean_var_kernel(x_ptr, mean_ptr, var_ptr, N, BLOCK_N: tl.constexpr):
    """mean[i] and var[i] (divided by N) of row i, BLOCK_N at a time. Grid: (M,)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * N

    # pass 1: the mean. One fp32 partial sum per lane, kept across the loop (as in puzzle 8);
    # masked lanes load 0, which adds nothing to a sum.
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N  # divide by the row's N elements, not by the block's lanes

    # pass 2: the mean of squared deviations, reading the row again. Not E[x^2] - E[x]^2 in one
    # pass: at x ~ 1000 +- 1, E[x^2] ~ 1e6 carries about 7 significant digits in fp32, and the
    # variance (~1) is what is left after the first 6 of them cancel. Centred values x - mean
    # are ~1, so their squares keep all their digits.
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        # a padded lane loaded 0, and 0 - mean is not 0: it would add mean^2 to the sum
        diff = tl.where(mask, x - mean, 0.0)
        acc += diff * diff
    var = tl.sum(acc, axis=0) / N  # biased: divided by N (torch.var(..., correction=0), LayerNorm)

    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, var)
