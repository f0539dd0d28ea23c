"""Known-buggy kernels for puzzle 28 (fused Linear + cross-entropy, chunked), each the reference
solution with one bug patched in (tests/test_contract.py rejects each for its stated reason), and
correct kernels written differently (which must pass)."""
from catalog import Alternative, Bug

ADD = "        acc += tl.load(c_ptrs, mask=mask)\n"
LOOP = "    for start in range(0, K, BLOCK_K):\n"
A_LOAD = ("        a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak,\n"
          "                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)\n")
B_ADDR = "b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn"
PASS1_LOAD = 'x = tl.load(x_row + cols, mask=cols < V, other=-float("inf")).to(tl.float32)'
COUNT = "tl.sum((target != ignore_index).to(tl.int32), axis=0)"
SCALE = "    scale = tl.where(valid, tl.load(dloss_ptr) / n, 0.0)\n"
NOT_ATOMICS = ("atomic", "race", "lost")

BUGS = [
    Bug("dw_overwritten_per_chunk", "step",
        ((ADD, "        acc = acc * 1.0\n", 1),),
        reasons=(("last chunk's share alone",),),
        misleading=NOT_ATOMICS,
        notes="each chunk stores its share of dW over the previous ones: right while N fits one chunk"),
    Bug("product_loop_covers_one_block", "step",
        ((LOOP, "    for start in range(0, BLOCK_K, BLOCK_K):\n", 1),),
        reasons=(("dx",), ("dw",)),
        misleading=NOT_ATOMICS,
        notes="the sum over K stops after its first block: every product whose K exceeds BLOCK_K is short"),
    Bug("a_loaded_without_k_mask", "step",
        ((A_LOAD, A_LOAD.replace("mask=(rows[:, None] < M) & (ks[None, :] < K)", "mask=rows[:, None] < M"), 1),),
        reasons=(("out of bounds", "out-of-bounds"),),
        misleading=("atomic",), gpu_by_chance=True,
        notes="the lanes past K read the next row (or a few elements past the tensor) and meet b's masked 0: "
              "right unless what lies past x is NaN or Inf (0 · NaN = NaN), which depends on the GPU's "
              "allocations (NaN seen on an H100); the sanitizer sees the read every time"),
    Bug("b_strides_swapped", "step",
        ((B_ADDR, "b_ptr + ks[:, None] * stride_bn + cols[None, :] * stride_bk", 1),),
        reasons=(("loss",), ("dx",)),
        misleading=NOT_ATOMICS,
        notes="b read as its own transpose: wᵀ becomes w's memory read row-major, a different matrix"),
    Bug("padded_vocabulary_lanes_load_zero", "step",
        ((PASS1_LOAD, PASS1_LOAD.replace('other=-float("inf")', "other=0.0"), 1),),
        reasons=(("padded lane",),),
        misleading=NOT_ATOMICS),
    Bug("mean_over_all_rows", "step",
        ((COUNT, "tl.sum((rows < M).to(tl.int32), axis=0)", 1),),
        reasons=(("mean over all N rows",), ("ignored rows",)),
        misleading=NOT_ATOMICS),
    Bug("no_upstream_gradient", "step",
        ((SCALE, "    scale = tl.where(valid, 1.0 / n, 0.0)\n", 1),),
        reasons=(("without the upstream dloss",),),
        misleading=NOT_ATOMICS),
]

ALTERNATIVES = [
    Alternative("dw_added_with_atomics",
                ((ADD + "    tl.store(c_ptrs, acc, mask=mask)\n",
                  "        tl.atomic_add(c_ptrs, acc, mask=mask)\n    else:\n        tl.store(c_ptrs, acc, mask=mask)\n", 1),),
                notes="puzzle 19's atomics: right, but the order of the adds may change from run to run"),
    Alternative("pointers_advanced_along_k",
                ((LOOP + "        ks = start + tl.arange(0, BLOCK_K)\n",
                  "    ks = tl.arange(0, BLOCK_K)\n    for start in range(0, K, BLOCK_K):\n", 1),
                 ("        acc += tl.dot(a.to(b.dtype), b)\n",
                  "        acc += tl.dot(a.to(b.dtype), b)\n        ks += BLOCK_K\n", 1)),
                notes="the k offsets carried from one step to the next instead of recomputed"),
]
