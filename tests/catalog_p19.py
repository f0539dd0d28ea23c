"""Known-buggy kernels for puzzle 19 (split-M weight gradient), each the reference solution with one
bug patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels
written differently (which must pass)."""
from catalog import Alternative, Bug

ATOMIC = "    tl.atomic_add(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])\n"
XT_LOAD = "xt = tl.load(x_ptr + rows[None, :] * K + ks[:, None], mask=k_ok[:, None] & row_ok[None, :], other=0.0)"

BUGS = [
    Bug("plain_store", "dw",
        ((ATOMIC, "    tl.store(dw_ptr + ks[:, None] * N + ns[None, :], share, mask=k_ok[:, None] & n_ok[None, :])\n", 1),),
        reasons=(("Data race on `dw_ptr`",), ("tl.atomic_add",)),
        reasons_unsanitized=(("overwr",), ("tl.atomic_add",)),
        misleading=("belongs to exactly one program",),
        notes="every row block stores its share over the others': the tile keeps one block's share"),
    Bug("load_add_store", "dw",
        ((ATOMIC, "    tile = dw_ptr + ks[:, None] * N + ns[None, :]\n"
                  "    tile_ok = k_ok[:, None] & n_ok[None, :]\n"
                  "    tl.store(tile, tl.load(tile, mask=tile_ok) + share, mask=tile_ok)\n", 1),),
        reasons=(("Data race on `dw_ptr`",), ("tl.atomic_add",)),
        misleading=("belongs to exactly one program",),
        cpu_blind_without_sanitizer=True,
        notes="right in the plain interpreter (one program at a time), lost updates on a GPU"),
    Bug("x_not_transposed", "dw",
        ((XT_LOAD, "xt = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], "
                   "other=0.0)", 1),),
        reasons=(("X's tile used as stored",),),
        misleading=("were lost", "overwr", "Data race"),
        notes="X [BLOCK_M, BLOCK_K] instead of its transpose: a wrong formula (compiles because BLOCK_M == "
              "BLOCK_K in most cases); must not be told about lost updates on the equal-shares case"),
    Bug("n_tail_unmasked", "dw",
        (("dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None] & n_ok[None, :], other=0.0)",
          "dy = tl.load(dy_ptr + rows[:, None] * N + ns[None, :], mask=row_ok[:, None], other=0.0)", 1),
         (ATOMIC, ATOMIC.replace("mask=k_ok[:, None] & n_ok[None, :]", "mask=k_ok[:, None]"), 1)),
        reasons=(("Out-of-bounds",), ("mask",)),
        misleading=("were lost", "overwrote each other", "Data race"),
        notes="the last N tile's lanes past N read the next row of dy and add it into the next row of dW: "
              "past the end of dy in the last row (wrong values on a GPU too, unlike a missing row mask, "
              "whose padded rows would multiply zeros)"),
    Bug("k_block_from_program_0", "dw",
        (("ks = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)", "ks = tl.arange(0, BLOCK_K)", 1),),
        reasons=(("received nothing", "no offset depends on tl.program_id(1)"),),
        misleading=("were lost", "Data race", "rather than store it"),
        notes="every K block's programs compute and add K block 0: the first rows of dW get the sum several "
              "times, the others nothing"),
    Bug("tf32_products", "dw",
        (("share = tl.dot(xt, dy)  #", "share = tl.dot(xt, dy, input_precision=\"tf32\")  #", 1),),
        reasons=(), interpreter_blind=True,
        notes="TF32 keeps 10 bits of each fp32 input: far outside the fp32 tolerance on a GPU; the "
              "interpreter multiplies in full precision"),
    Bug("n_tiles_placed_by_block_k", "dw",
        (("    ns = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)",
          "    ns = tl.program_id(2) * BLOCK_K + tl.arange(0, BLOCK_N)", 1),),
        reasons=(("dw",), ("three block sizes",)),
        misleading=("race", "out-of-bounds"),
        notes="right while BLOCK_K = BLOCK_N: with BLOCK_N = 64 and BLOCK_K = 32 the second tile along N "
              "starts at 32 and adds its columns twice"),
]

ALTERNATIVES = [
    Alternative("transposed_tile_via_tl_trans",
                ((XT_LOAD, "xt = tl.trans(tl.load(x_ptr + rows[:, None] * K + ks[None, :], "
                           "mask=row_ok[:, None] & k_ok[None, :], other=0.0))", 1),),
                notes="load X's tile as stored, [BLOCK_M, BLOCK_K], and transpose it in registers"),
    Alternative("relaxed_atomics",
                ((ATOMIC, ATOMIC.replace("n_ok[None, :])", "n_ok[None, :], sem=\"relaxed\")"), 1),),
                notes="no ordering is needed between the adds of a sum: the cheapest atomic will do"),
]
