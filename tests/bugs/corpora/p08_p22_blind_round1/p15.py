"""Blind corpus (round 1 for p08-p22 / round 6 for p27-p32), puzzle 15 (Linear forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_X = ("        x = tl.load(x_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :],\n"
      "                    other=0.0)  # [BLOCK_M, BLOCK_K]\n")
_W = ("        wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :],\n"
      "                     other=0.0)\n")
_BIAS = ("    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n"
         "    acc += bias.to(tl.float32)[None, :]\n")

MEASURED = [
    Bug("w_read_as_k_by_n", "forward",
        ((_W, _W.replace("cols[None, :] * K + ks[:, None]", "ks[:, None] * N + cols[None, :]"), 1),),
        "address", "W is read as if it were stored [K, N] (k * N + n): nn.Linear's W is [N, K], W^T[k, n] sits at n * K + k",
        accept=("formula",)),
    Bug("x_row_stride_n", "forward",
        ((_X, _X.replace("rows[:, None] * K", "rows[:, None] * N"), 1),),
        "address", "rows of x are stepped by N (y's row length) instead of K: x is [M, K]"),
    Bug("bias_indexed_by_rows", "forward",
        ((_BIAS, "    bias = tl.load(b_ptr + rows, mask=row_ok, other=0.0)\n"
                 "    acc += bias.to(tl.float32)[:, None]\n", 1),),
        "address", "the bias is indexed by the tile's rows (samples) instead of its columns (output features)"),
    Bug("bias_added_every_k_step", "forward",
        (("        acc += tl.dot(x, wt)\n", "        acc += tl.dot(x, wt)\n"
          "        bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n"
          "        acc += bias.to(tl.float32)[None, :]\n", 1),
         (_BIAS, "", 1)),
        "formula", "the bias is added inside the K loop: it is counted once per K step instead of once",
        accept=("loop",)),
    Bug("bias_forgotten", "forward",
        ((_BIAS, "", 1),),
        "formula", "the epilogue is missing: y = x W^T without + b"),
    Bug("bias_load_unmasked", "forward",
        ((_BIAS, _BIAS.replace("tl.load(b_ptr + cols, mask=col_ok, other=0.0)", "tl.load(b_ptr + cols)"), 1),),
        "mask", "the bias load has no mask: the last column block reads past the end of b"),
    Bug("w_mask_columns_only", "forward",
        ((_W, _W.replace("mask=k_ok[:, None] & col_ok[None, :]", "mask=col_ok[None, :]"), 1),),
        "mask", "W's tile is masked on the output features only: the last K step reads past each row of W (past W on the last)"),
    Bug("acc_overwritten", "forward",
        (("        acc += tl.dot(x, wt)\n", "        acc = tl.dot(x, wt)\n", 1),),
        "accumulate", "acc = tl.dot(...) inside the K loop: every step replaces the partial product; y keeps the last step's share plus b"),
]

RIGHT = [
    Right("w_tile_then_trans",
          ((_W, "        w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=col_ok[:, None] & k_ok[None, :],\n"
                "                    other=0.0)  # [BLOCK_N, BLOCK_K], W's own layout\n"
                "        wt = tl.trans(w)\n", 1),),
          "W's tile loaded in its own [BLOCK_N, BLOCK_K] layout and transposed in registers with tl.trans before tl.dot"),
    Right("bias_as_initial_acc",
          (("    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)  # fp32 whatever the input dtype\n",
            "    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
            "    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32) + bias[None, :]  # start from b\n", 1),
           (_BIAS, "", 1)),
          "the accumulator starts from the bias broadcast down the tile, so the K loop adds x W^T on top of it: b counted once all the same"),
]
