"""Learner bugs for puzzle 8 (long row sum), and correct kernels written differently."""
from entries import Bug, Kernel, Right

LOOP = "for start in range(0, N, BLOCK_N):"
ACC = "acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)"

BUGS = [
    Bug("row_start_without_n", "forward",
        (("x_row = x_ptr + row * N", "x_row = x_ptr + row", 1),),
        "address", "row i starts at x_ptr + i: the rows overlap, the last ones read past the end"),
    Bug("loop_steps_by_one", "forward",
        ((LOOP, "for start in range(0, N):", 1),),
        "loop", "the loop steps by 1 instead of BLOCK_N: every element summed up to BLOCK_N times"),
    Bug("loop_stops_a_block_early", "forward",
        ((LOOP, "for start in range(0, N - BLOCK_N, BLOCK_N):", 1),),
        "loop", "range(0, N - BLOCK_N, BLOCK_N): the last chunk (or the only one) is never read"),
    Bug("max_not_sum", "forward",
        (("tl.store(y_ptr + row, tl.sum(acc, axis=0))", "tl.store(y_ptr + row, tl.max(acc, axis=0))", 1),),
        "formula", "the lanes' partial sums reduced with tl.max instead of tl.sum"),
    Bug("padded_lanes_load_one", "forward",
        ((ACC, ACC.replace("other=0.0", "other=1.0"), 1),),
        "fill", "the padded lanes of the last chunk load 1.0: each adds 1 to the sum"),
    Bug("row_length_hard_coded", "forward",
        ((LOOP, "for start in range(0, 20, BLOCK_N):", 1),),
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
    Right("counted_chunks", ((LOOP + "\n        cols = start + tl.arange(0, BLOCK_N)",
                              "for i in range(0, tl.cdiv(N, BLOCK_N)):\n        cols = i * BLOCK_N + tl.arange(0, BLOCK_N)", 1),),
          "the loop counts chunks, for i in range(cdiv(N, BLOCK_N))"),
]
