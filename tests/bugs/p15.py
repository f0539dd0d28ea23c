"""Every known kernel of puzzle 15 (Linear forward): the bugs tests/test_contract.py pins (PINNED) and
the correct kernels it passes (PASSING), the learner bugs and rewrites tests/bugs/measure.py
measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What each list means:
tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right
from bugs.reasons import MASKED_OUT, ZERO_PARTNER

WT_LOAD = "wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :],"
EPILOGUE = ("    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n"
            "    acc += bias.to(tl.float32)[None, :]\n")

PINNED = [
    Bug("w_read_as_k_by_n", "forward",
        ((WT_LOAD, "wt = tl.load(w_ptr + ks[:, None] * N + cols[None, :], mask=k_ok[:, None] & col_ok[None, :],",
          1),),
        cause="address",
        reasons=(("W read transposed",),),
        not_causes=("atomic", "mask"), not_words=("without the bias", "once per step"), code='addr.step'),
    Bug("bias_added_at_every_k_step", "forward",
        ((EPILOGUE, "", 1),
         ("        acc += tl.dot(x, wt)\n",
          "        acc += tl.dot(x, wt)\n" + EPILOGUE.replace("    ", "        "), 1)),
        cause="loop",
        reasons=(("once per step over K",),),
        not_causes=("atomic", "mask"), not_words=("transposed",), code='variant.bias_every_k_step'),
    Bug("bias_forgotten", "forward",
        ((EPILOGUE, "", 1),),
        cause="formula",
        reasons=(("without the bias",),),
        not_causes=("atomic", "mask"), not_words=("transposed",), code='variant.no_bias'),
    Bug("bias_load_without_mask", "forward",
        (("bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)", "bias = tl.load(b_ptr + cols)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("b_ptr",)),
        gpu_blind=True,
        not_causes=("atomic",), not_words=("transposed",), code='fault.oob'),
    Bug("w_tile_without_k_mask", "forward",
        ((WT_LOAD, "wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=col_ok[None, :],", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("w_ptr",)),
        # past W's end a GPU reads whatever lies there: x's masked 0 times a finite value adds nothing,
        # times a NaN or an Inf it is NaN (an H100 run failed it once in three)
        gpu_by_chance=True,
        not_causes=("atomic",), not_words=("transposed",),
        notes="the values come out right (x's masked lanes are 0) unless the bytes past W are NaN or Inf, "
              "and the last row of W is read past its end: the sanitizer must still say so", code='fault.oob'),
]

PASSING = [
    Right("w_tile_loaded_as_stored_then_tl_trans", (
        (WT_LOAD, "w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=col_ok[:, None] & k_ok[None, :],",
         1),
        ("        acc += tl.dot(x, wt)\n",
         "        acc += tl.dot(x, tl.trans(w))  # [BLOCK_N, BLOCK_K] -> its transpose\n", 1)),
        notes="W's tile read in its own layout, [BLOCK_N, BLOCK_K], and transposed in registers"),
    Right("bias_in_the_prologue", (
        (EPILOGUE, "", 1),
        ("    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)  # fp32 whatever the input dtype\n",
         "    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
         "    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32) + bias[None, :]  # start from the bias\n", 1)),
        notes="the accumulator starts at the bias instead of receiving it at the end"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
WT = "wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :],"
STORE = "tl.store(y_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])"
BIAS = "bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n    acc += bias.to(tl.float32)[None, :]"

MEASURED = [
    Bug("w_rows_n_long", "forward",
        ((WT, WT.replace("cols[None, :] * K", "cols[None, :] * N"), 1),),
        "address", "W's row n read at n * N instead of n * K"),
    Bug("bias_per_row", "forward",
        ((BIAS, "bias = tl.load(b_ptr + rows, mask=row_ok, other=0.0)\n    acc += bias.to(tl.float32)[:, None]", 1),),
        "address", "the bias indexed by the row (b[m]) instead of the output column (b[n])"),
    Bug("bias_subtracted", "forward",
        (("acc += bias.to(tl.float32)[None, :]", "acc -= bias.to(tl.float32)[None, :]", 1),),
        "formula", "the bias subtracted"),
    Bug("k_masked_with_n", "forward",
        (("k_ok = ks < K", "k_ok = ks < N", 1),),
        "mask", "the K mask compares with N"),
    Bug("k_hard_coded", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, 40, BLOCK_K):", 1),),
        "hardcoded", "the K loop bound written as 40, the documented K"),
    Bug("x_tile_without_the_k_offset", "forward",
        (("x = tl.load(x_ptr + rows[:, None] * K + ks[None, :]", "x = tl.load(x_ptr + rows[:, None] * K + tl.arange(0, BLOCK_K)[None, :]", 1),),
        "address", "x's tile always read at the first K step's columns: the loop moves W, not x"),
]

RIGHT = [
    Right("x_tile_loaded_transposed", (
        ("x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],\n"
         "                    other=0.0)  # [BLOCK_M, BLOCK_K]",
         "xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=row_ok[None, :] & k_ok[:, None],\n"
         "                     other=0.0)  # [BLOCK_K, BLOCK_M]\n        x = tl.trans(xt)", 1),),
          "x's tile read as [BLOCK_K, BLOCK_M] and transposed with tl.trans"),
    Right("y_transposed_tile", (Kernel("linear_fwd_kernel", '''
        @triton.jit
        def linear_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
            # the tile of y^T = W x^T: W's tile as stored, x's tile transposed
            acc = tl.zeros([BLOCK_N, BLOCK_M], dtype=tl.float32)
            for k0 in range(0, K, BLOCK_K):
                ks = k0 + tl.arange(0, BLOCK_K)
                w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=(cols[:, None] < N) & (ks[None, :] < K), other=0.0)
                xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=(rows[None, :] < M) & (ks[:, None] < K), other=0.0)
                acc += tl.dot(w, xt)
            acc += tl.load(b_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)[:, None]
            tl.store(y_ptr + rows[None, :] * N + cols[:, None], acc, mask=(rows[None, :] < M) & (cols[:, None] < N))
        '''),), "the tile of yᵀ = W xᵀ computed and stored transposed"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:linear_fwd_kernel:0d2c369f:0": ZERO_PARTNER,
    "fill.other:linear_fwd_kernel:de089bb4:0": ZERO_PARTNER,
    "fill.other:linear_fwd_kernel:40f86449:0": MASKED_OUT,
}
