"""Known-buggy kernels for puzzle 15 (Linear forward), each the reference solution with one bug
patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels written
differently (which must pass)."""
from catalog import Alternative, Bug

WT_LOAD = "wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :],"
EPILOGUE = ("    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)\n"
            "    acc += bias.to(tl.float32)[None, :]\n")

BUGS = [
    Bug("w_read_as_k_by_n", "forward",
        ((WT_LOAD, "wt = tl.load(w_ptr + ks[:, None] * N + cols[None, :], mask=k_ok[:, None] & col_ok[None, :],",
          1),),
        reasons=(("W read transposed",),),
        misleading=("atomic", "mask", "without the bias", "once per step")),
    Bug("bias_added_at_every_k_step", "forward",
        ((EPILOGUE, "", 1),
         ("        acc += tl.dot(x, wt)\n",
          "        acc += tl.dot(x, wt)\n" + EPILOGUE.replace("    ", "        "), 1)),
        reasons=(("once per step over K",),),
        misleading=("atomic", "mask", "transposed")),
    Bug("bias_forgotten", "forward",
        ((EPILOGUE, "", 1),),
        reasons=(("without the bias",),),
        misleading=("atomic", "mask", "transposed")),
    Bug("bias_load_without_mask", "forward",
        (("bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0)", "bias = tl.load(b_ptr + cols)", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("b_ptr",), ("mask",)),
        gpu_blind=True,
        misleading=("atomic", "transposed")),
    Bug("w_tile_without_k_mask", "forward",
        ((WT_LOAD, "wt = tl.load(w_ptr + cols[None, :] * K + ks[:, None], mask=col_ok[None, :],", 1),),
        reasons=(("out of bounds", "out-of-bounds"), ("w_ptr",)),
        # past W's end a GPU reads whatever lies there: x's masked 0 times a finite value adds nothing,
        # times a NaN or an Inf it is NaN (an H100 run failed it once in three)
        gpu_by_chance=True,
        misleading=("atomic", "transposed"),
        notes="the values come out right (x's masked lanes are 0) unless the bytes past W are NaN or Inf, "
              "and the last row of W is read past its end: the sanitizer must still say so"),
]

ALTERNATIVES = [
    Alternative("w_tile_loaded_as_stored_then_tl_trans", (
        (WT_LOAD, "w = tl.load(w_ptr + cols[:, None] * K + ks[None, :], mask=col_ok[:, None] & k_ok[None, :],",
         1),
        ("        acc += tl.dot(x, wt)\n",
         "        acc += tl.dot(x, tl.trans(w))  # [BLOCK_N, BLOCK_K] -> its transpose\n", 1)),
        notes="W's tile read in its own layout, [BLOCK_N, BLOCK_K], and transposed in registers"),
    Alternative("bias_in_the_prologue", (
        (EPILOGUE, "", 1),
        ("    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)  # fp32 whatever the input dtype\n",
         "    bias = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(tl.float32)\n"
         "    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32) + bias[None, :]  # start from the bias\n", 1)),
        notes="the accumulator starts at the bias instead of receiving it at the end"),
]
