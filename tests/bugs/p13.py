"""Every known kernel of puzzle 13 (matrix–vector product): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
from bugs.reasons import ZERO_PARTNER

PINNED = [
    Bug("no_mask_on_the_last_k_step", "forward",
        (("mask=row_ok[:, None] & col_ok[None, :],", "mask=row_ok[:, None],", 1),
         ("x = tl.load(x_ptr + cols, mask=col_ok, other=0.0)", "x = tl.load(x_ptr + cols)", 1)),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",)),
        not_causes=("atomic", "hardcoded"),
        notes="the last K step reads past the end of x (and of A's last row)", code='fault.oob'),
    Bug("accumulator_reset_in_the_k_loop", "forward",
        # the accumulator also made before the loop: one made only inside it does not compile
        (("        acc += tl.sum(", "        acc = tl.zeros([BLOCK_M], dtype=tl.float32)\n        acc += tl.sum(", 1),),
        cause="accumulate",
        reasons=(("accumulator is reset inside the loop",), ("more than one BLOCK_K step",)),
        not_causes=("atomic", "mask", "hardcoded"), code='variant.last_k_step_only'),
    Bug("first_k_step_only", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, BLOCK_K, BLOCK_K):", 1),),
        cause="loop", named="candidates",
        reasons=(("more than one BLOCK_K step",),),
        not_causes=("atomic", "accumulate", "mask")),
    Bug("program_id_forgotten", "forward",
        (("rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)", "rows = tl.arange(0, BLOCK_M)", 1),),
        cause="address",
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",), ("tl.program_id(0)",)),
        not_causes=("atomic",),
        notes="every program stores rows 0..BLOCK_M-1: a race between programs; unsanitized the other rows "
              "stay NaN", code='fault.race'),
    Bug("row_stride_is_M", "forward",
        (("a_ptr + rows[:, None] * K + cols[None, :]", "a_ptr + rows[:, None] * M + cols[None, :]", 1),),
        cause="address",
        reasons=(("rows M elements apart",),),
        not_causes=("atomic", "accumulate"),
        notes="A[m, k] is m * K + k elements in: with stride M the rows overlap or run past the end", code='addr.step'),
    Bug("store_without_row_mask", "forward",
        (("tl.store(y_ptr + rows, acc, mask=row_ok)", "tl.store(y_ptr + rows, acc)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        gpu_reasons=(("past the end of `y`",), ("mask",)),
        not_causes=("atomic",),
        notes="the padded rows' sums land past the end of y: y's own values are right; on a GPU the band "
              "of known bits after y shows the stray store (seen on an H100)", code='fault.oob'),
    Bug("sums_in_the_input_dtype", "forward",
        (("acc = tl.zeros([BLOCK_M], dtype=tl.float32)", "acc = tl.zeros([BLOCK_M], dtype=y_ptr.dtype.element_ty)", 1),
         ("acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
          "acc += tl.sum(tile * x[None, :], axis=1)", 1)),
        cause="precision", named="none",
        reasons=(), interpreter_blind=True,
        gpu_reasons=(("elements off",),),
        not_causes=("atomic", "mask"),
        notes="right for fp32 inputs (every CPU case); with bf16 inputs the running sum is bf16 and the "
              "188-step case with positive products drifts far out"),
]

PASSING = [
    Right("one_reduction_after_the_loop", (
        ("acc = tl.zeros([BLOCK_M], dtype=tl.float32)", "acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)", 1),
        ("acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
         "acc += tile.to(tl.float32) * x.to(tl.float32)[None, :]", 1),
        ("tl.store(y_ptr + rows, acc, mask=row_ok)", "tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)", 1)),
        notes="a [BLOCK_M, BLOCK_K] accumulator, reduced once at the end: fewer reductions, more registers"),
    Right("pointers_advanced_each_step", (
        ("    for k0 in range(0, K, BLOCK_K):\n        cols = k0 + tl.arange(0, BLOCK_K)\n",
         "    a_ptrs = a_ptr + rows[:, None] * K + tl.arange(0, BLOCK_K)[None, :]\n"
         "    for k0 in range(0, K, BLOCK_K):\n        cols = k0 + tl.arange(0, BLOCK_K)\n", 1),
        ("tile = tl.load(a_ptr + rows[:, None] * K + cols[None, :],", "tile = tl.load(a_ptrs,", 1),
        ("        acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)\n",
         "        acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)\n"
         "        a_ptrs += BLOCK_K  # the next step's tile: BLOCK_K columns to the right\n", 1)),
        notes="the tile's pointers built once and moved BLOCK_K columns per step"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
TILE = "tile = tl.load(a_ptr + rows[:, None] * K + cols[None, :], mask=row_ok[:, None] & col_ok[None, :],"
XLOAD = "x = tl.load(x_ptr + cols, mask=col_ok, other=0.0)"

MEASURED = [
    Bug("row_stride_m", "forward",
        ((TILE, TILE.replace("rows[:, None] * K", "rows[:, None] * M"), 1),),
        "address", "A's row m read at m * M instead of m * K"),
    Bug("k_masked_with_m", "forward",
        (("col_ok = cols < K", "col_ok = cols < M", 1),),
        "mask", "the K mask compares with M"),
    Bug("stored_at_the_program_id", "forward",
        (("tl.store(y_ptr + rows, acc, mask=row_ok)",
          "tl.store(y_ptr + tl.program_id(0) + tl.arange(0, BLOCK_M), acc, mask=row_ok)", 1),),
        "address", "y stored from program_id(0) instead of program_id(0) * BLOCK_M: the programs' rows overlap"),
    Bug("k_loop_steps_by_block_m", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, K, BLOCK_M):", 1),),
        "loop", "the K loop steps by BLOCK_M while each step reads BLOCK_K columns"),
    Bug("padded_lanes_load_one", "forward",
        ((TILE + "\n                       other=0.0)", TILE + "\n                       other=1.0)", 1),
         (XLOAD, XLOAD.replace("other=0.0", "other=1.0"), 1)),
        "fill", "both loads' padded lanes load 1.0: each adds 1 * 1 to the sums"),
    Bug("k_hard_coded", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, 20, BLOCK_K):", 1),),
        "hardcoded", "the K loop bound written as 20, the documented K"),
    Bug("x_indexed_by_rows", "forward",
        ((XLOAD, "x = tl.load(x_ptr + k0 + rows, mask=row_ok, other=0.0)", 1),),
        "address", "x loaded at the row offsets instead of the K columns of this step"),
]

RIGHT = [
    Right("tile_loaded_k_by_m", (
        (TILE + "\n                       other=0.0)",
         "tile = tl.load(a_ptr + rows[None, :] * K + cols[:, None], mask=col_ok[:, None] & row_ok[None, :],\n"
         "                       other=0.0)  # [BLOCK_K, BLOCK_M]", 1),
        ("acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
         "acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[:, None], axis=0)", 1)),
          "A's tile read as [BLOCK_K, BLOCK_M] (columns down) and reduced over axis 0"),
    Right("x_padding_harmless", ((XLOAD, "x = tl.load(x_ptr + cols, mask=col_ok, other=7.0)", 1),),
          "x's padded lanes load 7: A's padded lanes are 0, so their products still add 0"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:matvec_kernel:a89d318d:0": ZERO_PARTNER,
    "fill.other:matvec_kernel:b48c1f46:0": ZERO_PARTNER,
}
