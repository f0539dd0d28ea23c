"""Blind corpus (round 6 for p27-p32), puzzle 29 (RoPE forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_F_POS = ("    pos = tl.load(pos_ptr + token)\n"
          "    # one row of the tables serves every head of q and k: loaded once per token, kept in fp32\n"
          "    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
          "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n")
_F_Q_MASK = "        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element"
_F_Q_X2 = "        x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n"
_F_Q_ST1 = "        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
_F_Q_ST2 = "        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n"
_F_K_LOOP = ("    for h0 in range(0, HK, BLOCK_H):\n"
             "        mask = (h0 + heads < HK) & cols[None, :]\n"
             "        first = (token * HK + h0 + heads) * D + i[None, :]\n"
             "        x1 = tl.load(k_ptr")
_B_SIN = "    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
_B_DQ_ST2 = "        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n"
_B_K_HEAD = ("    for h0 in range(0, HK, BLOCK_H):\n"
             "        mask = (h0 + heads < HK) & cols[None, :]\n"
             "        first = (token * HK + h0 + heads) * D + i[None, :]\n"
             "        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
             "        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n")
_B_DQ_STORES = ("        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
                "        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n")

_FWD_HEAD_AT_A_TIME = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """One head at a time (1-D vectors of BLOCK_HALF lanes), the table row loaded once per token."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    c = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)
    s = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)
    for h in range(0, HQ):
        base = (token * HQ + h) * D
        a = tl.load(q_ptr + base + i, mask=cols, other=0.0).to(tl.float32)
        b = tl.load(q_ptr + base + half + i, mask=cols, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + base + i, a * c - b * s, mask=cols)
        tl.store(q_out_ptr + base + half + i, b * c + a * s, mask=cols)
    for h in range(0, HK):
        base = (token * HK + h) * D
        a = tl.load(k_ptr + base + i, mask=cols, other=0.0).to(tl.float32)
        b = tl.load(k_ptr + base + half + i, mask=cols, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + base + i, a * c - b * s, mask=cols)
        tl.store(k_out_ptr + base + half + i, b * c + a * s, mask=cols)
'''

_FWD_ONE_LOOP = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """q's and k's head blocks turned in the same loop, up to the larger head count, each with its own mask."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)[None, :]
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)
    heads = tl.arange(0, BLOCK_H)[:, None]
    H = tl.maximum(HQ, HK)
    for h0 in range(0, H, BLOCK_H):
        h = h0 + heads
        mq = (h < HQ) & cols
        fq = (token * HQ + h) * D + i
        x1 = tl.load(q_ptr + fq, mask=mq, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + fq + half, mask=mq, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + fq, x1 * cos - x2 * sin, mask=mq)
        tl.store(q_out_ptr + fq + half, x2 * cos + x1 * sin, mask=mq)
        mk = (h < HK) & cols
        fk = (token * HK + h) * D + i
        y1 = tl.load(k_ptr + fk, mask=mk, other=0.0).to(tl.float32)
        y2 = tl.load(k_ptr + fk + half, mask=mk, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + fk, y1 * cos - y2 * sin, mask=mk)
        tl.store(k_out_ptr + fk + half, y2 * cos + y1 * sin, mask=mk)
'''

_BWD_K_FIRST = '''
@triton.jit
def rope_bwd_kernel(dq_out_ptr, dk_out_ptr, pos_ptr, cos_ptr, sin_ptr, dq_ptr, dk_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """k's heads first (a while loop), then q's; the token's element offsets in int64."""
    token = tl.program_id(0).to(tl.int64)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    c = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    s = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    h0 = 0
    while h0 < HK:
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dk_ptr + first, g1 * c + g2 * s, mask=mask)
        tl.store(dk_ptr + first + half, g2 * c - g1 * s, mask=mask)
        h0 += BLOCK_H
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dq_ptr + first, g1 * c + g2 * s, mask=mask)
        tl.store(dq_ptr + first + half, g2 * c - g1 * s, mask=mask)
'''

