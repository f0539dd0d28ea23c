"""The reference solutions as earlier corpora were written against: patches that take today's
solution back to that text, applied before an entry's own (bugs.written_against).

A corpus entry is a learner's kernel written as patches on the reference of its day. When the
reference changes where an entry patches, the entry's kernel is still a learner's kernel: it is
measured on the text it was written against, not rewritten (a blind corpus stays as its writer left
it). Each constant says what changed and must apply exactly once (a stale one fails loudly)."""

# p31, 2026-11-27: the unmasked stage takes the max of the raw scores and scales each score once,
# where the compiler fuses the scale and the max's subtraction into one multiply-add
P31_BEFORE_FUSED_SCALE = ((
    "        s = tl.dot(q, tl.trans(k))  # [BLOCK_Q, BLOCK_K], fp32 accumulation, not yet scaled\n"
    "        # the max of the raw scores, scaled once per row: the scale is positive, so it is the max of\n"
    "        # the scaled scores. Each score's scale then has one use, in s · qk_scale − m, which the\n"
    "        # compiler fuses into one multiply-add (one instruction per score fewer: ~5 % at N = 4096)\n"
    "        m_new = tl.maximum(m, tl.max(s, axis=1) * qk_scale)\n"
    "        s = s * qk_scale\n",
    "        s = tl.dot(q, tl.trans(k)) * qk_scale  # [BLOCK_Q, BLOCK_K], fp32 accumulation\n"
    "        m_new = tl.maximum(m, tl.max(s, axis=1))\n", 1),)

# p31, 2026-11-27: grouped-query attention. k and v have KV heads, read by GROUP = H / KV query heads
# each: the kernel takes GROUP and reads key/value head head // GROUP
P31_BEFORE_GQA = (
    ("def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale, GROUP, D: tl.constexpr,",
     "def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, L, S, scale, D: tl.constexpr,", 1),
    ("    # head counts (batch, query head) pairs, b * H + h; with H = KV · GROUP, head // GROUP is\n"
     "    # b * KV + h // GROUP: the same batch's key/value head that query head h shares\n"
     "    k_head = k_ptr + (head // GROUP) * S * D\n"
     "    v_head = v_ptr + (head // GROUP) * S * D\n",
     "    k_head = k_ptr + head * S * D\n"
     "    v_head = v_ptr + head * S * D\n", 1))
# ... and the same made again on a kernel of before: what a learner updating their kernel to the
# grown contract does (the argument, and the key/value head from the query head), their bug untouched
P31_GQA = (
    ("lse_ptr, L, S, scale, D: tl.constexpr", "lse_ptr, L, S, scale, GROUP, D: tl.constexpr", 1),
    ("k_ptr + head *", "k_ptr + (head // GROUP) *", 1),
    ("v_ptr + head *", "v_ptr + (head // GROUP) *", 1))

# p32, 2026-11-27: grouped-query attention, both walks reading key/value head head // GROUP (the
# kernels' new argument); dK and dV still stored per query head (the checker adds each group's)
P32_BEFORE_GQA = (
    ("dk_ptr, dv_ptr, L, S, scale,\n                         GROUP, D: tl.constexpr,",
     "dk_ptr, dv_ptr, L, S, scale,\n                         D: tl.constexpr,", 1),
    ("    # the key/value head this query head reads (puzzle 31): head counts (batch, query head) pairs\n"
     "    kv_head = head // GROUP\n"
     "    k = tl.load(k_ptr + kv_head * S * D", "    k = tl.load(k_ptr + head * S * D", 1),
    ("    v = tl.load(v_ptr + kv_head * S * D", "    v = tl.load(v_ptr + head * S * D", 1),
    ("dq_ptr, L, S, scale, GROUP,\n                       D: tl.constexpr,",
     "dq_ptr, L, S, scale,\n                       D: tl.constexpr,", 1),
    ("    k_head = k_ptr + (head // GROUP) * S * D  # the key/value head this query head reads (puzzle 31)\n"
     "    v_head = v_ptr + (head // GROUP) * S * D\n",
     "    k_head = k_ptr + head * S * D\n"
     "    v_head = v_ptr + head * S * D\n", 1))
P32_GQA = (
    ("dv_ptr, L, S, scale,\n                         D: tl.constexpr,",
     "dv_ptr, L, S, scale,\n                         GROUP, D: tl.constexpr,", 1),
    ("dq_ptr, L, S, scale,\n                       D: tl.constexpr,", "dq_ptr, L, S, scale, GROUP,\n                       D: tl.constexpr,", 1),
    ("tl.load(k_ptr + head *", "tl.load(k_ptr + (head // GROUP) *", 1),   # the dK/dV walk's loads
    ("tl.load(v_ptr + head *", "tl.load(v_ptr + (head // GROUP) *", 1),
    ("= k_ptr + head *", "= k_ptr + (head // GROUP) *", 1),  # the dQ walk's heads
    ("= v_ptr + head *", "= v_ptr + (head // GROUP) *", 1))
# for a dQ kernel that reads no keys (dQ summed by the dK/dV walk): its argument only
P32_GQA_NO_DQ_WALK = P32_GQA[:4]
