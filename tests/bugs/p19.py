"""Every known kernel of puzzle 19 (split-M weight gradient): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
from bugs.reasons import ZERO_PARTNER

ATOMIC = "    tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])\n"
XT_LOAD = "xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)"

PINNED = [
    Bug("plain_store", "dw",
        ((ATOMIC, "    tl.store(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])\n", 1),),
        cause="atomic",
        reasons=(("Data race on `dw_ptr`",), ("tl.atomic_add",)),
        reasons_unsanitized=(("overwr",), ("tl.atomic_add",)),
        not_words=("belongs to exactly one program",),
        notes="every row block stores its share over the others': the tile keeps one block's share", code='fault.race'),
    Bug("load_add_store", "dw",
        ((ATOMIC, "    tile = dw_ptr + ks[:, None] * N + ns[None, :]\n"
                  "    tile_ok = k_ok[:, None] & n_ok[None, :]\n"
                  "    tl.store(tile, tl.load(tile, mask=tile_ok) + share, mask=tile_ok)\n", 1),),
        cause="atomic",
        reasons=(("Data race on `dw_ptr`",), ("tl.atomic_add",)),
        not_words=("belongs to exactly one program",),
        cpu_blind_without_sanitizer=True,
        notes="right in the plain interpreter (one program at a time), lost updates on a GPU", code='fault.race'),
    Bug("x_not_transposed", "dw",
        ((XT_LOAD, "xt = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], "
                   "other=0.0)", 1),),
        cause="address",
        reasons=(("X's tile used as stored",),),
        not_causes=("atomic",),
        notes="X [BLOCK_M, BLOCK_K] instead of its transpose: a wrong formula (compiles because BLOCK_M == "
              "BLOCK_K in most cases); must not be told about lost updates on the equal-shares case", code='variant.x_not_transposed'),
    Bug("n_tail_unmasked", "dw",
        (("dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)",
          "dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None], other=0.0)", 1),
         (ATOMIC, ATOMIC.replace("mask=k_ok[:, None] & n_ok[None, :]", "mask=k_ok[:, None]"), 1)),
        cause="mask",
        reasons=(("Out-of-bounds",),),
        not_causes=("atomic",),
        notes="the last N tile's lanes past N read the next row of dy and add it into the next row of dW: "
              "past the end of dy in the last row (wrong values on a GPU too, unlike a missing row mask, "
              "whose padded rows would multiply zeros)", code='fault.oob'),
    Bug("k_block_from_program_0", "dw",
        (("ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)", "ks = tl.arange(0, BLOCK_K)", 1),),
        cause="address",
        reasons=(("received nothing", "no offset depends on tl.program_id(1)"),),
        not_causes=("atomic",), not_words=("rather than store it",),
        notes="every K block's programs compute and add K block 0: the first rows of dW get the sum several "
              "times, the others nothing", code='addr.program_id_unused'),
    Bug("tf32_products", "dw",
        (("share = tl.dot(xt, dy)  #", "share = tl.dot(xt, dy, input_precision=\"tf32\")  #", 1),),
        cause="precision", named="none",
        reasons=(), interpreter_blind=True,
        notes="TF32 keeps 10 bits of each fp32 input: far outside the fp32 tolerance on a GPU; the "
              "interpreter multiplies in full precision"),
    Bug("n_tiles_placed_by_block_k", "dw",
        (("    ns = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)",
          "    ns = tl.program_id(2) * BLOCK_K + tl.arange(0, BLOCK_N)", 1),),
        cause="address", named="none",
        reasons=(("dw",), ("three block sizes",)),
        not_causes=("atomic",), not_words=("out-of-bounds",),
        notes="right while BLOCK_K = BLOCK_N: with BLOCK_N = 64 and BLOCK_K = 32 the second tile along N "
              "starts at 32 and adds its columns twice"),
]

PASSING = [
    Right("transposed_tile_via_tl_trans",
                ((XT_LOAD, "xt = tl.trans(tl.load(x_ptr + rows[:, None] * K + ks[None, :], "
                           "mask=row_ok[:, None] & k_ok[None, :], other=0.0))", 1),),
                notes="load X's tile as stored, [BLOCK_M, BLOCK_K], and transpose it in registers"),
    Right("relaxed_atomics",
                ((ATOMIC, ATOMIC.replace("n_ok[None, :])", "n_ok[None, :], sem=\"relaxed\")"), 1),),
                notes="no ordering is needed between the adds of a sum: the cheapest atomic will do"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
XT = "xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)"
DY = "dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)"
ADD = "tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])"

MEASURED = [
    Bug("dy_rows_k_long", "dw",
        ((DY, DY.replace("rows[:, None] * N", "rows[:, None] * K"), 1),),
        "address", "dy's row m read at m * K instead of m * N"),
    Bug("x_rows_n_long", "dw",
        ((XT, XT.replace("rows[None, :] * K", "rows[None, :] * N"), 1),),
        "address", "x's row m read at m * N instead of m * K"),
    Bug("x_rows_not_masked", "dw",
        ((XT, XT.replace("mask=k_ok[:, None] & row_ok[None, :]", "mask=k_ok[:, None]"), 1),),
        "mask", "xᵀ's tile masked along K only: the last row block reads rows past M"),
    Bug("rows_and_n_axes_swapped", "dw",
        (("rows = tl.program_id(0) * BLOCK_M", "rows = tl.program_id(2) * BLOCK_M", 1),
         ("ns = tl.program_id(2) * BLOCK_N", "ns = tl.program_id(0) * BLOCK_N", 1)),
        "address", "row blocks from program_id(2) and N blocks from program_id(0): the grid's axes are the other way"),
    Bug("share_averaged_over_the_blocks", "dw",
        ((ADD, ADD.replace("share, mask", "share / tl.num_programs(0), mask"), 1),),
        "formula", "each row block's share divided by the number of row blocks"),
    Bug("product_in_bf16", "dw",
        (("share = tl.dot(xt, dy)", "share = tl.dot(xt.to(tl.bfloat16), dy.to(tl.bfloat16))", 1),),
        "precision", "the operands cast to bf16 for the tensor cores: fp32 inputs lose 16 bits"),
    # tl.atomic_xchg on fp32: the interpreter swaps the bits as a GPU does (checker/interpreter/compat.py)
    Bug("atomic_exchange_not_add", "dw",
        ((ADD, ADD.replace("tl.atomic_add(", "tl.atomic_xchg("), 1),),
        "atomic", "the share put in with tl.atomic_xchg: each row block replaces the others' shares instead of adding"),
    # listed as a correct rewrite until "bf16: the documented configuration" ran in the interpreter (5.1 times
    # the tolerance there); Triton 3.6 on an H100 aborted compiling it for bf16 (an MLIR assertion), 2026-12-07
    Bug("share_by_broadcast_sum_in_bf16", "dw",
        (("share = tl.dot(xt, dy)", "share = tl.sum(xt[:, :, None] * dy[None, :, :], axis=1)", 1),),
        "precision", "the block's product as a broadcast multiply and a sum over the rows, left in the loads' "
        "dtype: bf16 products rounded to bf16 and summed in bf16"),
]

RIGHT = [
    Right("share_by_broadcast_sum",
          (("share = tl.dot(xt, dy)",
            "share = tl.sum(xt.to(tl.float32)[:, :, None] * dy.to(tl.float32)[None, :, :], axis=1)", 1),),
          "the block's product as a broadcast multiply and a sum over the rows in float32, no tl.dot"),
    Right("atomic_on_pointer_tile", ((ADD, "dst = dw_ptr + ks[:, None] * N + ns[None, :]\n"
                                      "    tl.atomic_add(dst, share.to(tl.float32), mask=(ks[:, None] < K) & (ns[None, :] < N), sem=\"relaxed\")", 1),),
          "the destination tile first, the mask written out, a relaxed atomic"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:splitm_dw_kernel:3cbaeb8f:0": ZERO_PARTNER,
    "fill.other:splitm_dw_kernel:9436542e:0": ZERO_PARTNER,
}
