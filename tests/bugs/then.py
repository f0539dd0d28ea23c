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
