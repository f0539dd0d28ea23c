"""Puzzle 10: row mean and biased variance of x [M, N] in two looped passes (not E[x²] − E[x]²)."""
from checker.puzzle import CONDITIONED, SummaryPattern, Tolerance, case, out, part, puzzle, randn, variant


def stats(divisor=None, padded=False, first_chunk=False, true_mean=False, unbiased=False):
    """By name: mean and var as the page writes them, or as a kernel with one known bug computes them."""
    def compute(x, N, BLOCK_N):
        d = {"block": BLOCK_N, None: N}[divisor]
        xs = x[:, :BLOCK_N] if first_chunk else x  # first_chunk: no loop, the first BLOCK_N columns only
        mean = x.sum(1) / N if true_mean else xs.sum(1) / d
        pad = -N % BLOCK_N if padded else 0        # padded lanes load 0 and add (0 - mean)² each
        var = (((xs - mean[:, None]) ** 2).sum(1) + pad * mean ** 2) / d
        return {"mean": mean, "var": var * N / (N - 1) if unbiased and N > 1 else var}
    return compute


# fp32 outputs whatever x's dtype: from bf16 inputs (exact in fp32) they keep fp32 accuracy. Only var is
# conditioned: centring x ≈ 1000 ± 1 in fp32 costs any algorithm 3 digits (Welford's too); the mean does not
MEAN_TOL = {"float32": Tolerance(1e-5, 1e-5), "bfloat16": Tolerance(1e-4, 1e-4)}
VAR_TOL = {"bfloat16": Tolerance(1e-4, 1e-4, per_condition=CONDITIONED)}
CANCELLATION = ("only the cases whose mean is far from 0 compared with their spread fail: E[x²] − E[x]² in "
                "fp32 cancels catastrophically there (x ≈ 1000 ± 1: x² ≈ 1e6 keeps 7 digits, the variance ≈ 1 is "
                "what is left after 6 of them cancel). Take the mean first, then mean((x − mean)²) in a second "
                "pass over the row, or use Welford's update.")
# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   mean: correct <= 0.126 (shifted_by_the_first_element, bfloat16 M=64, N=8192: N wider than BLOCK_N (256))
#   var: correct <= 0.00663 (shifted_by_the_first_element, bfloat16 M=256, N=1000: N not a power of two, N wider than BLOCK_N (128))
#   running_sum_in_the_input_dtype: 189 (mean, bfloat16 M=64, N=8192: N wider than BLOCK_N (256))
#   mean_stored_as_fp16: 2.81 (mean, bfloat16 M=256, N=1000: N not a power of two, N wider than BLOCK_N (128))
PUZZLE = puzzle(
    10, "row_mean_var", "Row mean and variance",
    skill="two looped passes over a row: the mean, then the mean of squared deviations, padded lanes masked out",
    chapter="Reductions",
    inputs={"x": randn("M N")},
    reference=lambda x: {"mean": x.mean(1), "var": x.var(1, correction=0)},
    parts=[part("forward", "mean and var of each row", ["row_mean_var_kernel"],
                outputs=[out("mean", dtype="float32", tolerance=MEAN_TOL),
                         out("var", dtype="float32", tolerance=VAR_TOL)],
                launch=lambda k, x, mean, var, M, N, BLOCK_N:
                k.row_mean_var_kernel[(M,)](x, mean, var, N, BLOCK_N=BLOCK_N))],
    params={"BLOCK_N": 64},
    # digits lost when centring: max |mean| / std over the rows (N = 1 rows have no spread: 1)
    condition=lambda x: max(1.0, float((x.mean(1).abs() / x.std(1, correction=0)).nan_to_num(0, 0, 0).max())),
    formulas={"eq-p10-mean": ("mean", lambda x, N, BLOCK_N: stats()(x, N, BLOCK_N)["mean"]),
              "eq-p10-var": ("var", lambda x, N, BLOCK_N: stats()(x, N, BLOCK_N)["var"])},
    variants=[variant("padded_lanes", "fill", "var matches the padded lanes of the last chunk adding mean² each: a masked "
                      "lane loads 0, and 0 − mean is not 0. Keep them out: diff = tl.where(mask, x - mean, 0.0).",
                      stats(padded=True)),
              variant("over_block", "formula", "matches the sums divided by BLOCK_N instead of N: the mean is over the row's N "
                      "elements; the padded lanes are not part of the row.", stats("block")),
              variant("var_over_block", "formula", "var matches the sum of squared deviations divided by BLOCK_N instead of "
                      "N: divide by the row's N elements.", stats("block", true_mean=True)),
              variant("unbiased", "formula", "var matches the unbiased variance, divided by N − 1: this puzzle asks for the "
                      "biased variance, divided by N (as LayerNorm and torch.var(x, 1, correction=0)).",
                      stats(unbiased=True)),
              variant("first_chunk", "loop", "matches the statistics of each row's first BLOCK_N elements alone: loop "
                      "over the whole row, for start in range(0, N, BLOCK_N), in both passes.",
                      stats(first_chunk=True)),
              variant("var_first_chunk", "loop", "var matches the squared deviations of the first BLOCK_N elements alone: "
                      "the second pass must loop over the whole row too.", stats(first_chunk=True, true_mean=True))],
    hints={"wide": "only the rows wider than BLOCK_N fail: loop over the whole row in BLOCK_N chunks "
                   "(for start in range(0, N, BLOCK_N)) in both passes.",
           "tail": ("only the cases whose last chunk sticks out past N fail: its lanes past N are not part of the "
                   "row. Are they loaded masked (cols < N, other=0.0) and kept out of every sum, and does each pass "
                   "reach this last, partly filled chunk (range(0, N, BLOCK_N))?", ("mask", "fill", "loop"))},
    summaries=[SummaryPattern(CANCELLATION, lambda c: "cancellation" in c.tags, cause="stability"),
               SummaryPattern("only the bfloat16 cases fail: keep the sums in fp32 (tl.zeros(..., dtype=tl.float32), "
                              "each chunk loaded .to(tl.float32)); mean and var are stored in fp32.",
                              lambda c: c.dtype == "bfloat16", cause="precision")],
    # M is not tiled (one program per row): powers of two, so that "not a power of two" is about N alone
    cases=[case(M=4, N=20, BLOCK_N=8, documented=True), case(M=1, N=1), case(M=4, N=7), case(M=4, N=200),
           case(M=2, N=1000, BLOCK_N=128), case(M=8, N=64), case(M=8, N=256, BLOCK_N=32), case(M=32, N=48, BLOCK_N=16),
           case("mean far from 0 (-2.3 + 0.5·randn)", M=8, N=96, inputs={"x": randn("M N", -2.3, 0.5)}),
           case("mean near 1000 (1000 + randn)", M=4, N=200, tags=("cancellation",),
                inputs={"x": randn("M N", mean=1000.0)}),
           case("mean near 1000, one chunk (1000 + randn)", M=8, N=24, BLOCK_N=32, tags=("cancellation",),
                inputs={"x": randn("M N", mean=1000.0)}),
           case(M=4096, N=4096, BLOCK_N=1024, gpu_only=True),
           case("100 000 values near 1000 per row", M=64, N=100_000, BLOCK_N=1024, gpu_only=True,
                tags=("cancellation",), inputs={"x": randn("M N", mean=1000.0)}),
           case(M=2, N=1000, BLOCK_N=128, dtype="bfloat16", gpu_only=False),
           case(M=64, N=8192, BLOCK_N=256, dtype="bfloat16"), case(M=256, N=1000, BLOCK_N=128, dtype="bfloat16")],
)
