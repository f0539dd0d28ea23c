"""Blind corpus (round 9 for p27-p32), puzzle 29 (rotary position embedding, forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_K = "    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n        first = (token * HK + h0 + heads) * D + i[None, :]\n        x1"
_BWD_K = "    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1"
_BWD_Q = "    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]\n        g1"
_FWD_Q = "    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i"

MEASURED = [
    Bug("fwd_position_is_token", "forward",
        (("    pos = tl.load(pos_ptr + token)\n    # one row", "    pos = token\n    # one row", 1),),
        "address", "the program id used as the position: the tables' row is the token's index, not its position pos[b, t]"),
    Bug("fwd_table_row_stride_D", "forward",
        (("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    heads",
          "    cos = tl.load(cos_ptr + pos * D + i, mask=cols, other=0.0)[None, :]\n    sin = tl.load(sin_ptr + pos * D + i, mask=cols, other=0.0)[None, :]\n    heads", 1),),
        "address", "the tables' rows are D/2 wide, but the row offset is pos * D"),
    Bug("bwd_table_row_stride_block", "backward",
        (("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose",
          "    cos = tl.load(cos_ptr + pos * BLOCK_HALF + i, mask=cols, other=0.0)[None, :]\n    # the transpose", 1),
         ("sin = -tl.load(sin_ptr + pos * half + i", "sin = -tl.load(sin_ptr + pos * BLOCK_HALF + i", 1)),
        "address", "the tables' row stride taken as the padded BLOCK_HALF instead of D/2"),
    Bug("fwd_q_sign_flipped", "forward",
        (("tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)", "tl.store(q_out_ptr + first, x1 * cos + x2 * sin, mask=mask)", 1),),
        "formula", "the first half rotated with + x2 sin: the rotation's sign wrong"),
    Bug("fwd_k_head_count_hq", "forward",
        ((_FWD_K, _FWD_K.replace("(token * HK + h0", "(token * HQ + h0"), 1),),
        "address", "k's token offset uses q's head count HQ: with fewer key heads the rows land in the wrong place"),
    Bug("bwd_k_mask_hq", "backward",
        ((_BWD_K, _BWD_K.replace("(h0 + heads < HK)", "(h0 + heads < HQ)"), 1),),
        "mask", "k's head mask compares against HQ: with fewer key heads it reads and writes heads of the next token"),
    Bug("fwd_no_column_mask", "forward",
        ((_FWD_Q, _FWD_Q.replace("mask = (h0 + heads < HQ) & cols[None, :]", "mask = (h0 + heads < HQ) & (i[None, :] < BLOCK_HALF)"), 1),),
        "mask", "q's mask bounds the half by the padded BLOCK_HALF: for D = 96 the padded lanes rotate the next half"),
    Bug("fwd_second_half_block", "forward",
        (("        x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n        tl.store(q_out_ptr + first + half,",
          "        x2 = tl.load(q_ptr + first + BLOCK_HALF, mask=mask, other=0.0).to(tl.float32)\n        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n        tl.store(q_out_ptr + first + BLOCK_HALF,", 1),),
        "address", "the second half found at the padded BLOCK_HALF, not at D/2"),
    Bug("fwd_interleaved_pairs", "forward",
        (Kernel("rope_fwd_kernel", '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        even = (token * HQ + h0 + heads) * D + 2 * i[None, :]
        x1 = tl.load(q_ptr + even, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + even + 1, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + even, x1 * cos - x2 * sin, mask=mask)
        tl.store(q_out_ptr + even + 1, x2 * cos + x1 * sin, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        even = (token * HK + h0 + heads) * D + 2 * i[None, :]
        x1 = tl.load(k_ptr + even, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(k_ptr + even + 1, mask=mask, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + even, x1 * cos - x2 * sin, mask=mask)
        tl.store(k_out_ptr + even + 1, x2 * cos + x1 * sin, mask=mask)
'''),),
        "address", "the interleaved (GPT-J) pairing 2i, 2i+1 instead of the half-split pairing i, i + D/2", ("formula",)),
    Bug("bwd_sin_not_negated", "backward",
        (("sin = -tl.load(sin_ptr", "sin = tl.load(sin_ptr", 1),),
        "formula", "the backward rotates by +angle again: the transpose needs -sin"),
    Bug("bwd_dk_reads_dq", "backward",
        ((_BWD_K + " = tl.load(dk_out_ptr + first", _BWD_K + " = tl.load(dq_out_ptr + first", 1),),
        "address", "dk's first half loaded from dq_out instead of dk_out"),
    Bug("bwd_head_blocks_counted", "backward",
        ((_BWD_Q, _BWD_Q.replace("range(0, HQ, BLOCK_H)", "range(0, tl.cdiv(HQ, BLOCK_H))"), 1),),
        "loop", "the loop counts head blocks 0, 1, 2... but uses the count as the first head: heads past cdiv + BLOCK_H are never rotated"),
    Bug("fwd_half_hardcoded", "forward",
        (("    half = D // 2\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2", "    half = 64\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2", 1),),
        "hardcoded", "half = 64 written in (D = 128) instead of D // 2"),
    Bug("fwd_q_out_over_q", "forward",
        (("tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)", "tl.store(q_ptr + first, x1 * cos - x2 * sin, mask=mask)", 1),
         ("tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)", "tl.store(q_ptr + first + half, x2 * cos + x1 * sin, mask=mask)", 1)),
        "inplace", "q rotated in place: the input is overwritten and q_out never written"),
    Bug("bwd_halves_swapped", "backward",
        ((_BWD_Q + " = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)",
          _BWD_Q + " = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n        tl.store(dq_ptr + first, g2 * cos - g1 * sin, mask=mask)", 1),),
        "formula", "dq's first half computed from the halves swapped: g2 cos - g1 sin"),
]

RIGHT = [
    Right("tables_inside_loop",
          (("    heads = tl.arange(0, BLOCK_H)[:, None]\n    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i",
            "    heads = tl.arange(0, BLOCK_H)[:, None]\n    for h0 in range(0, HQ, BLOCK_H):\n        cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n        sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i", 1),),
          "the table rows loaded again in each head block: more loads, the same values"),
    Right("bwd_transpose_written_out", (Kernel("rope_bwd_kernel", '''
@triton.jit
def rope_bwd_kernel(dq_out_ptr, dk_out_ptr, pos_ptr, cos_ptr, sin_ptr, dq_ptr, dk_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    q_tok = token * HQ * D
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & cols[None, :]
        first = q_tok + (h0 + heads) * D + i[None, :]
        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)
        tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)
    k_tok = token * HK * D
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        first = k_tok + (h0 + heads) * D + i[None, :]
        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dk_ptr + first, g1 * cos + g2 * sin, mask=mask)
        tl.store(dk_ptr + first + half, g2 * cos - g1 * sin, mask=mask)
'''),),
          "the transpose written out with +sin in the first half and -sin in the second, the token's base offset hoisted"),
    Right("fwd_one_head_at_a_time", (Kernel("rope_fwd_kernel", '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)
    for h in range(0, HQ):
        first = (token * HQ + h) * D + i
        x1 = tl.load(q_ptr + first, mask=cols, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + first + half, mask=cols, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=cols)
        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=cols)
    for h in range(0, HK):
        first = (token * HK + h) * D + i
        x1 = tl.load(k_ptr + first, mask=cols, other=0.0).to(tl.float32)
        x2 = tl.load(k_ptr + first + half, mask=cols, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=cols)
        tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=cols)
'''),),
          "one head per iteration with 1-D loads, BLOCK_H ignored: slower, the same values"),
    Right("fwd_while_heads",
          ((_FWD_Q, "    h0 = 0\n    while h0 < HQ:\n        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i", 1),
           ("        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n",
            "        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n        h0 += BLOCK_H\n", 1)),
          "q's head blocks walked by a while loop"),
]
