"""Blind corpus (round 9 for p27-p32), puzzle 30 (SwiGLU forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

MEASURED = [
    Bug("fwd_store_unmasked", "forward",
        (("tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b)", 1),),
        "mask", "the last block's store writes its padded lanes past the end of h"),
    Bug("fwd_mask_le", "forward",
        (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32",
          "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets <= n_elements\n    # fp32", 1),),
        "mask", "the bound is offsets <= n_elements: one lane past the end is switched on"),
    Bug("fwd_sigmoid_not_silu", "forward",
        (("a * tl.sigmoid(a) * b", "tl.sigmoid(a) * b", 1),),
        "formula", "h = sigmoid(a) * b: the gate is silu(a) = a * sigmoid(a), the factor a dropped"),
    Bug("fwd_program_offset_no_block", "forward",
        (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32",
          "    offsets = tl.program_id(0) + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32", 1),),
        "address", "the program's offset is pid, not pid * BLOCK: the blocks overlap and most of the tensor is never written"),
    Bug("fwd_block_hardcoded", "forward",
        (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32",
          "    offsets = tl.program_id(0) * 1024 + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32", 1),),
        "hardcoded", "the block size 1024 written into the program offset instead of BLOCK"),
    Bug("fwd_into_a", "forward",
        (("tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", "tl.store(a_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", 1),),
        "inplace", "h written over a to save memory: a is destroyed (the backward needs it) and h never written"),
    Bug("bwd_sigmoid_derivative", "backward",
        (("dh * b * s * (1.0 + a * (1.0 - s))", "dh * b * s * (1.0 - s)", 1),),
        "formula", "da uses sigmoid'(a) = s(1 - s) instead of silu'(a) = s(1 + a(1 - s))"),
    Bug("bwd_da_without_b", "backward",
        (("dh * b * s * (1.0 + a * (1.0 - s))", "dh * s * (1.0 + a * (1.0 - s))", 1),),
        "formula", "da drops the factor b that the product rule gives silu(a)'s gradient"),
    Bug("bwd_db_sigmoid", "backward",
        (("tl.store(db_ptr + offsets, dh * silu, mask=mask)", "tl.store(db_ptr + offsets, dh * s, mask=mask)", 1),),
        "formula", "db = dh * sigmoid(a): the other factor is silu(a), not sigmoid(a)"),
    Bug("bwd_outputs_swapped", "backward",
        (("tl.store(db_ptr + offsets, dh * silu, mask=mask)", "tl.store(da_ptr + offsets, dh * silu, mask=mask)", 1),
         ("tl.store(da_ptr + offsets, dh * b * s", "tl.store(db_ptr + offsets, dh * b * s", 1)),
        "address", "da and db stored to each other's pointers"),
    Bug("bwd_dh_load_unmasked", "backward",
        (("dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0)", "dh = tl.load(dh_ptr + offsets)", 1),),
        "mask", "dh loaded without the mask: the last block reads past the end of dh"),
    Bug("bwd_store_unmasked", "backward",
        (("tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)",
          "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)))", 1),),
        "mask", "the da store has no mask: the last block writes past the end of da"),
    Bug("bwd_naive_sigmoid", "backward",
        (("    s = tl.sigmoid(a)\n", "    s = tl.exp(a) / (1.0 + tl.exp(a))\n", 1),),
        "stability", "sigmoid as exp(a) / (1 + exp(a)): inf / inf = NaN for a large positive a"),
    Bug("mlp_da_plus_sign", "mlp",
        (("dh * b * s * (1.0 + a * (1.0 - s))", "dh * b * s * (1.0 - a * (1.0 - s))", 1),),
        "formula", "silu'(a) written with a minus: s(1 - a(1 - s))"),
    Bug("mlp_bwd_program_offset", "mlp",
        (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    a = tl.load",
          "    offsets = tl.program_id(0) * BLOCK * 2 + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    a = tl.load", 1),),
        "address", "the backward's program offset is pid * 2 * BLOCK: every other block is skipped"),
]

RIGHT = [
    Right("sigmoid_by_hand",
          (("a * tl.sigmoid(a) * b", "a / (1.0 + tl.exp(-a)) * b", 1),),
          "silu(a) = a / (1 + exp(-a)): exp(-a) overflows to inf for very negative a, giving -0, still right"),
    Right("da_from_silu",
          (("dh * b * s * (1.0 + a * (1.0 - s))", "dh * b * (s + silu * (1.0 - s))", 1),),
          "silu'(a) written as s + silu(a)(1 - s): the same derivative, expanded"),
    Right("two_half_blocks_fwd", (Kernel("swiglu_fwd_kernel", '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    HALF: tl.constexpr = BLOCK // 2
    for part in range(2):
        offsets = tl.program_id(0) * BLOCK + part * HALF + tl.arange(0, HALF)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        silu = a * tl.sigmoid(a)
        tl.store(h_ptr + offsets, silu * b, mask=mask)
'''),),
          "each program covers its BLOCK in two halves, a loop of two"),
    Right("bwd_expanded", (Kernel("swiglu_bwd_kernel", '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-a))
    tl.store(db_ptr + offsets, dh * a * s, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dsilu = s + a * s - a * s * s
    tl.store(da_ptr + offsets, (dh * b) * dsilu, mask=mask)
'''),),
          "sigmoid by hand, db stored before b is loaded, silu' expanded as s + a s - a s^2"),
]
