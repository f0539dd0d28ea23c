"""Blind corpus (round 10 for p27-p32), puzzle 29 (RoPE forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_POS = ("    # the token's own position, not t: rows of a batch may start at different positions\n"
            "    pos = tl.load(pos_ptr + token)\n")
_FWD_TABLES = ("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
               "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n")
_FWD_Q = ("    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
          "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element")
_FWD_K = ("    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n"
          "        first = (token * HK + h0 + heads) * D + i[None, :]\n        x1")
_BWD_Q = ("    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
          "        first = (token * HQ + h0 + heads) * D + i[None, :]\n        g1")
_BWD_K = ("    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n"
          "        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1")
_BWD_TABLES = ("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
               "    # the transpose of [[cos, -sin], [sin, cos]] is [[cos, sin], [-sin, cos]]: the forward with -sin\n"
               "    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n")

_FWD_INTERLEAVED = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """Rotate every head of q and of k for token pid, pair i being elements (2i, 2i + 1). Grid: (B * T,)."""
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
        first = (token * HQ + h0 + heads) * D + 2 * i[None, :]  # the even element of pair i
        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + first + 1, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(q_out_ptr + first + 1, x2 * cos + x1 * sin, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + 2 * i[None, :]
        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(k_ptr + first + 1, mask=mask, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(k_out_ptr + first + 1, x2 * cos + x1 * sin, mask=mask)
'''

_FWD_ONE_HEAD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """Rotate every head of q and of k for token pid, one head at a time. Grid: (B * T,)."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)
    for h in range(0, HQ + HK):
        if h < HQ:
            src = q_ptr + (token * HQ + h) * D
            dst = q_out_ptr + (token * HQ + h) * D
        else:
            src = k_ptr + (token * HK + h - HQ) * D
            dst = k_out_ptr + (token * HK + h - HQ) * D
        x1 = tl.load(src + i, mask=cols, other=0.0).to(tl.float32)
        x2 = tl.load(src + half + i, mask=cols, other=0.0).to(tl.float32)
        tl.store(dst + i, x1 * cos - x2 * sin, mask=cols)
        tl.store(dst + half + i, x2 * cos + x1 * sin, mask=cols)
