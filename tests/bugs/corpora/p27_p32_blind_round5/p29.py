"""Fifth blind corpus, puzzle 29 (RoPE forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_Q_STORE1 = "        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
_K_STORES = ("        tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
             "        tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n")
_FWD_SIN = "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
_Q_FIRST = "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head\n"
_Q_MASK_FWD = ("    for h0 in range(0, HQ, BLOCK_H):\n"
               "        mask = (h0 + heads < HQ) & cols[None, :]\n"
               "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element")
_K_LOOP_FWD = "    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n        first = (token * HK + h0 + heads) * D + i[None, :]\n        x1 = tl.load(k_ptr"
_BWD_POS = "    pos = tl.load(pos_ptr + token)\n    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose"
_BWD_G = ("        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
          "        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n")
_BWD_DQ_STORES = ("        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
                  "        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n")
_BWD_DK_STORES = ("        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
                  "        tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n")
_BWD_HEADS = "    heads = tl.arange(0, BLOCK_H)[:, None]\n    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]\n        g1 = "
_BWD_DK_MASK = "    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr"

_BWD_DQ_WHILE = '''
@triton.jit
def rope_bwd_kernel(dq_out_ptr, dk_out_ptr, pos_ptr, cos_ptr, sin_ptr, dq_ptr, dk_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """The q head blocks walked by a while loop, the step taken at the top."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    h0 = 0
    while h0 < HQ:
        h0 += BLOCK_H
        mask = (h0 + heads < HQ) & cols[None, :]
        first = (token * HQ + h0 + heads) * D + i[None, :]
        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)
        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & cols[None, :]
        first = (token * HK + h0 + heads) * D + i[None, :]
        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)
        tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)
