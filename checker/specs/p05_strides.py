"""Puzzle 5: strides. A non-contiguous (transposed) x read through the strides it is passed."""
from checker.puzzle import SummaryPattern, case, part, puzzle, randn, variant


def reads(step):  # what a kernel computes reading x[m, n] at m * step_m + n * step_n (NaN past the end)
    def compute(x, b, M, N):
        import torch
        flat = (x.reshape(-1) if x.is_contiguous() else x.T.reshape(-1)).double()  # x's memory, in order
        step_m, step_n = step(N, x.stride())
        at = torch.arange(M)[:, None] * step_m + torch.arange(N)[None, :] * step_n
        return {"z": torch.cat([flat, flat.new_full((int(at.max()) + 1,), float("nan"))])[at] + b[None, :]}
    return compute


PUZZLE = puzzle(
    5, "strides", "Strides",
    skill="a non-contiguous view: address x[m, n] as m * stride(0) + n * stride(1), write z contiguous",
    chapter="Programs, blocks and masks",
    inputs={"x": randn("M N", transposed=True), "b": randn("N")},
    reference=lambda x, b: {"z": x + b[None, :]},
    parts=[part("forward", "z = x + b from a transposed x", ["strided_add_kernel"], outputs=["z"],
                launch=lambda k, x, b, z, M, N, BLOCK_M, BLOCK_N: k.strided_add_kernel[
                    (-(-M // BLOCK_M), -(-N // BLOCK_N))](x, b, z, M, N, x.stride(0), x.stride(1),
                                                         BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N))],
    params={"BLOCK_M": 8, "BLOCK_N": 16},
    formulas={"eq-p05-z": ("z", lambda x, b: x + b.expand_as(x))},
    variants=[variant("assumed_contiguous", "address", "z matches x read as if it were contiguous (x[m, n] at m * N + n): x "
                      "is a transposed view; address it with the strides you are passed.", reads(lambda N, s: (N, 1))),
              variant("strides_swapped", "address", "z matches x read with its two strides swapped (x[m, n] at m * stride_xn "
                      "+ n * stride_xm): stride_xm goes with the row index m.", reads(lambda N, s: (s[1], s[0]))),
              variant("column_stride_one", "address", "z matches x read with a column stride of 1 (x[m, n] at m * stride_xm "
                      "+ n): multiply the column index by stride_xn too.", reads(lambda N, s: (s[0], 1)))],
    summaries=[SummaryPattern("only the cases where x is not contiguous fail (a transposed view with more than one row "
                              "and column): x[m, n] is at m * stride_xm + n * stride_xn, with the strides the kernel "
                              "is passed; z is contiguous, z[m, n] at m * N + n.",
                              lambda c: min(c.sizes.values()) > 1 and "recipe" not in c.tags, cause="address")],
    hints={"wide": ("only the cases with more than one tile fail: does each program take its rows from "
                   "tl.program_id(0) * BLOCK_M and its columns from tl.program_id(1) * BLOCK_N?", ("address",))},
    cases=[case(M=5, N=7, BLOCK_M=4, BLOCK_N=4, documented=True), case("one tile", M=7, N=12),
           case(M=1, N=1), case(M=1, N=9), case(M=9, N=1), case(M=16, N=16, BLOCK_M=8, BLOCK_N=8),
           case(M=20, N=33), case(M=64, N=8), case(M=40, N=12, BLOCK_M=16, BLOCK_N=4),
           case("x contiguous this time: strides (N, 1)", M=6, N=10, BLOCK_M=4, BLOCK_N=4, inputs={"x": randn("M N")}),
           case(M=1000, N=3000, BLOCK_M=32, BLOCK_N=64, gpu_only=True),
           case(M=4096, N=4096, BLOCK_M=64, BLOCK_N=64, gpu_only=True)],
)
