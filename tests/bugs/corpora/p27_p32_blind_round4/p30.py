"""Fourth blind corpus, puzzle 30 (SwiGLU forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_H = "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)"
_DA = "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)"
_DB = "tl.store(db_ptr + offsets, dh * silu, mask=mask)"
_SILU = "    silu = a * s\n"
_FWD_START = "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32 inside"
_BWD_START = "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    a = "
_FWD_LOADS = ("    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
              "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
              "    tl.store(h_ptr")
_BWD_A = "    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    dh = "

_HALVES_FWD = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """The block in two halves, one after the other."""
    HALF: tl.constexpr = BLOCK // 2
    for j in tl.static_range(2):
        offsets = tl.program_id(0) * BLOCK + j * BLOCK + tl.arange(0, HALF)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_STRIDE_FROM_ZERO_BWD = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """A grid-stride loop over the blocks, BLOCK * P elements a step."""
    step = BLOCK * tl.num_programs(0)
    start = 0
    while start < n_elements:
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        s = tl.sigmoid(a)
        tl.store(db_ptr + offsets, dh * a * s, mask=mask)
        tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)
        start += step
'''

MEASURED = [
    # forward
    Bug("silu_plus_b", "forward",
        ((_H, "tl.store(h_ptr + offsets, a * tl.sigmoid(a) + b, mask=mask)", 1),),
        "formula", "h = silu(a) + b: the gate added to the up projection instead of multiplying it"),
    Bug("silu_on_both_projections", "forward",
        ((_H, "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b * tl.sigmoid(b), mask=mask)", 1),),
        "formula", "h = silu(a) · silu(b): the up projection b goes through the SiLU too, it must enter linearly"),
    Bug("silu_rounded_to_fp16", "forward",
        ((_H, "tl.store(h_ptr + offsets, (a * tl.sigmoid(a)).to(tl.float16) * b, mask=mask)", 1),),
        "precision", "silu(a) rounded to fp16 before the product with b: an fp32 h keeps only fp16's 11 bits (and |silu| past 65504 overflows)",
        notes="fp32 cases only"),
    Bug("forward_loads_unmasked", "forward",
        ((_FWD_LOADS, "    a = tl.load(a_ptr + offsets).to(tl.float32)\n"
                      "    b = tl.load(b_ptr + offsets).to(tl.float32)\n"
                      "    tl.store(h_ptr", 1),),
        "mask", "the forward's loads of a and b have no mask (only the store does): the last partial block reads past the ends of a and b",
        notes="the stray values land in masked-off lanes: the out-of-bounds read itself is the fault"),
    Bug("halves_stepped_by_block", "forward",
        (Kernel("swiglu_fwd_kernel", _HALVES_FWD),),
        "loop", "the forward walks its block in two halves but steps j · BLOCK instead of j · BLOCK/2: the second half of every block is never written (the next block's first half twice)",
        accept=("address",)),
    Bug("blocks_counted_from_one", "forward",
        ((_FWD_START, _FWD_START.replace("tl.program_id(0) * BLOCK", "(tl.program_id(0) + 1) * BLOCK"), 1),),
        "address", "the forward's block start (pid + 1) · BLOCK, the blocks counted from 1: the first block is never written and the last program writes past it (masked off)"),
    # backward
    Bug("one_minus_s_as_ratio_of_exps", "backward",
        ((_DA, "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (tl.exp(-a) / (1.0 + tl.exp(-a)))), mask=mask)", 1),),
        "stability", "1 − s written exp(−a) / (1 + exp(−a)): for a below about −88, exp(−a) is inf and inf / inf is NaN",
        notes="shows only with |a| near 100"),
    Bug("da_scaled_by_a_not_b", "backward",
        ((_DA, "tl.store(da_ptr + offsets, dh * a * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "formula", "da = dh · a · silu'(a): the factor from the product rule is a (copied from db) where it must be b"),
    Bug("da_includes_db_term", "backward",
        ((_DA, "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)) + dh * silu, mask=mask)", 1),),
        "formula", "da = dh · b · silu'(a) + dh · silu(a): both terms of the product rule summed into da, but dh · silu(a) is the gradient of b"),
    Bug("silu_prime_without_a", "backward",
        ((_DA, "tl.store(da_ptr + offsets, dh * b * s * (1.0 + (1.0 - s)), mask=mask)", 1),),
        "formula", "silu'(a) written s(1 + (1 − s)): the factor a of the second term is dropped"),
    Bug("dh_times_b_rounded_to_bf16", "backward",
        ((_DA, "tl.store(da_ptr + offsets, (dh * b).to(tl.bfloat16) * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "precision", "dh · b rounded to bf16 before it is multiplied by silu'(a): an fp32 da keeps 8 bits",
        notes="fp32 cases only"),
    Bug("a_clamped_in_place", "backward",
        ((_BWD_A, "    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
                  "    # keep exp(-a) finite: clamp a once, for good\n"
                  "    a = tl.minimum(tl.maximum(a, -80.0), 80.0)\n"
                  "    tl.store(a_ptr + offsets, a, mask=mask)\n"
                  "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    dh = ", 1),),
        "inplace", "the backward clamps a to [−80, 80] and stores it back into a: the input is changed, and db = dh · silu(a) uses the clamped a",
        notes="shows only with |a| above 80"),
    Bug("grid_stride_loop_starts_at_zero", "backward",
        (Kernel("swiglu_bwd_kernel", _STRIDE_FROM_ZERO_BWD),),
        "loop", "the backward's grid-stride loop starts every program at 0 instead of pid · BLOCK: all programs do blocks 0, P, 2P, ... and the rest get no gradient"),
    Bug("backward_mask_per_program", "backward",
        ((_BWD_START, _BWD_START.replace("mask = offsets < n_elements", "mask = tl.program_id(0) < tl.cdiv(n_elements, BLOCK)"), 1),),
        "mask", "the backward's mask tests the program, not the lanes (pid < cdiv(n, BLOCK) is always true): the last partial block reads and writes past the end",
        notes="shows only where M · N is not a multiple of BLOCK"),
    Bug("lanes_written_as_128", "backward",
        ((_BWD_START, _BWD_START.replace("tl.arange(0, BLOCK)", "tl.arange(0, 128)"), 1),),
        "hardcoded", "the backward's lanes tl.arange(0, 128) (the default BLOCK) instead of tl.arange(0, BLOCK): with a larger BLOCK the blocks leave gaps with no gradient",
        notes="shows only where BLOCK > 128 and there is more than one block"),
    # the MLP step (both kernels)
    Bug("silu_stored_over_variable_a", "mlp",
        ((_SILU, "    a = a * s  # a is only needed as silu(a) from here\n", 1),
         (_DB, "tl.store(db_ptr + offsets, dh * a, mask=mask)", 1)),
        "formula", "the backward reuses the variable a for silu(a): db is right, but silu'(a)'s bracket 1 + a(1 − s) then uses silu(a) where a belongs"),
    Bug("h_added_to_what_h_holds", "mlp",
        ((_H, "tl.store(h_ptr + offsets, tl.load(h_ptr + offsets, mask=mask, other=0.0) + a * tl.sigmoid(a) * b, mask=mask)", 1),),
        "accumulate", "the forward adds silu(a) · b to what h holds instead of storing it: h is a fresh, uninitialised buffer"),
]

_REVERSED_LANES_FWD = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """Each program's lanes in reverse order: lane j handles element BLOCK - 1 - j of the block."""
    offsets = tl.program_id(0) * BLOCK + (BLOCK - 1 - tl.arange(0, BLOCK))
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_BLOCKS_FROM_THE_END_BWD = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """Program pid takes block P - 1 - pid: the blocks handed out from the end."""
    block = tl.num_programs(0) - 1 - tl.program_id(0)
    offsets = block * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    silu = a * s
    tl.store(db_ptr + offsets, dh * silu, mask=mask)
    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)
