"""Blind corpus (round 6 for p27-p32), puzzle 31 (FlashAttention forward): learner bugs and correct rewrites, written apart."""
from bugs import Bug, Kernel, Right

_ACC = "        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)"
_L = "        l = l * alpha + tl.sum(p, axis=1)\n"
_O = "    o = acc / l[:, None]\n"
_QKS = "    qk_scale = scale * 1.4426950408889634\n"
_LSE = "    tl.store(lse_ptr + head * L + rows, (m + tl.log2(l)) * 0.6931471805599453, mask=rows < L)"
_KH = ("    k_head = k_ptr + (head // GROUP) * S * D\n"
       "    v_head = v_ptr + (head // GROUP) * S * D\n")
_O_STORE = "    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o,\n"
_VIS = ("        visible = cols[None, :] < S\n"
        "        if CAUSAL:\n"
        "            visible = visible & (cols[None, :] <= rows[:, None])\n"
        "        s = tl.where(visible, s, float(\"-inf\"))\n")
_WHOLE = "    whole = (whole // BLOCK_K) * BLOCK_K\n"
_L0 = "    l = tl.zeros([BLOCK_Q], dtype=tl.float32)\n"
_QLOAD = ("    q = tl.load(q_head + rows[:, None] * D + dims[None, :],\n"
          "                mask=(rows[:, None] < L) & (dims[None, :] < D), other=0.0)\n")
_P = "        p = tl.exp2(s - m_new[:, None])\n"

_ONE_STAGE_EXP = '''
@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale, GROUP, D: tl.constexpr,
                    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
                    CAUSAL: tl.constexpr):
    """One masked loop over every key block up to the causal end, natural exp, lse = m + log l."""
    pid_q = tl.program_id(0)
    head = tl.program_id(1)
    rows = pid_q * BLOCK_Q + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, BLOCK_D)
    kv = head // GROUP
    dmask = dims[None, :] < D
    q = tl.load(q_ptr + head * L * D + rows[:, None] * D + dims[None, :],
                mask=(rows[:, None] < L) & dmask, other=0.0)
    m = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
    l = tl.zeros([BLOCK_Q], dtype=tl.float32)
    acc = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)
    end = S
    if CAUSAL:
        end = tl.minimum(S, (pid_q + 1) * BLOCK_Q)
    for start in range(0, end, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        kmask = (cols[:, None] < S) & dmask
        k = tl.load(k_ptr + kv * S * D + cols[:, None] * D + dims[None, :], mask=kmask, other=0.0)
        v = tl.load(v_ptr + kv * S * D + cols[:, None] * D + dims[None, :], mask=kmask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        ok = (cols[None, :] < S) & (rows[:, None] >= 0)
        if CAUSAL:
            ok = ok & (cols[None, :] <= rows[:, None])
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = alpha * l + tl.sum(p, axis=1)
        acc = alpha[:, None] * acc + tl.dot(p.to(v.dtype), v)
        m = m_new
    o = acc * (1.0 / l)[:, None]
    tl.store(o_ptr + head * L * D + rows[:, None] * D + dims[None, :], o,
             mask=(rows[:, None] < L) & dmask)
    tl.store(lse_ptr + head * L + rows, m + tl.log(l), mask=rows < L)
'''

