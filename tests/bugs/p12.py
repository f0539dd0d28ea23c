"""Every known kernel of puzzle 12 (softmax backward): the bugs tests/test_contract.py pins (PINNED)
and the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What each list means:
tests/bugs/__init__.py."""
from pathlib import Path

from bugs import Bug, Kernel, Right
from bugs.reasons import MASKED_OUT, ZERO_PARTNER

STORE = "tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)"
LOOP = "    for start in range(0, N, BLOCK_N):\n"
ACC = "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
PASS1_LOADS = ("y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
               "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n        acc += dy * y")

PINNED = [
    Bug("jacobian_diagonal", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, dy * y * (1.0 - y), mask=mask)", 1),),
        cause="formula",
        reasons=(("diagonal of the Jacobian",), ("dy − Σ_j dy_j y_j",)),
        gpu_reasons=(("diagonal of the Jacobian",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",),
        notes="the derivative of y_j with respect to x_j alone: every other x_i moves y_j too", code='variant.diagonal'),
    Bug("cross_term_missing", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, y * dy, mask=mask)", 1),),
        cause="formula",
        reasons=(("the cross term is missing",),),
        not_causes=("atomic", "mask"), code='variant.no_cross'),
    Bug("sum_of_dy_unweighted", "backward",
        (("        acc += dy * y\n", "        acc += dy\n", 1),),
        cause="formula",
        reasons=(("weight each dy_j by y_j",),),
        not_causes=("atomic", "mask"), code='variant.sum_dy'),
    Bug("first_pass_without_loop", "backward",
        ((ACC + LOOP, ACC + "    for start in range(0, BLOCK_N, BLOCK_N):\n", 1),),
        cause="loop",
        reasons=(("first BLOCK_N elements",),),
        not_causes=("atomic",), not_words=("out of bounds",),
        notes="right while the row fits one block", code='variant.first_chunk'),
    Bug("padded_lanes_load_one", "backward",
        ((PASS1_LOADS, PASS1_LOADS.replace("other=0.0", "other=1.0"), 1),),
        cause="fill", named="candidates",
        reasons=(("last chunk sticks out past N",), ("other=0.0",)),
        not_causes=("atomic",), not_words=("diagonal",),
        notes="each padded lane adds 1 · 1 to the row sum: wrong wherever N is not a multiple of BLOCK_N"),
    Bug("store_without_mask", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, y * (dy - s))", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("dx_ptr",)),
        not_causes=("atomic",), not_words=("diagonal",), code='fault.oob'),
]

_TEXT = (Path(__file__).resolve().parents[2] / "solutions" / "p12_softmax_backward.py").read_text(encoding="utf-8")
PASS1 = _TEXT[_TEXT.index("    acc = tl.zeros"):_TEXT.index("    s = tl.sum(acc, axis=0)\n")]
SCALAR_PASS1 = """    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        s += tl.sum(dy * y, axis=0)
"""

