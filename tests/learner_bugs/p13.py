"""Learner bugs for puzzle 13 (matrix-vector product), and correct kernels written differently."""
from entries import Bug, Kernel, Right

TILE = "tile = tl.load(a_ptr + rows[:, None] * K + cols[None, :], mask=row_ok[:, None] & col_ok[None, :],"
XLOAD = "x = tl.load(x_ptr + cols, mask=col_ok, other=0.0)"

BUGS = [
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
