"""Fourth blind corpus, puzzle 29 (RoPE forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_TABLES = ("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
               "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n")
_BWD_TABLES = ("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
               "    # the transpose of [[cos, -sin], [sin, cos]] is [[cos, sin], [-sin, cos]]: the forward with -sin\n"
               "    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n")
_FWD_Q_LOOP = ("    for h0 in range(0, HQ, BLOCK_H):\n"
               "        mask = (h0 + heads < HQ) & cols[None, :]\n"
               "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head\n"
               "        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
               "        x2 = tl.load(q_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n"
               "        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
               "        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n")
_FWD_K_STORES = ("        tl.store(k_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
                 "        tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n")
_BWD_Q_LOOP = ("    for h0 in range(0, HQ, BLOCK_H):\n"
               "        mask = (h0 + heads < HQ) & cols[None, :]\n"
               "        first = (token * HQ + h0 + heads) * D + i[None, :]\n"
               "        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
               "        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n"
               "        tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
               "        tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n")
_BWD_K_LOOP = ("    for h0 in range(0, HK, BLOCK_H):\n"
               "        mask = (h0 + heads < HK) & cols[None, :]\n"
               "        first = (token * HK + h0 + heads) * D + i[None, :]\n"
               "        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
               "        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n"
               "        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
               "        tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n")


def _sub(block, old, new):
    assert old in block, old
    return block.replace(old, new)


MEASURED = [
    # forward
    Bug("table_row_not_scaled", "forward",
        ((_FWD_TABLES, _FWD_TABLES.replace("pos * half + i", "pos + i"), 1),),
        "address", "the forward reads the tables at pos + i, not pos · D/2 + i: the row stride of the [P, D/2] tables is left out, every position past 0 takes another position's angles"),
    Bug("tables_rounded_to_bf16", "forward",
        ((_FWD_TABLES, _FWD_TABLES.replace(")[None, :]\n", ").to(tl.bfloat16)[None, :]\n"), 1),),
        "precision", "the forward rounds the cos and sin rows to bf16 \"to save registers\": the angles keep 8 bits and every rotated value is off by up to 0.4 %",
        notes="fp32 cases only"),
    Bug("q_head_and_lane_masks_or_ed", "forward",
        ((_FWD_Q_LOOP, _sub(_FWD_Q_LOOP, "(h0 + heads < HQ) & cols[None, :]", "(h0 + heads < HQ) | cols[None, :]"), 1),),
        "mask", "the forward's q mask joins the head mask and the lane mask with | instead of &: padded lanes of real heads and real lanes of padded heads load and store past the head",
        notes="shows only where D/2 is not a power of two or HQ is not a multiple of BLOCK_H"),
    Bug("q_heads_loop_starts_at_block_h", "forward",
        ((_FWD_Q_LOOP, _sub(_FWD_Q_LOOP, "range(0, HQ, BLOCK_H)", "range(BLOCK_H, HQ, BLOCK_H)"), 1),),
        "loop", "the forward's q loop starts at BLOCK_H instead of 0: the first block of query heads is never rotated"),
    Bug("second_half_from_the_rotated_first", "forward",
        ((_FWD_Q_LOOP, _sub(_FWD_Q_LOOP,
                            "        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n",
                            "        x1 = x1 * cos - x2 * sin\n        tl.store(q_out_ptr + first, x1, mask=mask)\n"), 1),),
        "formula", "x1 overwritten with its rotated value before the second half is computed: q's second half turns the already-turned x1, not the input's"),
    Bug("k_turned_the_other_way", "forward",
        ((_FWD_K_STORES, "        tl.store(k_out_ptr + first, x1 * cos + x2 * sin, mask=mask)\n"
                         "        tl.store(k_out_ptr + first + half, x2 * cos - x1 * sin, mask=mask)\n", 1),),
        "formula", "k rotated by −θ (the transpose, copied from the backward) while q turns by +θ: q·k then depends on the positions' sum, not their difference"),
    Bug("tables_read_at_even_columns", "forward",
        ((_FWD_TABLES, _FWD_TABLES.replace("pos * half + i", "pos * half + 2 * i"), 1),),
        "address", "the table column taken as 2i (theta_i = base^(−2i/D) misread as the column 2i): the second half of the lanes read the next position's row, every pair turns by the wrong frequency",
        accept=("formula",)),
    Bug("second_half_read_from_q_out", "forward",
        ((_FWD_Q_LOOP, _sub(_FWD_Q_LOOP, "tl.load(q_ptr + first + half,", "tl.load(q_out_ptr + first + half,"), 1),),
        "address", "the forward loads q's second half from q_out (the output pointer, copied from the store below): x2 is whatever q_out held"),
    # backward
    Bug("table_row_stride_documented_8", "backward",
        ((_BWD_TABLES, _BWD_TABLES.replace("pos * half + i", "pos * 8 + i"), 1),),
        "hardcoded", "the backward's table row stride written 8 (D/2 at the documented D = 16) instead of half: other head sizes read another position's angles",
        notes="shows only where D != 16"),
    Bug("dk_partial_products_in_bf16", "backward",
        ((_BWD_K_LOOP, _sub(_BWD_K_LOOP,
                            "        tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)\n"
                            "        tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)\n",
                            "        tl.store(dk_ptr + first, (g1 * cos).to(tl.bfloat16) - (g2 * sin).to(tl.bfloat16), mask=mask)\n"
                            "        tl.store(dk_ptr + first + half, (g2 * cos).to(tl.bfloat16) + (g1 * sin).to(tl.bfloat16), mask=mask)\n"), 1),),
        "precision", "dk's two products each rounded to bf16 before they are added: the gradient keeps 8 bits, twice over",
        notes="fp32 cases only"),
    Bug("dk_heads_stepped_by_block_half", "backward",
        ((_BWD_K_LOOP, _sub(_BWD_K_LOOP, "range(0, HK, BLOCK_H)", "range(0, HK, BLOCK_HALF)"), 1),),
        "loop", "the backward's key-head loop steps by BLOCK_HALF (the lane block) instead of BLOCK_H: where BLOCK_HALF > BLOCK_H the heads between blocks get no gradient",
        notes="shows only where HK > BLOCK_H"),
    Bug("dq_halves_stored_swapped", "backward",
        ((_BWD_Q_LOOP, _sub(_BWD_Q_LOOP, "tl.store(dq_ptr + first, g1", "tl.store(dq_ptr + first + half, g1")
          .replace("tl.store(dq_ptr + first + half, g2", "tl.store(dq_ptr + first, g2"), 1),),
        "address", "dq's first-half gradient stored into the second half and the other way round",
        accept=("formula",)),
    Bug("dk_head_block_start_dropped", "backward",
        ((_BWD_K_LOOP, _sub(_BWD_K_LOOP, "(token * HK + h0 + heads) * D", "(token * HK + heads) * D"), 1),),
        "address", "the backward's key-head offsets leave out h0: every block of key heads reads and writes the first BLOCK_H heads",
        notes="shows only where HK > BLOCK_H"),
    Bug("dq_out_cleared_after_use", "backward",
        ((_BWD_Q_LOOP, _BWD_Q_LOOP + "        # consumed: cleared so that a second call cannot add it twice\n"
                                    "        tl.store(dq_out_ptr + first, tl.zeros_like(g1), mask=mask)\n"
                                    "        tl.store(dq_out_ptr + first + half, tl.zeros_like(g2), mask=mask)\n", 1),),
        "inplace", "the backward zeroes dq_out after reading it: dq is right, but the upstream gradient, an input the caller still owns, is destroyed"),
    Bug("backward_lanes_documented_8", "backward",
        (("    cols = i < half\n    pos = tl.load(pos_ptr + token)\n    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose",
          "    cols = i < 8\n    pos = tl.load(pos_ptr + token)\n    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose", 1),),
        "hardcoded", "the backward's lane mask i < 8 (D/2 at the documented D = 16) instead of i < half: larger heads get gradients for their first 8 pairs only",
        notes="shows only where D != 16"),
    Bug("dq_out_loads_unmasked", "backward",
        ((_BWD_Q_LOOP, _sub(_BWD_Q_LOOP, "tl.load(dq_out_ptr + first, mask=mask, other=0.0)", "tl.load(dq_out_ptr + first)")
          .replace("tl.load(dq_out_ptr + first + half, mask=mask, other=0.0)", "tl.load(dq_out_ptr + first + half)"), 1),),
        "mask", "the backward loads dq_out without the mask (the stores are masked): padded heads and lanes of the last token read past the end of dq_out",
        notes="the stray values land in masked-off lanes: the out-of-bounds read itself is the fault"),
    Bug("backward_cos_and_sin_tables_swapped", "backward",
        ((_BWD_TABLES, "    cos = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
                       "    # the transpose of the rotation: cos and sin trade places\n"
                       "    sin = -tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n", 1),),
        "formula", "the backward takes the transpose to mean cos and sin trade places (and sin flips sign): it turns by θ − 90°, not −θ"),
]

_PARTNER_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """Each head loaded whole, [BLOCK_H, 2 * BLOCK_HALF] lanes, with its partner lane (i <-> i ± D/2)
    loaded beside it: out = x cos + sign · partner · sin, sign −1 in the first half, +1 in the second."""
    token = tl.program_id(0)
    half = D // 2
    d = tl.arange(0, 2 * BLOCK_HALF)
    lane_ok = d < D
    first_half = d < half
    j = tl.where(first_half, d, d - half)
    partner = tl.where(first_half, d + half, d - half)
    sign = tl.where(first_half, -1.0, 1.0)[None, :]
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + j, mask=lane_ok, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + j, mask=lane_ok, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & lane_ok[None, :]
        row = (token * HQ + h0 + heads) * D
        x = tl.load(q_ptr + row + d[None, :], mask=mask, other=0.0).to(tl.float32)
        xp = tl.load(q_ptr + row + partner[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + row + d[None, :], x * cos + sign * xp * sin, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & lane_ok[None, :]
        row = (token * HK + h0 + heads) * D
        x = tl.load(k_ptr + row + d[None, :], mask=mask, other=0.0).to(tl.float32)
        xp = tl.load(k_ptr + row + partner[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + row + d[None, :], x * cos + sign * xp * sin, mask=mask)
'''

_FLAT_BWD = '''
@triton.jit
def rope_bwd_kernel(dq_out_ptr, dk_out_ptr, pos_ptr, cos_ptr, sin_ptr, dq_ptr, dk_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """The [BLOCK_H, BLOCK_HALF] tile as one flat range of lanes: lane n is head n // BLOCK_HALF,
    pair n % BLOCK_HALF; each lane gathers its own table entry."""
    token = tl.program_id(0)
    half = D // 2
    n = tl.arange(0, BLOCK_H * BLOCK_HALF)
    h = n // BLOCK_HALF
    i = n % BLOCK_HALF
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=i < half, other=0.0)
    sin = tl.load(sin_ptr + pos * half + i, mask=i < half, other=0.0)
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + h < HQ) & (i < half)
        first = (token * HQ + h0 + h) * D + i
        g1 = tl.load(dq_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)
        tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + h < HK) & (i < half)
        first = (token * HK + h0 + h) * D + i
        g1 = tl.load(dk_out_ptr + first, mask=mask, other=0.0).to(tl.float32)
        g2 = tl.load(dk_out_ptr + first + half, mask=mask, other=0.0).to(tl.float32)
        tl.store(dk_ptr + first, g1 * cos + g2 * sin, mask=mask)
        tl.store(dk_ptr + first + half, g2 * cos - g1 * sin, mask=mask)
'''

_SPLIT_JOIN_FWD = '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    """Both halves in one [BLOCK_H, BLOCK_HALF, 2] load (the last axis: which half), split into x1 and
    x2, turned, joined back and stored in one store."""
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    which = tl.arange(0, 2)
    pos = tl.load(pos_ptr + token)
    cos = tl.load(cos_ptr + pos * half + i, mask=i < half, other=0.0)[None, :]
    sin = tl.load(sin_ptr + pos * half + i, mask=i < half, other=0.0)[None, :]
    heads = tl.arange(0, BLOCK_H)
    lane = i[None, :, None] + which[None, None, :] * half
    lane_ok = (i < half)[None, :, None] & (which[None, None, :] < 2)
    for h0 in range(0, HQ, BLOCK_H):
        mask = ((h0 + heads) < HQ)[:, None, None] & lane_ok
        offs = ((token * HQ + h0 + heads) * D)[:, None, None] + lane
        x1, x2 = tl.split(tl.load(q_ptr + offs, mask=mask, other=0.0).to(tl.float32))
        tl.store(q_out_ptr + offs, tl.join(x1 * cos - x2 * sin, x2 * cos + x1 * sin), mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = ((h0 + heads) < HK)[:, None, None] & lane_ok
        offs = ((token * HK + h0 + heads) * D)[:, None, None] + lane
        x1, x2 = tl.split(tl.load(k_ptr + offs, mask=mask, other=0.0).to(tl.float32))
        tl.store(k_out_ptr + offs, tl.join(x1 * cos - x2 * sin, x2 * cos + x1 * sin), mask=mask)
'''

RIGHT = [
    Right("full_head_with_partner_gather", (Kernel("rope_fwd_kernel", _PARTNER_FWD),),
          "the forward loads each head whole with its partner lanes and applies x cos + sign · partner · sin in one store"),
    Right("backward_flat_lanes_explicit_signs", (Kernel("rope_bwd_kernel", _FLAT_BWD),),
          "the backward over a flat lane range (head = n // BLOCK_HALF), the transpose's signs written into the products, sin unnegated"),
    Right("backward_as_forward_on_swapped_halves",
          ((_BWD_TABLES, "    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
                         "    # R(-t) on (g1, g2) is R(t) on (g2, g1) with the two results swapped\n"
                         "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n", 1),
           (_BWD_Q_LOOP, _sub(_sub(_BWD_Q_LOOP, "g1 = tl.load(dq_out_ptr + first,", "g1 = tl.load(dq_out_ptr + first + half,"),
                              "g2 = tl.load(dq_out_ptr + first + half,", "g2 = tl.load(dq_out_ptr + first,")
            .replace("tl.store(dq_ptr + first, g1 * cos - g2 * sin", "tl.store(dq_ptr + first + half, g1 * cos - g2 * sin")
            .replace("tl.store(dq_ptr + first + half, g2 * cos + g1 * sin", "tl.store(dq_ptr + first, g2 * cos + g1 * sin"), 1),
           (_BWD_K_LOOP, _sub(_sub(_BWD_K_LOOP, "g1 = tl.load(dk_out_ptr + first,", "g1 = tl.load(dk_out_ptr + first + half,"),
                              "g2 = tl.load(dk_out_ptr + first + half,", "g2 = tl.load(dk_out_ptr + first,")
            .replace("tl.store(dk_ptr + first, g1 * cos - g2 * sin", "tl.store(dk_ptr + first + half, g1 * cos - g2 * sin")
            .replace("tl.store(dk_ptr + first + half, g2 * cos + g1 * sin", "tl.store(dk_ptr + first, g2 * cos + g1 * sin"), 1)),
          "the backward as the forward rotation applied to the halves swapped, the two results stored swapped back"),
    Right("halves_by_split_and_join", (Kernel("rope_fwd_kernel", _SPLIT_JOIN_FWD),),
          "the forward loads both halves as one [BLOCK_H, BLOCK_HALF, 2] tile, tl.split / tl.join around the turn"),
    Right("gauss_three_multiplications",
          ((_FWD_Q_LOOP, _sub(_FWD_Q_LOOP,
                              "        tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)\n"
                              "        tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)\n",
                              "        k1 = cos * (x1 + x2)\n"
                              "        k2 = x1 * (sin - cos)\n"
                              "        k3 = x2 * (cos + sin)\n"
                              "        tl.store(q_out_ptr + first, k1 - k3, mask=mask)\n"
                              "        tl.store(q_out_ptr + first + half, k1 + k2, mask=mask)\n"), 1),),
          "q's turn as a complex product with three multiplications (Gauss): k1 − k3 and k1 + k2"),
]
