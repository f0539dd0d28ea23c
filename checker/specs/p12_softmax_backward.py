"""Puzzle 12: the softmax backward, dx = y ⊙ (dy − Σ dy·y), one program per row, two looped passes."""
from checker.puzzle import case, part, puzzle, randn, variant


def softmax(x):
    return {"y": x.softmax(1)}


def launch(k, x, dy, dx, M, N, BLOCK_N):
    # a real backward receives the forward's output y, not the logits: the checker makes it from x
    y = x.float().softmax(1).to(x.dtype)
    k.softmax_bwd_kernel[(M,)](y, dy, dx, N, BLOCK_N=BLOCK_N)


def grad(kind: str = "right"):
    """By name: dx as the page derives it, or as a kernel with one known bug computes it."""
    def compute(x, dy, N, BLOCK_N, **_):
        if kind == "no_cross" and N <= BLOCK_N:
            return None  # a row of one chunk: y ⊙ dy is also what a first pass whose loop never ran gives
        y = x.softmax(1)
        cols = slice(0, BLOCK_N) if kind == "first_chunk" else slice(None)
        s = (dy * y)[:, cols].sum(1, keepdim=True)
        return {"right": y * (dy - s), "first_chunk": y * (dy - s), "diagonal": dy * y * (1 - y),
                "no_cross": y * dy, "sum_dy": y * (dy - dy.sum(1, keepdim=True)), "sign": y * (s - dy)}[kind]
    return compute


def cancellation(x, dy) -> float:
    """max over rows of RMS(y·dy) / RMS(dx), at least 1 (rows of one element have dx = 0 exactly)."""
    y = x.softmax(1)
    s = (dy * y).sum(1, keepdim=True)
    dx_rms = (y * (dy - s)).pow(2).mean(1).sqrt()
    ratio = (y * dy).pow(2).mean(1).sqrt()[dx_rms > 0] / dx_rms[dx_rms > 0]
    return max([1.0] + ratio.tolist())


def through_the_jacobian(x, dy, **_):
    """dx = dy J with the Jacobian J[i, j] = y_i (δ_ij − y_j) built in full, row by row."""
    import torch
    y = x.softmax(1)
    jac = torch.diag_embed(y) - y[:, :, None] * y[:, None, :]
    return torch.einsum("ri,rij->rj", dy, jac)


def hint(text: str, kind: str):
    cause = "loop" if kind == "first_chunk" else "formula"
    return variant(kind, cause, text, lambda **named: {"dx": found} if (found := grad(kind)(**named)) is not None else {})


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dx: correct <= 0.362 (solution, bfloat16 M=256, N=1000: N not a power of two, N wider than BLOCK_N (256))
#   cross_term_summed_in_fp16: 0.362 (dx, bfloat16 M=256, N=1000: N not a power of two, N wider than BLOCK_N (256))
PUZZLE = puzzle(
    12, "softmax_backward", "Softmax backward",
    skill="a backward with a cross term: one row sum of dy·y shared by every element of the row",
    chapter="Reductions",
    inputs={"x": randn("M N"), "dy": randn("like y")},
    reference=softmax,
    parts=[part("backward", "dx = y ⊙ (dy − Σ dy·y)", ["softmax_bwd_kernel"], outputs=["dx"],
                grads={"dx": "x"}, upstream={"y": "dy"}, launch=launch)],
    params={"BLOCK_N": 32},
    # digits lost in dy − s: where one y_j dominates a row, s ≈ dy_j and dx is what is left of the
    # difference, small against the y·dy that went into it (rounded exp on a GPU shows it first)
    condition=lambda x, dy: cancellation(x, dy),
    formulas={"eq-p12-jacobian": ("dx", through_the_jacobian),
              "eq-p12-dx": ("dx", lambda **named: grad()(**named))},
    variants=[hint("dx matches dy · y · (1 − y): the diagonal of the Jacobian alone. Every y_j depends on "
                   "every x_i (through the sum), so dx_i also collects −y_i · y_j · dy_j from the other j: "
                   "dx = y ⊙ (dy − Σ_j dy_j y_j).", "diagonal"),
              hint("dx matches y ⊙ dy: the cross term is missing. Subtract the row's Σ_j dy_j y_j (one number "
                   "per row, summed in a first pass) from dy: dx = y ⊙ (dy − Σ dy·y).", "no_cross"),
              hint("dx matches y ⊙ (dy − Σ dy): the row sum must weight each dy_j by y_j, Σ_j dy_j y_j.",
                   "sum_dy"),
              hint("dx matches y ⊙ (Σ dy·y − dy): the sign is reversed, dx = y ⊙ (dy − Σ dy·y).", "sign"),
              hint("dx matches a row sum over the first BLOCK_N elements alone: the first pass must loop "
                   "over the whole row, for start in range(0, N, BLOCK_N).", "first_chunk")],
    hints={"tail": ("only the cases whose last chunk sticks out past N fail: are y and dy loaded masked (cols < N, "
                   "other=0.0, so padded lanes add nothing to the sum) and dx stored with the same mask, and does "
                   "each pass reach this last, partly filled chunk (range(0, N, BLOCK_N))?", ("mask", "fill", "loop"))},
    cases=[case(M=4, N=20, BLOCK_N=8, documented=True), case(M=1, N=1), case(M=4, N=7), case(M=4, N=64),
           case(M=8, N=100), case(M=2, N=300, BLOCK_N=64), case(M=16, N=33, BLOCK_N=8),
           case("peaked rows (logits 10·randn)", M=4, N=50, inputs={"x": randn("M N", 0.0, 10.0)}),
           case("large logits (80 + randn)", M=4, N=40, inputs={"x": randn("M N", 80.0)}),
           case("large upstream gradients (dy: 100·randn)", M=4, N=24, inputs={"dy": randn("like y", 0.0, 100.0)}),
           case(M=4096, N=1000, BLOCK_N=256, gpu_only=True), case(M=64, N=8192, BLOCK_N=1024, gpu_only=True),
           case(M=4, N=40, BLOCK_N=16, dtype="bfloat16", gpu_only=False), case(M=256, N=1000, BLOCK_N=256, dtype="bfloat16")],
)
