"""Blind corpus (round 8 for p27-p32), puzzle 30 (SwiGLU): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

FWD_OFF = """    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    # fp32 inside"""
BWD_B = """    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dh = tl.load("""
FWD_STORE = "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)"
DA = "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)"
DB = "tl.store(db_ptr + offsets, dh * silu, mask=mask)"

MEASURED = [
    Bug("fwd_mask_le", "forward",
        ((FWD_OFF, FWD_OFF.replace("offsets < n_elements", "offsets <= n_elements"), 1),),
        "mask", "the bound is <= n_elements: one lane past the end is loaded and stored"),
    Bug("fwd_sigmoid_only", "forward",
        ((FWD_STORE, "tl.store(h_ptr + offsets, tl.sigmoid(a) * b, mask=mask)", 1),),
        "formula", "the gate is sigmoid(a) (GLU), not silu(a) = a·sigmoid(a)"),
    Bug("fwd_offsets_no_block", "forward",
        ((FWD_OFF, FWD_OFF.replace("tl.program_id(0) * BLOCK + ", "tl.program_id(0) + "), 1),),
        "address", "the program's offset is pid, not pid * BLOCK: blocks overlap and most of the tensor is never written"),
    Bug("bwd_db_uses_a", "backward",
        ((DB, "tl.store(db_ptr + offsets, dh * a, mask=mask)", 1),),
        "formula", "db = dh · a: the gate's silu is dropped"),
    Bug("bwd_da_no_b", "backward",
        ((DA, "tl.store(da_ptr + offsets, dh * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "formula", "da forgets the factor b that the product rule gives it"),
    Bug("bwd_sigmoid_derivative", "backward",
        ((DA, "tl.store(da_ptr + offsets, dh * b * s * (1.0 - s), mask=mask)", 1),),
        "formula", "da uses the sigmoid's derivative s(1 - s) instead of silu's"),
    Bug("bwd_outputs_swapped", "backward",
        ((DB, "tl.store(da_ptr + offsets, dh * silu, mask=mask)", 1),
         (DA, "tl.store(db_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1)),
        "address", "da and db are stored to each other's buffers", accept=("formula",)),
    Bug("fwd_sigmoid_exp_ratio", "forward",
        ((FWD_STORE, "tl.store(h_ptr + offsets, a * (tl.exp(a) / (1.0 + tl.exp(a))) * b, mask=mask)", 1),),
        "stability", "sigmoid written as exp(a) / (1 + exp(a)): inf / inf = NaN for large a"),
    Bug("bwd_dh_unmasked", "backward",
        (("dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)", "dh = tl.load(dh_ptr + offsets).to(tl.float32)", 1),),
        "mask", "dh is loaded without the mask: the last block reads past the end"),
    Bug("fwd_stores_into_a", "forward",
        ((FWD_STORE, "tl.store(a_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", 1),),
        "inplace", "h is stored over the input a instead of into h", accept=("address",)),
    Bug("fwd_block_hardcoded", "forward",
        ((FWD_OFF, FWD_OFF.replace("tl.program_id(0) * BLOCK + ", "tl.program_id(0) * 1024 + "), 1),),
        "hardcoded", "the block size is written as 1024 in the offsets instead of BLOCK"),
    Bug("bwd_b_from_a", "backward",
        ((BWD_B, BWD_B.replace("b_ptr", "a_ptr"), 1),),
        "address", "the backward reads b from a's pointer"),
    Bug("bwd_da_without_dh", "mlp",
        ((DA, "tl.store(da_ptr + offsets, b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "formula", "da is silu'(a)·b without the upstream dh"),
    Bug("bwd_mask_last_block_off", "mlp",
        (("""    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(""", """    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements - 1
    a = tl.load(""", 1),),
        "mask", "the backward's bound is n_elements - 1: the last element's gradients are never written"),
    Bug("fwd_silu_squared_b", "mlp",
        ((FWD_STORE, "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b * b, mask=mask)", 1),),
        "formula", "h multiplies b in twice"),
]

RIGHT = [
    Right("fwd_sigmoid_by_hand",
          ((FWD_STORE, "tl.store(h_ptr + offsets, a / (1.0 + tl.exp(-a)) * b, mask=mask)", 1),),
          "silu(a) = a / (1 + exp(-a)): stable for large |a| in fp32 (exp(-a) -> inf gives 0)"),
    Right("bwd_silu_prime_other_form",
          ((DA, "tl.store(da_ptr + offsets, dh * b * (s + silu * (1.0 - s)), mask=mask)", 1),),
          "silu'(a) = s + silu(a)(1 - s): the same derivative, factored differently"),
    Right("fwd_two_half_blocks",
          (Kernel("swiglu_fwd_kernel", '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 2
    for part in range(2):
        offsets = tl.program_id(0) * BLOCK + part * HALF + tl.arange(0, HALF)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''),),
          "each program's block handled as two halves in a loop"),
    Right("bwd_db_first_da_then",
          ((DB, "tl.store(db_ptr + offsets, dh * a * s, mask=mask)", 1),
           (DA, "g = dh * b * s\n    tl.store(da_ptr + offsets, g + g * a * (1.0 - s), mask=mask)", 1)),
          "the products regrouped: db from a·s directly, da as g + g·a(1 - s)"),
]
