"""Learner bugs for puzzle 12 (softmax backward), and correct kernels written differently."""
from entries import Bug, Kernel, Right

FIRST = ("    acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n    for start in range(0, N, BLOCK_N):\n"
         "        cols = start + tl.arange(0, BLOCK_N)\n        mask = cols < N\n")
STORE = "tl.store(dx_ptr + row * N + cols, y * (dy - s), mask=mask)"
SECOND = ("    for start in range(0, N, BLOCK_N):\n        cols = start + tl.arange(0, BLOCK_N)\n"
          "        mask = cols < N\n        y = tl.load(y_row + cols, mask=mask, other=0.0).to(tl.float32)\n"
          "        dy = tl.load(dy_row + cols, mask=mask, other=0.0).to(tl.float32)\n        tl.store")

BUGS = [
    Bug("cross_term_restarted_per_chunk", "backward",
        ((FIRST, "    for start in range(0, N, BLOCK_N):\n        acc = tl.zeros([BLOCK_N], dtype=tl.float32)\n"
                 "        cols = start + tl.arange(0, BLOCK_N)\n        mask = cols < N\n", 1),),
        "accumulate", "the accumulator of Σ dy·y created inside the loop: s is the last chunk's sum"),
    Bug("dx_rows_block_apart", "backward",
        ((STORE, STORE.replace("row * N", "row * BLOCK_N"), 1),),
        "address", "dx's row i stored at i * BLOCK_N instead of i * N"),
    Bug("dy_row_from_y_ptr", "backward",
        (("dy_row = dy_ptr + row * N", "dy_row = y_ptr + row * N", 1),),
        "formula", "dy's row pointer copied from y's line and left on y_ptr: y is read twice", accept=("address",)),
    Bug("parentheses_dropped", "backward",
        ((STORE, "tl.store(dx_ptr + row * N + cols, y * dy - s, mask=mask)", 1),),
        "formula", "dx = y * dy - s: the cross term is not multiplied by y"),
    Bug("second_pass_mask_against_the_block", "backward",
        ((SECOND, SECOND.replace("mask = cols < N", "mask = cols < BLOCK_N"), 1),),
        "mask", "the second pass masks with cols < BLOCK_N, true for every lane of the first chunk"),
    Bug("row_length_hard_coded", "backward",
        (("y_row = y_ptr + row * N", "y_row = y_ptr + row * 20", 1),),
        "hardcoded", "y's rows 20 apart, the documented N"),
    Bug("cross_term_summed_in_fp16", "backward",
        (("        acc += dy * y\n", "        acc += (dy * y).to(tl.float16)\n", 1),),
        "precision", "the products of the cross term rounded to fp16 before they are summed"),
    Bug("dx_written_over_dy", "backward",
        ((STORE, "tl.store(dy_row + cols, y * (dy - s), mask=mask)", 1),),
        "inplace", "dx stored through dy's row pointer: the input dy is overwritten and dx never written",
        accept=("address",)),
]

RIGHT = [
    Right("padded_y_loads_one", ((FIRST + "        y = tl.load(y_row + cols, mask=mask, other=0.0)",
                                  FIRST + "        y = tl.load(y_row + cols, mask=mask, other=1.0)", 1),),
          "padded lanes load y = 1 in the first pass: dy = 0 there, so they still add 0 to the sum"),
    Right("pointers_walk_the_row", (Kernel("softmax_bwd_kernel", '''
        @triton.jit
        def softmax_bwd_kernel(y_ptr, dy_ptr, dx_ptr, N, BLOCK_N: tl.constexpr):
            row = tl.program_id(0)
            lanes = tl.arange(0, BLOCK_N)
            y_ptrs = y_ptr + row * N + lanes
            dy_ptrs = dy_ptr + row * N + lanes
            acc = tl.zeros([BLOCK_N], dtype=tl.float32)
            for start in range(0, N, BLOCK_N):
                ok = start + lanes < N
                acc += tl.load(y_ptrs, mask=ok, other=0.0).to(tl.float32) * tl.load(dy_ptrs, mask=ok, other=0.0).to(tl.float32)
                y_ptrs += BLOCK_N
                dy_ptrs += BLOCK_N
            s = tl.sum(acc, axis=0)
            y_ptrs = y_ptr + row * N + lanes
            dy_ptrs = dy_ptr + row * N + lanes
            dx_ptrs = dx_ptr + row * N + lanes
            for start in range(0, N, BLOCK_N):
                ok = start + lanes < N
                y = tl.load(y_ptrs, mask=ok, other=0.0).to(tl.float32)
                dy = tl.load(dy_ptrs, mask=ok, other=0.0).to(tl.float32)
                tl.store(dx_ptrs, y * dy - y * s, mask=ok)
                y_ptrs += BLOCK_N
                dy_ptrs += BLOCK_N
                dx_ptrs += BLOCK_N
        '''),), "pointer blocks advanced by BLOCK_N each step instead of offsets recomputed"),
]
