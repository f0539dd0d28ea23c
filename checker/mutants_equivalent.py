"""Mutants of the reference solutions that no check can catch, each with the reason.

`python -m checker.mutate` reports every surviving mutant not listed here as a failure, and every
listed one that is caught (or no longer exists) too: the list stays true as the solutions change.
Ids are those the tool prints (operator:function:site:occurrence); a reason says why the mutant
computes what the solution computes, for every input the puzzle allows.

Most are a load's other= changed where the padded lanes cannot matter: the reasons below say why,
once each.
"""

# the padded lanes (masked off in the load) flow only into stores and atomics with the same mask
MASKED_OUT = "its padded lanes reach only masked stores and atomics: what they hold is never written"
# the padded lanes are multiplied by a factor that is 0 on exactly those lanes before any sum
# (the other operand's padded 0, or a tl.where that zeroes them), or end in rows or columns no
# masked store writes (a matrix product's padded rows, a partial sum's padded columns)
ZERO_PARTNER = ("its padded lanes are multiplied by another operand's padded 0 before any sum, or reach only "
                "rows or columns that no masked store writes")
# a tl.where(mask, ..., 0.0) replaces the padded lanes before anything uses them
WHERE_ZEROES = "a tl.where(mask, ..., 0.0) replaces its padded lanes before anything uses them"

# ln_dx_kernel of puzzle 26 is launched with ROWS=1, and its loop starts every row block below M
ONE_ROW = "the launch passes ROWS=1, so every row block is one row below M: no lane is padded"
# a walk over blocks starts at a multiple of BLOCK_K or BLOCK_Q (powers of two >= 16, tl.dot's minimum):
# one more than such a start is odd, so it is never a multiple of a block and a floor division by one
# gives what the start alone gives
ODD_PAST_BLOCK = ("first is a multiple of a block (powers of two >= 16): first + 1 and first + 2 are never "
                  "multiples of a block, so the floor division gives what first alone gives")

# a bf16 value meets an fp32 operand in its first operation, and Triton promotes it to fp32 there:
# the cast only makes explicit what the promotion does (bf16 -> fp32 is exact)
PROMOTED = ("the bf16 value's first operation is with an fp32 operand, which promotes it to fp32 exactly as "
            "the cast does")

