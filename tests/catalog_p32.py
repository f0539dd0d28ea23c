"""Known-buggy kernels for puzzle 32 (FlashAttention backward), each the reference solution with one
bug patched in (tests/test_contract.py rejects each for its stated reason), and correct kernels
written differently (which must pass)."""
from pathlib import Path

from catalog import Alternative, Bug

DKDV_MASK = "    if MASK:  # a block across the diagonal: query i sees key j only if j <= i\n" \
            "        p_t = tl.where(cols[:, None] <= rows[None, :], p_t, 0.0)\n"
DQ_MASK = "    if MASK:\n        p = tl.where(cols[None, :] <= rows[:, None], p, 0.0)\n"
DELTA = "tl.store(delta_ptr + head * L + rows, tl.sum(o * do, axis=1), mask=rows < L)"
LSE_LOAD = "* 1.4426950408889634  # base 2, as the scores"
DQ_LSE = "    lse = tl.load(lse_ptr + head * L + rows, mask=rows < L, other=0.0) * 1.4426950408889634\n"
KV_LOAD = """    k = tl.load(k_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)
    v = tl.load(v_head + cols[:, None] * D + dims[None, :], mask=kv_mask, other=0.0)"""
MISLEAD = ("atomic", "race", "lost")

BUGS = [
    Bug("causal_mask_forgotten_in_backward", "backward",
        ((DKDV_MASK, "", 1), (DQ_MASK, "", 1)),
        reasons=(("rebuilt without the causal mask",),), misleading=MISLEAD,
        notes="the forward masked (its lse is causal's), the backward's P is not: weight on future keys"),
    Bug("causal_mask_in_every_backward", "backward",
        (("    if MASK:  # a block", "    if True:  # a block", 1), ("    if MASK:\n        p = tl.where", "    if True:\n        p = tl.where", 1)),
        reasons=(("non-causal cases match a P masked causally",),), misleading=MISLEAD,
        notes="the reverse: a mask in the non-causal kernels (here on every block, causal or not)"),
    Bug("delta_from_do_alone", "backward",
        ((DELTA, "tl.store(delta_ptr + head * L + rows, tl.sum(do, axis=1), mask=rows < L)", 1),),
        reasons=(("rowsum(dO) alone",),), misleading=MISLEAD + ("mask",)),
    Bug("scale_missing_in_ds", "backward",
        (("    dk *= scale  #", "    dk *= 1.0  #", 1), ("    dq *= scale\n", "", 1)),
        reasons=(("without the scale",),), misleading=MISLEAD + ("mask",)),
    Bug("natural_lse_against_base2_scores", "backward",
        ((LSE_LOAD, " # base 2, as the scores", 1),
         (DQ_LSE, DQ_LSE.replace(" * 1.4426950408889634", ""), 1)),
        reasons=(("natural log",),), misleading=MISLEAD + ("mask",),
        notes="the logsumexp reused, but in the wrong base: P = e^(s - lse·ln 2)"),
    Bug("dq_diagonal_blocks_unmasked", "backward",
        (("        whole = (tl.minimum(S, first + 1) // BLOCK_K) * BLOCK_K\n",
          "        whole = (tl.minimum(S, first + BLOCK_Q) // BLOCK_K) * BLOCK_K\n", 1),),
        reasons=(("only the causal cases fail",),), misleading=MISLEAD,
        notes="dQ's walk runs the diagonal blocks in its unmasked loop: dK and dV stay right"),
    Bug("dkdv_walk_skips_the_diagonal_block", "backward",
        (("range((first // BLOCK_Q) * BLOCK_Q, after, BLOCK_Q)", "range((first // BLOCK_Q + 1) * BLOCK_Q, after, BLOCK_Q)", 1),),
        reasons=(("only the causal cases fail",),), misleading=MISLEAD,
        notes="the query block holding the key block's first key is never visited"),
    Bug("key_tail_loads_unmasked", "backward",
        ((KV_LOAD, KV_LOAD.replace("mask=kv_mask", "mask=dims[None, :] < D"), 1),),
        reasons=(("out of bounds", "out-of-bounds"),), misleading=("atomic",), gpu_by_chance=True,
        notes="dQ's last key block reads past S; on a GPU what lies past the end decides the verdict "
              "(the H100 failed it where zeros would have passed), but the read itself is out of bounds"),
]

