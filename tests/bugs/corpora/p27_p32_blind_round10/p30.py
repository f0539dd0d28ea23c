"""Blind corpus (round 10 for p27-p32), puzzle 30 (SwiGLU forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_FWD_LOADS = ("    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
              "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
              "    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)")
_BWD_HEAD = ('    """\n    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n')
_FWD_HEAD = ('Grid: (cdiv(n_elements, BLOCK),)."""\n    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n')
_DA = "    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)"
_DB = "    tl.store(db_ptr + offsets, dh * silu, mask=mask)"

MEASURED = [
    # forward
    Bug("forward_loads_stores_unmasked", "forward",
        ((_FWD_LOADS, "    a = tl.load(a_ptr + offsets).to(tl.float32)\n    b = tl.load(b_ptr + offsets).to(tl.float32)\n"
                      "    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b)", 1),),
        "mask", "the forward's loads and store without the mask: the last block reads and writes past M·N"),
    Bug("forward_program_offset_missing", "forward",
        ((_FWD_HEAD, _FWD_HEAD.replace("tl.program_id(0) * BLOCK + tl.arange", "tl.arange"), 1),),
        "address", "offsets = arange(0, BLOCK) without the program's start: every program gates the first block"),
    Bug("silu_as_sigmoid", "forward",
        (("    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", "    tl.store(h_ptr + offsets, tl.sigmoid(a) * b, mask=mask)", 1),),
        "formula", "silu(a) taken as sigmoid(a): the factor a of a·σ(a) dropped (a plain GLU gate)"),
    Bug("gate_on_up_projection", "forward",
        (("    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", "    tl.store(h_ptr + offsets, b * tl.sigmoid(b) * a, mask=mask)", 1),),
        "formula", "the silu applied to b, the up projection, and a used as the linear factor: the gate's inputs swapped"),
    Bug("n_elements_for_documented_case", "forward",
        ((_FWD_HEAD, _FWD_HEAD.replace("mask = offsets < n_elements", "mask = offsets < 40  # M * N"), 1),),
        "hardcoded", "the bound written in as 40 = 4 × 10, the documented M·N, instead of n_elements"),
    Bug("forward_written_over_a", "forward",
        (("    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", "    tl.store(a_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)", 1),),
        "inplace", "h written over a (to save a buffer): a, which the backward needs, is destroyed and h never written"),
    # backward
    Bug("backward_bound_inclusive", "mlp",
        ((_BWD_HEAD, _BWD_HEAD.replace("mask = offsets < n_elements", "mask = offsets <= n_elements"), 1),),
        "mask", "the backward's bound written offsets <= n_elements: one lane past the end is loaded and stored"),
    Bug("db_uses_sigmoid", "backward",
        ((_DB, "    tl.store(db_ptr + offsets, dh * s, mask=mask)", 1),),
        "formula", "db = dh · σ(a): the other factor of h = silu(a)·b is silu(a) = a·σ(a), not σ(a)"),
    Bug("da_without_dh", "backward",
        ((_DA, "    tl.store(da_ptr + offsets, b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "formula", "da written b·silu'(a): the upstream gradient dh (the chain rule) left out"),
    Bug("silu_derivative_as_sigmoid_derivative", "backward",
        ((_DA, "    tl.store(da_ptr + offsets, dh * b * s * (1.0 - s), mask=mask)", 1),),
        "formula", "silu'(a) taken as σ'(a) = σ(1 − σ): the derivative of the factor a (the leading σ term) dropped"),
    Bug("da_db_swapped", "backward",
        ((_DB, "    tl.store(da_ptr + offsets, dh * silu, mask=mask)", 1),
         (_DA, "    tl.store(db_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1)),
        "address", "the two gradients stored through each other's pointers: da gets dh·silu(a), db gets a's gradient"),
    Bug("dh_loaded_from_b", "backward",
        (("    dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0)", "    dh = tl.load(b_ptr + offsets, mask=mask, other=0.0)", 1),),
        "address", "the upstream gradient loaded through b's pointer (the line above copied)"),
    Bug("da_store_unmasked", "backward",
        ((_DA, "    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)))", 1),),
        "mask", "da stored on every lane of the last block: the lanes past M·N write past da's end"),
    Bug("backward_program_id_axis_1", "backward",
        ((_BWD_HEAD, _BWD_HEAD.replace("tl.program_id(0)", "tl.program_id(1)"), 1),),
        "address", "the backward's block start read from program_id(1), an axis the 1-D grid does not have: every program does block 0"),
    Bug("backward_block_of_16", "mlp",
        ((_BWD_HEAD, _BWD_HEAD.replace("tl.program_id(0) * BLOCK", "tl.program_id(0) * 16"), 1),),
        "hardcoded", "the backward's block start written with 16, the documented BLOCK: with another BLOCK the programs overlap and leave gaps"),
    Bug("da_written_over_a", "backward",
        ((_DA, "    tl.store(a_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "inplace", "da stored over a (the input a is dead after its load, so the learner reuses it): da never written, a destroyed"),
]

RIGHT = [
    Right("sigmoid_by_hand", (("    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)",
                               "    tl.store(h_ptr + offsets, a / (1.0 + tl.exp(-a)) * b, mask=mask)", 1),
                              ("    s = tl.sigmoid(a)\n", "    s = 1.0 / (1.0 + tl.exp(-a))\n", 1)),
          "sigmoid written 1 / (1 + e^-a) (e^-a overflows to inf for very negative a: 1/inf = 0, still right)"),
    Right("da_via_silu", ((_DA, "    tl.store(da_ptr + offsets, dh * b * (s + silu * (1.0 - s)), mask=mask)", 1),),
          "silu'(a) written s + silu(a)·(1 − s), the same derivative"),
    Right("backward_two_half_blocks",
          (Kernel("swiglu_bwd_kernel", '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """da, db for the program's BLOCK elements, in two halves of BLOCK // 2. Grid: (cdiv(n_elements, BLOCK),)."""
    for j in range(2):
        offsets = tl.program_id(0) * BLOCK + j * (BLOCK // 2) + tl.arange(0, BLOCK // 2)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        s = tl.sigmoid(a)
        tl.store(db_ptr + offsets, dh * a * s, mask=mask)
        tl.store(da_ptr + offsets, dh * b * s * (1.0 + a - a * s), mask=mask)
'''),),
          "the backward's block taken in two halves by a loop, silu'(a) expanded as s(1 + a − a·s)"),
    Right("forward_gate_then_product",
          (("    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)",
            "    gate = a * tl.sigmoid(a)\n    h = gate * b\n    tl.store(h_ptr + offsets, h.to(h_ptr.dtype.element_ty), mask=mask)", 1),),
          "the forward names the gate and casts to h's dtype explicitly before the store"),
]
