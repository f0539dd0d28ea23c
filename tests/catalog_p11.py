"""Known-buggy kernels for puzzle 11 (softmax forward), each the reference solution with one bug
patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

FWD_LOAD = 'x = tl.load(x_ptr + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)\n    # softmax'
RESCALE = "s_lane * tl.exp(m_lane - m_new) + tl.exp(x - m_new)"
ONLINE_STORE = "tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s, mask=mask)"

BUGS = [
    Bug("no_max_shift", "forward",
        (("    m = tl.max(x, axis=0)\n    e = tl.exp(x - m)\n", "    e = tl.exp(x)\n", 1),),
        reasons=(("NaN or Inf",), ("Subtract the row's max first",)),
        gpu_reasons=(("NaN or Inf",),),
        misleading=("atomic", "race", "mask", "out of bounds"),
        notes="right for randn logits; exp(80 + ...) overflows fp32 (inf / inf = NaN), exp(-120) underflows"),
    Bug("padded_lanes_load_zero", "forward",
        ((FWD_LOAD, FWD_LOAD.replace('other=-float("inf")', "other=0.0"), 1),),
        reasons=(('other=-float("inf")',),),
        misleading=("atomic", "race", "overflow", "out of bounds"),
        notes="each padded lane adds exp(0 - max) to the sum; wrong wherever N is not a power of two"),
    Bug("online_sum_not_rescaled", "online",
        ((RESCALE, "s_lane + tl.exp(x - m_new)", 1),),
        reasons=(("exp(m_old − m_new)",),),
        misleading=("atomic", "race", "mask", "out of bounds", "overflow"),
        notes="right while every lane's max comes in its first chunk; wrong once a later chunk raises it"),
    Bug("row_offset_forgotten", "forward",
        ((FWD_LOAD, FWD_LOAD.replace("x_ptr + row * N + cols", "x_ptr + cols"), 1),),
        reasons=(("softmax of row 0",), ("x_ptr + row * N",)),
        misleading=("atomic", "race", "overflow")),
    Bug("online_store_without_mask", "online",
        ((ONLINE_STORE, "tl.store(y_ptr + row * N + cols, tl.exp(x - m) / s)", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        misleading=("atomic", "overflow"),
        notes="the last chunk's padded lanes write past the row: into the next row, or past the end of y"),
    Bug("online_sum_without_the_max", "online",
        ((RESCALE, "s_lane + tl.exp(x)", 1),
         ('    s = tl.sum(tl.where(m_lane > -float("inf"), s_lane * tl.exp(m_lane - m), 0.0), axis=0)\n',
          "    s = tl.sum(s_lane, axis=0)\n", 1),
         (ONLINE_STORE, ONLINE_STORE.replace("tl.exp(x - m)", "tl.exp(x)"), 1)),
        reasons=(("NaN or Inf",), ("Subtract the row's max first",)),
        misleading=("atomic", "race", "mask", "out of bounds", "rescale"),
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
_SOLUTION = __import__("pathlib").Path(__file__).resolve().parents[1] / "solutions" / "p11_softmax.py"
_TEXT = _SOLUTION.read_text(encoding="utf-8")
PER_LANE = _TEXT[_TEXT.index("    # per lane: m_lane"):_TEXT.index("    # second pass")]

ALTERNATIVES = [
    Alternative("online_scalar_running_max", ((PER_LANE, SCALAR_ONLINE + "\n", 1),),
                notes="the running max and sum as two scalars per row, each chunk reduced at once"),
    Alternative("exp2_with_log2e", (
        ("    e = tl.exp(x - m)\n", "    e = tl.exp2((x - m) * 1.4426950408889634)  # exp(t) = 2^(t·log2 e)\n", 1),),
        notes="exp through exp2, as fast softmax kernels write it"),
]
