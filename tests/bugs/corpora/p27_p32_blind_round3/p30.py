"""Third blind corpus, puzzle 30 (SwiGLU forward and backward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_H = "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)"
_DA = "dh * b * s * (1.0 + a * (1.0 - s))"
_DB = "tl.store(db_ptr + offsets, dh * silu, mask=mask)"
_FWD_START = "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32 inside"
_BWD_START = "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    a = "
_FWD_B = "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    tl.store(h_ptr"
_BWD_B = "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    dh = "

_QUARTERS_BWD = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """The block in quarters of BLOCK // 4 elements, one after the other."""
    QUARTER: tl.constexpr = BLOCK // 4
    for j in tl.static_range(3):
        offsets = tl.program_id(0) * BLOCK + j * QUARTER + tl.arange(0, QUARTER)
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
    Bug("silu_of_the_product", "forward",
        ((_H, "tl.store(h_ptr + offsets, (a * b) * tl.sigmoid(a * b), mask=mask)", 1),),
        "formula", "h = silu(a · b): the gate applied to the product instead of silu(a) · b"),
    Bug("b_loaded_as_fp16", "forward",
        ((_FWD_B, _FWD_B.replace(".to(tl.float32)", ".to(tl.float16)"), 1),),
        "precision", "the forward converts b to fp16 after the load instead of fp32: fp32 inputs lose their low digits before the product",
        notes='fp32 cases only'),
    Bug("mask_from_lane_index", "forward",
        ((_FWD_START, _FWD_START.replace("mask = offsets < n_elements", "mask = tl.arange(0, BLOCK) < n_elements"), 1),),
        "mask", "the forward's mask built from the lane index, not the element offset: the last partial block reads and writes past the end",
        notes='shows only where M · N is not a multiple of BLOCK and spans several blocks'),
    Bug("program_id_of_axis_1", "forward",
        ((_FWD_START, _FWD_START.replace("tl.program_id(0)", "tl.program_id(1)"), 1),),
        "address", "the block start taken from program_id(1) on a 1-D grid (always 0): every program computes the first block, the rest of h is never written"),
    Bug("silu_cached_in_a", "forward",
        ((_H, "silu = a * tl.sigmoid(a)\n    tl.store(a_ptr + offsets, silu, mask=mask)  # kept for the backward\n"
              "    tl.store(h_ptr + offsets, silu * b, mask=mask)", 1),),
        "inplace", "the forward saves silu(a) over a for the backward to reuse: h is right, but an input is overwritten (and the backward then reads silu(a) as a)"),
    Bug("sigmoid_in_base_2_without_log2e", "forward",
        ((_H, "tl.store(h_ptr + offsets, a * b / (1.0 + tl.exp2(-a)), mask=mask)", 1),),
        "formula", "the sigmoid written with exp2(−a) but without the log2(e) factor: 1 / (1 + 2^−a) is not sigmoid(a)"),
    # backward
    Bug("one_minus_s_as_exp_times_s", "backward",
        ((_DA, "dh * b * s * (1.0 + a * tl.exp(-a) * s)", 1),),
        "stability", "1 − s written exp(−a) · s: for a far below 0, exp(−a) overflows to inf while s underflows to 0, and inf · 0 is NaN",
        notes='shows only with |a| near 100'),
    Bug("da_times_silu_not_derivative", "backward",
        ((_DA, "dh * b * silu", 1),),
        "formula", "da = dh · b · silu(a): silu itself where its derivative silu'(a) belongs"),
    Bug("silu_prime_without_one", "backward",
        ((_DA, "dh * b * s * a * (1.0 - s)", 1),),
        "formula", "silu'(a) written s · a · (1 − s): the first term (s, the 1 inside the bracket) is dropped"),
    Bug("db_without_sigmoid", "backward",
        ((_DB, "tl.store(db_ptr + offsets, dh * a, mask=mask)", 1),),
        "formula", "db = dh · a: the gate's sigmoid left out, db must be dh · silu(a) = dh · a · s"),
    Bug("block_start_by_default_128", "backward",
        ((_BWD_START, _BWD_START.replace("tl.program_id(0) * BLOCK +", "tl.program_id(0) * 128 +"), 1),),
        "hardcoded", "the backward's block start written pid · 128 (the default BLOCK) instead of pid · BLOCK: with another block size blocks overlap or leave gaps",
        notes='shows only where BLOCK != 128 and there is more than one block'),
    Bug("quarters_loop_one_short", "backward",
        (Kernel("swiglu_bwd_kernel", _QUARTERS_BWD),),
        "loop", "the backward walks its block in quarters but loops three times: the last quarter of every block gets no gradient"),
    Bug("backward_mask_one_short", "backward",
        ((_BWD_START, _BWD_START.replace("mask = offsets < n_elements", "mask = offsets < n_elements - 1"), 1),),
        "mask", "the backward's mask offsets < n_elements − 1 (the last index, used as a bound): the last element gets no gradient"),
    Bug("b_read_after_a_as_fused_projection", "mlp",
        ((_BWD_B, _BWD_B.replace("b_ptr + offsets", "a_ptr + n_elements + offsets"), 1),),
        "address", "the backward reads b at a_ptr + n_elements, as if a and b were the halves of one fused gate/up output: they are separate tensors",
        accept=("formula",)),
    Bug("silu_prime_extra_s", "mlp",
        ((_DA, "dh * b * s * (1.0 + a * s * (1.0 - s))", 1),),
        "formula", "silu'(a) written s(1 + a · s(1 − s)): the sigmoid's derivative s(1 − s) put inside the bracket that already has the factor s"),
    Bug("silu_prime_without_one_minus_s", "mlp",
        ((_DA, "dh * b * s * (1.0 + a)", 1),),
        "formula", "silu'(a) written s(1 + a): the factor (1 − s) of the second term is left out"),
]

