"""Puzzle 8: the sum of each row of x [M, N], rows wider than one block: loop in chunks, fp32 accumulator."""
from checker.puzzle import SummaryPattern, Tolerance, case, out, part, puzzle, randn, variant

# y is fp32 whatever the input dtype (as torch.sum(x, 1, dtype=torch.float32)): bf16 inputs are exact
# in fp32, so an fp32 running sum stays within a few fp32 roundings. A bf16 running sum fails this.
FP32_SUM = {"bfloat16": Tolerance(atol=1e-4, rtol=1e-4)}


def last_chunk_only(x, N, BLOCK_N):  # the accumulator created inside the loop: each chunk starts over
    return {"y": x[:, (N - 1) // BLOCK_N * BLOCK_N:].sum(1)}


def rows_at_block_stride(x, M, N, BLOCK_N):  # row i read from x_ptr + i * BLOCK_N
    import torch
    flat = x.reshape(-1)
    return {"y": torch.stack([flat[i * BLOCK_N:i * BLOCK_N + N].sum() for i in range(M)])}


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   y: correct <= 0.00119 (scalar_accumulator, bfloat16 M=64, N=8192: N wider than BLOCK_N (256))
#   accumulator_in_fp16: inf (y, bf16, 2048 values near 1000 per row)
#   accumulator_in_the_input_dtype: 126 (y, bfloat16 M=64, N=8192: N wider than BLOCK_N (256))
PUZZLE = puzzle(
    8, "long_row_sum", "Long row sum",
    skill="a reduction over a row wider than one block: a loop of masked chunks into an fp32 accumulator",
    chapter="Reductions",
    inputs={"x": randn("M N")},
    reference=lambda x: {"y": x.sum(1)},
    parts=[part("forward", "y = x.sum(1)", ["long_row_sum_kernel"],
                outputs=[out("y", dtype="float32", tolerance=FP32_SUM)],
                launch=lambda k, x, y, N, M, BLOCK_N: k.long_row_sum_kernel[(M,)](x, y, N, BLOCK_N=BLOCK_N))],
    params={"BLOCK_N": 128},
    variants=[variant("last_chunk_only", "accumulate", "y matches the sum of each row's last chunk alone: the accumulator starts "
                      "over at every step. Create it once, before the loop.", last_chunk_only),
              variant("first_chunk_only", "loop", "y matches the sum of each row's first BLOCK_N elements: loop over the "
                      "row, for start in range(0, N, BLOCK_N).", lambda x, BLOCK_N: {"y": x[:, :BLOCK_N].sum(1)}),
              variant("rows_at_block_stride", "address", "y matches rows that start at row * BLOCK_N: row i of x starts at "
                      "x_ptr + i * N, N elements after the previous one, whatever the block size.",
                      rows_at_block_stride)],
    summaries=[SummaryPattern("only the bfloat16 cases fail: keep the running sum in fp32 (tl.zeros(..., "
                              "dtype=tl.float32), each chunk loaded .to(tl.float32)); a bf16 sum keeps 8 bits.",
                              lambda c: c.dtype == "bfloat16", cause="precision")],
    # M is not tiled (one program per row): powers of two, so that "not a power of two" is about N alone
    cases=[case(M=4, N=20, BLOCK_N=8, documented=True), case(M=1, N=1), case(M=4, N=1000),
           case(M=4, N=512), case(M=2, N=3000, BLOCK_N=256), case(M=16, N=100), case(M=16, N=100, BLOCK_N=32),
           case(M=8, N=64, BLOCK_N=64), case(M=8, N=33, BLOCK_N=16),
           case("values near 1000", M=4, N=700, inputs={"x": randn("M N", mean=1000.0)}),
           case(M=64, N=100_000, BLOCK_N=1024, gpu_only=True), case(M=4096, N=4096, BLOCK_N=1024, gpu_only=True),
           case("bf16, 2048 values near 1000 per row", M=2, N=2048, BLOCK_N=128, dtype="bfloat16", gpu_only=False,
                inputs={"x": randn("M N", mean=1000.0)}),
           case(M=64, N=8192, BLOCK_N=256, dtype="bfloat16"),
           case("bf16, 65536 values near 1000 per row", M=16, N=65_536, BLOCK_N=1024, dtype="bfloat16",
                inputs={"x": randn("M N", mean=1000.0)})],
)
