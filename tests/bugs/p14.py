"""Every known kernel of puzzle 14 (tiled matmul with tl.dot): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right
from bugs.reasons import ZERO_PARTNER

PINNED = [
    Bug("no_mask_on_the_last_k_step", "forward",
        (("mask=row_ok[:, None] & k_ok[None, :],", "mask=row_ok[:, None],", 1),
         ("mask=k_ok[:, None] & col_ok[None, :],", "mask=col_ok[None, :],", 1)),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"),),
        not_causes=("atomic", "hardcoded"),
        notes="the last K step reads rows of B past its end (and A's last row past the end of A)", code='fault.oob'),
    Bug("accumulator_reset_in_the_k_loop", "forward",
        # the accumulator also made before the loop: one made only inside it does not compile
        (("        acc += tl.dot(a, b)", "        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)\n"
                                       "        acc += tl.dot(a, b)", 1),),
        cause="accumulate",
        reasons=(("accumulator is reset inside the loop",), ("more than one BLOCK_K step",)),
        not_causes=("atomic", "mask", "hardcoded", "precision"), code='variant.last_k_step_only'),
    Bug("program_ids_swapped", "forward",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(1) * BLOCK_M", 1),
         ("cols = tl.program_id(1) * BLOCK_N", "cols = tl.program_id(0) * BLOCK_N", 1)),
        cause="address", named="candidates",
        reasons=(("never written",), ("grid is not square",)),
        not_causes=("atomic", "precision"), not_words=("not powers of two",),
        notes="right whenever the grid is square: tiles of C outside the transposed grid are never written", code='values.unwritten'),
    Bug("b_rows_taken_as_K_long", "forward",
        (("b_ptr + ks[:, None] * N + cols[None, :]", "b_ptr + ks[:, None] * K + cols[None, :]", 1),),
        cause="address",
        reasons=(("rows K elements apart",),),
        not_causes=("atomic", "precision", "accumulate"), not_words=("not powers of two",), code='addr.step'),
    Bug("store_without_mask", "forward",
        (("tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])",
          "tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)", 1),),
        cause="mask",
        reasons=(("data race", "out of bounds", "out-of-bounds"), ("c_ptr",)),
        not_causes=("atomic",),
        notes="the tails of the last tiles land past C's rows: past the end, or on the next row's start", code='fault.oob'),
    Bug("tf32_products", "forward",
        (("        acc += tl.dot(a, b)\n", "        acc += tl.dot(a, b, input_precision=\"tf32\")\n", 1),),
        cause="precision", named="none",
        reasons=(), interpreter_blind=True,
        gpu_reasons=(("10-bit mantissas",),),
        not_causes=("atomic", "mask", "accumulate"),
        notes="the interpreter computes tl.dot in fp32 whatever input_precision says: GPU only"),
    Bug("column_tiles_placed_by_block_m", "forward",
        (("    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)",
          "    cols = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_N)", 1),),
        cause="address",
        reasons=(("C",), ("never written", "Data race on `c_ptr`")),
        not_causes=("atomic",),
        notes="right while BLOCK_M = BLOCK_N: the cases with differing tiles leave gaps or overlaps", code='fault.race'),
    Bug("k_loop_steps_by_block_m", "forward",
        (("    for k0 in range(0, K, BLOCK_K):", "    for k0 in range(0, K, BLOCK_M):", 1),),
        cause="loop", named="none",
        reasons=(("C",), ("K=80",)),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="steps of BLOCK_M over tiles of BLOCK_K: terms added twice (BLOCK_M < BLOCK_K) or skipped"),
]

PASSING = [
    Right("pointers_advanced_each_step", (
        ("    for k0 in range(0, K, BLOCK_K):\n        ks = k0 + tl.arange(0, BLOCK_K)\n",
         "    a_ptrs = a_ptr + rows[:, None] * K + tl.arange(0, BLOCK_K)[None, :]\n"
         "    b_ptrs = b_ptr + tl.arange(0, BLOCK_K)[:, None] * N + cols[None, :]\n"
         "    for k0 in range(0, K, BLOCK_K):\n        ks = k0 + tl.arange(0, BLOCK_K)\n", 1),
        ("a = tl.load(a_ptr + rows[:, None] * K + ks[None, :],", "a = tl.load(a_ptrs,", 1),
        ("b = tl.load(b_ptr + ks[:, None] * N + cols[None, :],", "b = tl.load(b_ptrs,", 1),
        ("        acc += tl.dot(a, b)\n",
         "        acc += tl.dot(a, b)\n        a_ptrs += BLOCK_K  # BLOCK_K columns of A to the right\n"
         "        b_ptrs += BLOCK_K * N  # BLOCK_K rows of B down\n", 1)),
        notes="Triton's tutorial style: the tiles' pointers built once and moved each step"),
    Right("dot_accumulates_explicit_precision", (
        ("        acc += tl.dot(a, b)\n", "        acc = tl.dot(a, b, acc, input_precision=\"ieee\")\n", 1),),
        notes="tl.dot adds into its third argument; fp32 products asked for explicitly"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
A = "a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],"
B = "b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=k_ok[:, None] & col_ok[None, :],"
STORE = "tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=row_ok[:, None] & col_ok[None, :])"

MEASURED = [
    Bug("b_rows_k_long", "forward",
        ((B, B.replace("ks[:, None] * N", "ks[:, None] * K"), 1),),
        "address", "B's row k read at k * K instead of k * N"),
    Bug("a_rows_n_long", "forward",
        ((A, A.replace("rows[:, None] * K", "rows[:, None] * N"), 1),),
        "address", "A's row m read at m * N instead of m * K"),
    Bug("k_masked_with_n", "forward",
        (("k_ok = ks < K", "k_ok = ks < N", 1),),
        "mask", "the K mask compares with N"),
    Bug("k_loop_steps_by_block_m", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, K, BLOCK_M):", 1),),
        "loop", "the K loop steps by BLOCK_M while each step reads BLOCK_K columns"),
    Bug("k_hard_coded", "forward",
        (("for k0 in range(0, K, BLOCK_K):", "for k0 in range(0, 36, BLOCK_K):", 1),),
        "hardcoded", "the K loop bound written as 36, the documented K"),
    Bug("columns_from_program_0", "forward",
        (("cols = tl.program_id(1) * BLOCK_N", "cols = tl.program_id(0) * BLOCK_N", 1),),
        "address", "the column tile taken from program_id(0), the row axis"),
    Bug("padded_lanes_load_one", "forward",
        (("other=0.0)  # [BLOCK_M, BLOCK_K]", "other=1.0)  # [BLOCK_M, BLOCK_K]", 1),
         ("other=0.0)  # [BLOCK_K, BLOCK_N]", "other=1.0)  # [BLOCK_K, BLOCK_N]", 1)),
        "fill", "both tiles' padded lanes load 1.0: the K steps past K add 1 * 1 per lane"),
]

RIGHT = [
    Right("b_tile_loaded_transposed", ((B + "\n                    other=0.0)",
        "bt = tl.load(b_ptr + ks[None, :] * N + cols[:, None], mask=k_ok[None, :] & col_ok[:, None],\n"
        "                     other=0.0)  # [BLOCK_N, BLOCK_K]\n        b = tl.trans(bt)", 1),),
          "B's tile read as [BLOCK_N, BLOCK_K] and transposed with tl.trans"),
    Right("counted_k_steps_dot_accumulates", (Kernel("tiled_matmul_kernel", '''
        @triton.jit
        def tiled_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
            rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
            rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
            rk = tl.arange(0, BLOCK_K)
            a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
            b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]
            acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
            for step in range(0, tl.cdiv(K, BLOCK_K)):
                k_left = K - step * BLOCK_K
                a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
                b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
                acc = tl.dot(a, b, acc)
                a_ptrs += BLOCK_K
                b_ptrs += BLOCK_K * N
            tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
        '''),), "pointer tiles advanced per step, the K mask from what is left, tl.dot accumulating in place"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:tiled_matmul_kernel:e7a822dc:0": ZERO_PARTNER,
    "fill.other:tiled_matmul_kernel:8931705d:0": ZERO_PARTNER,
}
