"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 18 (Embedding forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_LOAD = "    values = tl.load(weight_ptr + row * D + cols, mask=mask)\n"
_FWD_STORE = "    tl.store(y_ptr + t * D + cols, values, mask=mask)\n"
_FWD_COLS = ("    t = tl.program_id(0)\n    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)\n"
             "    mask = cols < D  # the last column block")
_BWD_DY = "    dy = tl.load(dy_ptr + t * D + cols, mask=mask).to(tl.float32)\n"
_BWD_ADD = "    tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)\n"
_BWD_HEAD = ("    t = tl.program_id(0)\n    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)\n"
             "    mask = cols < D\n    row = tl.load(ids_ptr + t).to(tl.int64)\n")

_FWD_HALVES = '''
@triton.jit
def embedding_fwd_kernel(ids_ptr, weight_ptr, y_ptr, D, BLOCK_D: tl.constexpr):
    """The program's block of columns copied in two halves; the row base computed once, in int64."""
    t = tl.program_id(0)
    row = tl.load(ids_ptr + t).to(tl.int64)
    src = weight_ptr + row * D
    dst = y_ptr + t.to(tl.int64) * D
    HALF: tl.constexpr = BLOCK_D // 2
    for c0 in tl.static_range(0, BLOCK_D, HALF):
        cols = tl.program_id(1) * BLOCK_D + c0 + tl.arange(0, HALF)
        ok = cols < D
        tl.store(dst + cols, tl.load(src + cols, mask=ok), mask=ok)
'''

_BWD_VECTOR_ID = '''
@triton.jit
def embedding_bwd_kernel(ids_ptr, dy_ptr, dweight_ptr, D, BLOCK_D: tl.constexpr):
    """The id read as a vector (every lane loads the same ids[t]); dy cast to fp32 before the add."""
    t = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    ok = cols < D
    rows = tl.load(ids_ptr + t + cols * 0).to(tl.int64)
    g = tl.load(dy_ptr + t * D + cols, mask=ok, other=0.0).to(tl.float32)
    tl.atomic_add(dweight_ptr + rows * D + cols, g, mask=ok)
'''

MEASURED = [
    # forward
    Bug("fwd_reads_row_t", "forward",
        ((_FWD_LOAD, "    values = tl.load(weight_ptr + t * D + cols, mask=mask)\n", 1),),
        "address", "the table read at row t (the token's position) instead of row ids[t]: the id is loaded but never used"),
    Bug("fwd_stores_at_id_row", "forward",
        ((_FWD_STORE, "    tl.store(y_ptr + row * D + cols, values, mask=mask)\n", 1),),
        "address", "y written at row ids[t] instead of row t: the output is scattered where the gather should be"),
    Bug("fwd_store_unmasked", "forward",
        ((_FWD_STORE, "    tl.store(y_ptr + t * D + cols, values)\n", 1),),
        "mask", "the store of y is not masked: the last column block writes past D into the next token's row (and past the end of y)"),
    Bug("fwd_cols_not_scaled", "forward",
        ((_FWD_COLS, "    t = tl.program_id(0)\n    cols = tl.program_id(1) + tl.arange(0, BLOCK_D)\n"
                     "    mask = cols < D  # the last column block", 1),),
        "address", "the column block's offset is program_id(1), not program_id(1) * BLOCK_D: the second block starts at column 1"),
    Bug("fwd_d_hardcoded", "forward",
        (("    mask = cols < D  # the last column block", "    mask = cols < 16  # the last column block", 1),),
        "hardcoded", "the column bound written as the documented D = 16"),
    # backward
    Bug("bwd_plain_store", "backward",
        ((_BWD_ADD, "    tl.store(dweight_ptr + row * D + cols, dy, mask=mask)\n", 1),),
        "atomic", "a plain store into dweight: tokens sharing an id overwrite each other, only the last one's dy is kept"),
    Bug("bwd_dy_at_id_row", "backward",
        ((_BWD_DY, "    dy = tl.load(dy_ptr + row * D + cols, mask=mask).to(tl.float32)\n", 1),),
        "address", "dy read at row ids[t] (the forward's gather copied over) instead of the token's own row t"),
    Bug("bwd_atomic_unmasked", "backward",
        ((_BWD_ADD, "    tl.atomic_add(dweight_ptr + row * D + cols, dy)\n", 1),),
        "mask", "the atomic add is not masked: the last column block adds into the next id's row (or past the end of dweight)"),
    Bug("bwd_grid_axes_swapped", "backward",
        ((_BWD_HEAD, "    t = tl.program_id(1)\n    cols = tl.program_id(0) * BLOCK_D + tl.arange(0, BLOCK_D)\n"
                     "    mask = cols < D\n    row = tl.load(ids_ptr + t).to(tl.int64)\n", 1),),
        "address", "the token taken from program_id(1) and the column block from program_id(0): the grid is (T, column blocks)"),
]

RIGHT = [
    Right("fwd_two_halves", (Kernel("embedding_fwd_kernel", _FWD_HALVES),),
          "each program copies its column block in two static halves from precomputed int64 row bases: the same copy"),
    Right("bwd_id_as_vector", (Kernel("embedding_bwd_kernel", _BWD_VECTOR_ID),),
          "the id loaded into every lane (ids_ptr + t + 0 * cols), dy masked with other=0.0: the same scatter-add"),
]
