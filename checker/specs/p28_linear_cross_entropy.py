"""Puzzle 28: Linear + cross-entropy fused and chunked: the [N, V] logits never exist, only a chunk of
rows at a time, in x's dtype and shifted by their column tile's max; the softmax's statistics from the
logits product's epilogue, one cross-entropy pass, dx = dlogits W and dW = dlogitsᵀ x chunk by chunk."""
from checker.puzzle import (TOLERANCES, SummaryPattern, Tolerance, bench, case, cdiv, custom, next_pow2, out, part,
                            puzzle, randint, randn, scratch, variant)
from checker.specs.families.cross_entropy import (CONFIDENT, IGNORE, ce, counted, confident_column, confident_target,
                                                  digits_lost, every_target_ignored, mean_loss, padded_rows_counted,
                                                  padded_zero, with_ignored)
from checker.specs.families.tiles import blocks_of

# the GPU's tiles: puzzle 26's 128 x 256 x 64, 8 warps, 3 stages, 8 row tiles per group; the
# cross-entropy walks 16 column tiles (4096 columns) per step. A chunk of 2048 rows keeps its bf16
# logits at 2048 x 128256 x 2 B = 501 MiB, under an eighth of what the unfused path holds (the page).
# fp32 tiles of that size need more shared memory than an H100 has: fp32 GPU cases use MID
BIG = dict(TILE_M=128, TILE_N=256, TILE_K=64, GROUP_M=8, NUM_WARPS=8, NUM_STAGES=3, TILES_PER_STEP=16)
MID = dict(TILE_M=64, TILE_N=64, TILE_K=32, GROUP_M=8, NUM_WARPS=4, NUM_STAGES=3, TILES_PER_STEP=16)
# dw sums N shares g_r x_r, each with g rounded to bf16 for the tensor cores (2**-9, as PyTorch's bf16
# matmul rounds its bf16 gradient): a bf16 product's error, not an fp32 sum's. On the H100 the earlier
# fp32-logits solution (g rounded to bf16 as it met x at the tensor cores, as this one's is when it is
# stored) used 70 % and, in a later run, 76 % of the default bf16 tolerance for dW (bf16 ignored rows,
# V = 32000: 1024 shares): half of the tolerance is the solution's share, hence twice the default.
# dw is a plain fp32 output (the checker's NaN until the first chunk stores it): fp32's default there
BF16_DW = {"bfloat16": Tolerance(atol=2 * TOLERANCES["bfloat16"].atol, rtol=2 * TOLERANCES["bfloat16"].rtol,
                                 per_condition=TOLERANCES["bfloat16"].per_condition),
           "float32": TOLERANCES["float32"]}


def linear_cross_entropy(x, w, target):
    return {"loss": mean_loss(x @ w.T, target)}