MEASURED = [
    Bug("acc_not_rescaled", "forward",
        ((_ACC, "        acc = acc + tl.dot(p.to(v.dtype), v)", 2),),
        "accumulate", "the running output is not rescaled by exp2(m_old − m_new) when a key block raises the max"),
    Bug("l_not_rescaled", "forward",
        ((_L, "        l = l + tl.sum(p, axis=1)\n", 2),),
        "accumulate", "the running sum l is added to without being rescaled to the new max"),
    Bug("max_not_carried_stage1", "forward",
        (("        m = m_new\n    for start in range(whole, end, BLOCK_K):\n",
          "    for start in range(whole, end, BLOCK_K):\n", 1),),
        "accumulate", "the unmasked stage never carries m = m_new: m stays -inf, every block's alpha is 0 and wipes the sum and output so far"),
    Bug("output_not_normalised", "forward",
        ((_O, "    o = acc\n", 1),),
        "formula", "the output is left as Σ p·v: the final division by the running sum l is forgotten"),
    Bug("exp2_without_log2e", "forward",
        ((_QKS, "    qk_scale = scale\n", 1),),
        "formula", "exp2 used on the plainly scaled scores: the log2(e) factor that turns exp into exp2 is missing"),
    Bug("lse_left_in_base2", "forward",
        ((_LSE, "    tl.store(lse_ptr + head * L + rows, m + tl.log2(l), mask=rows < L)", 1),),
        "formula", "lse stored in base-2 units: the ln 2 factor back to the natural log is dropped"),
    Bug("gqa_kv_head_not_shared", "forward",
        ((_KH, "    k_head = k_ptr + head * S * D\n    v_head = v_ptr + head * S * D\n", 1),),
        "address", "key/value head taken as the query head's own index: with grouped-query attention it must be head // GROUP"),
    Bug("gqa_kv_head_modulo", "forward",
        ((_KH, _KH.replace("(head // GROUP)", "(head % GROUP)"), 1),),
        "address", "key/value head computed head % GROUP instead of head // GROUP"),
    Bug("o_head_stride_S", "forward",
        ((_O_STORE, _O_STORE.replace("head * L * D", "head * S * D"), 1),),
        "address", "o's head offset uses the keys' length S (copied from k's line): wrong when L ≠ S"),
    Bug("no_key_bound_in_tail", "forward",
        ((_VIS, "        if CAUSAL:\n"
                "            s = tl.where(cols[None, :] <= rows[:, None], s, float(\"-inf\"))\n", 1),),
        "mask", "the tail block's keys past S are not masked out of the scores: they score 0 and join the softmax"),
    Bug("causal_strict", "forward",
        ((_VIS, _VIS.replace("cols[None, :] <= rows[:, None]", "cols[None, :] < rows[:, None]"), 1),),
        "mask", "the causal mask is j < i: a query does not see its own key, and query 0 sees nothing"),
    Bug("masked_scores_zero", "forward",
        ((_VIS, _VIS.replace("s = tl.where(visible, s, float(\"-inf\"))", "s = tl.where(visible, s, 0.0)"), 1),),
        "fill", "masked scores set to 0.0, not -inf: every hidden key still gets weight exp(0 − m)"),
    Bug("stage1_not_rounded_down", "forward",
        ((_WHOLE, "", 1),),
        "loop", "the unmasked stage runs to S (or the diagonal) without rounding down to whole key blocks: its last block reads keys past the bound unmasked",
        ("mask",)),
    Bug("q_rows_not_masked", "forward",
        ((_QLOAD, _QLOAD.replace("mask=(rows[:, None] < L) & (dims[None, :] < D)", "mask=dims[None, :] < D"), 1),),
        "mask", "q's load bounds the head lanes only: the last query block reads rows past L"),
    Bug("scale_hardcoded_d16", "forward",
        ((_QKS, "    qk_scale = 0.25 * 1.4426950408889634\n", 1),),
        "hardcoded", "the score scale written in as 1/sqrt(16) (the documented D) instead of the scale passed"),
    Bug("rows_stride_block_d", "forward",
        ((_QLOAD, _QLOAD.replace("rows[:, None] * D", "rows[:, None] * BLOCK_D"), 1),),
        "address", "q's rows taken BLOCK_D apart (the padded width), not D: wrong when D is not a power of two"),
    Bug("p_rounded_before_sum", "forward",
        ((_P, "        p = tl.exp2(s - m_new[:, None]).to(v.dtype)\n", 2),),
        "precision", "p rounded to the inputs' dtype before the running sum takes it: in bf16 l and lse lose their digits"),
]

RIGHT = [
    Right("one_stage_natural_exp", (Kernel("attn_fwd_kernel", _ONE_STAGE_EXP),),
          "one masked loop over all key blocks up to the causal end, exp in natural units and lse = m + log l"),
    Right("lse_natural_split",
          ((_LSE, "    tl.store(lse_ptr + head * L + rows, m * 0.6931471805599453 + tl.log(l), mask=rows < L)", 1),),
          "lse written m·ln2 + ln l: the base-2 max converted, the sum's log taken naturally"),
    Right("scale_after_max",
          (("        m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)\n        s = s * qk_scale\n",
            "        s = s * qk_scale\n        m_new = tl.maximum(m, tl.max(s, axis=1))\n", 1),),
          "stage 1 scales every score first and takes the max of the scaled scores: the same max"),
    Right("normalise_by_reciprocal",
          ((_O, "    inv = 1.0 / l\n    o = acc * inv[:, None]\n", 1),),
          "the output normalised by multiplying with 1/l instead of dividing"),
]