'''

MEASURED = [
    # forward
    Bug("k_both_halves_same_expression", "forward",
        ((_K_STORES, "        tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
                     "        tl.store(k_out_ptr + first + half, x1 * cos - x2 * sin, mask=mask)\n", 1),),
        "formula", "k's second half stored with the first half's expression x1·cos − x2·sin (the line copied, only the pointer changed): the second row of the rotation is lost"),
    Bug("k_copied_unrotated", "forward",
        ((_K_STORES, "        tl.store(k_out_ptr + first, x1, mask=mask)\n"
                     "        tl.store(k_out_ptr + first + half, x2, mask=mask)\n", 1),),
        "formula", "k copied to k_out unturned, as if only the queries took the position: q·k must see both turned so that it depends on the positions' difference"),
    Bug("sin_row_at_token_index", "forward",
        ((_FWD_SIN, "    sin = tl.load(sin_ptr + token * half + i, mask=cols, other=0.0)[None, :]\n", 1),),
        "address", "the sine row read at the token's index b·T + t while the cosine row is read at pos: the two halves of the angle come from different positions"),
    Bug("k_stored_into_q_out", "forward",
        ((_K_STORES, _K_STORES.replace("k_out_ptr", "q_out_ptr"), 1),),
        "address", "k's turned heads stored through q_out's pointer (the q loop's stores copied): k_out is never written and q_out's first heads are overwritten by k"),
    Bug("head_stride_documented_16", "forward",
        ((_Q_FIRST, "        first = (token * HQ + h0 + heads) * 16 + i[None, :]  # element i of the first half of each head\n", 1),),
        "hardcoded", "q's heads taken 16 elements apart (the documented D) instead of D: other head sizes turn the wrong elements of q"),
    Bug("q_head_mask_minus_one", "forward",
        ((_Q_MASK_FWD, _Q_MASK_FWD.replace("h0 + heads < HQ", "h0 + heads < HQ - 1"), 1),),
        "mask", "q's head mask h0 + heads < HQ − 1 (the last head's index taken as the bound): q's last head is never turned"),
    Bug("k_loop_stops_at_hk_minus_one", "forward",
        (("    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n        first = (token * HK + h0 + heads) * D + i[None, :]\n        x1 = tl.load(k_ptr",
          "    for h0 in range(0, HK - 1, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n        first = (token * HK + h0 + heads) * D + i[None, :]\n        x1 = tl.load(k_ptr", 1),),
        "loop", "k's head loop runs range(0, HK − 1, BLOCK_H): with one key head (or a last block holding only the last head) the loop skips it and k_out is left unwritten there"),
    Bug("k_cached_in_place", "forward",
        ((_K_STORES, _K_STORES + "        tl.store(k_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
                                  "        tl.store(k_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n", 1),),
        "inplace", "the forward also writes the turned keys back into k (to cache them for the next step): k_out is right, but the input k is changed"),
    # backward
    Bug("backward_grads_rounded_to_fp16", "backward",
        ((_BWD_G, _BWD_G.replace("tl.float32", "tl.float16"), 1),),
        "precision", "the backward converts dq_out's halves to fp16 after the load ('half precision is enough for a gradient'): fp32 gradients keep 11 bits before the turn",
        notes="fp32 cases only"),
    Bug("pos_read_at_token_times_hq", "backward",
        ((_BWD_POS, _BWD_POS.replace("tl.load(pos_ptr + token)", "tl.load(pos_ptr + token * HQ)"), 1),),
        "address", "the backward reads the position at token · HQ (the head offset's factor copied): every token but the first takes another token's angle, and the later ones read past pos"),
    Bug("dq_while_step_before_body", "backward",
        (Kernel("rope_bwd_kernel", _BWD_DQ_WHILE),),
        "loop", "the backward's q head blocks walked by a while loop that adds BLOCK_H at the top of the body: the first block of query heads gets no gradient, one block past HQ is visited (masked off)"),
    Bug("backward_heads_arange_documented_2", "backward",
        (("    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    heads = tl.arange(0, BLOCK_H)[:, None]\n",
          "    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    heads = tl.arange(0, 2)[:, None]\n", 1),),
        "hardcoded", "the backward's head lanes tl.arange(0, 2) (the documented HK) while its loops step BLOCK_H: with BLOCK_H > 2 the heads between get no gradient"),
    Bug("transpose_as_swapped_halves", "backward",
        ((_BWD_DQ_STORES, "        tl.store(dq_ptr + first, g2 * cos + g1 * sin, mask=mask)\n"
                          "        tl.store(dq_ptr + first + half, g1 * cos - g2 * sin, mask=mask)\n", 1),),
        "formula", "dq's transpose taken as the forward's two rows stored into each other's half (swapping the rows is not transposing): dq's two halves come out exchanged",
        accept=("address",)),
    Bug("backward_negates_the_result", "backward",
        ((_BWD_DK_STORES, "        tl.store(dk_ptr + first, -(g1 * cos - g2 * sin), mask=mask)\n"
                          "        tl.store(dk_ptr + first + half, -(g2 * cos + g1 * sin), mask=mask)\n", 1),),
        "formula", "dk negated as a whole on top of the negated sine (the inverse rotation taken to mean a minus sign): −R(−θ) instead of R(−θ)"),
    Bug("dk_reuses_q_loops_mask", "backward",
        ((_BWD_DK_MASK, "    for h0 in range(0, HK, BLOCK_H):\n        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr", 1),),
        "mask", "the dk loop does not rebuild its mask: it uses the q loop's last mask (q's head count and block), so key heads are dropped or turned past HK"),
    Bug("dq_second_half_stored_block_half_away", "backward",
        ((_BWD_DQ_STORES, "        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
                          "        tl.store(dq_ptr + first + BLOCK_HALF, g2 * cos + g1 * sin, mask=mask)\n", 1),),
        "address", "dq's second half stored BLOCK_HALF after the first (the padded lane count) instead of D/2: with D/2 no power of two it lands in the wrong place and the true second half is never written"),
    Bug("dk_loads_masked_by_lanes_only", "backward",
        (("        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
          "        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n",
          "        g1 = tl.load(dk_out_ptr + first, mask=cols[None, :], other=0.0).to(tl.float32)\n"
          "        g2 = tl.load(dk_out_ptr + first + half, mask=cols[None, :], other=0.0).to(tl.float32)\n", 1),),
        "mask", "dk_out's loads masked by the lanes alone (cols), not the heads: a partial block of key heads reads the next token's gradient, and past the end for the last token",
        notes="the stray values land in masked-off stores: the out-of-bounds read itself is the fault"),
]

_LANE_CHUNKS_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """The half-head walked 16 lanes at a time, the table rows loaded per chunk."""
    token = tl.program_id(0)
    half = D // 2
    pos = tl.load(pos_ptr + token)
    heads = tl.arange(0, BLOCK_H)[:, None]
    for c0 in range(0, half, 16):
        i = c0 + tl.arange(0, 16)
        cols = i < half
        cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
        sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
        for h0 in range(0, HQ, BLOCK_H):
            mask = (h0 + heads < HQ) & cols[None, :]
            first = (token * HQ + h0 + heads) * D + i[None, :]
            x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)
            x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
            tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
            tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)
        for h0 in range(0, HK, BLOCK_H):
            mask = (h0 + heads < HK) & cols[None, :]
            first = (token * HK + h0 + heads) * D + i[None, :]
            x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)
            x2 = tl.load(k_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
            tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
            tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)
'''

