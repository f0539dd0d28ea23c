"""Every known kernel of puzzle 29 (RoPE forward and backward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the mutants no check can catch (EQUIVALENT).
What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right
from bugs.reasons import MASKED_OUT

def block(x: str, out: str, g: str = "x") -> str:
    """One head loop's loads and stores, as the solution writes them."""
    return (f"        {g}1 = tl.load({x}_ptr + first, mask=mask, other=0.0).to(tl.float32)\n"
            f"        {g}2 = tl.load({x}_ptr + first + half, mask=mask, other=0.0).to(tl.float32)\n"
            f"        tl.store({out}_ptr + first, {g}1 * cos - {g}2 * sin, mask=mask)\n"
            f"        tl.store({out}_ptr + first + half, {g}2 * cos + {g}1 * sin, mask=mask)\n")


def interleaved(x: str, out: str) -> str:
    """The same loop with pairs (2i, 2i + 1): first + i is element 2i of the head."""
    return (f"        x1 = tl.load({x}_ptr + first + i[None, :], mask=mask, other=0.0).to(tl.float32)\n"
            f"        x2 = tl.load({x}_ptr + first + i[None, :] + 1, mask=mask, other=0.0).to(tl.float32)\n"
            f"        tl.store({out}_ptr + first + i[None, :], x1 * cos - x2 * sin, mask=mask)\n"
            f"        tl.store({out}_ptr + first + i[None, :] + 1, x2 * cos + x1 * sin, mask=mask)\n")


FWD_POS = "    pos = tl.load(pos_ptr + token)\n    # one row"
K_LOOP = "    for h0 in range(0, HK, BLOCK_H):\n        mask = (h0 + heads < HK) & cols[None, :]\n"
FWD_SIN = "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
K_FIRST = "        first = (token * HK + h0 + heads) * D + i[None, :]\n        x1"
BWD_SIN = "    sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"

Q_LOOP = ("    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n"
          "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i of the first half of each head\n"
          + block("q", "q_out"))
K_LOOP_FWD = ("    # k has its own head count (grouped-query attention: fewer key heads than query heads)\n" + K_LOOP
              + "        first = (token * HK + h0 + heads) * D + i[None, :]\n" + block("k", "k_out"))