PASSING = [
    Right("scalar_row_sum", ((PASS1, SCALAR_PASS1, 1), ("    s = tl.sum(acc, axis=0)\n", "", 1)),
                notes="the row sum reduced chunk by chunk into one fp32 number"),
    Right("y_dy_minus_y_s", ((STORE, "tl.store(dx_ptr + row * N + cols, y * dy - y * s, mask=mask)", 1),),
                notes="the product expanded: y·dy − y·s"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
FIRST = ("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):\n"
         "        cols = start + tl.arange(0, BLOCK_N)\n        mask = cols < N\n")
SECOND = ("    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n"
          "        mask = cols < N\n        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n        tl.store")

MEASURED = [
    Bug("cross_term_restarted_per_chunk", "backward",
        ((FIRST, "    for start in range(0, N, BLOCK_N):\n        acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
                 "        cols = start + tl.arange(0, BLOCK_N)\n        mask = cols < N\n", 1),),
        "accumulate", "the accumulator of Σ dy·y created inside the loop: s is the last chunk's sum"),
    Bug("dx_rows_block_apart", "backward",
        ((STORE, STORE.replace("row * N", "row * BLOCK_N"), 1),),
        "address", "dx's row i stored at i * BLOCK_N instead of i * N"),
    Bug("dy_row_from_y_ptr", "backward",
        (("dy_row = dy_ptr + row * N", "dy_row = y_ptr + row * N", 1),),
        "formula", "dy's row pointer copied from y's line and left on y_ptr: y is read twice", accept=("address",)),
    Bug("parentheses_dropped", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, y * dy - s, mask=mask)", 1),),
        "formula", "dx = y * dy - s: the cross term is not multiplied by y"),
    Bug("second_pass_mask_against_the_block", "backward",
        ((SECOND, SECOND.replace("mask = cols < N", "mask = cols < BLOCK_N"), 1),),
        "mask", "the second pass masks with cols < BLOCK_N, true for every lane of the first chunk"),
    Bug("row_length_hard_coded", "backward",
        (("y_row = y_ptr + row * N", "y_row = y_ptr + row * 20", 1),),
        "hardcoded", "y's rows 20 apart, the documented N"),
    Bug("cross_term_summed_in_fp16", "backward",
        (("        acc += dy * y\n", "        acc += (dy * y).to(tl.float16)\n", 1),),
        "precision", "the products of the cross term rounded to fp16 before they are summed"),
    Bug("dx_written_over_dy", "backward",
        ((STORE, "tl.store(dy_row + cols, y * (dy - s), mask=mask)", 1),),
        "inplace", "dx stored through dy's row pointer: the input dy is overwritten and dx never written",
        accept=("address",)),
]

RIGHT = [
    Right("padded_y_loads_one", ((FIRST + "        y = tl.load(y_row + cols, mask=mask, other=0.0)",
                                  FIRST + "        y = tl.load(y_row + cols, mask=mask, other=1.0)", 1),),
          "padded lanes load y = 1 in the first pass: dy = 0 there, so they still add 0 to the sum"),
    Right("pointers_walk_the_row", (Kernel("softmax_bwd_kernel", '''
        @triton.jit
        def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, N, BLOCK_N: tl.constexpr):
            row = tl.program_id(0)
            lanes = tl.arange(0, BLOCK_N)
            y_ptrs = y_ptr + row * N + lanes
            dy_ptrs = dy_ptr + row * N + lanes
            acc = tl.zeros([BLOCK_N], dtype=tl.float32)
            for start in range(0, N, BLOCK_N):
                ok = start + lanes < N
                acc += tl.load(y_ptrs, mask=ok, other=0.0).to(tl.float32) * tl.load(dy_ptrs, mask=ok, other=0.0).to(tl.float32)
                y_ptrs += BLOCK_N
                dy_ptrs += BLOCK_N
            s = tl.sum(acc, axis=0)
            y_ptrs = y_ptr + row * N + lanes
            dy_ptrs = dy_ptr + row * N + lanes
            dx_ptrs = dx_ptr + row * N + lanes
            for start in range(0, N, BLOCK_N):
                ok = start + lanes < N
                y = tl.load(y_ptrs, mask=ok, other=0.0).to(tl.float32)
                dy = tl.load(dy_ptrs, mask=ok, other=0.0).to(tl.float32)
                tl.store(dx_ptrs, y * dy - y * s, mask=ok)
                y_ptrs += BLOCK_N
                dy_ptrs += BLOCK_N
                dx_ptrs += BLOCK_N
        '''),), "pointer blocks advanced by BLOCK_N each step instead of offsets recomputed"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:softmax_bwd_kernel:ae16c9cd:0": ZERO_PARTNER,
    "fill.other:softmax_bwd_kernel:dd631e71:0": ZERO_PARTNER,
    "fill.other:softmax_bwd_kernel:ae16c9cd:1": MASKED_OUT,
    "fill.other:softmax_bwd_kernel:dd631e71:1": MASKED_OUT,
}
