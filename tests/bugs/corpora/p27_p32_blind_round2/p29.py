"""Blind corpus, puzzle 29 (RoPE forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_BWD_Q_LOOP = ("    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
               "        first = (token * HQ + h0 + heads) * D + i[None, :]\n        g1")
_BWD_K_LOOP = ("    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n"
               "        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1")
_FWD_Q_LOOP = ("    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
               "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element")

MEASURED = [
    # forward
    Bug("sin_read_from_cos_table", "forward",
        (("    sin = tl.load(sin_ptr + pos * half + i,", "    sin = tl.load(cos_ptr + pos * half + i,", 1),),
        "formula", "the forward's sine loaded from the cos table (a line copied): every pair turned by cos in both places",
        accept=("address",)),
    Bug("k_second_half_uses_x2_twice", "forward",
        (("tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)",
          "tl.store(k_out_ptr + first + half, x2 * cos + x2 * sin, mask=mask)", 1),),
        "formula", "k's second half written x2·cos + x2·sin: the partner x1 replaced by x2 in the sine term"),
    Bug("q_head_block_offset_not_scaled", "forward",
        (("        first = (token * HQ + h0 + heads) * D + i[None, :]  # element",
          "        first = (token * HQ + heads) * D + h0 + i[None, :]  # element", 1),),
        "address", "q's head block start h0 added as elements, not heads (h0 · D): later head blocks land inside head 0"),
    Bug("q_second_half_stored_over_first", "forward",
        (("tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)",
          "tl.store(q_out_ptr + first, x2 * cos + x1 * sin, mask=mask)", 1),),
        "address", "q's second half stored at first, over the first half: the second half of q_out is never written"),
    Bug("arange_to_half", "forward",
        (("    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2", "    i = tl.arange(0, half)\n    cols = i < half  # D/2", 1),),
        "compile", "tl.arange(0, D // 2) with D a runtime argument: arange needs a constexpr (BLOCK_HALF) and a mask"),
    Bug("k_loaded_from_q", "forward",
        (("        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
          "        x2 = tl.load(k_ptr + first + half,",
          "        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
          "        x2 = tl.load(q_ptr + first + half,", 1),),
        "address", "k's loop loads from q's pointer (the q loop copied, only the stores renamed)", accept=("formula",)),
    Bug("q_head_loop_to_documented_four", "forward",
        ((_FWD_Q_LOOP, _FWD_Q_LOOP.replace("range(0, HQ, BLOCK_H)", "range(0, 4, BLOCK_H)"), 1),),
        "hardcoded", "q's head loop bound written as 4, the documented HQ: with more heads the later blocks are never turned",
        notes='shows only where HQ > 4 and BLOCK_H < HQ'),
    Bug("second_half_angles_from_d_wide_table", "forward",
        (("    heads = tl.arange(0, BLOCK_H)[:, None]\n    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
          "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element",
          "    cos2 = tl.load(cos_ptr + pos * half + half + i, mask=cols, other=0.0)[None, :]\n"
          "    sin2 = tl.load(sin_ptr + pos * half + half + i, mask=cols, other=0.0)[None, :]\n"
          "    heads = tl.arange(0, BLOCK_H)[:, None]\n    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
          "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element", 1),
         ("tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)",
          "tl.store(q_out_ptr + first + half, x2 * cos2 + x1 * sin2, mask=mask)", 1),
         ("tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)",
          "tl.store(k_out_ptr + first + half, x2 * cos2 + x1 * sin2, mask=mask)", 1)),
        "address", "the second half's angles read at column i + D/2 of the table (as if it were D wide, Hugging Face's "
        "duplicated layout): the table is D/2 wide, both halves share angle i"),
    # backward
    Bug("backward_negates_cos", "backward",
        (("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose",
          "    cos = -tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose", 1),
         ("    sin = -tl.load(sin_ptr", "    sin = tl.load(sin_ptr", 1)),
        "formula", "the backward negates cos instead of sin: the transpose of the rotation is taken wrongly"),
    Bug("dq_partner_one_head_away", "backward",
        (("g2 = tl.load(dq_out_ptr + first + half,", "g2 = tl.load(dq_out_ptr + first + D,", 1),),
        "address", "dq's partner gradient read D elements on (the next head's first half) instead of D/2"),
    Bug("dq_head_loop_over_block_numbers", "backward",
        ((_BWD_Q_LOOP, _BWD_Q_LOOP.replace("range(0, HQ, BLOCK_H)", "range(0, tl.cdiv(HQ, BLOCK_H))"), 1),),
        "loop", "the backward's q loop walks block numbers 0, 1, 2 but uses them as head offsets: heads overlap, the last ones are missed",
        accept=("address",)),
    Bug("dk_mask_against_hq", "backward",
        ((_BWD_K_LOOP, _BWD_K_LOOP.replace("(h0 + heads < HK)", "(h0 + heads < HQ)"), 1),),
        "mask", "dk's head mask compares with HQ, q's head count: wrong whenever k has another number of heads",
        notes='values wrong where HK > HQ; where HK < HQ only the last token writes out of bounds'),
    Bug("dk_token_offset_documented_hk", "backward",
        ((_BWD_K_LOOP, _BWD_K_LOOP.replace("(token * HK + h0 + heads)", "(token * 2 + h0 + heads)"), 1),),
        "hardcoded", "dk's token offset written with 2, the documented HK, instead of the argument",
        notes='shows only where HK != 2'),
    Bug("dq_added_into_output", "backward",
        (("        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
          "        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n",
          "        tl.store(dq_ptr + first, tl.load(dq_ptr + first, mask=mask) + g1 * cos - g2 * sin, mask=mask)\n"
          "        tl.store(dq_ptr + first + half, tl.load(dq_ptr + first + half, mask=mask) + g2 * cos + g1 * sin, mask=mask)\n", 1),),
        "accumulate", "dq added to what the buffer holds (as .grad accumulates) instead of stored: dq is not zeroed"),
    Bug("backward_half_mask_le", "backward",
        (("    cols = i < half\n", "    cols = i <= half\n", 1),),
        "mask", "the backward's lane mask i <= D/2: with D/2 no power of two one lane too many is turned (into the second half)",
        notes='shows only where D/2 is no power of two'),
    Bug("dq_read_from_output", "backward",
        (("        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
          "        g2 = tl.load(dq_out_ptr + first + half,",
          "        g1 = tl.load(dq_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
          "        g2 = tl.load(dq_ptr + first + half,", 1),),
        "address", "q's upstream gradient read from dq (the output, not yet written) instead of dq_out", accept=("formula",)),
]

_HELPER_FWD = '''
@triton.jit
def turn_heads(x_ptr, out_ptr, token, H, D, half, i, cols, cos, sin, BLOCK_H: tl.constexpr):
    """Turn the H heads of one token by (cos, sin), BLOCK_H heads at a time."""
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, H, BLOCK_H):
        mask = (h0 + heads < H) & cols[None, :]
        first = (token * H + h0 + heads) * D + i[None, :]
        x1 = tl.load(x_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(x_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)


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
    turn_heads(q_ptr, q_out_ptr, token, HQ, D, half, i, cols, cos, sin, BLOCK_H)
    turn_heads(k_ptr, k_out_ptr, token, HK, D, half, i, cols, cos, sin, BLOCK_H)
'''

_HELPER_BWD = '''
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
    # turned back: the same helper with the angle negated
    turn_heads(dq_out_ptr, dq_ptr, token, HQ, D, half, i, cols, cos, -sin, BLOCK_H)
    turn_heads(dk_out_ptr, dk_ptr, token, HK, D, half, i, cols, cos, -sin, BLOCK_H)
'''

_BASES_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    lane_ok = i < half
    pos = tl.load(pos_ptr + token)
    table = pos * half + i
    c = tl.load(cos_ptr + table, mask=lane_ok, other=0.0)[None, :]
    s = tl.load(sin_ptr + table, mask=lane_ok, other=0.0)[None, :]
    h = tl.arange(0, BLOCK_H)
    # each tensor's token row first, then heads and lanes inside it
    q_tok = q_ptr + token * HQ * D
    qo_tok = q_out_ptr + token * HQ * D
    for h0 in range(0, HQ, BLOCK_H):
        head_ok = (h0 + h) < HQ
        m = head_ok[:, None] & lane_ok[None, :]
        off = (h0 + h)[:, None] * D + i[None, :]
        a = tl.load(q_tok + off, mask=m, other=0.0).to(tl.float32)
        b = tl.load(q_tok + half + off, mask=m, other=0.0).to(tl.float32)
        tl.store(qo_tok + off, a * c - b * s, mask=m)
        tl.store(qo_tok + half + off, b * c + a * s, mask=m)
    k_tok = k_ptr + token * HK * D
    ko_tok = k_out_ptr + token * HK * D
    for h0 in range(0, HK, BLOCK_H):
        head_ok = (h0 + h) < HK
        m = head_ok[:, None] & lane_ok[None, :]
        off = (h0 + h)[:, None] * D + i[None, :]
        a = tl.load(k_tok + off, mask=m, other=0.0).to(tl.float32)
        b = tl.load(k_tok + half + off, mask=m, other=0.0).to(tl.float32)
        tl.store(ko_tok + off, a * c - b * s, mask=m)
        tl.store(ko_tok + half + off, b * c + a * s, mask=m)
'''

_REVERSED_BWD = '''
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
    # k's heads first, each tensor's head blocks walked last block first
    nk = tl.cdiv(HK, BLOCK_H)
    for j in range(0, nk):
        h0 = (nk - 1 - j) * BLOCK_H
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dk_ptr + first, g1 * cos + g2 * sin, mask=mask)
        tl.store(dk_ptr + first + half, g2 * cos - g1 * sin, mask=mask)
    nq = tl.cdiv(HQ, BLOCK_H)
    for j in range(0, nq):
        h0 = (nq - 1 - j) * BLOCK_H
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)
        tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)
'''

_ONE_LOOP_FWD = '''
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
    # one loop over the larger head count: each step turns a block of q's heads and one of k's
    for h0 in range(0, tl.maximum(HQ, HK), BLOCK_H):
        qm = (h0 + heads < HQ) & cols[None, :]
        qf = (token * HQ + h0 + heads) * D + i[None, :]
        x1 = tl.load(q_ptr + qf, mask=qm, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + qf + half, mask=qm, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + qf, x1 * cos - x2 * sin, mask=qm)
        tl.store(q_out_ptr + qf + half, x2 * cos + x1 * sin, mask=qm)
        km = (h0 + heads < HK) & cols[None, :]
        kf = (token * HK + h0 + heads) * D + i[None, :]
        y1 = tl.load(k_ptr + kf, mask=km, other=0.0).to(tl.float32)
        y2 = tl.load(k_ptr + kf + half, mask=km, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + kf, y1 * cos - y2 * sin, mask=km)
        tl.store(k_out_ptr + kf + half, y2 * cos + y1 * sin, mask=km)
'''

RIGHT = [
    Right("shared_turn_helper", (Kernel("rope_fwd_kernel", _HELPER_FWD), Kernel("rope_bwd_kernel", _HELPER_BWD)),
          "one @triton.jit helper turns a tensor's heads; the backward calls it with −sin"),
    Right("token_bases_and_1d_head_mask", (Kernel("rope_fwd_kernel", _BASES_FWD),),
          "the forward moves each pointer to the token's row first and builds the mask from a 1-D head mask"),
    Right("head_blocks_last_first", (Kernel("rope_bwd_kernel", _REVERSED_BWD),),
          "the backward walks k first and each tensor's head blocks last first, turning back by sign-swapped stores"),
    Right("rotation_by_fma",
          (("        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
            "        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n",
            "        tl.store(q_out_ptr + first, tl.fma(x1, cos, -(x2 * sin)), mask=mask)\n"
            "        tl.store(q_out_ptr + first + half, tl.fma(x1, sin, x2 * cos), mask=mask)\n", 1),),
          "q's pair turned with fused multiply-adds"),
    Right("one_loop_for_q_and_k", (Kernel("rope_fwd_kernel", _ONE_LOOP_FWD),),
          "the forward turns q's and k's head blocks in one loop over max(HQ, HK) heads, each masked to its tensor"),
]
