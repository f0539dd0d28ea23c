"""Puzzle 27: softmax cross-entropy, forward and backward in one kernel: an online logsumexp over
vocabulary blocks, the loss, and dlogits = (softmax − one_hot) · dloss / n, ignore_index and the mean."""
from checker.puzzle import (TOLERANCES, SummaryPattern, bench, case, custom, next_pow2, out, part, persistent, puzzle,
                            randint, randn, scratch, spread_rows, variant)
from checker.specs.families.cross_entropy import (CONFIDENT, IGNORE, ce, counted, confident_column, confident_target,
                                                  digits_lost, every_target_ignored, mean_loss, padded_rows_counted,
                                                  padded_zero, with_ignored)

# the GPU's block: 16384 columns (32 KiB of a bf16 row) per step, 16 warps (a sweep on an H100 at
# M = 8192, bf16: 4096 columns and 8 warps reached 0.79 of the copy bandwidth at V = 32000, 16384 and
# 16 warps 0.90)
FAST = dict(BLOCK_V=16384)
# the same sweep: 1 per SM 0.58, 2 0.88, 3 0.84, 4 0.90 (V = 32000). Two fit on an SM at a time (16
# warps of 54 registers); the others start as the first two finish their rows. 8 per SM: 0.915
# against 4's 0.908 (2026-11-26) and 0.936 against 0.928 (2026-11-27), two runs on the H100: shorter
# programs, a shorter last wave
PROGRAMS_PER_SM = 8
# the widest vocabularies: blocks of 32768 columns (64 KiB of a bf16 row), 32 warps, 2 programs per SM
# (a second sweep on the H100, 2026-11-26, V = 128256: 0.83 of the copy bandwidth, against 0.76 with
# FAST's blocks and grid; at V = 32000 the same launch reached 0.79, FAST's 0.90)
WIDE = dict(BLOCK_V=32768)
# 3 per SM: 0.838 against 2's 0.832 (2026-11-26) and 0.854 against 0.847 (2026-11-27), V = 128256
WIDE_PROGRAMS_PER_SM = 3


def programs(logits, M: int, BLOCK_V: int, PROGRAMS: int | None) -> int:
    """The grid: PROGRAMS_PER_SM per SM on a GPU (WIDE_PROGRAMS_PER_SM with WIDE's blocks; see the
    kernel's docstring: rows in flight must fit in L2), 3 in the interpreter, or the case's PROGRAMS;
    never more than the rows."""
    per_sm = WIDE_PROGRAMS_PER_SM if BLOCK_V >= WIDE["BLOCK_V"] else PROGRAMS_PER_SM
    return persistent(logits, M, per_sm, PROGRAMS)


def warps(BLOCK_V: int) -> int:
    return 32 if BLOCK_V >= WIDE["BLOCK_V"] else 16 if BLOCK_V >= FAST["BLOCK_V"] else 4


def cross_entropy(logits, target):
    return {"loss": mean_loss(logits, target)}


def row_stride(V: int) -> int:
    """Rows one after the other, unless a case spaces them further apart (ROW_STRIDE=...)."""
    return V


def launch(k, logits, target, dloss, loss, dlogits, M, V, ROW_STRIDE, BLOCK_M, BLOCK_V, PROGRAMS,
           IGNORE_INDEX=IGNORE):
    import torch
    f32 = dict(like=logits, dtype=torch.float32)
    n_valid, loss_rows = scratch(1, **f32), scratch(M, **f32)
    x, g = logits, dlogits
    if ROW_STRIDE != V:  # rows ROW_STRIDE elements apart, for logits and dlogits alike: each in a buffer
        # of (M − 1) · ROW_STRIDE + V elements, its last row ending the buffer (3 rows 1.1e9 apart: 4.1 GiB
        # of bf16 each, not the 6.1 of 3 whole strides). Between x's rows lies other data (normal values,
        # as a neighbour's would be: NaN there would say "NaN" where the fault is an address); g's gaps
        # stay poisoned, as outputs are
        size = (M - 1) * ROW_STRIDE + V
        x = torch.empty(size, dtype=logits.dtype, device=logits.device)
        x.normal_(generator=torch.Generator(logits.device).manual_seed(0))
        x.as_strided((M, V), (ROW_STRIDE, 1)).copy_(logits)
        g = scratch(size, like=logits)
    k.ce_count_kernel[(1,)](target, n_valid, M, IGNORE_INDEX, BLOCK_M=BLOCK_M)
    k.ce_fwd_bwd_kernel[(programs(logits, M, BLOCK_V, PROGRAMS),)](
        x, target, dloss, n_valid, loss_rows, g, M, V, ROW_STRIDE, IGNORE_INDEX, BLOCK_V=BLOCK_V, num_warps=warps(BLOCK_V),
        num_stages=1)
    if g is not dlogits:
        dlogits.copy_(g.as_strided((M, V), (ROW_STRIDE, 1)))
    loss.copy_(loss_rows.sum().reshape(1))  # M numbers, each already divided by n