_TEXT = (Path(__file__).resolve().parents[1] / "solutions" / "p32_flash_attention_backward.py").read_text(encoding="utf-8")
# dQ summed by the dK/dV programs themselves: each adds its key block's dS K to every query row it
# visits, with tl.atomic_add (dq starts at zero); the dQ kernel then has nothing to do
DQ_ATOMIC = ("    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK = dSᵀ Q (times scale, at the end)\n",
             "    dk += tl.dot(ds_t.to(q.dtype), q)                    # dK = dSᵀ Q (times scale, at the end)\n"
             "    dq_part = tl.dot(tl.trans(ds_t).to(k.dtype), k) * scale\n"
             "    tl.atomic_add(dq_head + rows[:, None] * D + dims[None, :], dq_part, mask=q_mask)\n", 1)
ATOMIC_PATCHES = (
    DQ_ATOMIC,
    ("def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start, cols, dims, L, qk_scale,\n",
     "def dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, dq_head, scale, start, cols, dims, L, "
     "qk_scale,\n", 1),
    ("dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, start,",
     "dkdv_step(dk, dv, k, v, q_head, do_head, lse_head, delta_head, dq_ptr + head * L * D, scale, start,", 2),
    ("    for start in range(0, whole, BLOCK_K):\n        dq = dq_step(", "    for start in range(0, 0, BLOCK_K):\n        dq = dq_step(", 1),
    ("    for start in range(whole, end, BLOCK_K):\n        dq = dq_step(", "    for start in range(0, 0, BLOCK_K):\n        dq = dq_step(", 1),
    ("    tl.store(dq_ptr + head * L * D + rows[:, None] * D + dims[None, :], dq, mask=q_mask)\n", "", 1),
)

ALTERNATIVES = [
    Alternative("dq_by_atomics", ATOMIC_PATCHES,
                notes="dQ added by the dK/dV programs with tl.atomic_add: one walk instead of two, but every "
                      "query row takes an fp32 atomic from each key block (S / BLOCK_K writers), in an order "
                      "that changes from run to run"),
    Alternative("p_by_natural_exp", (("    qk_scale = scale * 1.4426950408889634\n", "    qk_scale = scale\n", 2),
                                     (" * 1.4426950408889634  # base 2, as the scores", "", 1),
                                     (DQ_LSE, DQ_LSE.replace(" * 1.4426950408889634", ""), 1),
                                     ("p_t = tl.exp2(", "p_t = tl.exp(", 1), ("p = tl.exp2(", "p = tl.exp(", 1)),
                notes="tl.exp on scale · q kᵀ − lse, everything in the natural log"),
]
# the atomic alternative with a plain load, add and store instead of tl.atomic_add: shares from
# several key-block programs race on the same dQ rows
_RACY = tuple((old, new.replace("    tl.atomic_add(dq_head + rows[:, None] * D + dims[None, :], dq_part, mask=q_mask)\n",
                                 "    dq_rows = dq_head + rows[:, None] * D + dims[None, :]\n"
                                 "    tl.store(dq_rows, tl.load(dq_rows, mask=q_mask) + dq_part, mask=q_mask)\n"), n)
              for old, new, n in ATOMIC_PATCHES)
BUGS.append(Bug("dq_summed_without_atomics", "backward", _RACY,
                reasons=(("atomic",),), cpu_blind_without_sanitizer=True, gpu_by_chance=True,
                notes="right when programs run one after another (the interpreter without its race check)"))
