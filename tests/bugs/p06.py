"""Every known kernel of puzzle 6 (SiLU forward and backward): the bugs tests/test_contract.py pins
(PINNED) and the correct kernels it passes (PASSING), the learner bugs and rewrites
tests/bugs/measure.py measures (MEASURED, RIGHT), the mutants no check can catch (EQUIVALENT). What
each list means: tests/bugs/__init__.py."""
from bugs import Bug, Right
from bugs.reasons import MASKED_OUT

BWD_STORE = "tl.store(dx_ptr + offsets, dy * s * (1.0 + x * (1.0 - s)), mask=mask)"
BWD_S = "    s = tl.sigmoid(x)  # recomputed from x"

PINNED = [
    Bug("dx_treats_s_as_a_constant", "backward",
        ((BWD_STORE, "tl.store(dx_ptr + offsets, dy * s, mask=mask)", 1),),
        cause="formula",
        reasons=(("as if s did not depend on x",),),
        not_causes=("atomic", "mask", "hardcoded"), not_words=("out of bounds",),
        notes="the classic wrong derivative: d(x·s)/dx taken as s", code='variant.s_as_a_constant'),
    Bug("dx_is_the_sigmoid_derivative", "backward",
        ((BWD_STORE, "tl.store(dx_ptr + offsets, dy * s * (1.0 - s), mask=mask)", 1),),
        cause="formula",
        reasons=(("derivative of the sigmoid alone",),),
        not_causes=("atomic", "mask"), not_words=("out of bounds",), code='variant.sigmoid_derivative'),
    Bug("backward_without_mask", "backward",
        (("    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
          "    dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n",
          "    x = tl.load(x_ptr + offsets).to(tl.float32)\n"
          "    dy = tl.load(dy_ptr + offsets).to(tl.float32)\n", 1),
         (BWD_STORE, "tl.store(dx_ptr + offsets, dy * s * (1.0 + x * (1.0 - s)))", 1)),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr", "dy_ptr", "dx_ptr")),
        not_causes=("atomic",),
        notes="the last block reads and writes past N", code='fault.oob'),
    Bug("forward_store_without_mask", "forward",
        (("tl.store(y_ptr + offsets, x * s, mask=mask)", "tl.store(y_ptr + offsets, x * s)", 1),),
        cause="mask",
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        not_causes=("atomic",),
        notes="the loads are masked, the store is not: the tail lanes write past the end of y", code='fault.oob'),
    Bug("backward_forgets_program_id", "backward",
        (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < N\n"
          "    x = tl.load(x_ptr", "    offsets = tl.arange(0, BLOCK)\n    mask = offsets < N\n"
          "    x = tl.load(x_ptr", 1),),
        cause="address",
        reasons=(("race",), ("dx_ptr",)),
        reasons_unsanitized=(("never written",),),
        not_causes=("atomic",),
        notes="every program does block 0: several programs store the same elements of dx", code='fault.race'),
    Bug("sigmoid_overflows", "forward",
        (("    s = tl.sigmoid(x)  # 1 / (1 + exp(-x))",
          "    s = tl.exp(x) / (1.0 + tl.exp(x))  # 1 / (1 + exp(-x))", 1),),
        cause="stability",
        reasons=(("overflows fp32",), ("NaN",)),
        not_causes=("atomic",), not_words=("out of bounds",),
        notes="exp(x) / (1 + exp(x)) is inf / inf = NaN for x > 88.7: only the large-|x| case fails"),
    Bug("sigmoid_of_the_bf16_load", "forward",
        (("    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    s = tl.sigmoid(x)",
          "    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)\n    s = tl.sigmoid(x)", 1),),
        cause="precision", named="none",
        reasons=(("does not compile for a GPU",), ("tl.sigmoid(x)",), ("fp32",)),
        not_causes=("atomic", "mask"),
        notes="x left in the input's dtype: tl.sigmoid takes fp32 or fp64 only, so a bf16 x does not compile for "
              "a GPU. The interpreter runs the bf16 case \"N=1000\" and its front-end compile says so; before it "
              "ran one, the CPU passed this kernel"),
    Bug("sigmoid_kept_in_bf16", "backward",
        ((BWD_S, "    s = tl.sigmoid(x).to(tl.bfloat16).to(tl.float32)  # recomputed from x", 1),),
        cause="precision",
        reasons=(("rounded to bfloat16",),),
        not_causes=("atomic", "mask"), not_words=("as if s did not depend",),
        notes="s as if saved between the passes in a bf16 buffer: 8 bits of mantissa, off by up to ~0.4%, far "
              "outside fp32's tolerance (the interpreter's bf16 arithmetic is unreliable, so the bug converts back "
              "to fp32 before using s)", code='variant.sigmoid_bf16_rounded'),
    Bug("sigmoid_overflows_in_backward", "backward",
        ((BWD_S, "    s = tl.exp(x) / (1.0 + tl.exp(x))  # recomputed from x", 1),),
        cause="stability",
        reasons=(("overflows fp32",), ("NaN",)),
        not_causes=("atomic",), not_words=("out of bounds", "as if s did not depend"),
        notes="the backward's own sigmoid, written the unstable way: inf / inf = NaN for x > 88.7"),
]

