"""Learner bugs for puzzle 6 (SiLU forward and backward), and correct kernels written differently."""
from entries import Bug, Kernel, Right

FWD_STORE = "tl.store(y_ptr + offsets, x * s, mask=mask)"
DX = "tl.store(dx_ptr + offsets, dy * s * (1.0 + x * (1.0 - s)), mask=mask)"

BUGS = [
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