MEASURED = [
    # forward
    Bug("table_row_by_token", "forward",
        ((_F_POS, _F_POS.replace("cos_ptr + pos * half", "cos_ptr + token * half").replace("sin_ptr + pos * half", "sin_ptr + token * half"), 1),),
        "address", "the tables' row taken at the token's index, not its position pos[token]: rows that start at another position turn by the wrong angle"),
    Bug("table_row_stride_D", "forward",
        ((_F_POS, _F_POS.replace("pos * half", "pos * D"), 1),),
        "address", "the table's row stride taken as D: cos and sin are [P, D/2], a row is D/2 wide"),
    Bug("head_mask_without_cols", "forward",
        ((_F_Q_MASK, _F_Q_MASK.replace("(h0 + heads < HQ) & cols[None, :]", "h0 + heads < HQ"), 1),),
        "mask", "q's mask only bounds the heads: with D/2 not a power of two, the lanes past D/2 read and write into the second half and the next head"),
    Bug("head_mask_without_h0", "forward",
        ((_F_Q_MASK, _F_Q_MASK.replace("(h0 + heads < HQ)", "(heads < HQ)"), 1),),
        "mask", "the head mask compares the block's local head index with HQ, the block start h0 forgotten: the last block runs past HQ into the next token"),
    Bug("first_half_sin_sign", "forward",
        ((_F_Q_ST1, "        tl.store(q_out_ptr + first, x1 * cos + x2 * sin, mask=mask)\n", 1),),
        "formula", "q's first half written x1·cos + x2·sin: the rotation's minus sign lost"),
    Bug("second_half_offset_block", "forward",
        ((_F_Q_X2, _F_Q_X2.replace("first + half", "first + BLOCK_HALF"), 1),),
        "address", "the second half read at first + BLOCK_HALF (the padded lane count), not first + D/2: wrong when D/2 is not a power of two"),
    Bug("k_token_stride_HQ", "forward",
        ((_F_K_LOOP, _F_K_LOOP.replace("first = (token * HK + h0", "first = (token * HQ + h0"), 1),),
        "address", "k's token offset uses HQ heads (copied from the q loop): k has HK heads per token"),
    Bug("k_loop_over_HQ", "forward",
        ((_F_K_LOOP, _F_K_LOOP.replace("for h0 in range(0, HK, BLOCK_H)", "for h0 in range(0, HQ, BLOCK_H)"), 1),),
        "loop", "k's head loop runs to HQ (copied from q's): when k has more heads than q, its last head blocks are never turned"),
    Bug("cos_sin_swapped", "forward",
        ((_F_POS, _F_POS.replace("cos = tl.load(cos_ptr", "cos = tl.load(SIN_ptr").replace("sin = tl.load(sin_ptr", "sin = tl.load(cos_ptr").replace("SIN_ptr", "sin_ptr"), 1),),
        "formula", "cos read from the sin table and sin from the cos table: the pair turns by 90° minus the angle"),
    Bug("second_half_operands_swapped", "forward",
        ((_F_Q_ST2, "        tl.store(q_out_ptr + first + half, x1 * cos + x2 * sin, mask=mask)\n", 1),),
        "formula", "q's second half written x1·cos + x2·sin: x1 and x2 swapped in the rotation's second row"),
    # backward
    Bug("bwd_sin_not_flipped", "backward",
        ((_B_SIN, "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n", 1),),
        "formula", "the backward applies the forward rotation again: the transpose needs sin's sign flipped"),
    Bug("bwd_second_half_swapped", "backward",
        ((_B_DQ_ST2, "        tl.store(dq_ptr + first + half, g1 * cos + g2 * sin, mask=mask)\n", 1),),
        "formula", "dq's second half computed g1·cos + g2·sin: g1 and g2 swapped"),
    Bug("bwd_dk_reads_dq_out", "backward",
        ((_B_K_HEAD, _B_K_HEAD.replace("dk_out_ptr", "dq_out_ptr"), 1),),
        "address", "dk's loop loads from dq_out (the q loop copied): the key gradient is q's gradient turned"),
    Bug("bwd_dk_mask_HQ", "backward",
        ((_B_K_HEAD, _B_K_HEAD.replace("(h0 + heads < HK)", "(h0 + heads < HQ)"), 1),),
        "mask", "dk's head mask bounds by HQ: when q has more heads than k, the last block writes past dk's heads of this token"),
    Bug("bwd_writes_upstream", "backward",
        ((_B_DQ_STORES, _B_DQ_STORES.replace("dq_ptr", "dq_out_ptr"), 1),),
        "inplace", "the q gradient written back over dq_out (the input) instead of into dq"),
]

RIGHT = [
    Right("fwd_head_at_a_time", (Kernel("rope_fwd_kernel", _FWD_HEAD_AT_A_TIME),),
          "the forward turns one head at a time with 1-D vectors instead of BLOCK_H heads: the same values"),
    Right("fwd_one_loop_both", (Kernel("rope_fwd_kernel", _FWD_ONE_LOOP),),
          "q's and k's heads turned in one loop up to max(HQ, HK), each with its own mask"),
    Right("bwd_plus_sin_written_out",
          ((_B_SIN, "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n", 1),
           (_B_DQ_STORES, "        tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)\n"
                          "        tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)\n", 1),
           ("        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
            "        tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n",
            "        tl.store(dk_ptr + first, g1 * cos + g2 * sin, mask=mask)\n"
            "        tl.store(dk_ptr + first + half, g2 * cos - g1 * sin, mask=mask)\n", 1)),
          "the backward keeps sin as loaded and writes the transposed rotation's signs out (+ then −)"),
    Right("bwd_k_first_while", (Kernel("rope_bwd_kernel", _BWD_K_FIRST),),
          "the backward turns k's gradient first, its head blocks walked by a while loop, then q's: the order does not matter"),
]
