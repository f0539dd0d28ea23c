"""Blind corpus, puzzle 30 (SwiGLU forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_H = "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)"
_DA = "dh * b * s * (1.0 + a * (1.0 - s))"
_DB = "tl.store(db_ptr + offsets, dh * silu, mask=mask)"
_FWD_MASK = "    mask = offsets < n_elements\n    # fp32 inside"
_BWD_MASK = "    mask = offsets < n_elements\n    a = "

MEASURED = [
    # forward
    Bug("silu_of_minus_a", "forward",
        ((_H, "tl.store(h_ptr + offsets, a / (1.0 + tl.exp(a)) * b, mask=mask)", 1),),
        "formula", "silu written a / (1 + exp(a)): that is a · sigmoid(−a), the sigmoid's sign flipped"),
    Bug("quick_gelu_gate", "forward",
        ((_H, "tl.store(h_ptr + offsets, a * tl.sigmoid(1.702 * a) * b, mask=mask)", 1),),
        "formula", "the gate a · sigmoid(1.702 a) (quick-GELU, copied from a GeGLU) instead of silu(a) = a · sigmoid(a)"),
    Bug("n_written_as_documented_40", "forward",
        ((_FWD_MASK, "    mask = offsets < 40\n    # fp32 inside", 1),),
        "hardcoded", "the forward's mask compares with 40, the documented M · N, instead of n_elements"),
    Bug("h_written_into_b", "forward",
        ((_H, "tl.store(b_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", 1),),
        "inplace", "h stored over b (in place, to save memory): b is an input, h is never written", accept=("address",)),
    Bug("h_stored_without_block_offset", "forward",
        ((_H, "tl.store(h_ptr + tl.arange(0, BLOCK), a * tl.sigmoid(a) * b, mask=mask)", 1),),
        "address", "h stored at tl.arange(0, BLOCK), without the program's offset: every block writes the first one"),
    Bug("forward_mask_against_grid", "forward",
        ((_FWD_MASK, "    mask = offsets < tl.num_programs(0) * BLOCK\n    # fp32 inside", 1),),
        "mask", "the forward's mask compares with the grid's extent (programs · BLOCK), not n_elements: the last block runs past the end",
        notes='h itself is right: only the out-of-bounds loads and stores (sanitizer) show it'),
    # backward
    Bug("silu_prime_misparenthesised", "backward",
        ((_DA, "dh * b * s * (1.0 + a) * (1.0 - s)", 1),),
        "formula", "silu'(a) written s(1 + a)(1 − s): the bracket closed too early"),
    Bug("silu_prime_second_term_without_s", "backward",
        ((_DA, "dh * b * (s + a * (1.0 - s))", 1),),
        "formula", "silu'(a) = s + a(1 − s): the sigmoid's derivative s(1 − s) lost its factor s"),
    Bug("sigmoid_prime_from_exp", "backward",
        ((_DA, "dh * b * (s + a * tl.exp(-a) / ((1.0 + tl.exp(-a)) * (1.0 + tl.exp(-a))))", 1),),
        "stability", "sigmoid'(a) written exp(−a) / (1 + exp(−a))²: for a ≪ 0 exp(−a) overflows, inf / inf is NaN"),
    Bug("backward_mask_against_block", "backward",
        ((_BWD_MASK, "    mask = offsets < BLOCK\n    a = ", 1),),
        "mask", "the backward's mask offsets < BLOCK: only the first block's elements get gradients"),
    Bug("backward_block_start_by_program_count", "backward",
        (("    \"\"\"\n    offsets = tl.program_id(0) * BLOCK", "    \"\"\"\n    offsets = tl.program_id(0) * tl.num_programs(0)", 1),),
        "address", "the backward's block starts at pid · num_programs (a grid-stride step) instead of pid · BLOCK: blocks overlap, the end is never reached"),
    Bug("db_added_into_output", "backward",
        ((_DB, "tl.store(db_ptr + offsets, tl.load(db_ptr + offsets, mask=mask) + dh * silu, mask=mask)", 1),),
        "accumulate", "db added to what the buffer holds (as .grad accumulates) instead of stored: db is not zeroed"),
    Bug("db_written_into_dh", "mlp",
        ((_DB, "tl.store(dh_ptr + offsets, dh * silu, mask=mask)", 1),),
        "inplace", "db stored over dh (dh is read already, so it seemed free): dh is an input, db never written",
        accept=("address",)),
    Bug("silu_prime_with_s_for_one_minus_s", "mlp",
        ((_DA, "dh * b * s * (1.0 + a * s)", 1),),
        "formula", "silu'(a) = s(1 + a · s): 1 − s replaced by s"),
    Bug("da_without_dh", "mlp",
        ((_DA, "b * s * (1.0 + a * (1.0 - s))", 1),),
        "formula", "da = b · silu'(a): the upstream gradient dh left out of the chain rule (db keeps it)"),
    Bug("backward_n_written_as_documented_40", "mlp",
        ((_BWD_MASK, "    mask = offsets < 40\n    a = ", 1),),
        "hardcoded", "the backward's mask compares with 40, the documented M · N, instead of n_elements"),
]

_GRID_STRIDE_FWD = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """A grid-stride loop: program pid takes blocks pid, pid + P, ... (one block each at this grid)."""
    for start in range(tl.program_id(0) * BLOCK, n_elements, BLOCK * tl.num_programs(0)):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_HALVES_BWD = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """The block in two halves of BLOCK // 2 elements, one after the other."""
    HALF: tl.constexpr = BLOCK // 2
    for part in tl.static_range(2):
        offsets = tl.program_id(0) * BLOCK + part * HALF + tl.arange(0, HALF)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        s = tl.sigmoid(a)
        tl.store(db_ptr + offsets, dh * a * s, mask=mask)
        tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)
'''

RIGHT = [
    Right("one_minus_s_as_sigmoid_of_minus_a",
          ((_DA, "dh * b * s * (1.0 + a * tl.sigmoid(-a))", 1),),
          "1 − s taken as sigmoid(−a) (no cancellation near s = 1)"),
    Right("silu_prime_as_difference",
          ((_DA, "dh * b * (s * (1.0 + a) - a * s * s)", 1),),
          "silu'(a) = s(1 + a) − a s², multiplied out differently"),
    Right("stable_sigmoid_by_where",
          (("    s = tl.sigmoid(a)\n", "    e = tl.exp(-tl.abs(a))\n    s = tl.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))\n", 1),),
          "the backward's sigmoid from exp(−|a|), a where picking the branch by a's sign"),
    Right("forward_grid_stride_loop", (Kernel("swiglu_fwd_kernel", _GRID_STRIDE_FWD),),
          "the forward as a grid-stride loop over blocks"),
    Right("backward_in_two_halves", (Kernel("swiglu_bwd_kernel", _HALVES_BWD),),
          "the backward's block handled as two halves by a static loop"),
    Right("forward_sigmoid_in_base_2",
          ((_H, "tl.store(h_ptr + offsets, a * b / (1.0 + tl.exp2(-a * 1.4426950408889634)), mask=mask)", 1),),
          "the forward's silu as a / (1 + 2^(−a log2 e)), b folded into the numerator"),
]
