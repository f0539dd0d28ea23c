"""Known-buggy kernels for puzzle 5 (strides), each the reference solution with one bug patched in
(tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

X_LOAD = "x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, mask=mask)"

BUGS = [
    Bug("assumed_contiguous", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask)", 1),),
        reasons=(("as if it were contiguous",), ("stride_xm",), ("x is not contiguous",)),
        misleading=("atomic", "data race", "transposed)", "never written"),
        notes="the classic: x[m, n] at m * N + n. Right for the contiguous case only; the values of a "
              "transposed x come out shuffled"),
    Bug("strides_swapped", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + rows[:, None] * stride_xn + cols[None, :] * stride_xm, mask=mask)", 1),),
        reasons=(("strides swapped", "past the end"),),
        misleading=("atomic", "data race", "column stride of 1"),
        notes="stride_xm goes with the rows; swapped, a transposed x is read as if contiguous-with-M-columns "
              "(past its end when M > N)"),
    Bug("column_stride_one", "forward",
        ((X_LOAD, "x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :], mask=mask)", 1),),
        reasons=(("column stride of 1",), ("x is not contiguous",)),
        misleading=("atomic", "data race", "as if it were contiguous"),
        notes="only the row stride used: the usual contiguous habit of a unit column step"),
    Bug("z_written_with_the_strides_of_x", "forward",
        (("tl.store(z_ptr + rows[:, None] * N + cols[None, :], x + b[None, :], mask=mask)",
          "tl.store(z_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn, x + b[None, :], mask=mask)", 1),),
        reasons=(("transposed",),),
        misleading=("atomic", "data race", "as if it were contiguous"),
        notes="z is a new contiguous tensor: x's strides store it transposed"),
    Bug("bias_not_masked", "forward",
        (("b = tl.load(b_ptr + cols, mask=col_ok)", "b = tl.load(b_ptr + cols)", 1),),
        reasons=(("past the end",), ("b_ptr",)),
        gpu_blind=True,
        misleading=("atomic", "data race", "stride_x"),
        notes="the stray values of b land only in lanes whose store is masked: right on a GPU (seen on an H100)"),
]

ALTERNATIVES = [
    Alternative("pointer_tile_built_in_two_steps", (
        ((X_LOAD,
          "x_rows = x_ptr + rows * stride_xm  # the start of each row of the tile\n"
          "    x = tl.load(x_rows[:, None] + cols[None, :] * stride_xn, mask=mask)", 1),)),
        notes="the row pointers first, then the column steps"),
    Alternative("add_in_fp32_other_zero", (
        (X_LOAD, X_LOAD.replace("mask=mask)", "mask=mask, other=0.0).to(tl.float32)"), 1),
        ("b = tl.load(b_ptr + cols, mask=col_ok)", "b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)", 1)),
        notes="padding lanes load 0; the sum in fp32 (a no-op for fp32 inputs)"),
]
