"""Fifth blind corpus, puzzle 30 (SwiGLU forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_H = "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)"
_DA = "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)"
_DB = "tl.store(db_ptr + offsets, dh * silu, mask=mask)"
_S = "    s = tl.sigmoid(a)\n"
_FWD_OFF = "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32 inside"
_BWD_OFF = "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    a = "

_FWD_HALVES_MASK_ONCE = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """The block in two halves; the mask computed once, before the loop."""
    HALF: tl.constexpr = BLOCK // 2
    base = tl.program_id(0) * BLOCK
    mask = base + tl.arange(0, HALF) < n_elements
    for j in tl.static_range(2):
        offsets = base + j * HALF + tl.arange(0, HALF)
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_FWD_HALVES_64 = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """The block in two halves of 64 (half the default BLOCK of 128)."""
    for j in tl.static_range(2):
        offsets = tl.program_id(0) * BLOCK + j * 64 + tl.arange(0, 64)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_FWD_GRID_STRIDE_SHORT = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """A grid-stride loop over the blocks, bounded so that a whole block still fits."""
    for start in range(tl.program_id(0) * BLOCK, n_elements - BLOCK, BLOCK * tl.num_programs(0)):
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_BWD_HALVES_FROM_ONE = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """The block in two halves, the halves counted 1 .. 2."""
    HALF: tl.constexpr = BLOCK // 2
    for j in range(1, 2):
        offsets = tl.program_id(0) * BLOCK + j * HALF + tl.arange(0, HALF)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        s = tl.sigmoid(a)
        tl.store(db_ptr + offsets, dh * a * s, mask=mask)
        tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)
'''

MEASURED = [
    # forward
    Bug("sigmoid_base2_log2e_divided", "forward",
        ((_H, "tl.store(h_ptr + offsets, a * b / (1.0 + tl.exp2(-a / 1.4426950408889634)), mask=mask)", 1),),
        "formula", "the sigmoid written 1 / (1 + 2^(−a / log2 e)): log2(e) divided where it must multiply, so the gate is sigmoid(a · ln 2 · ln 2), not sigmoid(a)"),
    Bug("h_rounded_to_bf16_at_store", "forward",
        ((_H, "tl.store(h_ptr + offsets, (a * tl.sigmoid(a) * b).to(tl.bfloat16), mask=mask)", 1),),
        "precision", "h cast to bf16 before the store whatever h's dtype (copied from a bf16 recipe): an fp32 h keeps 8 bits",
        notes="fp32 cases only"),
    Bug("halves_mask_from_first_half", "forward",
        (Kernel("swiglu_fwd_kernel", _FWD_HALVES_MASK_ONCE),),
        "mask", "the forward walks its block in two halves but builds the mask once, from the first half's offsets: in the last partial block the second half reads and writes past the end",
        notes="shows where the last block is partial and its two halves' masks differ"),
    Bug("halves_of_documented_64", "forward",
        (Kernel("swiglu_fwd_kernel", _FWD_HALVES_64),),
        "hardcoded", "the forward's halves written 64 wide (half the default BLOCK of 128) instead of BLOCK // 2: other block sizes overlap blocks or leave gaps",
        notes="shows where BLOCK != 128"),
    Bug("grid_stride_bound_minus_block", "forward",
        (Kernel("swiglu_fwd_kernel", _FWD_GRID_STRIDE_SHORT),),
        "loop", "the forward's grid-stride loop runs while start < n − BLOCK: the last block (whole or partial) is never written"),
    Bug("blocks_block_minus_one_apart", "forward",
        ((_FWD_OFF, _FWD_OFF.replace("tl.program_id(0) * BLOCK", "tl.program_id(0) * (BLOCK - 1)"), 1),),
        "address", "the forward's blocks start pid · (BLOCK − 1) apart (the last index taken for the size): blocks overlap by one and the last elements are never written",
        notes="shows where there are enough blocks to lose a whole lane's worth at the end"),
    # backward
    Bug("backward_sigmoid_of_minus_a", "backward",
        ((_S, "    s = tl.sigmoid(-a)\n", 1),),
        "formula", "the backward's sigmoid taken of −a: both silu(a) and silu'(a) are built from 1 − s where s belongs"),
    Bug("da_second_term_without_b", "backward",
        ((_DA, "tl.store(da_ptr + offsets, dh * (b * s + silu * (1.0 - s)), mask=mask)", 1),),
        "formula", "da = dh · (b·s + silu(a)(1 − s)): the product rule's factor b kept on the first term of silu'(a) only"),
    Bug("db_sigmoid_of_b", "backward",
        ((_DB, "tl.store(db_ptr + offsets, dh * a * tl.sigmoid(b), mask=mask)", 1),),
        "formula", "db = dh · a · sigmoid(b): the sigmoid in db taken of b, the gate is silu(a) = a · sigmoid(a)"),
    Bug("backward_silu_rounded_to_bf16", "backward",
        (("    silu = a * s\n", "    silu = (a * s).to(tl.bfloat16)\n", 1),),
        "precision", "the backward keeps silu(a) in bf16 (to save a register): db = dh · silu(a) keeps 8 bits in the fp32 cases",
        notes="fp32 cases only"),
    Bug("sigmoid_as_exp_minus_softplus", "backward",
        ((_S, "    s = tl.exp(a - tl.log(1.0 + tl.exp(a)))\n", 1),),
        "stability", "the backward's sigmoid in log space, exp(a − log(1 + exp(a))): for a above about 88 exp(a) is inf, the log inf, and s = exp(−inf) = 0 instead of 1",
        notes="shows only with |a| near 100"),
    Bug("da_store_unmasked", "backward",
        ((_DA, "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)))", 1),),
        "mask", "da's store left without the mask (db's keeps it): the last partial block writes past the end of da"),
    Bug("db_written_over_b", "backward",
        ((_DB, "tl.store(b_ptr + offsets, dh * silu, mask=mask)", 1),),
        "inplace", "db stored over b (b is already read, so it seemed free): the input b is destroyed and db is never written"),
    Bug("halves_loop_from_one", "backward",
        (Kernel("swiglu_bwd_kernel", _BWD_HALVES_FROM_ONE),),
        "loop", "the backward walks its block in halves j = 1 .. 1 (range(1, 2)): the first half of every block gets no gradient"),
    Bug("da_added_into_output", "backward",
        ((_DA, "tl.store(da_ptr + offsets, tl.load(da_ptr + offsets, mask=mask, other=0.0) + dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "accumulate", "da added to what its buffer holds (as .grad accumulates) instead of stored: da is a fresh buffer, not zeroed"),
    Bug("blocks_from_the_end_without_minus_one", "backward",
        ((_BWD_OFF, _BWD_OFF.replace("tl.program_id(0) * BLOCK", "(tl.num_programs(0) - tl.program_id(0)) * BLOCK"), 1),),
        "address", "the backward hands its blocks out from the end as (P − pid) · BLOCK, without the − 1: block 0 never gets a gradient and program 0 works past the end"),
    Bug("mlp_silu_derivative_from_h", "mlp",
        ((_DA, "tl.store(da_ptr + offsets, dh * (silu * b) * (1.0 + a * (1.0 - s)), mask=mask)", 1),),
        "formula", "da = dh · h · (1 + a(1 − s)), h = silu(a) · b reused for b · s: the factor a of silu is left in, da is a times too large"),
]

_INTERLEAVED_FWD = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """Programs interleaved: lane j of program pid takes element j · P + pid (P programs)."""
    offsets = tl.program_id(0) + tl.arange(0, BLOCK) * tl.num_programs(0)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_FP64_FWD = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """h computed in fp64, the sigmoid written out, rounded once at the store."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float64)
    h = a * b / (1.0 + tl.exp(-a))
    tl.store(h_ptr + offsets, h.to(h_ptr.dtype.element_ty), mask=mask)
