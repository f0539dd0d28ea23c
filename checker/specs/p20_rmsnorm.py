"""Puzzle 20: RMSNorm forward and backward: a row reduction, dx's cross term, dgamma by atomics."""
from checker.puzzle import SummaryPattern, case, full, identical_rows, next_pow2, out, part, puzzle, randn, variant


def closed(output=None, *, over_block=False, eps_outside=False, diagonal=False):
    """By name: the page's closed form of one output (y, dx, dgamma, shares: dgamma's per-row terms),
    or every output; with a known bug's flag, what a kernel with that bug computes."""
    def compute(x, gamma, dy, eps, BLOCK_H):
        n = BLOCK_H if over_block else x.shape[-1]  # over_block: the sums divided by BLOCK_H, not H
        ms = x.pow(2).sum(-1, keepdim=True) / n
        rstd = 1 / (ms.sqrt() + eps) if eps_outside else (ms + eps).rsqrt()
        x_hat, g = x * rstd, dy * gamma
        dx = g * rstd * (1 - x_hat ** 2 / n) if diagonal else rstd * (g - x_hat * (g * x_hat).sum(-1, True) / n)
        outs = {"y": x_hat * gamma, "dx": dx, "shares": dy * x_hat, "dgamma": (dy * x_hat).sum(0)}
        return outs[output] if output else outs
    return compute


SAME = {"x": identical_rows("M H", offset=-0.3), "dy": full("like y", 1.3)}
# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dgamma: correct <= 0.00161 (forward_scales_gamma_first, bfloat16 M=4096, H=768: H not a power of two)
#   dx: correct <= 0.198 (solution, bfloat16 M=4096, H=768: H not a power of two)
#   y: correct <= 0.19 (solution, bfloat16 M=256, H=1000: H not a power of two, H wider than BLOCK_H (256))
PUZZLE = puzzle(
    20, "rmsnorm", "RMSNorm forward and backward",
    skill="a row reduction looped over chunks, the cross term of its gradient, and a parameter gradient "
          "summed over rows with tl.atomic_add",
    chapter="Atomics and parameter gradients",
    inputs={"x": randn("M H"), "gamma": randn("H", mean=1.0, std=0.5), "dy": randn("like y")},
    constants={"eps": 1e-6},
    reference=lambda x, gamma, eps: {"y": x * (x.pow(2).mean(-1, keepdim=True) + eps).rsqrt() * gamma},
    parts=[part("forward", "RMSNorm forward", ["rmsnorm_fwd_kernel"], outputs=["y"],
                launch=lambda k, x, gamma, y, M, H, eps, BLOCK_H:
                k.rmsnorm_fwd_kernel[(M,)](x, gamma, y, H, eps, BLOCK_H=BLOCK_H)),
           part("backward", "RMSNorm backward", ["rmsnorm_bwd_kernel"], grads={"dx": "x", "dgamma": "gamma"},
                upstream={"y": "dy"}, outputs=["dx", out("dgamma", accumulated=True, shares=closed("shares"))],
                launch=lambda k, x, gamma, dy, dx, dgamma, M, H, eps, BLOCK_H:
                k.rmsnorm_bwd_kernel[(M,)](x, gamma, dy, dx, dgamma, H, eps, BLOCK_H=BLOCK_H))],
    params={"BLOCK_H": next_pow2("H", cap=1024)},
    formulas={f"eq-p20-{name}": (name, closed(name)) for name in ("y", "dx", "dgamma")},
    variants=[variant("jacobian_diagonal", "formula", "dx matches the Jacobian's diagonal alone, g·rstd·(1 − x̂²/H): the "
                      "cross term is missing. Every x in the row moves rstd, so dx = rstd·(g − x̂·mean(g·x̂)), "
                      "g = dy·γ.", closed(diagonal=True)),
              variant("eps_outside_sqrt", "formula", "matches rstd = 1 / (sqrt(mean(x²)) + eps): eps belongs inside the "
                      "square root, rstd = 1 / sqrt(mean(x²) + eps).", closed(eps_outside=True)),
              variant("mean_over_block", "formula", "matches the sums divided by BLOCK_H instead of H: the mean is over "
                      "the row's H elements; the padded lanes are not part of the row.", closed(over_block=True))],
    hints={"wide": ("only the rows wider than BLOCK_H fail: loop over the whole row in BLOCK_H chunks "
                   "(for start in range(0, H, BLOCK_H)) in every pass, the sums included, each carried from one chunk to the next.", ("loop", "accumulate"))},
    summaries=[SummaryPattern("only the case with tiny values (mean(x²) about eps) fails: is eps added inside "
                              "the square root, rstd = 1 / sqrt(mean(x²) + eps)?", lambda c: "tiny" in c.tags, candidates=("formula",))],
    cases=[case(M=4, H=40, BLOCK_H=16, documented=True), case(M=5, H=7), case(M=1, H=100, BLOCK_H=32),
           case(M=37, H=48, BLOCK_H=16), case(M=8, H=256, BLOCK_H=64), case(M=6, H=1000, BLOCK_H=128),
           case("tiny values (1e-3·randn): eps matters", M=4, H=64, tags=("tiny",),
                inputs={"x": randn("M H", std=1e-3)}),  # mean(x²) ~ 1e-6 = eps: where eps's place shows
           case("identical rows, dy = 1.3: equal shares", M=48, H=24, BLOCK_H=16, inputs=SAME),
           case(M=4096, H=4096, gpu_only=True), case(M=2048, H=5120, gpu_only=True),
           case("2048 identical rows: programs at once", M=2048, H=200, BLOCK_H=64, gpu_only=True, inputs=SAME),
           case(M=4, H=40, BLOCK_H=16, dtype="bfloat16", gpu_only=False), case(M=256, H=1000, BLOCK_H=256, dtype="bfloat16"),
           case(M=4096, H=768, dtype="bfloat16")],
)