_STATIC_PAIR_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """One loop body for both tensors: a static loop picks (q, q_out, HQ) then (k, k_out, HK)."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for which in tl.static_range(2):
        if which == 0:
            src = q_ptr
            dst = q_out_ptr
            n_heads = HQ
        else:
            src = k_ptr
            dst = k_out_ptr
            n_heads = HK
        for h0 in range(0, n_heads, BLOCK_H):
            mask = (h0 + heads < n_heads) & cols[None, :]
            first = (token * n_heads + h0 + heads) * D + i[None, :]
            x1 = tl.load(src + first, mask=mask, other=0.0).to(tl.float32)
            x2 = tl.load(src + first + half, mask=mask, other=0.0).to(tl.float32)
            tl.store(dst + first, x1 * cos - x2 * sin, mask=mask)
            tl.store(dst + first + half, x2 * cos + x1 * sin, mask=mask)
'''

_ONE_HEAD_BWD = '''
@triton.jit
def rope_bwd_kernel(dq_out_ptr, dk_out_ptr, pos_ptr, cos_ptr, sin_ptr, dq_ptr, dk_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """One head per iteration, 1-D lane vectors; the transpose's signs written into the products."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    c = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)
    s = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)
    for h in range(0, HQ):
        base = (token * HQ + h) * D
        g1 = tl.load(dq_out_ptr + base + i, mask=cols, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + base + half + i, mask=cols, other=0.0).to(tl.float32)
        tl.store(dq_ptr + base + i, g1 * c + g2 * s, mask=cols)
        tl.store(dq_ptr + base + half + i, g2 * c - g1 * s, mask=cols)
    for h in range(0, HK):
        base = (token * HK + h) * D
        g1 = tl.load(dk_out_ptr + base + i, mask=cols, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + base + half + i, mask=cols, other=0.0).to(tl.float32)
        tl.store(dk_ptr + base + i, g1 * c + g2 * s, mask=cols)
        tl.store(dk_ptr + base + half + i, g2 * c - g1 * s, mask=cols)
'''

_FLAT_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """A flat lane range of BLOCK_H * BLOCK_HALF lanes: lane n is head n // BLOCK_HALF, pair n % BLOCK_HALF."""
    token = tl.program_id(0)
    half = D // 2
    n = tl.arange(0, BLOCK_H * BLOCK_HALF)
    hh = n // BLOCK_HALF
    i = n % BLOCK_HALF
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + hh < HQ) & cols
        first = (token * HQ + h0 + hh) * D + i
        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + hh < HK) & cols
        first = (token * HK + h0 + hh) * D + i
        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(k_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=mask)
        tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)
'''

_ADVANCED_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """Pointers to the token's first heads, advanced BLOCK_H heads a step; the mask counts heads left."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    offs = heads * D + i[None, :]
    src = q_ptr + token * HQ * D
    dst = q_out_ptr + token * HQ * D
    left = HQ
    while left > 0:
        mask = (heads < left) & cols[None, :]
        x1 = tl.load(src + offs, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(src + offs + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dst + offs, x1 * cos - x2 * sin, mask=mask)
        tl.store(dst + offs + half, x2 * cos + x1 * sin, mask=mask)
        src += BLOCK_H * D
        dst += BLOCK_H * D
        left -= BLOCK_H
    src = k_ptr + token * HK * D
    dst = k_out_ptr + token * HK * D
    left = HK
    while left > 0:
        mask = (heads < left) & cols[None, :]
        x1 = tl.load(src + offs, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(src + offs + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dst + offs, x1 * cos - x2 * sin, mask=mask)
        tl.store(dst + offs + half, x2 * cos + x1 * sin, mask=mask)
        src += BLOCK_H * D
        dst += BLOCK_H * D
        left -= BLOCK_H
'''

RIGHT = [
    Right("half_head_in_chunks_of_16", (Kernel("rope_fwd_kernel", _LANE_CHUNKS_FWD),),
          "the forward walks each half-head 16 lanes at a time, outside the head loops, the table rows loaded per chunk"),
    Right("q_and_k_by_a_static_loop", (Kernel("rope_fwd_kernel", _STATIC_PAIR_FWD),),
          "one loop body for q and k, a static loop choosing the tensor, its output and its head count"),
    Right("backward_one_head_at_a_time", (Kernel("rope_bwd_kernel", _ONE_HEAD_BWD),),
          "the backward one head per iteration on 1-D lanes, sin kept and the transpose's signs in the products"),
    Right("forward_flat_lanes", (Kernel("rope_fwd_kernel", _FLAT_FWD),),
          "the forward over a flat lane range, head = n // BLOCK_HALF and pair = n % BLOCK_HALF"),
    Right("forward_pointers_advanced", (Kernel("rope_fwd_kernel", _ADVANCED_FWD),),
          "the forward advances q's and k's pointers BLOCK_H heads a step, the mask counting the heads left"),
]