'''

_COLUMN_TILE_BWD = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """The block as a [16, BLOCK // 16] tile walked column-major (BLOCK >= 16)."""
    r = tl.arange(0, 16)[:, None]
    c = tl.arange(0, BLOCK // 16)[None, :]
    offsets = tl.program_id(0) * BLOCK + r + c * 16
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    tl.store(db_ptr + offsets, dh * a * s, mask=mask)
    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)
'''

RIGHT = [
    Right("programs_interleaved", (Kernel("swiglu_fwd_kernel", _INTERLEAVED_FWD),),
          "the forward's programs interleaved element by element (j · P + pid), not in contiguous blocks"),
    Right("forward_in_fp64", (Kernel("swiglu_fwd_kernel", _FP64_FWD),),
          "the forward in fp64, the sigmoid as 1 / (1 + exp(−a)), one rounding at the store"),
    Right("backward_column_major_tile", (Kernel("swiglu_bwd_kernel", _COLUMN_TILE_BWD),),
          "the backward's block as a [16, BLOCK/16] tile, walked column-major"),
    Right("da_as_b_s_plus_b_silu_one_minus_s",
          ((_DA, "tl.store(da_ptr + offsets, dh * (b * s + b * silu * (1.0 - s)), mask=mask)", 1),),
          "da = dh · (b s + b silu(a)(1 − s)), silu'(a) distributed over its two terms"),
    Right("silu_prime_as_s_plus_silu_minus_silu_s",
          ((_DA, "tl.store(da_ptr + offsets, dh * b * (s + silu - silu * s), mask=mask)", 1),),
          "silu'(a) = s + silu − silu · s (= s(1 + a − a s))"),
]
