"""Every known kernel of puzzle 30 (the SwiGLU gate, forward and backward): the bugs
tests/test_contract.py pins (PINNED) and the correct kernels it passes (PASSING), the mutants no
check can catch (EQUIVALENT). What each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
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
        not_causes=("atomic",), not_words=("out of bounds",)),
    Bug("gate_on_b", "forward",
        ((FWD_STORE, "    tl.store(h_ptr + offsets, b * tl.sigmoid(b) * a, mask=mask)", 1),),
        cause="formula",
        reasons=(("silu(b) · a",),),
        not_causes=("atomic",), not_words=("out of bounds",)),
    Bug("da_treats_s_as_a_constant", "backward",
        ((DA_STORE, "    tl.store(da_ptr + offsets, dh * b * s, mask=mask)", 1),),
        cause="formula",
        reasons=(("as if s did not depend on a",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",)),
    Bug("da_is_the_sigmoid_derivative", "backward",
        ((DA_STORE, "    tl.store(da_ptr + offsets, dh * b * s * (1.0 - s), mask=mask)", 1),),
        cause="formula",
        reasons=(("derivative of the sigmoid alone",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",)),
    Bug("db_from_the_sigmoid", "backward",
        ((DB_STORE, "    tl.store(db_ptr + offsets, dh * s, mask=mask)", 1),),
        cause="formula",
        reasons=(("db matches dh · sigmoid(a)",),),
        not_causes=("atomic",), not_words=("out of bounds",)),
    Bug("da_and_db_swapped", "backward",
        ((DB_STORE, "    tl.store(da_ptr + offsets, dh * silu, mask=mask)", 1),
         (DA_STORE, "    tl.store(db_ptr + offsets, dh * b * s * (1.0 + a * (1.0 - s)), mask=mask)", 1)),
        cause="formula",
        reasons=(("swapped",),),
        not_causes=("atomic",), not_words=("out of bounds",)),
    Bug("sigmoid_kept_in_bf16", "backward",
        ((BWD_S, "    s = tl.sigmoid(a).to(tl.bfloat16).to(tl.float32)\n", 1),),
        cause="precision",
        reasons=(("rounded to bfloat16",),),
        not_causes=("atomic",), not_words=("as if s did not depend",),
        notes="s as if saved from the forward in a bf16 buffer: off by up to ~0.4%, far outside fp32's tolerance"),
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
        gpu_by_chance=True),
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
        notes="every program does block 0: several programs store the same elements of da and db"),
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
