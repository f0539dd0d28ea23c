"""Learner bugs for puzzle 11 (softmax forward, one block and online), and correct kernels written differently."""
from entries import Bug, Kernel, Right

FWD_LOAD = "x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float(\"inf\")).to(tl.float32)"
ONLINE_LOOP = ("    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n"
               "        x = tl.load(x_row + cols, mask=cols < N, other=-float(\"inf\")).to(tl.float32)\n        m_new")

BUGS = [
    Bug("rows_block_apart", "forward",
        ((FWD_LOAD, FWD_LOAD.replace("row * N", "row * BLOCK_N"), 1),),
        "address", "row i of x read at i * BLOCK_N (the padded block) instead of i * N"),
    Bug("denominator_not_shifted", "forward",
        (("y = e / tl.sum(e, axis=0)", "y = e / tl.sum(tl.exp(x), axis=0)", 1),),
        "formula", "the numerator is shifted by the max, the denominator is not"),
    Bug("exp2_without_log2e", "forward",
        (("e = tl.exp(x - m)", "e = tl.exp2(x - m)", 1),),
        "formula", "tl.exp2 used for speed without scaling by log2(e): 2^x, not e^x"),
    Bug("online_running_max_starts_at_zero", "online",
        (("m_lane = tl.full([BLOCK_N], -float(\"inf\"), dtype=tl.float32)", "m_lane = tl.zeros([BLOCK_N], dtype=tl.float32)", 1),),
        "fill", "the running max starts at 0 instead of -inf: rows of negative logits underflow"),
    Bug("online_divides_by_the_lane_sums", "online",
        (("tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=mask)",
          "tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s_lane, mask=mask)", 1),),
        "formula", "the second pass divides by each lane's own sum instead of the row's"),
    Bug("online_rescale_upside_down", "online",
        (("s_lane * tl.exp(m_lane - m_new)", "s_lane * tl.exp(m_new - m_lane)", 1),),
        "formula", "the running sum rescaled by exp(m_new - m_old), the inverse of the right factor"),
    Bug("online_statistics_over_one_chunk", "online",
        ((ONLINE_LOOP, ONLINE_LOOP.replace("range(0, N, BLOCK_N)", "range(0, BLOCK_N, BLOCK_N)"), 1),),
        "loop", "the first (statistics) pass reads only the first chunk of the row"),
    Bug("online_sum_without_a_max", "online",
        (Kernel("softmax_online_kernel", '''
            @triton.jit
            def softmax_online_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
                row = tl.program_id(0)
                x_row = x_ptr + row * N
                s_lane = tl.zeros([BLOCK_N], dtype=tl.float32)
                for start in range(0, N, BLOCK_N):
                    cols = start + tl.arange(0, BLOCK_N)
                    s_lane += tl.exp(tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32))
                s = tl.sum(s_lane, axis=0)
                for start in range(0, N, BLOCK_N):
                    cols = start + tl.arange(0, BLOCK_N)
                    x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
                    tl.store(y_ptr + row * N + cols, tl.exp(x) / s, mask=cols < N)
            '''),),
        "stability", "a one-pass softmax with no max at all: sum exp(x), then exp(x) / sum"),
]

RIGHT = [
    Right("forward_max_and_sum_over_masked_lanes", (
        (FWD_LOAD, "x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)", 1),
        ("m = tl.max(x, axis=0)", "m = tl.max(tl.where(mask, x, -float(\"inf\")), axis=0)", 1),
        ("e = tl.exp(x - m)", "e = tl.where(mask, tl.exp(x - m), 0.0)", 1)),
          "padded lanes load 0 and are kept out of the max and the sum with tl.where"),
    Right("online_in_three_plain_passes", (Kernel("softmax_online_kernel", '''
        @triton.jit
        def softmax_online_kernel(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
            row = tl.program_id(0)
            x_row = x_ptr + row * N
            m_acc = tl.full([BLOCK_N], -float("inf"), dtype=tl.float32)
            for start in range(0, N, BLOCK_N):
                cols = start + tl.arange(0, BLOCK_N)
                m_acc = tl.maximum(m_acc, tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32))
            m = tl.max(m_acc, axis=0)
            s_acc = tl.zeros([BLOCK_N], dtype=tl.float32)
            for start in range(0, N, BLOCK_N):
                cols = start + tl.arange(0, BLOCK_N)
                x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
                s_acc += tl.exp(x - m)
            s = tl.sum(s_acc, axis=0)
            for start in range(0, N, BLOCK_N):
                cols = start + tl.arange(0, BLOCK_N)
                x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
                tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=cols < N)
        '''),), "no running max: a pass for the max, one for the sum, one for y"),
]
