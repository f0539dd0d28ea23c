"""Blind corpus (round 2 for p08-p22), puzzle 18 (Embedding forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("fwd_reads_token_row", "forward",
        (("values = tl.load(weight_ptr + row * D + cols, mask=mask)", "values = tl.load(weight_ptr + t * D + cols, mask=mask)", 1),),
        "address", "reads table row t (the token's position) instead of row ids[t]"),
    Bug("fwd_load_unmasked", "forward",
        (("values = tl.load(weight_ptr + row * D + cols, mask=mask)", "values = tl.load(weight_ptr + row * D + cols)", 1),),
        "mask", "loads the table row without the column mask: the last column block reads into the next row or past the table"),
    Bug("fwd_store_at_id_row", "forward",
        (("tl.store(y_ptr + t * D + cols, values, mask=mask)", "tl.store(y_ptr + row * D + cols, values, mask=mask)", 1),),
        "address", "stores into row ids[t] of y instead of row t"),
    Bug("fwd_cols_no_block_offset", "forward",
        (('''    """y[t, cols] = weight[ids[t], cols] for this program's token t and block of columns.

    Grid: (T, cdiv(D, BLOCK_D)).
    """
    t = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)''',
          '''    """y[t, cols] = weight[ids[t], cols] for this program's token t and block of columns.

    Grid: (T, cdiv(D, BLOCK_D)).
    """
    t = tl.program_id(0)
    cols = tl.program_id(1) + tl.arange(0, BLOCK_D)''', 1),),
        "address", "adds the column-block index without multiplying it by BLOCK_D: blocks overlap, columns past the first block are never written"),
    Bug("fwd_D_hardcoded", "forward",
        (("mask = cols < D  # the last column block", "mask = cols < 16  # the last column block", 1),),
        "hardcoded", "bounds the columns by the documented D = 16 instead of the argument D"),
    Bug("bwd_plain_store", "backward",
        (("tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)", "tl.store(dweight_ptr + row * D + cols, dy, mask=mask)", 1),),
        "atomic", "stores each token's dy row into dweight: tokens sharing an id overwrite each other instead of summing"),
    Bug("bwd_load_add_store", "backward",
        (("tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)",
          "old = tl.load(dweight_ptr + row * D + cols, mask=mask, other=0.0)\n    tl.store(dweight_ptr + row * D + cols, old + dy, mask=mask)", 1),),
        "atomic", "adds with a plain load, add and store: programs of tokens with the same id race"),
    Bug("bwd_scatter_to_token_row", "backward",
        (("tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)", "tl.atomic_add(dweight_ptr + t * D + cols, dy, mask=mask)", 1),),
        "address", "adds dy[t] into row t of dweight instead of row ids[t]"),
    Bug("bwd_atomic_unmasked", "backward",
        (("tl.atomic_add(dweight_ptr + row * D + cols, dy, mask=mask)", "tl.atomic_add(dweight_ptr + row * D + cols, dy)", 1),),
        "mask", "masks the dy load but not the atomic add: the last column block adds into the next row or past dweight"),
    Bug("bwd_reads_dy_at_id_row", "backward",
        (("dy = tl.load(dy_ptr + t * D + cols, mask=mask)", "dy = tl.load(dy_ptr + row * D + cols, mask=mask)", 1),),
        "address", "reads dy's row ids[t] instead of the token's own row t"),
]

RIGHT = [
    Right("fwd_ids_broadcast_per_lane",
          (Kernel("embedding_fwd_kernel", '''@triton.jit
def embedding_fwd_kernel(ids_ptr, weight_ptr, y_ptr, D, BLOCK_D: tl.constexpr):
    t = tl.program_id(0)
    j = tl.program_id(1)
    lanes = tl.arange(0, BLOCK_D)
    cols = j * BLOCK_D + lanes
    ok = cols < D
    # every lane reads the same id: a vector gather of one id, widened to int64
    ids = tl.load(ids_ptr + t + lanes * 0).to(tl.int64)
    src = weight_ptr + ids * D + cols
    dst = y_ptr + t.to(tl.int64) * D + cols
    tl.store(dst, tl.load(src, mask=ok, other=0.0), mask=ok)
'''),),
          "loads the id once per lane (all lanes the same address) instead of as a scalar: same gather"),
    Right("bwd_two_halves",
          (Kernel("embedding_bwd_kernel", '''@triton.jit
def embedding_bwd_kernel(ids_ptr, dy_ptr, dweight_ptr, D, BLOCK_D: tl.constexpr):
    t = tl.program_id(0)
    row = tl.load(ids_ptr + t).to(tl.int64)
    HALF: tl.constexpr = BLOCK_D // 2
    for h in tl.static_range(2):
        cols = tl.program_id(1) * BLOCK_D + h * HALF + tl.arange(0, HALF)
        ok = cols < D
        g = tl.load(dy_ptr + t * D + cols, mask=ok, other=0.0)
        tl.atomic_add(dweight_ptr + row * D + cols, g.to(tl.float32), mask=ok)
'''),),
          "scatters the column block in two halves with a static loop; still one atomic add per element"),
]
