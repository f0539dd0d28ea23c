"""Blind corpus (round 8 for p27-p32), puzzle 29 (RoPE): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

FWD_TABLES = """    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads"""
BWD_Q = """        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1 = tl.load(dq_out_ptr"""
BWD_K = """        first = (token * HK + h0 + heads) * D + i[None, :]
        g1 = tl.load(dk_out_ptr"""

MEASURED = [
    Bug("half_mask_block", "forward",
        (("cols = i < half  # D/2 need not be a power of two", "cols = i < BLOCK_HALF  # D/2 need not be a power of two", 1),),
        "mask", "the lane mask compares with BLOCK_HALF instead of D/2: with D = 96 lanes 48..63 are live"),
    Bug("position_is_token", "forward",
        (("pos = tl.load(pos_ptr + token)\n    # one row", "pos = token\n    # one row", 1),),
        "address", "the table row is the program's token index, not the position read from pos"),
    Bug("q_first_half_sign", "forward",
        (("tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)", "tl.store(q_out_ptr + first, x1 * cos + x2 * sin, mask=mask)", 1),),
        "formula", "the first half adds x2·sin instead of subtracting it"),
    Bug("bwd_not_transposed", "backward",
        (("sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]",
          "sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]", 1),),
        "formula", "the backward rotates by +angle like the forward instead of the transpose (-sin)"),
    Bug("bwd_k_uses_HQ_offset", "backward",
        ((BWD_K, BWD_K.replace("token * HK", "token * HQ"), 1),),
        "address", "dk's token offset uses q's head count HQ instead of HK"),
    Bug("fwd_k_mask_HQ", "forward",
        (("""    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        x1""", """    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        x1""", 1),),
        "mask", "k's head mask is bounded by HQ: padded heads of the last block are written when HK < HQ"),
    Bug("x2_offset_block", "forward",
        (("x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0)", "x2 = tl.load(q_ptr + first + BLOCK_HALF, mask=mask, other=0.0)", 1),),
        "address", "the second half is read at BLOCK_HALF past the first instead of D/2"),
    Bug("table_row_stride_D", "forward",
        ((FWD_TABLES, FWD_TABLES.replace("pos * half", "pos * D"), 1),),
        "address", "the cos/sin tables' row stride taken as D, but they are [P, D/2]"),
    Bug("q_heads_whole_blocks_only", "forward",
        (("""    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head
        x1""", """    for h0 in range(0, (HQ // BLOCK_H) * BLOCK_H, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head
        x1""", 1),),
        "loop", "the q head loop stops at the last whole block of BLOCK_H heads: the remainder heads are never rotated"),
    Bug("bwd_half_hardcoded", "backward",
        (("""    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
""", """    half = 64
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
""", 1),),
        "hardcoded", "the backward's half width is written as 64 (D = 128) instead of D // 2"),
    Bug("table_load_unmasked", "forward",
        ((FWD_TABLES, FWD_TABLES.replace(", mask=cols, other=0.0", ""), 1),),
        "mask", "the cos/sin row is loaded without the lane mask: at D = 96 it reads past the row, past the table at the last position"),
    Bug("bwd_double_flip", "backward",
        (("tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)", "tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1),
         ("tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)", "tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)", 1)),
        "formula", "dq flips both the table's sign and the formula's signs: the gradient turns forward again"),
    Bug("bwd_second_half_store_first", "backward",
        (("tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)", "tl.store(dk_ptr + first, g2 * cos + g1 * sin, mask=mask)", 1),),
        "address", "dk's second half is stored at the first half's offset, overwriting it"),
    Bug("bwd_head_stride_half", "backward",
        ((BWD_Q, BWD_Q.replace("* D + i[None, :]", "* half + i[None, :]"), 1),),
        "address", "the head's offset uses D/2 as the head size instead of D"),
    Bug("bwd_mask_no_cols", "backward",
        (("""        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1""", """        mask = h0 + heads < HQ
        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1""", 1),),
        "mask", "dq's mask keeps only the heads: lanes past D/2 (D = 96) read and write outside the half"),
    Bug("position_loaded_from_row_start", "backward",
        (("""    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr""", """    pos = tl.load(pos_ptr)
    cos = tl.load(cos_ptr""", 1),),
        "address", "every token reads pos[0], the first token's position, not its own"),
]

RIGHT = [
    Right("fwd_q_while_loop",
          (("""    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head
        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)
""", """    h0 = 0
    while h0 < HQ:
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head
        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)
        h0 += BLOCK_H
""", 1),),
          "q's heads walked with a while loop: the same blocks"),
    Right("bwd_explicit_transpose",
          (("sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]",
            "sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]", 1),
           ("tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)", "tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1),
           ("tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)", "tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)", 1),
           ("tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)", "tl.store(dk_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1),
           ("tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)", "tl.store(dk_ptr + first + half, g2 * cos - g1 * sin, mask=mask)", 1)),
          "the backward keeps +sin and writes the transposed rotation's signs out instead"),
    Right("fwd_table_row_pointer",
          ((FWD_TABLES, """    row = pos.to(tl.int64) * half
    cos = tl.load(cos_ptr + row + i, mask=cols, other=1.0)[None, :]
    sin = tl.load(sin_ptr + row + i, mask=cols, other=0.0)[None, :]
    heads""", 1),),
          "the table row's offset in int64, and cos's padded lanes filled with 1 (they are masked at the store anyway)"),
    Right("bwd_k_before_q",
          (Kernel("rope_bwd_kernel", '''
@triton.jit
def rope_bwd_kernel(dq_out_ptr, dk_out_ptr, pos_ptr, cos_ptr, sin_ptr, dq_ptr, dk_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    c = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    s = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dk_ptr + first, g1 * c + g2 * s, mask=mask)
        tl.store(dk_ptr + first + half, g2 * c - g1 * s, mask=mask)
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dq_ptr + first, g1 * c + g2 * s, mask=mask)
        tl.store(dq_ptr + first + half, g2 * c - g1 * s, mask=mask)
'''),),
          "k's heads before q's, and the transpose written with +sin in the formula"),
]
