"""Every known kernel of puzzle 29 (RoPE forward and backward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the mutants no check can catch (EQUIVALENT).
What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
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
        notes="GPT-J's pairs (x[2i], x[2i+1]) where this puzzle (and Llama) pairs x[i] with x[i + D/2]"),
    Bug("backward_keeps_the_forward_sin", "backward",
        ((BWD_SIN, BWD_SIN.replace("sin = -tl.load", "sin = tl.load"), 1),),
        cause="formula",
        reasons=(("turned forward",),),
        not_causes=("atomic",), not_words=("out of bounds", "interleaved"),
        notes="the backward copied from the forward: it turns the gradient on by +angle instead of back"),
    Bug("forward_sin_sign_flipped", "forward",
        (("x1 * cos - x2 * sin", "x1 * cos + x2 * sin", 2), ("x2 * cos + x1 * sin", "x2 * cos - x1 * sin", 2)),
        cause="formula",
        reasons=(("−angle",),),
        not_causes=("atomic",), not_words=("out of bounds", "interleaved"),
        notes="rotate_half's minus put on the wrong half: a turn by -angle"),
    Bug("every_token_at_the_first_position", "forward",
        ((FWD_POS, FWD_POS.replace("pos_ptr + token", "pos_ptr"), 1),),
        cause="address",
        reasons=(("first token's position",),),
        not_causes=("atomic",), not_words=("out of bounds",)),
    Bug("token_index_as_position", "forward",
        ((FWD_POS, FWD_POS.replace("tl.load(pos_ptr + token)", "token"), 1),),
        cause="address", named="candidates",
        reasons=(("out of bounds", "out-of-bounds"), ("cos_ptr", "sin_ptr")),
        not_causes=("atomic",),
        notes="b * T + t used as the position: past the table's 2T rows from the second batch row on"),
    Bug("key_heads_counted_as_query_heads", "forward",
        ((K_LOOP + K_FIRST, K_LOOP.replace("HK", "HQ") + K_FIRST, 1),),
        cause="loop", named="candidates",
        reasons=(("race", "out of bounds", "out-of-bounds"), ("k_ptr", "k_out_ptr")),
        not_causes=("atomic",),
        notes="GQA forgotten: k looped over HQ heads, into the next token's key heads (a race between programs) "
              "and past the end of k"),
    Bug("key_rows_strided_by_query_heads", "backward",
        (("        first = (token * HK + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr",
          "        first = (token * HQ + h0 + heads) * D + i[None, :]\n        g1 = tl.load(dk_out_ptr", 1),),
        cause="address",
        reasons=(("out of bounds", "out-of-bounds", "never written"),),
        not_causes=("atomic",),
        notes="token t of k starts at t * HK * D, not t * HQ * D"),
    Bug("half_not_masked", "forward",
        (("        mask = (h0 + heads < HQ) & cols[None, :]\n        first = (token * HQ + h0 + heads) * D + i[None, :]  #",
          "        mask = h0 + heads < HQ\n        first = (token * HQ + h0 + heads) * D + i[None, :]  #", 1),),
        cause="mask", named="candidates",
        reasons=(("out of bounds", "out-of-bounds", "race"),),
        not_causes=("atomic",),
        notes="D/2 = 48 in a 64-lane block: lanes 48..63 write into the second half and past the head"),
    Bug("table_rows_of_D", "backward",
        (("    cos = tl.load(cos_ptr + pos * half + i, mask=cols, other=0.0)[None, :]\n    # the transpose",
          "    cos = tl.load(cos_ptr + pos * D + i, mask=cols, other=0.0)[None, :]\n    # the transpose", 1),
         (BWD_SIN, BWD_SIN.replace("pos * half", "pos * D"), 1)),
        cause="address",
        reasons=(("out of bounds", "out-of-bounds"), ("cos_ptr", "sin_ptr")),
        not_causes=("atomic",),
        notes="the table's rows are D/2 wide (one angle per pair), not D"),
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
        notes="every program turns token 0: they all store the same elements of dq and dk"),
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
