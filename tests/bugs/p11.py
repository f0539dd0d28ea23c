"""Every known kernel of puzzle 11 (softmax forward): the bugs tests/test_contract.py pins (PINNED) and
the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT, SAME_BUG). What each list
means: tests/bugs/__init__.py."""
from bugs.reasons import RESCALE_DROPPED
from bugs import Bug, Kernel, Right
from bugs.reasons import MASKED_OUT

FWD_LOAD = 'x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)\n    # softmax'
RESCALE = "s_lane * tl.exp(m_lane - m_new) + tl.exp(x - m_new)"
ONLINE_STORE = "tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=mask)"

PINNED = [
    Bug("online_loop_stops_a_chunk_early", "online",
        (("    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n"
          "        x = tl.load(x_row + cols, mask=cols < N, other=-float(\"inf\"))",
          "    for start in range(0, N - BLOCK_N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n"
          "        x = tl.load(x_row + cols, mask=cols < N, other=-float(\"inf\"))", 1),),
        cause="loop", named="candidates",  # NaN where one block is all: a loop stopping early or a value not carried
        reasons=(("fits in one block gives NaN",), ("M = 1 and N = 1",)),
        not_words=("in a case with M = 1.",),
        notes="the first pass stops one chunk early: rows of one chunk sum nothing (0 / 0), wider rows miss their "
              "last chunk. Once no hint, and the one-row case blamed M alone (issue 35, item 3)"),
    Bug("no_max_shift", "forward",
        (("    m = tl.max(x, axis=0)\n    e = tl.exp(x - m)\n", "    e = tl.exp(x)\n", 1),),
        cause="stability",
        reasons=(("NaN or Inf",), ("Subtract the row's max first",)),
        gpu_reasons=(("NaN or Inf",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",),
        notes="right for randn logits; exp(80 + ...) overflows fp32 (inf / inf = NaN), exp(-120) underflows"),
    Bug("padded_lanes_load_zero", "forward",
        ((FWD_LOAD, FWD_LOAD.replace('other=-float("inf")', "other=0.0"), 1),),
        cause="fill",
        reasons=(('other=-float("inf")',),),
        not_causes=("atomic", "stability"), not_words=("out of bounds",),
        notes="each padded lane adds exp(0 - max) to the sum; wrong wherever N is not a power of two", code='variant.padded_zero'),
    # a shift that is not the row's running max: right on randn rows, wrong where a row's values spread
    # 200 apart (the cases tagged "spread")
    Bug("shift_by_the_row_mean", "forward",
        (("    m = tl.max(x, axis=0)\n", "    m = tl.sum(tl.where(mask, x, 0.0), axis=0) / N\n", 1),),
        cause="stability", named="candidates", not_causes=("atomic", "mask"),
        notes="softmax(x - mean) is softmax(x) in exact arithmetic; exp(200 - mean) overflows fp32", code='values.nonfinite'),
    Bug("online_max_of_the_first_chunk", "online",
        (("        m_lane = m_new\n", "        m_lane = tl.where(m_lane > -float('inf'), m_lane, m_new)\n", 1),),
        cause="accumulate", named="candidates", not_causes=("atomic", "mask"),
        notes="the running max never grows past the first chunk's: a later value 200 above it overflows", code='values.row_factor'),
    Bug("online_max_per_chunk", "online",
        (("        m_new = tl.maximum(m_lane, x)\n", "        m_new = tl.where(x > -float(\"inf\"), x, m_lane)\n", 1),),
        cause="accumulate", named="candidates", not_causes=("atomic", "mask"),
        notes="each chunk's own value as the lane's max instead of the max kept from chunk to chunk: exact "
              "while they stay within 88 of each other, overflows where a later chunk is 200 below the first", code='values.nonfinite'),
    Bug("online_sum_not_rescaled", "online",
        ((RESCALE, "s_lane + tl.exp(x - m_new)", 1),),
        cause="accumulate",
        reasons=(("exp(m_old − m_new)",),),
        not_causes=("atomic", "mask", "stability"), not_words=("out of bounds",),
        notes="right while every lane's max comes in its first chunk; wrong once a later chunk raises it", code='variant.no_rescale_lanes'),
    Bug("row_offset_forgotten", "forward",
        ((FWD_LOAD, FWD_LOAD.replace("x_ptr + row * N + cols", "x_ptr + cols"), 1),),
        cause="address",
        reasons=(("softmax of row 0",), ("x_ptr + row * N",)),
        not_causes=("atomic", "stability"), code='variant.row_zero'),
    Bug("online_store_without_mask", "online",
        ((ONLINE_STORE, "tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        not_causes=("atomic", "stability"),
        notes="the last chunk's padded lanes write past the row: into the next row, or past the end of y", code='fault.oob'),
    Bug("online_sum_without_the_max", "online",
        ((RESCALE, "s_lane + tl.exp(x)", 1),
         ('    s = tl.sum(tl.where(m_lane > -float("inf"), s_lane * tl.exp(m_lane - m), 0.0), axis=0)\n',
          "    s = tl.sum(s_lane, axis=0)\n", 1),
         (ONLINE_STORE, ONLINE_STORE.replace("tl.exp(x - m)", "tl.exp(x)"), 1)),
        cause="stability",
        reasons=(("NaN or Inf",), ("Subtract the row's max first",)),
        not_causes=("atomic", "mask"), not_words=("out of bounds", "rescale"),
        notes="the textbook sum of exp(x) in one pass, no max at all: overflows past 88.7, underflows below -103"),
]

# one scalar running max and sum per row (tl.max / tl.sum of each chunk) instead of one per lane
SCALAR_ONLINE = """    m = -float("inf")
    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
"""
_SOLUTION = __import__("pathlib").Path(__file__).resolve().parents[2] / "solutions" / "p11_softmax.py"
_TEXT = _SOLUTION.read_text(encoding="utf-8")
PER_LANE = _TEXT[_TEXT.index("    # per lane: m_lane"):_TEXT.index("    # second pass")]

PASSING = [
    Right("online_scalar_running_max", ((PER_LANE, SCALAR_ONLINE + "\n", 1),),
                notes="the running max and sum as two scalars per row, each chunk reduced at once"),
    Right("exp2_with_log2e", (
        ("    e = tl.exp(x - m)\n", "    e = tl.exp2((x - m) * 1.4426950408889634)  # exp(t) = 2^(t·log2 e)\n", 1),),
        notes="exp through exp2, as fast softmax kernels write it"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
FWD_LOAD_LINE = "x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float(\"inf\")).to(tl.float32)"
ONLINE_LOOP = ("    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n"
               "        x = tl.load(x_row + cols, mask=cols < N, other=-float(\"inf\")).to(tl.float32)\n        m_new")

MEASURED = [
    Bug("rows_block_apart", "forward",
        ((FWD_LOAD_LINE, FWD_LOAD_LINE.replace("row * N", "row * BLOCK_N"), 1),),
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
        (FWD_LOAD_LINE, "x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)", 1),
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


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.start:softmax_online_kernel:ca6ba3a3:0": "a lane's running sum is multiplied by exp(m_lane - m_new) = "
                                                   "exp(-inf) = 0 at its first real value, and a lane that never "
                                                   "sees one is set to 0 by the tl.where: the start value is lost",
    "fill.other:softmax_online_kernel:ad9a3534:0": MASKED_OUT,
}

# also a bug of a second class: the hint that names that class is right, not misleading (listed only
# where the two are the same bug, seen from two sides: never to excuse a hint)
SAME_BUG = {
    "formula.drop:softmax_online_kernel:1a4722e3:0": ("accumulate", RESCALE_DROPPED),
    # the max subtraction dropped is exactly the unstable softmax the stability hint describes
    "formula.drop:softmax_fwd_kernel:ff626363:0": ("stability", "exp(x - m) -> exp(x) is the softmax without its "
                                                                "max subtracted: the unstable form itself"),
}