def pow2_at_least(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def ce_warps(TILES_PER_STEP: int, TILE_N: int) -> int:
    return 8 if TILES_PER_STEP * TILE_N >= 4096 else 4


def launch(k, x, w, target, dloss, loss, dx, dw, N, H, V, CHUNK, BLOCK_M, TILE_M, TILE_N, TILE_K, GROUP_M,
           TILES_PER_STEP, NUM_WARPS, NUM_STAGES, IGNORE_INDEX=IGNORE):
    """The count, then per chunk of rows: its shifted logits and softmax partials, its loss and
    gradient (in place), dx, dw (stored by the first chunk, added by the others)."""
    import torch
    f32 = dict(like=x, dtype=torch.float32)
    rows_max, tiles = min(CHUNK, N), cdiv(V, TILE_N)
    n_valid, loss_rows = scratch(1, **f32), scratch(N, **f32)
    # one chunk's logits in x's dtype, then its gradient in their place, each row padded to whole
    # column tiles (tile t of row r at z[r, t, :]); the partials of its rows
    z = scratch((rows_max, tiles, TILE_N), like=x)
    tile_max, tile_sum, tile_target = (scratch((rows_max, tiles), **f32) for _ in range(3))
    gemm = dict(BLOCK_M=TILE_M, BLOCK_N=TILE_N, BLOCK_K=TILE_K, GROUP_M=GROUP_M, num_warps=NUM_WARPS,
                num_stages=NUM_STAGES)
    w_rows, w_cols = blocks_of(w, TILE_N, TILE_K), blocks_of(w, TILE_K, TILE_N)  # for x wᵀ; for g w
    k.chunk_count_kernel[(1,)](target, n_valid, N, IGNORE_INDEX, BLOCK_M=BLOCK_M)
    for start in range(0, N, CHUNK):
        rows = min(CHUNK, N - start)
        # a chunk of x starts start * H elements in: 16-byte aligned when each row is
        x_c, z_c, target_c = x[start:start + rows], z[:rows], target[start:start + rows]
        g = z_c.view(rows, tiles * TILE_N)[:, :V]  # the products see the gradient as [rows, V]
        k.chunk_logits_kernel[(cdiv(rows, TILE_M) * tiles,)](
            blocks_of(x_c, TILE_M, TILE_K), w_rows, target_c, z_c, tile_max, tile_sum, tile_target, rows, V, H,
            **gemm)
        k.chunk_ce_kernel[(rows,)](z_c, tile_max, tile_sum, tile_target, target_c, dloss, n_valid,
                                   loss_rows[start:start + rows], V, tiles, IGNORE_INDEX, TILE_N=TILE_N,
                                   BLOCK_T=pow2_at_least(tiles), TILES_PER_STEP=TILES_PER_STEP,
                                   num_warps=ce_warps(TILES_PER_STEP, TILE_N))
        k.chunk_matmul_kernel[(cdiv(rows, TILE_M) * cdiv(H, TILE_N),)](
            blocks_of(g, TILE_M, TILE_K), w_cols, dx[start:start + rows], rows, H, V, A_T=False, ACCUMULATE=False,
            **gemm)
        # dw is not zeroed: the first chunk stores its share, each later one adds its own
        k.chunk_matmul_kernel[(cdiv(V, TILE_M) * cdiv(H, TILE_N),)](
            blocks_of(g, TILE_K, TILE_M), blocks_of(x_c, TILE_K, TILE_N), dw, V, H, rows, A_T=True,
            ACCUMULATE=start > 0, **gemm)
    loss.copy_(loss_rows.sum().reshape(1))


# -- the page's formulas and the known bugs, in float64 ------------------------------------------
def fused(x, w, target, dloss, **bug):
    """loss, dx and dw as the page derives them (float64), or from puzzle 27's gradient with one of its bugs."""
    found = ce(x @ w.T, target, dloss, **bug)
    g = found["dlogits"]
    return {"loss": found["loss"], "dx": g @ w, "dw": g.T @ x}


def tile_maxima(logits, TILE_N: int):
    """Each logit's column tile's row max, the shape of the logits (m_t of the page, per column)."""
    import torch
    return torch.cat([block.max(1, keepdim=True).values.expand_as(block) for block in logits.split(TILE_N, dim=1)],
                     dim=1)


def tile_partials(logits, TILE_N: int):
    """Each row's column-tile partials, [rows, TILES] each: the tile's max m_t and s_t = Σ exp(z − m_t)."""
    import torch
    blocks = logits.split(TILE_N, dim=1)
    m = torch.stack([block.max(1).values for block in blocks], dim=1)
    s = torch.stack([(block - block.max(1, keepdim=True).values).exp().sum(1) for block in blocks], dim=1)
    return m, s


def lse_of_partials(logits, TILE_N: int):
    """lse = M + log Σ_t s_t exp(m_t − M), from each column tile's max m_t and s_t = Σ exp(z − m_t)."""
    m, s = tile_partials(logits, TILE_N)
    top = m.max(1).values
    return top + (s * (m - top[:, None]).exp()).sum(1).log()


def telling(p_bug, p):
    """A variant's p where it tells this bug from others: in a row where it keeps under a quarter of
    the softmax's mass (exp(∓m_t) with tile maxima far from 0: most rows but those of small logits),
    its gradient is −one_hot · dloss / n within a bf16 tolerance, as every bug's that zeroes p there.
    The answer's p in such a row says nothing."""
    import torch
    return torch.where(p_bug.sum(1, keepdim=True) > 0.25, p_bug, p)


def from_p(x, w, target, dloss, p):
    """dx and dw of a gradient whose softmax is p (the one-hot, the mask and the scale as the page's)."""
    import torch
    valid = counted(target)
    one_hot = torch.zeros_like(p).scatter_(1, torch.where(valid, target, 0).long()[:, None], 1.0)
    g = (p - one_hot) * valid[:, None] * (dloss / valid.sum().clamp(min=1))  # no row counted: 0
    return {"dx": g @ w, "dw": g.T @ x}


def shifted_step(x, w, target, dloss, TILE_N):
    """The page's one pass: p = exp(stored + m_t − lse), stored = z − m_t, lse from the partials."""
    logits = x @ w.T
    m = tile_maxima(logits, TILE_N)
    return from_p(x, w, target, dloss, ((logits - m) + m - lse_of_partials(logits, TILE_N)[:, None]).exp())


def shift_misplaced(x, w, target, dloss, TILE_N, sign: float):
    """p = exp(z + sign · m_t − lse): the tile's max taken off twice (sign −1: z − m_t stored, and the
    cross-entropy does not add m_t back) or added to logits stored unshifted (sign +1)."""
    logits = x @ w.T
    lse = logits.logsumexp(1, keepdim=True)
    p_bug = (logits + sign * tile_maxima(logits, TILE_N) - lse).exp()
    return from_p(x, w, target, dloss, telling(p_bug, (logits - lse).exp()))


def partials_not_rescaled(x, w, target, dloss, TILE_N):
    """lse = M + log Σ_t s_t: each tile's sum left relative to its own max m_t, not brought to M."""
    logits = x @ w.T
    _, s = tile_partials(logits, TILE_N)
    return fused(x, w, target, dloss, lse=logits.max(1).values + s.sum(1).log())


def target_logit_shifted(x, w, target, dloss, TILE_N):
    """The loss with the target's logit taken after the shift, lse − (z_target − m_t); dx and dw
    right (a kernel whose dx or dw is wrong as well has another bug)."""
    import torch
    logits = x @ w.T
    valid = counted(target)
    safe = torch.where(valid, target, 0).long()[:, None]
    shift = tile_maxima(logits, TILE_N).gather(1, safe)[:, 0]
    right = fused(x, w, target, dloss)
    return {**right, "loss": right["loss"] + torch.where(valid, shift, 0.0).sum() / valid.sum().clamp(min=1)}


def ignored_not_zeroed(x, w, target, dloss):
    """An ignored row's gradient row left at softmax · dloss / n (the scale not zeroed there)."""
    import torch
    logits = x @ w.T
    valid = counted(target)
    one_hot = torch.zeros_like(logits).scatter_(1, torch.where(valid, target, 0).long()[:, None], 1.0)
    g = (logits.softmax(1) - one_hot * valid[:, None]) * (dloss / valid.sum().clamp(min=1))
    return {"dx": g @ w, "dw": g.T @ x}


def dw_last_chunk(x, w, target, dloss, N, CHUNK):
    """dw stored, not added, by each chunk: only the last chunk's share is left."""
    last = (N - 1) // CHUNK * CHUNK
    return {"dw": ce(x @ w.T, target, dloss)["dlogits"][last:].T @ x[last:]}


def on_the_logits(bug):
    """One of puzzle 27's bugs (a function of the logits), carried through to dx and dW; the
    cross-entropy's column block is the logits product's column tile."""
    def compute(x, w, target, dloss, **sizes):
        from checker.puzzle import call_by_name
        found = call_by_name(bug, {"logits": x @ w.T, "target": target, "dloss": dloss, "M": sizes["N"],
                                   "BLOCK_M": sizes["BLOCK_M"], "V": sizes["V"], "BLOCK_V": sizes["TILE_N"]})
        g = found["dlogits"]
        return {"loss": found["loss"], "dx": g @ w, "dw": g.T @ x}
    return compute


def gradient_digits(x, w, target, dloss) -> float:
    """Puzzle 27's digits_lost, on the logits x wᵀ: dx and dW inherit the gradient's."""
    return digits_lost(x @ w.T, target, dloss)


# -- inputs: logits far below 0, confident rows ----------------------------------------------------
def column_0_at(shape: str, value: float):
    """0.3·randn with column 0 set to `value`: x's −11 against w's 11 puts every logit near −121."""
    def draw(gen, dims, sizes):
        import torch
        t = 0.3 * torch.randn(*dims, generator=gen, dtype=torch.float64)
        t[:, 0] = value
        return t
    return custom(shape, draw, note=f"0.3·randn, column 0 = {value:g}")


def first_rows_at(shape: str, value: float, rows: int):
    """0.3·randn with column 0 of the first `rows` rows set to `value`: with x's column 0 at 10, the
    logits of the first `rows` vocabulary entries stand about 10 · value above the rest."""
    def draw(gen, dims, sizes):
        import torch
        t = 0.3 * torch.randn(*dims, generator=gen, dtype=torch.float64)
        t[:rows, 0] = value
        return t
    return custom(shape, draw, note=f"0.3·randn, column 0 of the first {rows} rows = {value:g}")


# -- inputs: confident rows -----------------------------------------------------------------------
def confident_w(V: int, H: int):
    """The confident cases' w: one fixed draw (x is made from it, and a draw cannot see another)."""
    import torch
    return 0.3 * torch.randn(V, H, generator=torch.Generator().manual_seed(28), dtype=torch.float64)


def confident_x(logit: float):
    """x_r: 0.1·randn, moved along w[target_r] until x_r · w[target_r] = logit. The other logits
    x_r · w_v are about logit / √H · randn: the target's stands far above them."""
    def draw(gen, dims, sizes):
        import torch
        toward = confident_w(sizes["V"], sizes["H"])[[confident_column(r, sizes["V"]) for r in range(dims[0])]]
        x = 0.1 * torch.randn(*dims, generator=gen, dtype=torch.float64)
        return x + ((logit - (x * toward).sum(1)) / (toward * toward).sum(1))[:, None] * toward
    return custom("N H", draw, note=f"x_r · w[target_r] = {logit:g}")


def confident_inputs(logit: float) -> dict:
    """Rows whose target's logit is `logit`, far above the rest (p_target = 1 − 1e-4 or so). Their
    gradient is 1e-4 of dloss / n: dloss = 1000·randn keeps it above the checker's floor of 1e-3 on
    a gradient's RMS, as in puzzle 27."""
    return {"x": confident_x(logit), "w": custom("V H", lambda gen, dims, sizes: confident_w(*dims),
                                                 note="0.3·randn, the same in every run"),
            "target": confident_target("N"), "dloss": randn("like loss", 0.0, 1000.0)}


# -- the benchmark's other columns -----------------------------------------------------------------
def torch_step(x, w, target, dloss, wrap):
    """The unfused path: F.linear's [N, V] logits, F.cross_entropy, autograd's backward; the forward
    through `wrap` (torch.compile compiles it and its backward graph)."""
    import torch
    import torch.nn.functional as F
    leaves, labels = [t.detach().requires_grad_() for t in (x, w)], target.long()
    forward = wrap(lambda x, w, t: F.cross_entropy(F.linear(x, w), t, ignore_index=IGNORE))
    return lambda: torch.autograd.grad(forward(*leaves, labels), leaves, dloss.reshape(()))


def liger_step(x, w, target, dloss):
    """Liger-Kernel's fused linear cross-entropy (chunked as well)."""
    import torch
    from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy
    leaves, labels = [t.detach().requires_grad_() for t in (x, w)], target.long()
    return lambda: torch.autograd.grad(liger_fused_linear_cross_entropy(*leaves, labels, ignore_index=IGNORE),
                                       leaves, dloss.reshape(()))


def cublas_chunk_products(x, w, CHUNK):
    """The chunked step's three products alone, by cuBLAS at one chunk's shapes: per CHUNK rows, the
    logits x_c Wᵀ; then, with those logits standing in for their gradient g, dx_c = g W and
    dW = dW + gᵀ x_c in fp32 (the first chunk only stores). No loss at all: what this chunking's
    products cost with the vendor's matmuls, the floor under any kernel that chunks this way."""
    import torch

    def run():
        dw = None
        for start in range(0, x.shape[0], CHUNK):
            xc = x[start:start + CHUNK]
            g = xc @ w.T
            g @ w
            dw = (torch.mm(g.T, xc, out_dtype=torch.float32) if dw is None
                  else torch.addmm(dw, g.T, xc, out_dtype=torch.float32))
        return dw
    return run


def only(names: tuple, compute):
    """A variant's outputs restricted to those its bug changes (the others it would predict right)."""
    def restricted(**values):
        from checker.puzzle import call_by_name
        return {k: v for k, v in call_by_name(compute, values).items() if k in names}
    return restricted


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dw: correct <= 0.396 (matmul_k_walked_backwards, bf16 ignored rows, V = 32000)
#   dx: correct <= 0.4 (solution, bf16 ignored rows, V = 32000)
#   loss: correct <= 0.139 (ce_recomputes_lse_online, bfloat16 N=20, H=24, V=40: N not a power of two, N wider than CHUNK (8), H not a power of two, H wider than TILE_K (16), V not a power of two, V wider than TILE_N (32))
#   minus_one_after_rounding_to_bf16: 33.4 (dx, bf16 confident rows)
#   p_rounded_before_one_hot: 33.4 (dx, bf16 confident rows)
#   tile_rounded_before_epilogue: 4.08 (dw, bf16 ignored rows, V = 32000)
PUZZLE = puzzle(
    28, "linear_cross_entropy", "Fused Linear + cross-entropy, chunked",
    skill="the loss of a [N, V] product without the [N, V] logits: chunks of rows through descriptor products, "
          "the softmax's statistics from the product's epilogue, logits shifted by their tile's max so that bf16 "
          "keeps them, one cross-entropy pass, dx = dlogits W and dW (+)= dlogitsᵀ x chunk by chunk",
    chapter="The rest of a training step",
    inputs={"x": randn("N H"), "w": randn("V H", std=0.3), "target": randint("N", 0, "V"),
            "dloss": randn("like loss")},
    reference=linear_cross_entropy,
    # dw is a plain output (it starts as the checker's NaN, not 0): the first chunk must store its share
    parts=[part("step", "loss, dx and dW, a chunk of rows at a time",
                ["chunk_count_kernel", "chunk_logits_kernel", "chunk_ce_kernel", "chunk_matmul_kernel"],
                outputs=[out("loss", dtype="float32", tolerance={"bfloat16": TOLERANCES["float32"]}), "dx",
                         out("dw", dtype="float32", tolerance=BF16_DW)],
                grads={"dx": "x", "dw": "w"}, upstream={"loss": "dloss"}, launch=launch)],
    params={"CHUNK": 8, "BLOCK_M": next_pow2("N"), "TILE_M": 16, "TILE_N": 32, "TILE_K": 16, "GROUP_M": 2,
            "TILES_PER_STEP": 2, "NUM_WARPS": 4, "NUM_STAGES": 2, "IGNORE_INDEX": IGNORE},
    blocks={"N": "CHUNK", "V": "TILE_N", "H": "TILE_K"},
    condition=gradient_digits,
    variants=[variant("dw_last_chunk", "accumulate", "dw matches the last chunk's share alone: each chunk after the "
                      "first must add its share to dw (read, add, store: ACCUMULATE), not overwrite it.", dw_last_chunk),
              variant("shift_not_added", "formula", "dx and dw match p = exp(z − m_t − lse): the stored logits are "
                      "z − m_t (shifted by their tile's max), and the cross-entropy must add m_t back: "
                      "p = exp(stored + m_t − lse).", lambda x, w, target, dloss, TILE_N: shift_misplaced(
                          x, w, target, dloss, TILE_N, -1.0)),
              variant("shift_added_twice", "formula", "dx and dw match p = exp(z + m_t − lse): the cross-entropy adds "
                      "the tile's max m_t back to logits that were stored without the shift. Store z − m_t in the "
                      "logits kernel's epilogue.", lambda x, w, target, dloss, TILE_N: shift_misplaced(
                          x, w, target, dloss, TILE_N, 1.0)),
              variant("partials_not_rescaled", "accumulate", "the loss, dx and dw match lse = M + log Σ_t s_t: each "
                      "tile's sum s_t is relative to its own max m_t; bring it to the row's max M first: "
                      "lse = M + log Σ_t s_t exp(m_t − M).", partials_not_rescaled),
              variant("padded_zero", "fill", "the loss, dx and dw match a row sum with one extra exp(0 − m) per padded "
                      "column of the last column tile: the product leaves 0 there (w's rows past V load as zeros); "
                      "set the columns past V to -float(\"inf\") before the tile's max and sum.",
                      on_the_logits(padded_zero)),
              variant("target_logit_shifted", "formula", "the loss matches lse − (z_target − m_t): the target's logit "
                      "was taken after the shift by its tile's max. Take it from the fp32 accumulator.",
                      target_logit_shifted),
              variant("padded_rows_counted", "fill", "the loss, dx and dw match a mean whose count includes the "
                      "padded lanes of the targets' block: load them with other=ignore_index, so that a row that "
                      "is not there does not count.", on_the_logits(padded_rows_counted)),
              variant("p_rounded", "precision", "dx and dw match p rounded to bfloat16 before the − 1: a confident "
                      "row's p_target = 1 − 1e-4 rounds to 1.0 and its gradient to 0. Subtract 1 from the fp32 p "
                      "and round once, at the store.", only(("dx", "dw"), lambda x, w, target, dloss: fused(
                          x, w, target, dloss, round_p=True))),
              variant("ignored_not_zeroed", "mask", "dx and dw match a gradient whose ignored rows (target = ignore_index) "
                      "hold softmax · dloss / n: an ignored row's gradient row is 0 (its scale is 0, not dloss / n).",
                      ignored_not_zeroed),
              variant("mean_all_rows", "formula", "the loss, dx and dw match the mean over all N rows: the mean is "
                      "over the rows that count (target != ignore_index).",
                      lambda x, w, target, dloss, N: fused(x, w, target, dloss, rows=N)),
              variant("no_upstream", "formula", "dx and dw match a gradient without the upstream dloss: the chain "
                      "rule multiplies (softmax − one_hot) / n by dloss.",
                      only(("dx", "dw"), lambda x, w, target, dloss: fused(x, w, target, dloss, upstream=False))),
              variant("sign", "formula", "dx and dw match (one_hot − softmax) · dloss / n: the gradient's sign is "
                      "reversed.", only(("dx", "dw"), lambda x, w, target, dloss: fused(x, w, target, dloss, sign=-1.0)))],
    formulas={"eq-p28-dx": ("dx", lambda x, w, target, dloss: fused(x, w, target, dloss)["dx"]),
              "eq-p28-dw": ("dw", lambda x, w, target, dloss: fused(x, w, target, dloss)["dw"]),
              "eq-p28-chunks": ("dw", lambda x, w, target, dloss, N, CHUNK: sum(
                  ce(x @ w.T, target, dloss)["dlogits"][s:s + CHUNK].T @ x[s:s + CHUNK] for s in range(0, N, CHUNK))),
              "eq-p28-partials": ("loss", lambda x, w, target, dloss, TILE_N: fused(
                  x, w, target, dloss, lse=lse_of_partials(x @ w.T, TILE_N))["loss"]),
              "eq-p28-shifted": ("dx", lambda x, w, target, dloss, TILE_N: shifted_step(x, w, target, dloss,
                                                                                        TILE_N)["dx"])},
    summaries=[SummaryPattern("only the cases with more rows than one chunk (CHUNK) fail: does each chunk after the "
                              "first add its share to dw (ACCUMULATE: read, add, store) rather than store it, and "
                              "does each chunk start at its own rows?",
                              lambda c: c.sizes["N"] > c.params["CHUNK"], candidates=("accumulate", "address")),
               SummaryPattern("only the cases with ignored rows (target = ignore_index) fail: an ignored row adds nothing "
                              "to the loss, its gradient row is 0, and the mean divides by the rows that count.",
                              lambda c: "ignored" in c.tags, candidates=("formula", "mask")),
               SummaryPattern(CONFIDENT, lambda c: "confident" in c.tags, candidates=("precision",)),
               SummaryPattern("only the rows whose first column tile holds the max, 200 above the rest, fail: is "
                              "the row's max kept as the tiles' partials are combined? lse = M + log Σ_t s_t "
                              "exp(m_t − M) with M the largest m_t of the whole row; combined step by step, each "
                              "step's own max in its place is exact while the steps' maxima stay within 88 of "
                              "each other, but here the rescale exp(200) overflows.",
                              lambda c: "early" in c.tags, candidates=("accumulate", "stability")),
               SummaryPattern("only the rows whose logits are all far below 0 fail: a 0 where -inf belongs (a "
                              "padded column of the last tile left at the product's 0, a padded entry of the row's "
                              "tile maxima) becomes the max, and exp(z − 0) underflows to 0 (log 0 = −inf).",
                              lambda c: "negative" in c.tags, candidates=("fill", "stability")),
               SummaryPattern("only the cases with large logits fail: exp(z) overflows fp32 once z > 88.7. "
                              "Subtract the max first: each tile's sum of exp(z − m_t), and lse = M + log Σ_t s_t "
                              "exp(m_t − M).", lambda c: "large" in c.tags, cause="stability")],
    # the products' operands come through tensor descriptors, whose base and row stride must be
    # multiples of 16 bytes: x's and w's rows are H long, so H is a multiple of 4 in fp32 and of 8 in
    # bf16 (most still neither powers of two nor multiples of the tiles: the edges arrive as zeros).
    # V may be anything: the gradient's rows in z are whole tiles wide (V = 50, 20, 100 below)
    cases=[case(N=20, H=24, V=40, documented=True),
           case(N=1, H=16, V=20), case(N=16, H=16, V=16, CHUNK=16, TILE_N=16), case(N=6, H=40, V=100),
           case(N=37, H=40, V=100, CHUNK=16), case("N=16, H=32, V=64: whole blocks", N=16, H=32, V=64),
           case(N=24, H=20, V=36, TILE_M=32, TILE_N=16, TILE_K=16, TILES_PER_STEP=4),
           case(N=40, H=64, V=48, TILE_M=16, TILE_N=32, TILE_K=64, CHUNK=16),
           case(N=40, H=48, V=80, CHUNK=48, TILE_M=16, TILE_N=64, TILE_K=32),  # a chunk of 3 row tiles
           # ignore_index -100 (PyTorch's), then -1 on the same rows: a kernel must compare with its argument
           case("ignored rows (every 3rd target is ignore_index)", N=24, H=24, V=50, tags=("ignored",),
                inputs={"target": with_ignored(3, "N")}, launches={"IGNORE_INDEX": (-1,)}, seed=3712011198),
           case("every target ignored: the loss is 0, not 0 / 0", N=8, H=16, V=20, tags=("ignored",),
                inputs={"target": every_target_ignored("N")}),
           case("small logits (w: 0.05·randn): tile maxima near 0", N=12, H=24, V=40,
                inputs={"w": randn("V H", 0.0, 0.05)}),
           case("large logits (x: 10·randn, w: 2·randn)", N=12, H=24, V=40, tags=("large",),
                inputs={"x": randn("N H", 0.0, 10.0), "w": randn("V H", 0.0, 2.0)}),
           case("all logits far below 0 (about -121)", N=12, H=24, V=80, tags=("negative",),
                inputs={"x": column_0_at("N H", -11.0), "w": column_0_at("V H", 11.0)}),
           # the first column tile's max 200 above the later tiles': a max taken per step of tiles instead of
           # kept from step to step rescales the sum by exp(200) and overflows
           case("the first column tile's logits 200 above the rest", N=12, H=24, V=100, tags=("early",),
                inputs={"x": column_0_at("N H", 10.0), "w": first_rows_at("V H", 20.0, 16)}),
           case("confident rows (the target's logit 12, the others about 1.5·randn)", N=12, H=64, V=64,
                tags=("confident",), inputs=confident_inputs(12.0)),
           case(N=20, H=24, V=40, dtype="bfloat16", gpu_only=False),
           case("bf16 confident rows", N=12, H=64, V=64, dtype="bfloat16", gpu_only=False, tags=("confident",),
                inputs=confident_inputs(12.0)),
           case(N=1000, H=256, V=1000, CHUNK=256, gpu_only=True, **MID),
           case("bf16 ignored rows, V = 32000", N=1024, H=512, V=32000, CHUNK=512, dtype="bfloat16",
                tags=("ignored",), inputs={"target": with_ignored(5, "N")}, **BIG),
           case("bf16, V = 128256", N=512, H=256, V=128256, CHUNK=256, dtype="bfloat16", **BIG)],
    bench=bench("step", [case(N=8192, H=4096, V=128256, CHUNK=2048, dtype="bfloat16", **BIG),
                         case(N=8192, H=2048, V=32000, CHUNK=2048, dtype="bfloat16", **BIG)],
                # the three products' flops; the traffic they cannot avoid: x, W, dx, dW once each
                flops=lambda N, H, V: 6 * N * H * V,
                traffic=lambda x, N, H, V: x.element_size() * (2 * N * H + V * H) + 4 * V * H,
                torch=torch_step, liger=liger_step, memory=True,
                floors={"chunk products (cuBLAS)": cublas_chunk_products}),
)
