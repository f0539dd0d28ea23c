"""Blind corpus (round 6 for p27-p32), puzzle 30 (SwiGLU MLP forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_F_OFF = ("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
          "    mask = offsets < n_elements\n"
          "    # fp32 inside")
_F_H = "    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)\n"
_B_OFF = ("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
          "    mask = offsets < n_elements\n"
          "    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
          "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
          "    dh = ")
_B_A_LOAD = ("    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
             "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
             "    dh = tl.load(dh_ptr")
_B_DB = "    tl.store(db_ptr + offsets, dh * silu, mask=mask)\n"
_B_DA = "    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)"

_FWD_TWO_HALVES = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """The program's block done in two halves of BLOCK // 2, the sigmoid written out by hand."""
    HALF: tl.constexpr = BLOCK // 2
    start = tl.program_id(0) * BLOCK
    for part in range(0, 2):
        offs = start + part * HALF + tl.arange(0, HALF)
        m = offs < n_elements
        a = tl.load(a_ptr + offs, mask=m, other=1.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=m, other=1.0).to(tl.float32)
        tl.store(h_ptr + offs, a / (1.0 + tl.exp(-a)) * b, mask=m)
'''

MEASURED = [
    # forward
    Bug("gate_sigmoid_not_silu", "forward",
        ((_F_H, "    tl.store(h_ptr + offsets, tl.sigmoid(a) * b, mask=mask)\n", 1),),
        "formula", "h = sigmoid(a)·b: the gate uses the sigmoid, not silu(a) = a·sigmoid(a)"),
    Bug("gate_on_b", "forward",
        ((_F_H, "    tl.store(h_ptr + offsets, b * tl.sigmoid(b) * a, mask=mask)\n", 1),),
        "formula", "silu applied to b (the up projection) instead of a (the gate projection)"),
    Bug("fwd_mask_le", "forward",
        ((_F_OFF, _F_OFF.replace("offsets < n_elements", "offsets <= n_elements"), 1),),
        "mask", "the bound is offsets <= n_elements: the element just past the tensor is read and written"),
    Bug("fwd_offsets_pid_not_scaled", "forward",
        ((_F_OFF, _F_OFF.replace("tl.program_id(0) * BLOCK + ", "tl.program_id(0) + "), 1),),
        "address", "the program's block starts at pid, not pid·BLOCK: the blocks overlap and most of the tensor is never written"),
    Bug("fwd_block_hardcoded", "forward",
        ((_F_OFF, _F_OFF.replace("tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "tl.program_id(0) * 16 + tl.arange(0, BLOCK)"), 1),),
        "hardcoded", "the block start uses 16 (the documented case's BLOCK) written in, not the BLOCK passed"),
    Bug("fwd_sigmoid_exp_sign", "forward",
        ((_F_H, "    tl.store(h_ptr + offsets, a / (1.0 + tl.exp(a)) * b, mask=mask)\n", 1),),
        "formula", "the sigmoid written by hand as 1 / (1 + exp(a)): the sign of the exponent is wrong, that is sigmoid(-a)"),
    Bug("fwd_sigmoid_overflows", "forward",
        ((_F_H, "    e = tl.exp(a)\n    tl.store(h_ptr + offsets, a * (e / (1.0 + e)) * b, mask=mask)\n", 1),),
        "stability", "the sigmoid written exp(a) / (1 + exp(a)): for a large a both overflow and give inf / inf = NaN"),
    # backward
    Bug("da_sigmoid_only", "backward",
        ((_B_DA, "    tl.store(da_ptr + offsets, dh * b * s, mask=mask)", 1),),
        "formula", "silu'(a) taken as sigmoid(a): the product rule's a·s·(1 − s) term is dropped"),
    Bug("da_sigmoid_derivative", "backward",
        ((_B_DA, "    tl.store(da_ptr + offsets, dh * b * s * (1.0 - s), mask=mask)", 1),),
        "formula", "silu'(a) replaced by the sigmoid's own derivative s·(1 − s)"),
    Bug("db_sigmoid_not_silu", "backward",
        ((_B_DB, "    tl.store(db_ptr + offsets, dh * s, mask=mask)\n", 1),),
        "formula", "db = dh·sigmoid(a): b's partner in the product is silu(a), not the sigmoid"),
    Bug("da_without_dh", "backward",
        ((_B_DA, "    tl.store(da_ptr + offsets, b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "formula", "da drops the upstream gradient dh: the chain rule's outer factor forgotten"),
    Bug("da_db_swapped", "backward",
        ((_B_DB, "    tl.store(da_ptr + offsets, dh * silu, mask=mask)\n", 1),
         (_B_DA, "    tl.store(db_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1)),
        "address", "each gradient stored through the other's pointer: da lands in db and db in da", ("formula",)),
    Bug("bwd_loads_no_mask", "backward",
        ((_B_A_LOAD, "    a = tl.load(a_ptr + offsets).to(tl.float32)\n"
                     "    b = tl.load(b_ptr + offsets).to(tl.float32)\n"
                     "    dh = tl.load(dh_ptr", 1),),
        "mask", "a and b loaded without the mask: the last block reads past the tensors"),
    Bug("bwd_da_store_no_mask", "backward",
        ((_B_DA, "    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)))", 1),),
        "mask", "da's store has no mask: the last block writes past the end of da"),
    Bug("bwd_program_id_axis1", "backward",
        ((_B_OFF, _B_OFF.replace("tl.program_id(0)", "tl.program_id(1)"), 1),),
        "address", "the block index read from program_id(1), an axis the 1-D grid does not have: every program handles block 0"),
    Bug("bwd_da_into_a", "backward",
        ((_B_DA, "    tl.store(a_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "inplace", "da written over a (the input) to save memory: da is never written, and a is changed"),
]

RIGHT = [
    Right("fwd_two_halves_hand_sigmoid", (Kernel("swiglu_fwd_kernel", _FWD_TWO_HALVES),),
          "the forward does its block in two halves and writes the sigmoid as 1 / (1 + exp(-a)): the same h"),
    Right("da_regrouped",
          ((_B_DA, "    tl.store(da_ptr + offsets, dh * b * (s + silu * (1.0 - s)), mask=mask)", 1),),
          "silu'(a) written s + silu·(1 − s), the same expression regrouped"),
    Right("bwd_g_shared",
          ((_B_DB + "    # silu'(a) = s + a * s * (1 - s) = s * (1 + a * (1 - s))\n" + _B_DA,
            "    g = dh * b\n"
            "    tl.store(da_ptr + offsets, g * s * (1.0 + a - silu), mask=mask)\n"
            "    tl.store(db_ptr + offsets, silu * dh, mask=mask)", 1),),
          "da written g·s·(1 + a − silu) with g = dh·b (a·(1 − s) = a − silu), da stored before db"),
    Right("bwd_int64_offsets",
          ((_B_OFF, _B_OFF.replace("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n",
                                   "    start = tl.program_id(0).to(tl.int64) * BLOCK\n"
                                   "    offsets = start + tl.arange(0, BLOCK)\n"), 1),),
          "the block start computed in int64 first: the same offsets"),
]
