"""Known-buggy kernels for puzzle 6 (SiLU forward and backward), each the reference solution with
one bug patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels
written differently (which must pass)."""
from catalog import Alternative, Bug

BWD_STORE = "tl.store(dx_ptr + offsets, dy * s * (1.0 + x * (1.0 - s)), mask=mask)"
BWD_S = "    s = tl.sigmoid(x)  # recomputed from x"

BUGS = [
    Bug("dx_treats_s_as_a_constant", "backward",
        ((BWD_STORE, "tl.store(dx_ptr + offsets, dy * s, mask=mask)", 1),),
        reasons=(("as if s did not depend on x",),),
        misleading=("atomic", "mask", "race", "out of bounds", "hard-coded"),
        notes="the classic wrong derivative: d(x·s)/dx taken as s"),
    Bug("dx_is_the_sigmoid_derivative", "backward",
        ((BWD_STORE, "tl.store(dx_ptr + offsets, dy * s * (1.0 - s), mask=mask)", 1),),
        reasons=(("derivative of the sigmoid alone",),),
        misleading=("atomic", "mask", "race", "out of bounds")),
    Bug("backward_without_mask", "backward",
        (("    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n"
          "    dy = tl.load(dy_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n",
          "    x = tl.load(x_ptr + offsets).to(tl.float32)\n"
          "    dy = tl.load(dy_ptr + offsets).to(tl.float32)\n", 1),
         (BWD_STORE, "tl.store(dx_ptr + offsets, dy * s * (1.0 + x * (1.0 - s)))", 1)),
        reasons=(("out of bounds", "out-of-bounds"), ("x_ptr", "dy_ptr", "dx_ptr")),
        misleading=("atomic", "race"),
        notes="the last block reads and writes past N"),
    Bug("forward_store_without_mask", "forward",
        (("tl.store(y_ptr + offsets, x * s, mask=mask)", "tl.store(y_ptr + offsets, x * s)", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("y_ptr",)),
        misleading=("atomic", "race"),
        notes="the loads are masked, the store is not: the tail lanes write past the end of y"),
    Bug("backward_forgets_program_id", "backward",
        (("    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offsets < N\n"
          "    x = tl.load(x_ptr", "    offsets = tl.arange(0, BLOCK)\n    mask = offsets < N\n"
          "    x = tl.load(x_ptr", 1),),
        reasons=(("race",), ("dx_ptr",)),
        reasons_unsanitized=(("never written",),),
        misleading=("atomic",),
        notes="every program does block 0: several programs store the same elements of dx"),
    Bug("sigmoid_overflows", "forward",
        (("    s = tl.sigmoid(x)  # 1 / (1 + exp(-x))",
          "    s = tl.exp(x) / (1.0 + tl.exp(x))  # 1 / (1 + exp(-x))", 1),),
        reasons=(("overflows fp32",), ("NaN",)),
        misleading=("atomic", "race", "out of bounds"),
        notes="exp(x) / (1 + exp(x)) is inf / inf = NaN for x > 88.7: only the large-|x| case fails"),
    Bug("sigmoid_kept_in_bf16", "backward",
        ((BWD_S, "    s = tl.sigmoid(x).to(tl.bfloat16).to(tl.float32)  # recomputed from x", 1),),
        reasons=(("rounded to bfloat16",),),
        misleading=("atomic", "mask", "race", "as if s did not depend"),
        notes="s as if saved between the passes in a bf16 buffer: 8 bits of mantissa, off by up to ~0.4%, far "
              "outside fp32's tolerance (the interpreter's bf16 arithmetic is unreliable, so the bug converts back "
              "to fp32 before using s)"),
    Bug("sigmoid_overflows_in_backward", "backward",
        ((BWD_S, "    s = tl.exp(x) / (1.0 + tl.exp(x))  # recomputed from x", 1),),
        reasons=(("overflows fp32",), ("NaN",)),
        misleading=("atomic", "race", "out of bounds", "as if s did not depend"),
        notes="the backward's own sigmoid, written the unstable way: inf / inf = NaN for x > 88.7"),
]

ALTERNATIVES = [
    Alternative("sigmoid_written_out_and_dx_from_y", (
        (BWD_S, "    s = 1.0 / (1.0 + tl.exp(-x))  # recomputed from x", 1),
        (BWD_STORE, "tl.store(dx_ptr + offsets, dy * (s + x * s * (1.0 - s)), mask=mask)", 1)),
        notes="the sigmoid spelled out with exp(-x), and dx = dy (s + y (1 - s)) with y = x s"),
    Alternative("forward_without_load_mask_other", (
        ("    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)\n    s = tl.sigmoid(x)  # 1",
         "    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)\n    s = tl.sigmoid(x)  # 1", 1),),
        notes="masked lanes hold undefined values, but their results are never stored: no other= needed"),
]