PASSING = [
    Right("sigmoid_written_out_and_dx_from_y", (
        (BWD_S, "    s = 1.0 / (1.0 + tl.exp(-x))  # recomputed from x", 1),
        (BWD_STORE, "tl.store(dx_ptr + offsets, dy * (s + x * s * (1.0 - s)), mask=mask)", 1)),
        notes="the sigmoid spelled out with exp(-x), and dx = dy (s + y (1 - s)) with y = x s"),
    Right("forward_without_load_mask_other", (
        ("    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    s = tl.sigmoid(x)  # 1",
         "    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)\n    s = tl.sigmoid(x)  # 1", 1),),
        notes="masked lanes hold undefined values, but their results are never stored: no other= needed"),
]


# -- measured: bugs a learner writes, and correct rewrites (tests/bugs/measure.py) --------------
FWD_STORE = "tl.store(y_ptr + offsets, x * s, mask=mask)"
DX = "tl.store(dx_ptr + offsets, dy * s * (1.0 + x * (1.0 - s)), mask=mask)"

MEASURED = [
    Bug("sigmoid_of_minus_x", "forward",
        (("    s = tl.sigmoid(x)  # 1 / (1 + exp(-x))", "    s = 1.0 / (1.0 + tl.exp(x))  # 1 / (1 + exp(-x))", 1),),
        "formula", "the sigmoid written 1 / (1 + exp(x)): the sign of the exponent dropped"),
    Bug("forward_store_at_block_0", "forward",
        ((FWD_STORE, "tl.store(y_ptr + tl.arange(0, BLOCK), x * s, mask=mask)", 1),),
        "address", "the loads use the program's block, the store block 0: every program writes the first block"),
    Bug("forward_stored_as_float16", "forward",
        ((FWD_STORE, "tl.store(y_ptr + offsets, (x * s).to(tl.float16), mask=mask)", 1),),
        "precision", "y squeezed through fp16 before the store (y is fp32)"),
    Bug("dx_without_dy", "backward",
        ((DX, "tl.store(dx_ptr + offsets, s * (1.0 + x * (1.0 - s)), mask=mask)", 1),),
        "formula", "dx = s (1 + x (1 - s)): the local derivative, not multiplied by the upstream dy"),
    Bug("dx_second_term_without_s", "backward",
        ((DX, "tl.store(dx_ptr + offsets, dy * (s + x * (1.0 - s)), mask=mask)", 1),),
        "formula", "dx = dy (s + x (1 - s)): the sigmoid's derivative written (1 - s) instead of s (1 - s)"),
    Bug("backward_mask_le", "backward",
        (("    mask = offsets < N\n    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    dy",
          "    mask = offsets <= N\n    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    dy", 1),),
        "mask", "the backward's mask is offsets <= N: lane N gets through"),
    Bug("backward_sigmoid_from_exp_x", "backward",
        (("    s = tl.sigmoid(x)  # recomputed", "    s = tl.exp(x) / (1.0 + tl.exp(x))  # recomputed", 1),),
        "stability", "the backward's sigmoid as exp(x) / (1 + exp(x)): inf / inf for x > 88"),
]

RIGHT = [
    Right("forward_divides_by_one_plus_exp", (("    s = tl.sigmoid(x)  # 1 / (1 + exp(-x))", "    # no s: 1 / (1 + exp(-x))", 1),
                                              (FWD_STORE, "tl.store(y_ptr + offsets, x / (1.0 + tl.exp(-x)), mask=mask)", 1)),
          "y = x / (1 + exp(-x)) in one expression (exp(-x) = inf for x < -88 gives -0, which is right)"),
    Right("backward_sigmoid_from_exp_of_minus_abs", (("    s = tl.sigmoid(x)  # recomputed",
        "    e = tl.exp(-tl.abs(x))  # never overflows\n    s = tl.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # recomputed", 1),),
          "the backward's sigmoid from exp(-|x|), the stable two-branch form"),
]


# -- mutants no check can catch (python -m checker.mutate) ------------------------------------
EQUIVALENT = {
    "fill.other:silu_fwd_kernel:52d12eef:0": MASKED_OUT,
    "fill.other:silu_bwd_kernel:52d12eef:0": MASKED_OUT,
    "fill.other:silu_bwd_kernel:3c1a5198:0": MASKED_OUT,
}