EQUIVALENT: dict[str, dict[str, str]] = {
    "p06": {
        "fill.other:silu_fwd_kernel:52d12eef:0": MASKED_OUT,
        "fill.other:silu_bwd_kernel:52d12eef:0": MASKED_OUT,
        "fill.other:silu_bwd_kernel:3c1a5198:0": MASKED_OUT,
    },
    "p07": {
        "precision.cast:bcast_relu_fwd_kernel:7d8ff1f0:0": PROMOTED,
        "fill.other:bcast_relu_fwd_kernel:873c43b4:0": MASKED_OUT,
        "fill.other:bcast_relu_bwd_kernel:873c43b4:0": "dz loads 0 on the padded lanes, so g = where(x * y > 0, dz, 0) "
                                                        "is 0 there whatever x holds",
        "fill.other:bcast_relu_bwd_kernel:b1ae9142:0": "x loads 0 on the padded lanes, so x * y > 0 fails there and "
                                                        "g = 0 whatever dz holds",
    },
    "p08": {
        "precision.cast:long_row_sum_kernel:2549400f:0": PROMOTED,
    },
    "p10": {
        "fill.other:row_mean_var_kernel:2c95eea7:0": WHERE_ZEROES,
    },
    "p11": {
        "fill.start:softmax_online_kernel:ca6ba3a3:0": "a lane's running sum is multiplied by exp(m_lane - m_new) = "
                                                       "exp(-inf) = 0 at its first real value, and a lane that never "
                                                       "sees one is set to 0 by the tl.where: the start value is lost",
        "fill.other:softmax_online_kernel:ad9a3534:0": MASKED_OUT,
    },
    "p12": {
        "fill.other:softmax_bwd_kernel:ae16c9cd:0": ZERO_PARTNER,
        "fill.other:softmax_bwd_kernel:dd631e71:0": ZERO_PARTNER,
        "fill.other:softmax_bwd_kernel:ae16c9cd:1": MASKED_OUT,
        "fill.other:softmax_bwd_kernel:dd631e71:1": MASKED_OUT,
    },
    "p13": {
        "fill.other:matvec_kernel:a89d318d:0": ZERO_PARTNER,
        "fill.other:matvec_kernel:b48c1f46:0": ZERO_PARTNER,
    },
    "p14": {
        "fill.other:tiled_matmul_kernel:e7a822dc:0": ZERO_PARTNER,
        "fill.other:tiled_matmul_kernel:8931705d:0": ZERO_PARTNER,
    },
    "p15": {
        "fill.other:linear_fwd_kernel:0d2c369f:0": ZERO_PARTNER,
        "fill.other:linear_fwd_kernel:de089bb4:0": ZERO_PARTNER,
        "fill.other:linear_fwd_kernel:40f86449:0": MASKED_OUT,
    },
    "p16": {
        "fill.other:linear_bwd_dx_kernel:9436542e:0": ZERO_PARTNER,
        "fill.other:linear_bwd_dx_kernel:33d42ed0:0": ZERO_PARTNER,
        "fill.other:linear_bwd_dw_kernel:d7c0a10b:0": ZERO_PARTNER,
    },
    "p19": {
        "fill.other:splitm_dw_kernel:3cbaeb8f:0": ZERO_PARTNER,
        "fill.other:splitm_dw_kernel:9436542e:0": ZERO_PARTNER,
    },
    "p20": {
        "fill.other:rmsnorm_fwd_kernel:2c95eea7:0": MASKED_OUT,
        "fill.other:rmsnorm_fwd_kernel:3526e811:0": MASKED_OUT,
        "fill.other:rmsnorm_bwd_kernel:dd631e71:0": ZERO_PARTNER,
        "fill.other:rmsnorm_bwd_kernel:3526e811:0": ZERO_PARTNER,
        "fill.other:rmsnorm_bwd_kernel:2c95eea7:1": MASKED_OUT,
        "fill.other:rmsnorm_bwd_kernel:dd631e71:1": MASKED_OUT,
        "fill.other:rmsnorm_bwd_kernel:3526e811:1": MASKED_OUT,
    },
    "p21": {
        "fill.other:layernorm_bwd_kernel:dc840dae:0": ZERO_PARTNER,
        "fill.other:layernorm_bwd_kernel:3526e811:0": ZERO_PARTNER,
        "fill.other:layernorm_bwd_kernel:2c95eea7:1": WHERE_ZEROES,
        "fill.other:layernorm_bwd_kernel:dc840dae:1": ZERO_PARTNER,
        "fill.other:layernorm_bwd_kernel:3526e811:1": ZERO_PARTNER,
        "fill.other:layernorm_bwd_kernel:2c95eea7:2": MASKED_OUT,
        "fill.other:layernorm_bwd_kernel:dc840dae:2": MASKED_OUT,
        "fill.other:layernorm_bwd_kernel:3526e811:2": MASKED_OUT,
    },
    "p23": {
        "fill.other:ln_bwd_partial_kernel:3e2b28c1:0": ZERO_PARTNER,
        "fill.other:ln_bwd_partial_kernel:553ad7d5:0": ZERO_PARTNER,
    },
    "p24": {
        "fill.other:ln_bwd_locked_kernel:553ad7d5:0": ZERO_PARTNER,
        "fill.other:ln_bwd_locked_kernel:3e2b28c1:0": ZERO_PARTNER,
        "fill.other:ln_bwd_locked_kernel:ad8d4866:0": MASKED_OUT,
        "fill.other:ln_bwd_locked_kernel:c459d2e8:0": MASKED_OUT,
        "address.offset:ln_bwd_locked_kernel:2aef9e9c:0": "(row + 1) % G is another assignment of rows to groups: the "
                                                          "launch makes G <= M, so every group still gets a row, and "
                                                          "the reduce kernel adds all G partial rows",
    },
    "p25": {
        "fill.other:ln_bwd_roofline_kernel:d46da991:0": ZERO_PARTNER,
        "fill.other:ln_bwd_roofline_kernel:9d681622:0": "the rows past M load dz = 0, so they add nothing to dgamma "
                                                        "and dbeta whatever x holds, and their dx is not stored",
    },
    "p22": {
        "fill.other:layernorm_fwd_kernel:b0a72f3a:0": MASKED_OUT,
        "fill.other:ln_linear_fwd_kernel:3b1824ea:1": WHERE_ZEROES,
        "fill.other:ln_linear_fwd_kernel:3e2b28c1:0": WHERE_ZEROES,
        "fill.other:ln_linear_fwd_kernel:ddae9c27:0": MASKED_OUT,
        "fill.other:ln_linear_bwd_kernel:4e80eb13:0": ZERO_PARTNER,
        "fill.other:row_statistics:d9ef0235:0": WHERE_ZEROES,
        "fill.other:layernorm_fwd_kernel:2c95eea7:0": MASKED_OUT,
        "fill.other:layernorm_fwd_kernel:3526e811:0": MASKED_OUT,
        "fill.other:ln_linear_fwd_kernel:3b1824ea:0": WHERE_ZEROES,
        "fill.other:ln_linear_fwd_kernel:a888557a:0": WHERE_ZEROES,
        "fill.where:ln_linear_fwd_kernel:29ac44ef:0": "z's padded columns meet the W tile's padded 0 in tl.dot, and its "
                                                      "padded rows end in rows of y the masked store leaves out",
        "fill.other:ln_linear_fwd_kernel:644b3074:0": "the W tile's padded rows (past H) meet z's 0 from the tl.where in "
                                                      "tl.dot, and its padded columns (past N) end in columns of y the "
                                                      "masked store leaves out",
        "fill.other:ln_linear_bwd_kernel:43cbc4f9:0": MASKED_OUT,
        "fill.other:ln_linear_bwd_kernel:10d21757:0": WHERE_ZEROES,
        "fill.where:ln_linear_bwd_kernel:a6c8a2d6:0": "x_hat's padded lanes meet gamma's and beta's padded 0 in z, and "
                                                      "g = dz * gamma, 0 there, in g * x_hat; dz * x_hat goes to a masked "
                                                      "atomic",
        "fill.other:ln_linear_bwd_kernel:3e2b28c1:0": "gamma's padded lanes meet x_hat's 0 (the tl.where) in z, and dz's "
                                                      "padded 0 (W loads 0 past H) in g = dz * gamma",
        "fill.other:ln_linear_bwd_kernel:a888557a:0": MASKED_OUT,
        "fill.other:ln_linear_bwd_kernel:33b8e143:0": "W's padded output rows meet dy's padded 0; its padded columns "
                                                      "give dz there, which reaches only masked atomics and "
                                                      "g = dz * gamma, where gamma's padded 0 cancels it",
        "fill.other:ln_linear_bwd_kernel:10d21757:1": MASKED_OUT,
        "fill.other:ln_linear_bwd_kernel:3e2b28c1:1": MASKED_OUT,
        "fill.other:ln_linear_bwd_kernel:4e80eb13:1": ZERO_PARTNER,
        "fill.other:ln_linear_bwd_kernel:03396199:0": ZERO_PARTNER,
    },
    "p26": {
        "fill.other:fold_weight_kernel:59979a89:0": ZERO_PARTNER,
        "fill.other:ln_epilogue_linear_kernel:b6066601:0": MASKED_OUT,
        "fill.other:ln_epilogue_linear_kernel:42116a0f:0": MASKED_OUT,
        "fill.other:ln_dx_kernel:a888557a:0": MASKED_OUT,
        # the launch passes ROWS=1 to ln_dx_kernel: its row blocks are single rows below M
        "mask.keep_one:ln_dx_kernel:7f2e86b7:0": "the launch passes ROWS=1, so every row block is one row below "
                                                 "M and row_ok is always true",
        "fill.other:ln_dx_kernel:6e4e8848:0": ONE_ROW,
        "fill.other:fold_weight_kernel:d2910709:0": ZERO_PARTNER,
        "fill.other:fold_weight_kernel:a350de6a:0": ZERO_PARTNER,
        "fill.other:ln_epilogue_linear_kernel:6e4e8848:0": MASKED_OUT,
        "fill.other:ln_epilogue_linear_kernel:1d2e49b8:0": MASKED_OUT,
        "fill.other:ln_dx_kernel:3e2b28c1:0": ZERO_PARTNER,
        "mask.lt_le:ln_dx_kernel:82cf5080:0": "the launch passes ROWS=1, so every row block is one row below M: "
                                              "rows <= M holds wherever rows < M does",
        "mask.drop:ln_dx_kernel:673ff175:0": "the launch passes ROWS=1, so every row block is one row below M: the "
                                             "load of mean never reaches past it",
        "mask.drop:ln_dx_kernel:761fe6a8:0": "the launch passes ROWS=1, so every row block is one row below M: the "
                                             "load of rstd never reaches past it",
        "fill.other:ln_dx_kernel:1d2e49b8:0": ONE_ROW,
        "fill.other:ln_dx_kernel:5976519f:0": WHERE_ZEROES,
        "fill.other:ln_dx_kernel:22a2fe82:0": "dz's padded columns meet gamma's padded 0 in g and x_hat's 0 (the "
                                              "tl.where) in dgamma; in dbeta they reach only columns the masked "
                                              "store leaves out",
        "fill.where:ln_dx_kernel:79225438:0": "x_hat's padded lanes meet g's 0 (dz and gamma load 0 there) and dz's 0 "
                                              "in dgamma; dx and z are stored masked",
    },
    "p28": {
        "fill.start:chunk_logits_kernel:ba61d0d7:0": "every real logit of the tile is 1 more (its columns past V still "
                                                     "become -inf): a row's softmax, its loss lse − z_target and the "
                                                     "stored z − m_t do not change when all its logits move together",
        "fill.other:chunk_logits_kernel:a7441054:0": MASKED_OUT,
        "mask.keep_one:chunk_logits_kernel:dfbe5afb:0": "without col_ok the store also writes the columns past V, which "
                                                        "lie in each row's padding of z to whole tiles: the "
                                                        "cross-entropy masks them off and the products' descriptors end "
                                                        "at V, so nothing reads them",
        "fill.other:chunk_ce_kernel:6f623683:0": "a padded tile's s_t is multiplied by exp(m_t − M), and its m_t loads "
                                                 "-inf: exp(-inf) = 0 whatever s_t holds",
        "fill.other:chunk_ce_kernel:43a5875f:0": MASKED_OUT,
        "fill.other:chunk_ce_kernel:d3ccd747:0": MASKED_OUT,
        "precision.cast:chunk_count_kernel:e602c088:0": "the int32 count is stored into n_valid's fp32 slot: the store "
                                                        "converts it as the cast does (exactly, below 2**24 rows)",
        "precision.cast:chunk_ce_kernel:03b49769:0": PROMOTED,
    },
    "p29": {
        "fill.other:rope_fwd_kernel:f6dfb8c9:0": MASKED_OUT,
        "fill.other:rope_fwd_kernel:a5301c33:0": MASKED_OUT,
        "fill.other:rope_fwd_kernel:2eff541a:0": MASKED_OUT,
        "fill.other:rope_fwd_kernel:c6906eb0:0": MASKED_OUT,
        "fill.other:rope_fwd_kernel:9a573fd6:0": MASKED_OUT,
        "fill.other:rope_fwd_kernel:a2adf1d0:0": MASKED_OUT,
        "fill.other:rope_bwd_kernel:f6dfb8c9:0": MASKED_OUT,
        "fill.other:rope_bwd_kernel:b99e7da4:0": MASKED_OUT,
        "fill.other:rope_bwd_kernel:29dda396:0": MASKED_OUT,
        "fill.other:rope_bwd_kernel:b7035ed2:0": MASKED_OUT,
        "fill.other:rope_bwd_kernel:01c83950:0": MASKED_OUT,
        "fill.other:rope_bwd_kernel:252f261c:0": MASKED_OUT,
    },
    "p30": {
        "fill.other:swiglu_fwd_kernel:0abb1c0e:0": MASKED_OUT,
        "fill.other:swiglu_fwd_kernel:8a9db0b0:0": MASKED_OUT,
        "fill.other:swiglu_bwd_kernel:0abb1c0e:0": MASKED_OUT,
        "fill.other:swiglu_bwd_kernel:8a9db0b0:0": MASKED_OUT,
        "fill.other:swiglu_bwd_kernel:63a70aa8:0": MASKED_OUT,
    },
    "p31": {
        "fill.other:attn_fwd_kernel:d3b1fdcc:0": ZERO_PARTNER,
        "fill.other:attn_fwd_kernel:54f0d24e:0": ZERO_PARTNER,
        "fill.other:attn_fwd_kernel:ab7b19fe:0": ZERO_PARTNER,
        "fill.other:attn_fwd_kernel:9083a13a:0": "a padded key's score is set to -inf by the tl.where whatever k "
                                                 "holds, and its padded head lanes meet q's padded 0",
        "fill.other:attn_fwd_kernel:c2d8d6b0:0": "a padded key's weight is exp2(-inf) = 0, which multiplies what v "
                                                 "holds; its padded head lanes end in columns no store writes",
        # alpha = exp2(m - m_new) = exp2(-inf) = 0 at the first key block: what l and acc start as is lost
        "fill.start:attn_fwd_kernel:8f796bea:0": "l is multiplied by exp2(-inf - m_new) = 0 at the first key block",
        "fill.start:attn_fwd_kernel:810f961d:0": "acc is multiplied by exp2(-inf - m_new) = 0 at the first key block",
        "address.offset:attn_fwd_kernel:74485521:0": "first is a multiple of BLOCK_Q and the blocks are powers of two "
                                                     ">= 16 (tl.dot's minimum): no multiple of BLOCK_K lies between "
                                                     "first + 1 and first + 2, so whole is unchanged",
        "address.offset:attn_fwd_kernel:98568e77:0": "the one more key, first + BLOCK_Q, comes after every query of "
                                                     "the block: the causal tl.where hides it (a block of it alone "
                                                     "adds exp2(-inf) = 0 and leaves the max)",
    },
    "p32": {
        "fill.other:attn_bwd_preprocess:83beb307:0": ZERO_PARTNER,
        "fill.other:dkdv_step:26926ccb:0": "a padded query row's dSᵀ column multiplies q's padded 0 in dK, and "
                                           "dV does not read Δ",
        "fill.other:attn_bwd_dq_kernel:c039b50d:0": ZERO_PARTNER,
        "fill.other:attn_bwd_dq_kernel:89c2d9e9:0": ZERO_PARTNER,
        "fill.other:attn_bwd_dq_kernel:2b296a23:0": "Δ's padded rows reach only dQ rows the masked store leaves out",
        "address.offset:attn_bwd_dq_kernel:d1c2728f:0": "first is a multiple of BLOCK_Q and the blocks are powers of "
                                                        "two >= 16: no multiple of BLOCK_K lies between first + 1 and "
                                                        "first + 2, so whole is unchanged",
        "address.offset:attn_bwd_dq_kernel:b4bac5d9:0": ODD_PAST_BLOCK,
        "address.offset:attn_bwd_dkdv_kernel:94821ae5:0": ODD_PAST_BLOCK,
        "address.offset:attn_bwd_dq_kernel:98568e77:0": "the one more key, first + BLOCK_Q, comes after every query of "
                                                        "the block: the causal tl.where gives it P = 0, so its dS is 0 "
                                                        "(a block of it alone adds nothing to dQ)",
        "fill.other:attn_bwd_preprocess:d7fb2eeb:0": ZERO_PARTNER,
        "fill.other:dkdv_step:65c1a8ea:0": "a padded query row's q is 0, so its Pᵀ is exp2(−lse), finite whatever lse "
                                           "holds, and it multiplies dO's padded 0 in dV and dPᵀ − Δ = 0 − 0 in dK",
        # tried: an attention sink (one key of 12 + randn in 64 dimensions) makes this mutant's padded Pᵀ
        # overflow, but the solution's own dV then missed its tolerance for some inputs (the fp32 scores
        # near 100 carry more rounding than the tolerance model allows)
        "fill.other:dkdv_step:0f697de0:0": "a padded query row's Pᵀ = exp2(scale · log2 e · Σ_d k) multiplies dO's "
                                           "padded 0 in dV and dPᵀ − Δ = 0 − 0 in dK; it overflows (Inf · 0) only "
                                           "for a key whose coordinates sum past 89·√D, and there the solution "
                                           "itself leaves the tolerances",
        "fill.other:attn_bwd_dkdv_kernel:e7b14ba1:0": "a padded key row of v reaches only its own dSᵀ row and so its own "
                                                      "dK row, which the masked store leaves out; v's padded dimensions "
                                                      "meet dO's padded 0 in dPᵀ",
        "fill.other:attn_bwd_dkdv_kernel:65144ceb:0": "a padded key row of k reaches only its own dK and dV rows, which "
                                                      "the masked stores leave out; k's padded dimensions meet q's "
                                                      "padded 0 in the scores",
        "fill.other:dq_step:c2d8d6b0:0": "a padded key's dS (from v's padded row) multiplies k's padded 0 in dQ = dS K; "
                                         "v's padded dimensions meet dO's padded 0",
        "fill.other:attn_bwd_dq_kernel:8889c991:0": "lse's padded rows reach only dQ rows the masked store leaves out",
        "address.offset:attn_bwd_dkdv_kernel:7ef68b95:0": "the masked walk takes one more query block, wholly after "
                                                          "the key block: there every key is at or before every query, "
                                                          "so the causal mask keeps every score, as the unmasked walk does",
        "address.offset:attn_bwd_dkdv_kernel:829c16fe:0": "first + BLOCK_K is a multiple of BLOCK_K >= 16, so it is never "
                                                          "one past a multiple of BLOCK_Q: cdiv(first + BLOCK_K, BLOCK_Q) "
                                                          "equals cdiv(first + BLOCK_K - 1, BLOCK_Q)",
    },
}


# Mutants whose change is, honestly, also a bug of another class than its operator's: the hint that
# names that class is right, not misleading. Each with the reason, as the equivalents have theirs.
# (Listed only where the two are the same bug, seen from two sides: never to excuse a hint.)
SAME_BUG: dict[str, dict[str, tuple[str, str]]] = {
    "p11": {
        # the max subtraction dropped is exactly the unstable softmax the stability hint describes
        "formula.drop:softmax_fwd_kernel:ff626363:0": ("stability", "exp(x - m) -> exp(x) is the softmax without its "
                                                                    "max subtracted: the unstable form itself"),
    },
    "p31": {
        # padded keys scored 0 instead of -inf: the key mask does not switch them off, whether the tl.where
        # is missing (a mask) or fills 0 (a fill); the two give the same numbers, and the variant's hint says so
        "fill.where:attn_fwd_kernel:ded71b7b:0": ("mask", "tl.where(visible, s, 0.0) leaves the padded keys in the "
                                                          "softmax with score 0: the key mask does not switch them off"),
    },
}
