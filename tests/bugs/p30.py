"""Every known kernel of puzzle 30 (the SwiGLU gate, forward and backward): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING), the mutants no
check can catch (EQUIVALENT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Kernel, Right
from bugs.reasons import MASKED_OUT

FWD_STORE = "    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)"
DB_STORE = "    tl.store(db_ptr + offsets, dh * silu, mask=mask)"
DA_STORE = "    tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)"
BWD_S = "    s = tl.sigmoid(a)\n"

PINNED = [
    Bug("glu_gate", "forward",
        ((FWD_STORE, "    tl.store(h_ptr + offsets, tl.sigmoid(a) * b, mask=mask)", 1),),
        cause="formula",
        reasons=(("GLU gate",),),
        not_causes=("atomic",), not_words=("out of bounds",), code='variant.glu'),
    Bug("gate_on_b", "forward",
        ((FWD_STORE, "    tl.store(h_ptr + offsets, b * tl.sigmoid(b) * a, mask=mask)", 1),),
        cause="formula",
        reasons=(("silu(b) · a",),),
        not_causes=("atomic",), not_words=("out of bounds",), code='variant.gate_on_b'),
    Bug("da_treats_s_as_a_constant", "backward",
        ((DA_STORE, "    tl.store(da_ptr + offsets, dh * b * s, mask=mask)", 1),),
        cause="formula",
        reasons=(("as if s did not depend on a",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",), code='variant.s_as_constant'),
    Bug("da_is_the_sigmoid_derivative", "backward",
        ((DA_STORE, "    tl.store(da_ptr + offsets, dh * b * s * (1.0 - s), mask=mask)", 1),),
        cause="formula",
        reasons=(("derivative of the sigmoid alone",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",), code='variant.sigmoid_derivative'),
    Bug("db_from_the_sigmoid", "backward",
        ((DB_STORE, "    tl.store(db_ptr + offsets, dh * s, mask=mask)", 1),),
        cause="formula",
        reasons=(("db matches dh · sigmoid(a)",),),
        not_causes=("atomic",), not_words=("out of bounds",), code='variant.db_sigmoid'),
    Bug("da_and_db_swapped", "backward",
        ((DB_STORE, "    tl.store(da_ptr + offsets, dh * silu, mask=mask)", 1),
         (DA_STORE, "    tl.store(db_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1)),
        cause="address", named="candidates",  # the stores' pointers exchanged: the values cannot tell it from the formulas
        reasons=(("swapped",),),
        not_causes=("atomic",), not_words=("out of bounds",), code='variant.swapped'),
    Bug("sigmoid_kept_in_bf16", "backward",
        ((BWD_S, "    s = tl.sigmoid(a).to(tl.bfloat16).to(tl.float32)\n", 1),),
        cause="precision",
        reasons=(("rounded to bfloat16",),),
        not_causes=("atomic",), not_words=("as if s did not depend",),
        notes="s as if saved from the forward in a bf16 buffer: off by up to ~0.4%, far outside fp32's tolerance", code='variant.s_bf16'),
    Bug("sigmoid_overflows", "backward",
        ((BWD_S, "    s = tl.exp(a) / (1.0 + tl.exp(a))\n", 1),),
        cause="stability",
        reasons=(("overflows fp32",), ("NaN",)),
        not_causes=("atomic",), not_words=("out of bounds", "as if s did not depend"),
        notes="exp(a) / (1 + exp(a)) is inf / inf = NaN for a > 88.7: only the large-|a| cases fail"),
    Bug("forward_store_without_mask", "forward",
        ((FWD_STORE, "    tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("h_ptr",)),
        not_causes=("atomic",),
        # the stray lanes write past h's end into memory the check never reads: h itself is right
        gpu_by_chance=True, code='fault.oob'),
    Bug("backward_forgets_program_id", "backward",
        (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n"
          "    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
          "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    dh",
          "    offsets = tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n"
          "    a = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
          "    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    dh", 1),),
        cause="address",
        reasons=(("race",), ("da_ptr", "db_ptr")),
        reasons_unsanitized=(("never written",),),
        not_causes=("atomic",),
        notes="every program does block 0: several programs store the same elements of da and db", code='fault.race'),
]

PASSING = [
    Right("silu_grad_from_silu", (
        (DA_STORE, "    tl.store(da_ptr + offsets, dh * b * (s + silu * (1.0 - s)), mask=mask)", 1),),
        notes="silu'(a) = s + silu(a)(1 − s): the same derivative, written from silu(a)"),
    Right("sigmoid_written_out", (
        (BWD_S, "    s = 1.0 / (1.0 + tl.exp(-a))\n", 1),
        (FWD_STORE, "    tl.store(h_ptr + offsets, a / (1.0 + tl.exp(-a)) * b, mask=mask)", 1)),
        notes="the sigmoid spelled out with exp(-a), which overflows only towards 1 / inf = 0"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:swiglu_fwd_kernel:0abb1c0e:0": MASKED_OUT,
    "fill.other:swiglu_fwd_kernel:8a9db0b0:0": MASKED_OUT,
    "fill.other:swiglu_bwd_kernel:0abb1c0e:0": MASKED_OUT,
    "fill.other:swiglu_bwd_kernel:8a9db0b0:0": MASKED_OUT,
    "fill.other:swiglu_bwd_kernel:63a70aa8:0": MASKED_OUT,
}

# MEASURED and RIGHT: the first blind corpus, bugs and correct rewrites written from the solution, the
# page and the notebook alone, by someone who had not read the hint code; scored untouched on the
# checker it was written against before any hint was tuned to it (tests/bugs/measure.py).
_BLIND_H = "tl.store(h_ptr + offsets, a * tl.sigmoid(a) * b, mask=mask)"
_BLIND_DB = "tl.store(db_ptr + offsets, dh * silu, mask=mask)"
_BLIND_DA = "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)"
_BLIND_S = "s = tl.sigmoid(a)"
_BLIND_FWD_MASK = "    mask = offsets < n_elements\n    # fp32 inside"
_BLIND_FWD_OFFS = "offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    # fp32"
_BLIND_BWD_OFFS = "offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < n_elements\n    a = tl.load"

MEASURED = [
    Bug("glu_not_swiglu", "forward",
        ((_BLIND_H, _BLIND_H.replace("a * tl.sigmoid(a) * b", "tl.sigmoid(a) * b"), 1),),
        "formula", "h = sigmoid(a) · b, the GLU gate: silu's factor a forgotten"),
    Bug("gate_on_the_up_projection", "forward",
        ((_BLIND_H, _BLIND_H.replace("a * tl.sigmoid(a) * b", "b * tl.sigmoid(b) * a"), 1),),
        "formula", "the SiLU applied to b instead of a: gate and up projections swapped"),
    Bug("silu_derivative_only_s", "backward",
        ((_BLIND_DA, _BLIND_DA.replace("s * (1.0 + a * (1.0 - s))", "s"), 1),),
        "formula", "silu'(a) taken as s: the sigmoid treated as a constant"),
    Bug("silu_derivative_is_sigmoid_prime", "backward",
        ((_BLIND_DA, _BLIND_DA.replace("s * (1.0 + a * (1.0 - s))", "s * (1.0 - s)"), 1),),
        "formula", "silu'(a) taken as s(1 − s), the sigmoid's own derivative"),
    Bug("silu_derivative_sign", "backward",
        ((_BLIND_DA, _BLIND_DA.replace("(1.0 + a * (1.0 - s))", "(1.0 - a * (1.0 - s))"), 1),),
        "formula", "silu'(a) = s(1 − a(1 − s)): a sign slip in the product rule"),
    Bug("db_with_sigmoid", "backward",
        ((_BLIND_DB, _BLIND_DB.replace("dh * silu", "dh * s"), 1),),
        "formula", "db = dh · sigmoid(a) instead of dh · silu(a)"),
    Bug("db_times_b", "backward",
        ((_BLIND_DB, _BLIND_DB.replace("dh * silu", "dh * silu * b"), 1),),
        "formula", "db = dh · silu(a) · b: b's own factor kept in its gradient"),
    Bug("da_without_b", "backward",
        ((_BLIND_DA, _BLIND_DA.replace("dh * b * s", "dh * s"), 1),),
        "formula", "da = dh · silu'(a): the other factor b of the product rule dropped"),
    Bug("forward_mask_le", "forward",
        ((_BLIND_FWD_MASK, _BLIND_FWD_MASK.replace("<", "<="), 1),),
        "mask", "the forward's mask offsets <= n_elements: one element past the end read and written"),
    Bug("backward_stores_unmasked", "backward",
        ((_BLIND_DB, "tl.store(db_ptr + offsets, dh * silu)", 1), (_BLIND_DA, _BLIND_DA.replace(", mask=mask)", ")"), 1)),
        "mask", "the backward's stores without the mask: the last block writes past M·N"),
    Bug("sigmoid_from_exp_a", "forward",
        ((_BLIND_H, "tl.store(h_ptr + offsets, a * (tl.exp(a) / (1.0 + tl.exp(a))) * b, mask=mask)", 1),),
        "stability", "sigmoid written exp(a) / (1 + exp(a)): at a = 120 exp overflows, inf / inf = NaN"),
    Bug("backward_sigmoid_from_exp_a", "backward",
        ((_BLIND_S, "s = tl.exp(a) / (1.0 + tl.exp(a))", 1),),
        "stability", "the backward's sigmoid written exp(a) / (1 + exp(a)): NaN for large a"),
    Bug("sigmoid_rounded_to_storage", "backward",
        ((_BLIND_S, "s = tl.sigmoid(a).to(a_ptr.dtype.element_ty).to(tl.float32)", 1),),
        "precision", "the sigmoid rounded to the inputs' dtype (bf16) before silu' uses 1 − s"),
    Bug("blocks_one_element_apart", "forward",
        ((_BLIND_FWD_OFFS, _BLIND_FWD_OFFS.replace("tl.program_id(0) * BLOCK", "tl.program_id(0)"), 1),),
        "address", "program pid starts at element pid, not pid · BLOCK"),
    Bug("block_of_the_documented_case", "backward",
        ((_BLIND_BWD_OFFS, _BLIND_BWD_OFFS.replace("tl.program_id(0) * BLOCK", "tl.program_id(0) * 16"), 1),),
        "hardcoded", "blocks 16 elements apart, the documented BLOCK, instead of BLOCK"),
    Bug("da_and_db_swapped", "mlp",
        (("tl.store(db_ptr + offsets, dh * silu", "tl.store(da_ptr + offsets, dh * silu", 1),
         ("tl.store(da_ptr + offsets, dh * b * s", "tl.store(db_ptr + offsets, dh * b * s", 1)),
        "address", "da stored into db and db into da"),
    Bug("b_loaded_from_a", "forward",
        (("    b = tl.load(b_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    tl.store(h_ptr",
          "    b = tl.load(a_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    tl.store(h_ptr", 1),),
        "address", "b read from a's pointer (a line copied): h = silu(a) · a"),
    Bug("dh_read_from_da", "backward",
        (("dh = tl.load(dh_ptr + offsets", "dh = tl.load(da_ptr + offsets", 1),),
        "address", "dh read from da's buffer, which holds nothing yet"),
    Bug("da_written_over_a", "mlp",
        ((_BLIND_DA, _BLIND_DA.replace("tl.store(da_ptr", "tl.store(a_ptr"), 1),),
        "inplace", "da written over a to save memory (as some libraries do): da never written, a destroyed"),
]

RIGHT = [
    Right("sigmoid_from_exp_minus_a",
          ((_BLIND_H, "tl.store(h_ptr + offsets, a / (1.0 + tl.exp(-a)) * b, mask=mask)", 1),
           (_BLIND_S, "s = 1.0 / (1.0 + tl.exp(-a))", 1)),
          "silu as a / (1 + exp(−a)): exp(120) = inf gives 0, no NaN"),
    Right("silu_prime_as_s_plus_silu_times_one_minus_s",
          ((_BLIND_DA, "tl.store(da_ptr + offsets, dh * b * (s + silu * (1.0 - s)), mask=mask)", 1),),
          "silu'(a) = s + silu(a)(1 − s)"),
    Right("sigmoid_in_base_2",
          ((_BLIND_S, "s = 1.0 / (1.0 + tl.exp2(-a * 1.4426950408889634))", 1),),
          "the backward's sigmoid with exp2 and log2(e) folded in"),
    Right("silu_prime_expanded",
          ((_BLIND_DA, "tl.store(da_ptr + offsets, dh * b * s * (1.0 + a - a * s), mask=mask)", 1),),
          "silu'(a) = s(1 + a − a s), the bracket multiplied out"),
    Right("pointers_advanced_first",
          (Kernel("swiglu_fwd_kernel", '''
@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, h_ptr, n_elements, BLOCK: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    a_ptr += start
    b_ptr += start
    h_ptr += start
    idx = tl.arange(0, BLOCK)
    mask = idx < n_elements - start
    a = tl.load(a_ptr + idx, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + idx, mask=mask).to(tl.float32)
    silu = a * tl.sigmoid(a)
    tl.store(h_ptr + idx, silu * b, mask=mask)
'''),),
          "the pointers moved to the block's start first, the mask written as idx < n − start, no other="),
    Right("backward_through_where",
          (Kernel("swiglu_bwd_kernel", '''
@triton.jit
def swiglu_bwd_kernel(a_ptr, b_ptr, dh_ptr, da_ptr, db_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n_elements
    safe = tl.where(inside, offsets, 0)
    a = tl.load(a_ptr + safe).to(tl.float32)
    b = tl.load(b_ptr + safe).to(tl.float32)
    dh = tl.load(dh_ptr + safe).to(tl.float32)
    s = tl.sigmoid(a)
    g = dh * s
    tl.store(db_ptr + offsets, g * a, mask=inside)
    tl.store(da_ptr + offsets, g * b * (1.0 + a * (1.0 - s)), mask=inside)
'''),),
          "lanes past the end clamped to element 0 for the loads (no load mask), dh·s shared by both gradients"),
]

# the second blind corpus (tests/bugs/corpora/p27_p32_blind_round2/p30.py), measured beside the first
from bugs.corpora.p27_p32_blind_round2 import p30 as _second  # noqa: E402
MEASURED = MEASURED + _second.MEASURED
RIGHT = RIGHT + _second.RIGHT