'''

_TILE_FWD = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """The block as a [BLOCK // 16, 16] tile (BLOCK >= 16), row-major over the block's elements."""
    r = tl.arange(0, BLOCK // 16)[:, None]
    c = tl.arange(0, 16)[None, :]
    offsets = tl.program_id(0) * BLOCK + r * 16 + c
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_EVEN_ODD_BWD = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """The block's even elements, then its odd ones: BLOCK // 2 lanes, two strided passes."""
    for j in tl.static_range(2):
        offsets = tl.program_id(0) * BLOCK + 2 * tl.arange(0, BLOCK // 2) + j
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        s = tl.sigmoid(a)
        silu = a * s
        tl.store(db_ptr + offsets, dh * silu, mask=mask)
        tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)
'''

RIGHT = [
    Right("lanes_reversed_within_block", (Kernel("swiglu_fwd_kernel", _REVERSED_LANES_FWD),),
          "the forward's lanes run backwards through the block (a permutation of the same elements)"),
    Right("backward_blocks_from_the_end", (Kernel("swiglu_bwd_kernel", _BLOCKS_FROM_THE_END_BWD),),
          "the backward's program pid takes block P − 1 − pid"),
    Right("silu_prime_as_one_plus_a_minus_silu",
          ((_DA, "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a - silu), mask=mask)", 1),),
          "silu'(a) = s(1 + a − silu(a)), since a(1 − s) = a − a·s"),
    Right("forward_as_2d_tile", (Kernel("swiglu_fwd_kernel", _TILE_FWD),),
          "the forward's block as a [BLOCK/16, 16] tile"),
    Right("backward_even_then_odd_lanes", (Kernel("swiglu_bwd_kernel", _EVEN_ODD_BWD),),
          "the backward in two strided passes over the block, even elements then odd"),
]
