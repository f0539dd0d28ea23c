"""Puzzle 11: softmax of each row, max-shifted; one block per row, then one pass with a running max."""
from checker.puzzle import SummaryPattern, case, next_pow2, part, puzzle, randn, spread_rows, variant


def softmax(x):
    return {"y": x.softmax(1)}


def softmax_shifted(x):
    """The page's formula: exp(x - max) over its sum."""
    e = (x - x.max(1, keepdim=True).values).exp()
    return e / e.sum(1, keepdim=True)


def padded_zero(x, N, BLOCK_N, CHUNK):
    """Masked lanes loaded with other=0.0 and kept in the sums: the max is at least 0 and every
    padded lane adds exp(0 - max) to the denominator."""
    import torch
    pad = -N % BLOCK_N
    m = x.max(1, keepdim=True).values
    if pad:
        m = torch.clamp(m, min=0.0)
    e = (x - m).exp()
    return {"y": e / (e.sum(1, keepdim=True) + pad * (-m).exp())}


def online(per_lane: bool, rescale: bool = False):
    """The online softmax in float64, chunk by chunk: as the page derives it (rescale=True), or a
    kernel whose running sum is never rescaled when the running max grows (earlier terms keep
    exp(x - m_old)). Per row (one scalar max and sum) or per lane (a max and a sum per lane,
    merged at the end)."""
    def compute(x, N, CHUNK, **_):
        import torch
        chunks = -(-N // CHUNK)
        padded = torch.full((x.shape[0], chunks * CHUNK), -torch.inf, dtype=x.dtype)
        padded[:, :N] = x
        width = CHUNK if per_lane else 1
        m = torch.full((x.shape[0], width), -torch.inf, dtype=x.dtype)
        s = torch.zeros_like(m)
        for chunk in padded.split(CHUNK, dim=1):
            m_new = torch.maximum(m, chunk if per_lane else chunk.max(1, keepdim=True).values)
            if rescale:
                s = s * (m - m_new).exp().nan_to_num(0.0)
            m = m_new
            term = (chunk - m).exp().nan_to_num(0.0)  # -inf - -inf: a lane that saw nothing yet
            s = s + (term if per_lane else term.sum(1, keepdim=True))
        row_max = m.max(1, keepdim=True).values
        total = (s * (m - row_max).exp().nan_to_num(0.0)).sum(1, keepdim=True)
        return {"y": (x - row_max).exp() / total}
    return compute


def row_zero(x, N, BLOCK_N, CHUNK):
    """Every program read row 0 (no row offset in the load) and wrote its own row."""
    return {"y": x[:1].softmax(1).expand_as(x)}


def launch_forward(k, x, y, M, N, BLOCK_N, CHUNK):
    k.softmax_fwd_kernel[(M,)](x, y, N, BLOCK_N=BLOCK_N)


def launch_online(k, x, y, M, N, BLOCK_N, CHUNK):
    k.softmax_online_kernel[(M,)](x, y, N, BLOCK_N=CHUNK)


LARGE = ("only the cases with large logits fail: exp(x) overflows fp32 once x > 88.7 (inf / inf is NaN). "
         "Subtract the row's max first: softmax(x) = softmax(x − max(x)), and every exp(x − max) is at most 1.")
NEGATIVE = ("only the rows whose logits are all far below 0 fail: if the padded lanes load other=0.0, the "
            "max is 0 instead of the row's own max, and every exp(x − 0) underflows to 0 (0 / 0 is NaN). "
            "Load with other=-float(\"inf\"): exp(-inf − max) = 0 adds nothing to the sum.")
FAR = ("only the cases with logits far from 0 fail: in fp32, exp(x) overflows to inf once x > 88.7 and "
       "underflows to 0 once x < −103 (inf / inf and 0 / 0 are NaN). Subtract the row's max first: "
       "softmax(x) = softmax(x − max(x)), every exp(x − max) is at most 1 and the largest is exactly 1.")
SPREAD = ("only the rows whose values spread 200 apart fail: softmax(x) = softmax(x − m) for any m, but only m = "
          "the row's max keeps every exp(x − m) ≤ 1 with the largest exactly 1. A shift by the row's mean, by the "
          "first block's max, or by a running max not updated block by block overflows (inf / inf) or underflows "
          "(0 / 0) on such rows.")
EARLY = ("only the rows whose first chunk holds the max, 200 above the rest, fail: is the max kept from chunk to "
         "chunk? m_new = max(m_old, the chunk's values); a chunk's own max in its place is exact while the chunks' "
         "maxima stay within 88 of each other, but here the rescale exp(m_old − m_new) = exp(200) overflows.")
# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   y: correct <= 0.211 (solution, bfloat16 M=256, N=1000: N not a power of two, N wider than CHUNK (256))
PUZZLE = puzzle(
    11, "softmax", "Softmax forward",
    skill="a max-shifted softmax: -inf in the padded lanes, then one pass with a running max and a rescaled sum",
    chapter="Reductions",
    inputs={"x": randn("M N")},
    reference=softmax,
    # the one-block part takes a row in a block of its own width (BLOCK_N >= N): no row is wider
    parts=[part("forward", "one block per row", ["softmax_fwd_kernel"], outputs=["y"], launch=launch_forward,
                blocks={"N": "BLOCK_N"}),
           part("online", "rows wider than the block: one pass, running max", ["softmax_online_kernel"],
                outputs=["y"], launch=launch_online)],
    params={"BLOCK_N": next_pow2("N"), "CHUNK": 16},
    blocks={"N": "CHUNK"},
    variants=[variant("padded_zero", "fill", "y matches padded lanes loaded as 0 and kept in the max and the sum: each "
                      "adds exp(0 − max) to the denominator. Load them with other=-float(\"inf\") (or keep them "
                      "out with tl.where(mask, ...)).", padded_zero),
              variant("no_rescale", "accumulate", "y matches a running sum that is not rescaled when the running max grows: "
                      "before adding a chunk, multiply the sum by exp(m_old − m_new), the factor that moves "
                      "its terms exp(x − m_old) to exp(x − m_new).", online(per_lane=False)),
              variant("no_rescale_lanes", "accumulate", "y matches running sums (one per lane) that are not rescaled when "
                      "the running max grows: before adding a chunk, multiply the sum by exp(m_old − m_new), the "
                      "factor that moves its terms exp(x − m_old) to exp(x − m_new).",
                      online(per_lane=True)),
              variant("row_zero", "address", "every row of y holds the softmax of row 0: each program must read its own "
                      "row, x_ptr + row * N (row = tl.program_id(0)).", row_zero)],
    # the online recurrences (max and rescaled sum) are checked through the y they produce
    formulas={"eq-p11-softmax": ("y", lambda x, N, BLOCK_N, CHUNK: softmax_shifted(x)),
              "eq-p11-online-max": ("y", lambda x, **sizes: online(per_lane=False, rescale=True)(x, **sizes)["y"]),
              "eq-p11-online-sum": ("y", lambda x, **sizes: online(per_lane=True, rescale=True)(x, **sizes)["y"])},
    hints={"wide": ("only the rows wider than the block fail: the loop must cover the whole row (for start in "
                   "range(0, N, BLOCK_N)), and the running sum must be rescaled by exp(m_old − m_new) each time "
                   "the running max grows.", ("loop", "accumulate", "formula")),
           "tail": ("only the cases whose last block sticks out past N fail: its lanes past N are not part of the "
                   "row. Does every loop reach this last, partly filled block (range(0, N, BLOCK_N): N // BLOCK_N "
                   "leaves it out), and is each load and store masked (mask=cols < N, other=-float(\"inf\") to keep "
                   "the padded lanes out of the max and the sum)?", ("mask", "fill", "loop"))},
    summaries=[SummaryPattern(LARGE, lambda c: "large" in c.tags, cause="stability"),
               SummaryPattern(NEGATIVE, lambda c: "negative" in c.tags, candidates=("fill", "stability")),
               SummaryPattern(EARLY, lambda c: "early" in c.tags, candidates=("accumulate", "stability")),
               SummaryPattern(SPREAD, lambda c: "spread" in c.tags, candidates=("stability", "accumulate")),
               SummaryPattern(FAR, lambda c: "large" in c.tags or "negative" in c.tags or "spread" in c.tags,
                              cause="stability")],
    cases=[case(M=4, N=20, CHUNK=8, documented=True), case(M=1, N=1), case(M=4, N=7), case(M=4, N=16), case(M=4, N=64),
           case(M=8, N=100), case(M=2, N=300, CHUNK=64), case(M=16, N=33, CHUNK=8),
           case("large logits (80 + 4·randn)", M=4, N=50, tags=("large",), inputs={"x": randn("M N", 80.0, 4.0)}),
           case("logits near 1000 (1000 + randn)", M=4, N=24, tags=("large",),
                inputs={"x": randn("M N", 1000.0)}),
           case("all logits far below 0 (-120 + randn)", M=4, N=20, tags=("negative",),
                inputs={"x": randn("M N", -120.0)}),
           case("a peaked row (12·randn)", M=4, N=40, inputs={"x": randn("M N", 0.0, 12.0)}),
           # values 200 apart: only the row's (running) max as the shift keeps every exp in range
           case("the max arrives last, 200 above the rest", M=4, N=64, tags=("spread",),
                inputs={"x": spread_rows("M N", "late")}),
           case("the first element 200 above the rest", M=4, N=64, tags=("spread", "early"),
                inputs={"x": spread_rows("M N", "early")}),
           case("the first half of each row 200 below the rest", M=4, N=64, tags=("spread",),
                inputs={"x": spread_rows("M N", "low_first")}),
           case(M=4096, N=1000, CHUNK=256, gpu_only=True), case(M=64, N=8192, CHUNK=1024, gpu_only=True),
           case(M=4, N=40, CHUNK=16, dtype="bfloat16", gpu_only=False), case(M=256, N=1000, CHUNK=256, dtype="bfloat16")],
)