'''

_FWD_HELPER = '''
@triton.jit
def rotate_heads(x_ptr, out_ptr, token, NH, D, half, i, cols, cos, sin, BLOCK_H: tl.constexpr):
    """Turn the NH heads of one token of x into out, BLOCK_H heads at a time."""
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, NH, BLOCK_H):
        mask = (h0 + heads < NH) & cols[None, :]
        first = (token * NH + h0 + heads) * D + i[None, :]
        x1 = tl.load(x_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(x_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)


@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """q and k turned by one helper, each with its own head count. Grid: (B * T,)."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    rotate_heads(q_ptr, q_out_ptr, token, HQ, D, half, i, cols, cos, sin, BLOCK_H)
    rotate_heads(k_ptr, k_out_ptr, token, HK, D, half, i, cols, cos, sin, BLOCK_H)
'''

MEASURED = [
    # forward
    Bug("position_is_token_index", "forward",
        ((_FWD_POS, "    pos = token  # the token's position\n", 1),),
        "address", "the table row taken as the program id b·T + t: each batch row's own positions (pos) never read"),
    Bug("q_half_lanes_unmasked", "forward",
        ((_FWD_Q, _FWD_Q.replace("mask = (h0 + heads < HQ) & cols[None, :]", "mask = h0 + heads < HQ"), 1),),
        "mask", "q's mask checks the heads only: with D/2 below BLOCK_HALF (D = 96) the lanes past D/2 read and write the other half"),
    Bug("k_heads_unmasked", "forward",
        ((_FWD_K, _FWD_K.replace("mask = (h0 + heads < HK) & cols[None, :]", "mask = cols[None, :]"), 1),),
        "mask", "k's mask checks the lanes only: the head block past HK reads and writes the next token's heads (past the end on the last)"),
    Bug("first_half_sign_flipped", "forward",
        (("tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)", "tl.store(q_out_ptr + first, x1 * cos + x2 * sin, mask=mask)", 1),),
        "formula", "q's first half written x1·cos + x2·sin: the rotation's minus sign lost"),
    Bug("k_token_offset_with_HQ", "forward",
        ((_FWD_K, _FWD_K.replace("first = (token * HK + h0", "first = (token * HQ + h0"), 1),),
        "address", "k's token offset uses q's head count HQ (the q loop copied): wrong with grouped-query HK != HQ"),
    Bug("pairs_interleaved", "forward",
        (Kernel("rope_fwd_kernel", _FWD_INTERLEAVED),),
        "address", "pairs taken as neighbours (2i, 2i + 1), GPT-J's convention, instead of the half-split i and i + D/2",
        accept=("formula",)),
    Bug("table_rows_D_wide", "forward",
        ((_FWD_TABLES, _FWD_TABLES.replace("pos * half", "pos * D"), 1),),
        "address", "the cos/sin table's rows strided by D: the tables are [P, D/2], one row per position D/2 wide"),
    Bug("half_for_d16", "forward",
        (("    half = D // 2\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2 need",
          "    half = 8\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2 need", 1),),
        "hardcoded", "half written in as 8, the documented D = 16's, instead of D // 2"),
    Bug("q_head_blocks_floor", "forward",
        ((_FWD_Q, _FWD_Q.replace("    for h0 in range(0, HQ, BLOCK_H):\n", "    for hb in range(HQ // BLOCK_H):\n        h0 = hb * BLOCK_H\n"), 1),),
        "loop", "q's head blocks counted HQ // BLOCK_H: a last, partial block of heads is never turned"),
    # backward
    Bug("backward_sin_not_negated", "backward",
        ((_BWD_TABLES, _BWD_TABLES.replace("    sin = -tl.load(", "    sin = tl.load("), 1),),
        "formula", "the backward turns the gradient forward again: sin not negated for the rotation's transpose"),
    Bug("backward_transpose_applied_twice", "backward",
        (("tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)", "tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)", 1),),
        "formula", "dq's second half written g2·cos − g1·sin with sin already negated: the transpose's sign flip applied twice"),
    Bug("dk_stored_into_dq", "backward",
        (("        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)\n        tl.store(dk_ptr + first + half,",
          "        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)\n        tl.store(dq_ptr + first + half,", 1),),
        "address", "the k loop (copied from the q loop) stores its gradient into dq: dk never written, dq overwritten"),
    Bug("backward_k_loop_bounded_by_HQ", "backward",
        ((_BWD_K, _BWD_K.replace("range(0, HK, BLOCK_H)", "range(0, HQ, BLOCK_H)").replace("h0 + heads < HK", "h0 + heads < HQ"), 1),),
        "mask", "the backward's k loop and mask bounded by HQ (copied from q): key heads past HK are read and written, or some missed",
        accept=("loop",)),
    Bug("q_grad_read_from_dk_out", "backward",
        ((_BWD_Q + " = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n        g2 = tl.load(dq_out_ptr + first + half,",
          _BWD_Q + " = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n        g2 = tl.load(dk_out_ptr + first + half,", 1),),
        "address", "dq's upstream gradient loaded from dk_out: the q loop turns k's gradient"),
    Bug("backward_tables_unmasked", "backward",
        ((_BWD_TABLES, _BWD_TABLES.replace(", mask=cols, other=0.0)", ")"), 1),),
        "mask", "the backward's table loads drop the lane mask: with D/2 below BLOCK_HALF they read past the row (past the table at its last position)"),
    Bug("backward_q_heads_for_hq4", "backward",
        ((_BWD_Q, _BWD_Q.replace("first = (token * HQ + h0", "first = (token * 4 + h0"), 1),),
        "hardcoded", "dq's token offset written with 4 heads, the documented HQ: other head counts land in the wrong token"),
]

RIGHT = [
    Right("backward_positive_sin_flipped_formula",
          ((_BWD_TABLES, _BWD_TABLES.replace("    sin = -tl.load(", "    sin = tl.load("), 1),
           ("g1 * cos - g2 * sin, mask=mask)", "g1 * cos + g2 * sin, mask=mask)", 2),
           ("g2 * cos + g1 * sin, mask=mask)", "g2 * cos - g1 * sin, mask=mask)", 2)),
          "the backward loads sin as it is and writes the transpose's signs into the formulas instead"),
    Right("forward_one_head_at_a_time", (Kernel("rope_fwd_kernel", _FWD_ONE_HEAD),),
          "the forward turns one head at a time, q's heads then k's, with 1-D vectors (BLOCK_H unused)"),
    Right("forward_shared_helper", (Kernel("rope_fwd_kernel", _FWD_HELPER),),
          "q and k turned by one @triton.jit helper called with each tensor's own head count"),
    Right("backward_tables_in_loop",
          ((_BWD_TABLES, "", 1),
           (_BWD_Q, _BWD_Q.replace("        g1", "        cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
                                   "        sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n        g1"), 1),
           (_BWD_K, _BWD_K.replace("        g1", "        cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
                                   "        sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n        g1"), 1)),
          "the backward reloads the table row inside each head loop (more loads, the same values)"),
    Right("forward_q_heads_while_loop",
          ((_FWD_Q, _FWD_Q.replace("    for h0 in range(0, HQ, BLOCK_H):\n", "    h0 = 0\n    while h0 < HQ:\n"), 1),
           ("        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n",
            "        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n        h0 += BLOCK_H\n", 1)),
          "q's head blocks walked with a while loop"),
]