# -- the known bugs, in float64 (the page's formulas: checker/specs/families/cross_entropy.py) -----
def never_rescaled(logits, target, dloss, V, BLOCK_V):
    """The running sum is not rescaled when the running max grows: earlier blocks keep exp(x − m_old)."""
    import torch
    m = torch.full((logits.shape[0],), -torch.inf, dtype=logits.dtype)
    s = torch.zeros_like(m)
    for block in logits.split(BLOCK_V, dim=1):
        m = torch.maximum(m, block.max(1).values)
        s = s + (block - m[:, None]).exp().sum(1)
    return ce(logits, target, dloss, lse=m + s.log())


# -- inputs: confident rows ---------------------------------------------------------------------
def confident_logits(margin: float):
    """randn, with row r's column confident_column(r) raised to the row's max + margin."""
    def draw(gen, dims, sizes):
        import torch
        x = torch.randn(*dims, generator=gen, dtype=torch.float64)
        cols = torch.tensor([confident_column(r, dims[1]) for r in range(dims[0])])
        x[torch.arange(dims[0]), cols] = x.max(1).values + margin
        return x
    return custom("M V", draw, note=f"the target's logit = row max + {margin:g}")


def torch_step(logits, target, dloss, wrap):
    """F.cross_entropy's forward through `wrap` (torch.compile compiles it and its backward), then
    autograd's backward: dlogits."""
    import torch
    import torch.nn.functional as F
    leaf, labels = logits.detach().requires_grad_(), target.long()
    forward = wrap(lambda x, t: F.cross_entropy(x, t, ignore_index=IGNORE))
    return lambda: torch.autograd.grad(forward(leaf, labels), leaf, dloss.reshape(()))


def liger_step(logits, target, dloss):
    """Liger-Kernel's cross-entropy: its forward computes the gradient, its backward scales it."""
    import torch
    from liger_kernel.transformers.functional import liger_cross_entropy
    leaf, labels = logits.detach().requires_grad_(), target.long()
    return lambda: torch.autograd.grad(liger_cross_entropy(leaf, labels, ignore_index=IGNORE), leaf,
                                       dloss.reshape(()))


# a confident row's gradient is 1e-4 of dloss / n: dloss = 1000·randn keeps it above the checker's
# floor of 1e-3 on a gradient's RMS (below which every output gets the same absolute tolerance)
CONFIDENT_INPUTS = {"logits": confident_logits(10.0), "target": confident_target(),
                    "dloss": randn("like loss", 0.0, 1000.0)}
LARGE = ("only the cases with large logits fail: exp(x) overflows fp32 once x > 88.7 (inf / inf is NaN). "
         "Subtract the running max first: each term exp(x − m) is at most 1, and lse = m + log Σ exp(x − m).")
SPREAD = ("only the rows whose logits spread 200 apart fail: logsumexp(x) = m + log Σ exp(x − m) for any m, but only "
          "m = the row's running max, updated block by block, keeps every exp(x − m) ≤ 1. A shift by the row's mean, "
          "by the first block's max, or by a max not carried from block to block overflows (or underflows to 0) on "
          "such rows.")
EARLY = ("only the rows whose first block holds the max, 200 above the rest, fail: is the running max kept from "
         "block to block? m_new = max(m, the block's max); a block's own max in its place is exact while the blocks' "
         "maxima stay within 88 of each other, but here the rescale exp(m − m_new) = exp(200) overflows.")
NEGATIVE = ("only the rows whose logits are all far below 0 fail: if the padded lanes load other=0.0, the "
            "max is 0 instead of the row's own max, and exp(x − 0) underflows to 0 (log 0 = −inf). Load "
            "them with other=-float(\"inf\"): exp(-inf − m) = 0 adds nothing to the sum.")
# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dlogits: correct <= 0.157 (solution, bf16 confident rows, V = 128256)
#   loss: correct <= 0.00197 (running_logsumexp, bf16 confident rows)
#   p_rounded_to_bf16_before_minus_one: 23.1 (dlogits, bf16 confident rows)
#   p_rounded_before_one_hot: 23.1 (dlogits, bf16 confident rows)
#   lse_rounded_to_logits_dtype: 50.4 (dlogits, bf16 confident rows, V = 128256)
PUZZLE = puzzle(
    27, "cross_entropy", "Fused cross-entropy, forward and backward",
    skill="an online logsumexp over a vocabulary far wider than a block, the loss and its gradient in one "
          "kernel: ignore_index, the mean over counted rows, p − 1 in fp32",
    chapter="The rest of a training step",
    inputs={"logits": randn("M V"), "target": randint("M", 0, "V"), "dloss": randn("like loss")},
    reference=cross_entropy,
    parts=[part("step", "loss and dlogits, a few programs walking the rows", ["ce_count_kernel", "ce_fwd_bwd_kernel"],
                outputs=[out("loss", dtype="float32", tolerance={"bfloat16": TOLERANCES["float32"]}), "dlogits"],
                grads={"dlogits": "logits"}, upstream={"loss": "dloss"}, launch=launch)],
    params={"BLOCK_V": 16, "BLOCK_M": next_pow2("M"), "ROW_STRIDE": row_stride, "PROGRAMS": None,
            "IGNORE_INDEX": IGNORE},
    condition=digits_lost,
    variants=[variant("padded_zero", "fill", "the loss and dlogits match a row sum with one extra exp(0) = 1 per "
                      "padded lane of the last block: load the padded lanes with other=-float(\"inf\") (exp(-inf) = "
                      "0), not 0.0.", padded_zero),
              variant("padded_rows_counted", "fill", "the loss and dlogits match a mean whose count includes "
                      "the padded lanes of the targets' block: load them with other=ignore_index, so that a row "
                      "that is not there does not count.", padded_rows_counted),
              variant("never_rescaled", "accumulate", "the loss and dlogits match a running sum that is not rescaled "
                      "when the running max grows: before adding a block, multiply the sum by exp(m_old − m_new), "
                      "which moves its terms exp(x − m_old) to exp(x − m_new).", never_rescaled),
              variant("p_rounded", "precision", "dlogits matches p rounded to bfloat16 before the − 1: a confident "
                      "row's p_target = 1 − 1e-4 rounds to 1.0 and its gradient to 0. Subtract 1 from the fp32 p "
                      "and round once, at the store.",
                      # the loss too (p's rounding leaves it right): a kernel whose loss is also wrong has
                      # another bug, whatever its dlogits look like
                      lambda logits, target, dloss: ce(logits, target, dloss, round_p=True)),
              variant("mean_all_rows", "formula", "the loss and dlogits match the mean over all M rows: the mean "
                      "is over the rows that count, n = how many targets are not ignore_index.",
                      lambda logits, target, dloss, M: ce(logits, target, dloss, rows=M)),
              variant("no_upstream", "formula", "dlogits matches (softmax − one_hot) / n without the upstream "
                      "gradient: the chain rule multiplies it by dloss (one number, loaded from dloss_ptr).",
                      lambda logits, target, dloss: {"dlogits": ce(logits, target, dloss, upstream=False)["dlogits"]}),
              variant("sign", "formula", "dlogits matches (one_hot − softmax) · dloss / n: the sign is reversed. "
                      "Raising the target's logit lowers the loss: its gradient, p − 1, is negative.",
                      lambda logits, target, dloss: {"dlogits": ce(logits, target, dloss, sign=-1.0)["dlogits"]})],
    formulas={"eq-p27-loss": ("loss", lambda logits, target, dloss: ce(logits, target, dloss)["loss"]),
              "eq-p27-dlogits": ("dlogits", lambda logits, target, dloss: ce(logits, target, dloss)["dlogits"]),
              "eq-p27-online": ("loss", lambda logits, target, dloss, V, BLOCK_V: ce(
                  logits, target, dloss, lse=_online_lse(logits, BLOCK_V))["loss"])},
    hints={"wide": ("only the rows wider than one block fail: both passes must walk the whole row, block b at "
                   "columns b · BLOCK_V + tl.arange(0, BLOCK_V), and the running sum must be rescaled by "
                   "exp(m_old − m_new) each time the running max grows.", ("loop", "address", "accumulate", "formula")),
           "tail": ("only the cases whose last block sticks out past V fail: its padded lanes are no vocabulary "
                   "entries. Load them with mask=cols < V and other=-float(\"inf\") (out of the max and the sum) "
                   "and store with the same mask; and every loop over the blocks must reach it (a bound of "
                   "V // BLOCK_V leaves it out).", ("fill", "mask", "loop"))},
    summaries=[SummaryPattern(LARGE, lambda c: "large" in c.tags or "spread" in c.tags, cause="stability"),
               SummaryPattern(EARLY, lambda c: "early" in c.tags, candidates=("accumulate", "stability")),
               SummaryPattern(SPREAD, lambda c: "spread" in c.tags, candidates=("stability", "accumulate")),
               SummaryPattern(NEGATIVE, lambda c: "negative" in c.tags, candidates=("fill", "stability")),
               SummaryPattern(CONFIDENT, lambda c: "confident" in c.tags, candidates=("precision",)),
               SummaryPattern("only the cases with ignored rows (target = ignore_index) fail: an ignored row adds nothing "
                              "to the loss, its gradient row is 0, and the mean divides by the rows that count.",
                              lambda c: "ignored" in c.tags, candidates=("formula", "mask")),
               SummaryPattern("only the cases whose rows lie further apart than V (a row stride) fail: row r starts "
                              "at logits_ptr + r * stride, and its gradient at dlogits_ptr + r * stride; and a row "
                              "has V columns, not stride: do the masks compare with V?",
                              lambda c: "strided" in c.tags, candidates=("address", "mask"))],
    cases=[case(M=4, V=40, documented=True),
           case(M=1, V=1), case(M=1, V=12), case("M=4, V=12: one partly filled block", M=4, V=12), case(M=4, V=16, BLOCK_V=8), case(M=3, V=100, BLOCK_V=32),
           # 8 rows by 3 programs (the interpreter's), then by 2 and by 5: a kernel must read how many
           case(M=8, V=300, BLOCK_V=64, launches={"PROGRAMS": (2, 5)}),
           case("confident rows (the target's logit = row max + 10)", M=4, V=50, tags=("confident",),
                inputs=CONFIDENT_INPUTS),
           # ignore_index -100 (PyTorch's), then -1 on the same rows: a kernel must compare with its argument
           case("ignored rows (every 3rd target is ignore_index)", M=20, V=24, tags=("ignored",),
                inputs={"target": with_ignored(3)}, launches={"IGNORE_INDEX": (-1,)}, seed=347430029),
           case("every target ignored: the loss is 0, not 0 / 0", M=3, V=20, tags=("ignored",),
                inputs={"target": every_target_ignored()}),
           case("large logits (1000 + randn)", M=4, V=24, tags=("large",), inputs={"logits": randn("M V", 1000.0)}),
           case("large logits (80 + 4·randn)", M=4, V=36, tags=("large",), inputs={"logits": randn("M V", 80.0, 4.0)}),
           # logits 200 apart: only the running max as the shift keeps every exp in range
           case("the max arrives in the last block, 200 above the rest", M=4, V=64, tags=("spread",),
                inputs={"logits": spread_rows("M V", "late")}),
           case("the first half of each row 200 below the rest", M=4, V=64, tags=("spread",),
                inputs={"logits": spread_rows("M V", "low_first")}),
           # a later block's max far below the first's: a max taken per block, not kept, rescales the sum
           # by exp(m_old − m_new) = exp(200) and overflows
           case("the max in the first block, 200 above the rest", M=4, V=64, tags=("spread", "early"),
                inputs={"logits": spread_rows("M V", "early")}),
           case("all logits far below 0 (-120 + randn)", M=4, V=20, tags=("negative",),
                inputs={"logits": randn("M V", -120.0)}),
           case("rows 37 elements apart (a strided view)", M=4, V=30, ROW_STRIDE=37, tags=("strided",)),
           case(M=4, V=40, dtype="bfloat16", gpu_only=False),
           case("bf16 confident rows", M=4, V=50, dtype="bfloat16", gpu_only=False, tags=("confident",),
                inputs=CONFIDENT_INPUTS),
           case(M=4096, V=1000, BLOCK_V=256, gpu_only=True),
           case("bf16 ignored rows, V = 32000", M=512, V=32000, dtype="bfloat16", tags=("ignored",),
                inputs={"target": with_ignored(5)}, **FAST),
           case("bf16 confident rows, V = 128256", M=64, V=128256, dtype="bfloat16", tags=("confident",),
                inputs={**CONFIDENT_INPUTS, "logits": confident_logits(12.0)}, **FAST),
           case("bf16 offsets past 2**31: 3 rows 1.1e9 elements apart", M=3, V=128256, ROW_STRIDE=1_100_000_000,
                dtype="bfloat16", tags=("strided",), **FAST)],
    bench=bench("step", [case(M=8192, V=32000, dtype="bfloat16", **FAST),
                         case(M=8192, V=128256, dtype="bfloat16", **WIDE)],
                traffic=lambda logits, M, V: 2 * M * V * logits.element_size(),
                torch=torch_step, liger=liger_step),
    # on paper: the rows 1.1e9 elements apart, logits and dlogits 4.1 GiB each (everything else under 1)
    gpu_memory=8.5,
)


def _online_lse(logits, BLOCK_V):
    """The page's recurrence, block by block: m' = max(m, max block), s' = s·exp(m − m') + Σ exp(x − m')."""
    import torch
    m = torch.full((logits.shape[0],), -torch.inf, dtype=logits.dtype)
    s = torch.zeros_like(m)
    for block in logits.split(BLOCK_V, dim=1):
        m_new = torch.maximum(m, block.max(1).values)
        s = s * (m - m_new).exp() + (block - m_new[:, None]).exp().sum(1)
        m = m_new
    return m + s.log()