PINNED = [
    Bug("interleaved_pairs", "forward",
        ((block("q", "q_out"), interleaved("q", "q_out"), 1), (block("k", "k_out"), interleaved("k", "k_out"), 1)),
        cause="formula",
        reasons=(("interleaved convention",),),
        not_causes=("atomic",), not_words=("out of bounds",),
        notes="GPT-J's pairs (x[2i], x[2i+1]) where this puzzle (and Llama) pairs x[i] with x[i + D/2]", code='variant.interleaved'),
    Bug("backward_keeps_the_forward_sin", "backward",
        ((BWD_SIN, BWD_SIN.replace("sin = -tl.load", "sin = tl.load"), 1),),
        cause="formula",
        reasons=(("turned forward",),),
        not_causes=("atomic",), not_words=("out of bounds", "interleaved"),
        notes="the backward copied from the forward: it turns the gradient on by +angle instead of back", code='variant.backward_turns_forward'),
    Bug("forward_sin_sign_flipped", "forward",
        (("x1 * cos - x2 * sin", "x1 * cos + x2 * sin", 2), ("x2 * cos + x1 * sin", "x2 * cos - x1 * sin", 2)),
        cause="formula",
        reasons=(("−angle",),),
        not_causes=("atomic",), not_words=("out of bounds", "interleaved"),
        notes="rotate_half's minus put on the wrong half: a turn by -angle", code='variant.forward_turns_back'),
    Bug("every_token_at_the_first_position", "forward",
        ((FWD_POS, FWD_POS.replace("pos_ptr + token", "pos_ptr"), 1),),
        cause="address",
        reasons=(("first token's position",),),
        not_causes=("atomic",), not_words=("out of bounds",), code='variant.first_position'),
    Bug("token_index_as_position", "forward",
        ((FWD_POS, FWD_POS.replace("tl.load(pos_ptr + token)", "token"), 1),),
        cause="address", named="candidates",
        reasons=(("out of bounds", "out-of-bounds"), ("cos_ptr", "sin_ptr")),
        not_causes=("atomic",),
        notes="b * T + t used as the position: past the table's 2T rows from the second batch row on", code='values.slice'),
    Bug("key_heads_counted_as_query_heads", "forward",
        ((K_LOOP + K_FIRST, K_LOOP.replace("HK", "HQ") + K_FIRST, 1),),
        cause="loop", named="candidates",
        reasons=(("race", "out of bounds", "out-of-bounds"), ("k_ptr", "k_out_ptr")),
        not_causes=("atomic",),
        notes="GQA forgotten: k looped over HQ heads, into the next token's key heads (a race between programs) "
              "and past the end of k", code='values.unwritten'),
    Bug("key_rows_strided_by_query_heads", "backward",
        (("        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr",
          "        first = (token * HQ + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr", 1),),
        cause="address",
        reasons=(("out of bounds", "out-of-bounds", "never written"),),
        not_causes=("atomic",),
        notes="token t of k starts at t * HK * D, not t * HQ * D", code='fault.oob'),
    Bug("half_not_masked", "forward",
        (("        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  #",
          "        mask = h0 + heads < HQ\n        first = (token * HQ + h0 + heads) * D + i[None, :]  #", 1),),
        cause="mask", named="candidates",
        reasons=(("out of bounds", "out-of-bounds", "race"),),
        not_causes=("atomic",),
        notes="D/2 = 48 in a 64-lane block: lanes 48..63 write into the second half and past the head", code='fault.race'),
    Bug("table_rows_of_D", "backward",
        (("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose",
          "    cos = tl.load(cos_ptr + pos * D + i, mask=cols, other=0.0)[None, :]\n    # the transpose", 1),
         (BWD_SIN, BWD_SIN.replace("pos * half", "pos * D"), 1)),
        cause="address",
        reasons=(("out of bounds", "out-of-bounds"), ("cos_ptr", "sin_ptr")),
        not_causes=("atomic",),
        notes="the table's rows are D/2 wide (one angle per pair), not D", code='fault.oob'),
    Bug("backward_forgets_program_id", "backward",
        (("dk_ptr, HQ, HK, D,\n                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):\n"
          '    """dq, dk: the upstream gradients turned back by each pair\'s angle (the rotation\'s transpose).\n'
          '    Grid: (B * T,)."""\n    token = tl.program_id(0)',
          "dk_ptr, HQ, HK, D,\n                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):\n"
          '    """dq, dk: the upstream gradients turned back by each pair\'s angle (the rotation\'s transpose).\n'
          '    Grid: (B * T,)."""\n    token = 0', 1),),
        cause="address",
        reasons=(("race",),),
        reasons_unsanitized=(("never written",),),
        not_causes=("atomic",),
        notes="every program turns token 0: they all store the same elements of dq and dk", code='fault.race'),
]