_QUARTERS_FWD = '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    """The block in four quarters of BLOCK // 4 elements, one after the other."""
    QUARTER: tl.constexpr = BLOCK // 4
    for j in tl.static_range(4):
        offsets = tl.program_id(0) * BLOCK + j * QUARTER + tl.arange(0, QUARTER)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)
'''

_GRID_STRIDE_BWD = '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    """A grid-stride loop: program pid takes blocks pid, pid + P, ... (one block each at this grid)."""
    step = BLOCK * tl.num_programs(0)
    start = tl.program_id(0) * BLOCK
    while start < n_elements:
        offsets = start + tl.arange(0, BLOCK)
        mask = offsets < n_elements
        a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        dh = tl.load(dh_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
        s = tl.sigmoid(a)
        g = dh * s
        tl.store(db_ptr + offsets, g * a, mask=mask)
        tl.store(da_ptr + offsets, g * b * (1.0 + a * (1.0 - s)), mask=mask)
        start += step
'''

RIGHT = [
    Right("shared_dh_times_s",
          (("    silu = a * s\n", "    g = dh * s\n", 1),
           (_DB, "tl.store(db_ptr + offsets, g * a, mask=mask)", 1),
           (_DA, "g * b * (1.0 + a * (1.0 - s))", 1)),
          "dh · s computed once and shared by db = (dh s) a and da = (dh s) b (1 + a(1 − s))"),
    Right("int64_block_start",
          (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n",
            "    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)\n", 2),),
          "both kernels compute the block's offsets in int64"),
    Right("one_minus_s_as_reciprocal",
          ((_DA, "dh * b * s * (1.0 + a / (1.0 + tl.exp(a)))", 1),),
          "1 − s taken as 1 / (1 + exp(a)): exp(a) = inf gives 0, exp(a) = 0 gives 1, no NaN at either end"),
    Right("forward_in_four_quarters", (Kernel("swiglu_fwd_kernel", _QUARTERS_FWD),),
          "the forward's block handled as four quarters by a static loop"),
    Right("backward_grid_stride_while", (Kernel("swiglu_bwd_kernel", _GRID_STRIDE_BWD),),
          "the backward as a grid-stride while loop, dh · s shared by both gradients"),
]
