"""Known-buggy kernels for puzzle 12 (softmax backward), each the reference solution with one bug
patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from pathlib import Path

from catalog import Alternative, Bug

STORE = "tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)"
LOOP = "    for start in range(0, N, BLOCK_N):\n"
ACC = "    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
PASS1_LOADS = ("y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
               "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n        acc += dy * y")

BUGS = [
    Bug("jacobian_diagonal", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, dy * y * (1.0 - y), mask=mask)", 1),),
        reasons=(("diagonal of the Jacobian",), ("dy − Σ_j dy_j y_j",)),
        gpu_reasons=(("diagonal of the Jacobian",),),
        misleading=("atomic", "lost", "mask", "race", "out of bounds"),
        notes="the derivative of y_j with respect to x_j alone: every other x_i moves y_j too"),
    Bug("cross_term_missing", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, y * dy, mask=mask)", 1),),
        reasons=(("the cross term is missing",),),
        misleading=("atomic", "lost", "mask", "race")),
    Bug("sum_of_dy_unweighted", "backward",
        (("        acc += dy * y\n", "        acc += dy\n", 1),),
        reasons=(("weight each dy_j by y_j",),),
        misleading=("atomic", "lost", "mask", "race")),
    Bug("first_pass_without_loop", "backward",
        ((ACC + LOOP, ACC + "    for start in range(0, BLOCK_N, BLOCK_N):\n", 1),),
        reasons=(("first BLOCK_N elements",), ("loop",)),
        misleading=("atomic", "lost", "race", "out of bounds"),
        notes="right while the row fits one block"),
    Bug("padded_lanes_load_one", "backward",
        ((PASS1_LOADS, PASS1_LOADS.replace("other=0.0", "other=1.0"), 1),),
        reasons=(("last chunk sticks out past N",), ("other=0.0",)),
        misleading=("atomic", "lost", "race", "diagonal"),
        notes="each padded lane adds 1 · 1 to the row sum: wrong wherever N is not a multiple of BLOCK_N"),
    Bug("store_without_mask", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, y * (dy - s))", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("dx_ptr",)),
        misleading=("atomic", "diagonal")),
]

_TEXT = (Path(__file__).resolve().parents[1] / "solutions" / "p12_softmax_backward.py").read_text(encoding="utf-8")
PASS1 = _TEXT[_TEXT.index("    acc = tl.zeros"):_TEXT.index("    s = tl.sum(acc, axis=0)\n")]
SCALAR_PASS1 = """    s = 0.0
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)
        s += tl.sum(dy * y, axis=0)
"""

ALTERNATIVES = [
    Alternative("scalar_row_sum", ((PASS1, SCALAR_PASS1, 1), ("    s = tl.sum(acc, axis=0)\n", "", 1)),
                notes="the row sum reduced chunk by chunk into one fp32 number"),
    Alternative("y_dy_minus_y_s", ((STORE, "tl.store(dx_ptr + row * N + cols, y * dy - y * s, mask=mask)", 1),),
                notes="the product expanded: y·dy − y·s"),
]