PASSING = [
    Right("backward_written_out", (
        (BWD_SIN, BWD_SIN.replace("sin = -tl.load", "sin = tl.load"), 1),
        ("g1 * cos - g2 * sin", "g1 * cos + g2 * sin", 2), ("g2 * cos + g1 * sin", "g2 * cos - g1 * sin", 2)),
        notes="sin kept as loaded, the transpose's signs written into the two stores"),
    Right("positions_in_int64_and_keys_first", (
        (FWD_POS, "    pos = tl.load(pos_ptr + token).to(tl.int64)\n    # one row", 1),
        (Q_LOOP + K_LOOP_FWD, K_LOOP_FWD.replace("    # k has", "    # q after k; k has") + Q_LOOP, 1)),
        notes="the position widened to 64 bits before it scales an offset (tables of more than 2**31 "
              "elements); the key heads turned before the query heads"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:rope_fwd_kernel:f6dfb8c9:0": MASKED_OUT,
    "fill.other:rope_fwd_kernel:a5301c33:0": MASKED_OUT,
    "fill.other:rope_fwd_kernel:2eff541a:0": MASKED_OUT,
    "fill.other:rope_fwd_kernel:c6906eb0:0": MASKED_OUT,
    "fill.other:rope_fwd_kernel:9a573fd6:0": MASKED_OUT,
    "fill.other:rope_fwd_kernel:a2adf1d0:0": MASKED_OUT,
    "fill.other:rope_bwd_kernel:f6dfb8c9:0": MASKED_OUT,
    "fill.other:rope_bwd_kernel:b99e7da4:0": MASKED_OUT,
    "fill.other:rope_bwd_kernel:29dda396:0": MASKED_OUT,
    "fill.other:rope_bwd_kernel:b7035ed2:0": MASKED_OUT,
    "fill.other:rope_bwd_kernel:01c83950:0": MASKED_OUT,
    "fill.other:rope_bwd_kernel:252f261c:0": MASKED_OUT,
}

# MEASURED and RIGHT: the first blind corpus, bugs and correct rewrites written from the solution, the
# page and the notebook alone, by someone who had not read the hint code; scored untouched on the
# checker it was written against before any hint was tuned to it (tests/bugs/measure.py).
_BLIND_Q1 = "tl.store(q_out_ptr + first, x1 * cos - x2 * sin, mask=mask)"
_BLIND_Q2 = "tl.store(q_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)"
_BLIND_K2 = "tl.store(k_out_ptr + first + half, x2 * cos + x1 * sin, mask=mask)"
_BLIND_FWD_TABLES = ("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
              "    sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n")
_BLIND_BWD_SIN = "sin = -tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]"
_BLIND_FWD_Q_MASK = ("        mask = (h0 + heads < HQ) & cols[None, :]\n"
              "        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i")
_BLIND_FWD_Q_LOOP = "    heads = tl.arange(0, BLOCK_H)[:, None]\n    for h0 in range(0, HQ, BLOCK_H):\n        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i"
_BLIND_FWD_K_FIRST = "first = (token * HK + h0 + heads) * D + i[None, :]\n        x1 = tl.load(k_ptr"
_BLIND_DQ1 = "tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)"

_BLIND_INTERLEAVED_FWD = '''
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
'''

MEASURED = [
    Bug("first_half_sin_sign", "forward",
        ((_BLIND_Q1, _BLIND_Q1.replace("x1 * cos - x2 * sin", "x1 * cos + x2 * sin"), 1),),
        "formula", "q's first half turned with + x2·sin: the rotation's sign wrong in one half"),
    Bug("k_second_half_sin_sign", "forward",
        ((_BLIND_K2, _BLIND_K2.replace("x2 * cos + x1 * sin", "x2 * cos - x1 * sin"), 1),),
        "formula", "k's second half turned with − x1·sin"),
    Bug("backward_copies_forward", "backward",
        ((_BLIND_BWD_SIN, "sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]", 1),),
        "formula", "the backward turns by +angle (the forward copied): the gradient is turned further, not back"),
    Bug("backward_sign_flipped_twice", "backward",
        ((_BLIND_DQ1, "tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1),),
        "formula", "dq's first half with the sign swapped on top of the negated sine"),
    Bug("interleaved_pairs", "forward",
        (Kernel("rope_fwd_kernel", _BLIND_INTERLEAVED_FWD),),
        "address", "neighbours (2i, 2i + 1) paired (GPT-J) instead of i and i + D/2 (half-split)",
        accept=("formula",)),
    Bug("position_is_the_token_index", "forward",
        (("    pos = tl.load(pos_ptr + token)\n    # one row", "    pos = token\n    # one row", 1),),
        "address", "the table row taken at the token's index b·T + t instead of its position pos[b, t]",
        accept=("formula",)),
    Bug("table_rows_d_apart", "forward",
        ((_BLIND_FWD_TABLES, _BLIND_FWD_TABLES.replace("pos * half", "pos * D"), 1),),
        "address", "the cos/sin row taken at pos * D: the tables are D/2 wide"),
    Bug("half_lanes_unmasked", "forward",
        (("    cols = i < half  # D/2 need not", "    cols = i < BLOCK_HALF  # D/2 need not", 1),),
        "mask", "the lanes past D/2 not masked: with D = 96, lanes 48..63 write into the second half and the next head"),
    Bug("q_heads_unmasked", "forward",
        ((_BLIND_FWD_Q_MASK, _BLIND_FWD_Q_MASK.replace("mask = (h0 + heads < HQ) & cols[None, :]", "mask = cols[None, :] & (heads >= 0)"), 1),),
        "mask", "the heads past HQ in q's last head block not masked: they read and write the next token"),
    Bug("k_tokens_hq_heads_apart", "forward",
        ((_BLIND_FWD_K_FIRST, _BLIND_FWD_K_FIRST.replace("token * HK", "token * HQ"), 1),),
        "address", "k's token offset uses q's head count HQ"),
    Bug("k_loop_over_hq_heads", "forward",
        (("    # k has its own head count (grouped-query attention: fewer key heads than query heads)\n"
          "    for h0 in range(0, HK, BLOCK_H):",
          "    for h0 in range(0, HQ, BLOCK_H):", 1),),
        "loop", "k's head loop runs to HQ: when k has more heads than q, its last heads are never turned"),
    Bug("second_half_block_half_away", "forward",
        ((" + first + half", " + first + BLOCK_HALF", 8),),
        "address", "the second half taken BLOCK_HALF after the first, not D/2 (wrong when D/2 is no power of two)"),
    Bug("half_of_the_documented_d", "forward",
        (("    half = D // 2\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2",
          "    half = 8\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2", 1),),
        "hardcoded", "half = 8, the documented D = 16's half, instead of D // 2"),
    Bug("dk_stored_into_dq", "backward",
        (("tl.store(dk_ptr + first, g1", "tl.store(dq_ptr + first, g1", 1),
         ("tl.store(dk_ptr + first + half, g2", "tl.store(dq_ptr + first + half, g2", 1)),
        "address", "k's gradient stored into dq (the q loop copied): dk is never written and dq overwritten"),
    Bug("dk_reads_dq_out", "backward",
        (("tl.load(dk_out_ptr + first, mask", "tl.load(dq_out_ptr + first, mask", 1),
         ("tl.load(dk_out_ptr + first + half, mask", "tl.load(dq_out_ptr + first + half, mask", 1)),
        "address", "dk turned from dq_out's gradient (the q loop copied)"),
    Bug("heads_half_apart", "forward",
        (("first = (token * HQ + h0 + heads) * D + i[None, :]  # element i",
          "first = (token * HQ + h0 + heads) * half + i[None, :]  # element i", 1),),
        "address", "q's heads taken D/2 apart instead of D"),
    Bug("token_offset_without_heads", "backward",
        (("first = (token * HK + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr",
          "first = (token + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr", 1),),
        "address", "dk's token offset token instead of token * HK: tokens overlap"),
    Bug("head_blocks_floored", "forward",
        ((_BLIND_FWD_Q_LOOP, _BLIND_FWD_Q_LOOP.replace("range(0, HQ, BLOCK_H)", "range(0, (HQ // BLOCK_H) * BLOCK_H, BLOCK_H)"), 1),),
        "loop", "q's head loop covers HQ // BLOCK_H whole blocks: the last partial block of heads is never turned"),
    Bug("q_turned_in_place", "forward",
        (("tl.store(q_out_ptr + first", "tl.store(q_ptr + first", 2),),
        "inplace", "q turned in place (as some libraries do) instead of into q_out"),
]

RIGHT = [
    Right("backward_signs_in_the_stores",
          ((_BLIND_BWD_SIN, "sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]", 1),
           ("tl.store(dq_ptr + first, g1 * cos - g2 * sin, mask=mask)", "tl.store(dq_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1),
           ("tl.store(dq_ptr + first + half, g2 * cos + g1 * sin, mask=mask)", "tl.store(dq_ptr + first + half, g2 * cos - g1 * sin, mask=mask)", 1),
           ("tl.store(dk_ptr + first, g1 * cos - g2 * sin, mask=mask)", "tl.store(dk_ptr + first, g1 * cos + g2 * sin, mask=mask)", 1),
           ("tl.store(dk_ptr + first + half, g2 * cos + g1 * sin, mask=mask)", "tl.store(dk_ptr + first + half, g2 * cos - g1 * sin, mask=mask)", 1)),
          "the backward keeps sin and swaps the two stores' signs (dx1 = g1 c + g2 s, dx2 = g2 c − g1 s)"),
    Right("one_head_at_a_time",
          (Kernel("rope_fwd_kernel", '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    token = tl.program_id(0)
    half = D // 2
    i = tl.arange(0, BLOCK_HALF)
    cols = i < half
    pos = tl.load(pos_ptr + token)
    c = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)
    s = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)
    for h in range(0, HQ):
        base = q_ptr + (token * HQ + h) * D
        out = q_out_ptr + (token * HQ + h) * D
        x1 = tl.load(base + i, mask=cols, other=0.0).to(tl.float32)
        x2 = tl.load(base + half + i, mask=cols, other=0.0).to(tl.float32)
        tl.store(out + i, x1 * c - x2 * s, mask=cols)
        tl.store(out + half + i, x2 * c + x1 * s, mask=cols)
    for h in range(0, HK):
        base = k_ptr + (token * HK + h) * D
        out = k_out_ptr + (token * HK + h) * D
        x1 = tl.load(base + i, mask=cols, other=0.0).to(tl.float32)
        x2 = tl.load(base + half + i, mask=cols, other=0.0).to(tl.float32)
        tl.store(out + i, x1 * c - x2 * s, mask=cols)
        tl.store(out + half + i, x2 * c + x1 * s, mask=cols)
'''),),
          "one head per iteration, 1-D vectors, BLOCK_H unused"),
    Right("rotate_half_over_the_whole_head",
          (Kernel("rope_fwd_kernel", '''
@triton.jit
def rope_fwd_kernel(q_ptr, k_ptr, pos_ptr, cos_ptr, sin_ptr, q_out_ptr, k_out_ptr, HQ, HK, D,
                    BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    token = tl.program_id(0)
    half = D // 2
    j = tl.arange(0, 2 * BLOCK_HALF)
    in_head = j < D
    low = j < half
    partner = tl.where(low, j + half, j - half)
    angle = tl.where(low, j, j - half)
    sign = tl.where(low, -1.0, 1.0)
    pos = tl.load(pos_ptr + token)
    c = tl.load(cos_ptr + pos * half + angle, mask=in_head, other=0.0)[None, :]
    s = tl.load(sin_ptr + pos * half + angle, mask=in_head, other=0.0)[None, :] * sign[None, :]
    heads = tl.arange(0, BLOCK_H)[:, None]
    for h0 in range(0, HQ, BLOCK_H):
        mask = (h0 + heads < HQ) & in_head[None, :]
        row = (token * HQ + h0 + heads) * D
        x = tl.load(q_ptr + row + j[None, :], mask=mask, other=0.0).to(tl.float32)
        y = tl.load(q_ptr + row + partner[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(q_out_ptr + row + j[None, :], x * c + y * s, mask=mask)
    for h0 in range(0, HK, BLOCK_H):
        mask = (h0 + heads < HK) & in_head[None, :]
        row = (token * HK + h0 + heads) * D
        x = tl.load(k_ptr + row + j[None, :], mask=mask, other=0.0).to(tl.float32)
        y = tl.load(k_ptr + row + partner[None, :], mask=mask, other=0.0).to(tl.float32)
        tl.store(k_out_ptr + row + j[None, :], x * c + y * s, mask=mask)
'''),),
          "the whole head in one tile: out = x·cos + rotate_half(x)·sin, the partner and the sign gathered"),
    Right("tables_loaded_per_head_block",
          ((_BLIND_FWD_TABLES, "", 1),
           ("        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)\n",
            "        cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
            "        sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
            "        x1 = tl.load(q_ptr + first, mask=mask, other=0.0).to(tl.float32)\n", 1),
           ("        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)\n",
            "        cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
            "        sin = tl.load(sin_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n"
            "        x1 = tl.load(k_ptr + first, mask=mask, other=0.0).to(tl.float32)\n", 1)),
          "cos and sin loaded again in each block of heads (redundant, the same numbers)"),
    Right("int64_offsets_and_head_mask_rewritten",
          (("    token = tl.program_id(0)\n    half = D // 2\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2",
            "    token = tl.program_id(0).to(tl.int64)\n    half = D // 2\n    i = tl.arange(0, BLOCK_HALF)\n    cols = i < half  # D/2", 1),
           ("        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i",
            "        mask = (heads < HQ - h0) & (i[None, :] < half)\n        first = (token * HQ + h0 + heads) * D + i[None, :]  # element i", 1)),
          "the token index made int64, q's mask written as heads < HQ − h0 and i < D/2"),
    Right("backward_as_forward_with_negated_products",
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
    for h0 in range(0, HQ + HK, BLOCK_H):
        h = h0 + heads
        is_q = h < HQ
        is_k = (h >= HQ) & (h < HQ + HK)
        q_first = (token * HQ + h) * D + i[None, :]
        k_first = (token * HK + (h - HQ)) * D + i[None, :]
        mq = is_q & cols[None, :]
        mk = is_k & cols[None, :]
        g1 = tl.load(dq_out_ptr + q_first, mask=mq, other=0.0).to(tl.float32) + \\
            tl.load(dk_out_ptr + k_first, mask=mk, other=0.0).to(tl.float32)
        g2 = tl.load(dq_out_ptr + q_first + half, mask=mq, other=0.0).to(tl.float32) + \\
            tl.load(dk_out_ptr + k_first + half, mask=mk, other=0.0).to(tl.float32)
        d1 = c * g1 + s * g2
        d2 = c * g2 - s * g1
        tl.store(dq_ptr + q_first, d1, mask=mq)
        tl.store(dq_ptr + q_first + half, d2, mask=mq)
        tl.store(dk_ptr + k_first, d1, mask=mk)
        tl.store(dk_ptr + k_first + half, d2, mask=mk)
'''),),
          "the backward walks q's and k's heads as one list of HQ + HK heads, each lane masked to its tensor"),
]

# the second blind corpus (tests/bugs/corpora/p27_p32_blind_round2/p29.py), measured beside the first
from bugs.corpora.p27_p32_blind_round2 import p29 as _second  # noqa: E402
MEASURED = MEASURED + _second.MEASURED
RIGHT = RIGHT + _second.RIGHT
