"""Known-buggy kernels for puzzle 13 (matrix–vector product), each the reference solution with one
bug patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels
written differently (which must pass)."""
from catalog import Alternative, Bug

BUGS = [
    Bug("no_mask_on_the_last_k_step", "forward",
        (("mask=row_ok[:, None] & col_ok[None, :],", "mask=row_ok[:, None],", 1),
         ("x = tl.load(x_ptr + cols, mask=col_ok, other=0.0)", "x = tl.load(x_ptr + cols)", 1)),
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr",), ("mask",)),
        misleading=("atomic", "hard-coded"),
        notes="the last K step reads past the end of x (and of A's last row)"),
    Bug("accumulator_reset_in_the_k_loop", "forward",
        # the accumulator also made before the loop: one made only inside it does not compile
        (("        acc += tl.sum(", "        acc = tl.zeros([BLOCK_M], dtype=tl.float32)\n        acc += tl.sum(", 1),),
        reasons=(("accumulator is reset inside the loop",), ("more than one BLOCK_K step",)),
        misleading=("atomic", "mask", "hard-coded")),
    Bug("first_k_step_only", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, BLOCK_K, BLOCK_K):", 1),),
        reasons=(("more than one BLOCK_K step",),),
        misleading=("atomic", "accumulator is reset inside", "mask")),
    Bug("program_id_forgotten", "forward",
        (("rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)", "rows = tl.arange(0, BLOCK_M)", 1),),
        reasons=(("data race",), ("tl.program_id",)),
        reasons_unsanitized=(("never written",), ("tl.program_id(0)",)),
        misleading=("atomic",),
        notes="every program stores rows 0..BLOCK_M-1: a race between programs; unsanitized the other rows "
              "stay NaN"),
    Bug("row_stride_is_M", "forward",
        (("a_ptr + rows[:, None] * K + cols[None, :]", "a_ptr + rows[:, None] * M + cols[None, :]", 1),),
        reasons=(("rows M elements apart",),),
        misleading=("atomic", "accumulator"),
        notes="A[m, k] is m * K + k elements in: with stride M the rows overlap or run past the end"),
    Bug("store_without_row_mask", "forward",
        (("tl.store(y_ptr + rows, acc, mask=row_ok)", "tl.store(y_ptr + rows, acc)", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        gpu_reasons=(("past the end of `y`",), ("mask",)),
        misleading=("atomic",),
        notes="the padded rows' sums land past the end of y: y's own values are right; on a GPU the band "
              "of known bits after y shows the stray store (seen on an H100)"),
    Bug("sums_in_the_input_dtype", "forward",
        (("acc = tl.zeros([BLOCK_M], dtype=tl.float32)", "acc = tl.zeros([BLOCK_M], dtype=y_ptr.dtype.element_ty)", 1),
         ("acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
          "acc += tl.sum(tile * x[None, :], axis=1)", 1)),
        reasons=(), interpreter_blind=True,
        gpu_reasons=(("elements off",),),
        misleading=("atomic", "mask"),
        notes="right for fp32 inputs (every CPU case); with bf16 inputs the running sum is bf16 and the "
              "188-step case with positive products drifts far out"),
]

ALTERNATIVES = [
    Alternative("one_reduction_after_the_loop", (
        ("acc = tl.zeros([BLOCK_M], dtype=tl.float32)", "acc = tl.zeros([BLOCK_M, BLOCK_K], dtype=tl.float32)", 1),
        ("acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)",
         "acc += tile.to(tl.float32) * x.to(tl.float32)[None, :]", 1),
        ("tl.store(y_ptr + rows, acc, mask=row_ok)", "tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)", 1)),
        notes="a [BLOCK_M, BLOCK_K] accumulator, reduced once at the end: fewer reductions, more registers"),
    Alternative("pointers_advanced_each_step", (
        ("    for k0 in range(0, K, BLOCK_K):\n        cols = k0 + tl.arange(0, BLOCK_K)\n",
         "    a_ptrs = a_ptr + rows[:, None] * K + tl.arange(0, BLOCK_K)[None, :]\n"
         "    for k0 in range(0, K, BLOCK_K):\n        cols = k0 + tl.arange(0, BLOCK_K)\n", 1),
        ("tile = tl.load(a_ptr + rows[:, None] * K + cols[None, :],", "tile = tl.load(a_ptrs,", 1),
        ("        acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)\n",
         "        acc += tl.sum(tile.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)\n"
         "        a_ptrs += BLOCK_K  # the next step's tile: BLOCK_K columns to the right\n", 1)),
        notes="the tile's pointers built once and moved BLOCK_K columns per step"),
]
