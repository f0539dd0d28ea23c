"""Puzzle 21: LayerNorm backward: dx with chapter 5's cross terms, dgamma and dbeta summed by atomics."""
from checker.puzzle import SummaryPattern, case, full, identical_rows, next_pow2, out, part, puzzle, randn, variant
from checker.specs.families.layernorm import centring_cost, layernorm_backward, padded_lane_count, statistics


def closed(output, jacobian_diagonal=False, padded=False, **stats):
    """By name: the LayerNorm family's closed forms (dz reaches LayerNorm's output as is), or with a
    known bug's flag what that kernel computes; output None: all of them; "shares_*": each row's terms."""
    def compute(x, gamma, beta, dz, eps, H, BLOCK_H):
        lanes = padded_lane_count(H, BLOCK_H) if padded else 0  # their 0 - mean enters the variance
        mean, rstd = statistics(x, eps, padded_lanes=lanes, **stats)
        grads = layernorm_backward(x, gamma, beta, dz, mean, rstd, jacobian_diagonal=jacobian_diagonal)
        # each row's terms, written out: the family's contributions() would also build dW's [M, N, H]
        named = {**{k: grads[k] for k in ("dx", "dgamma", "dbeta")},
                 "shares_dgamma": dz * (x - mean) * rstd, "shares_dbeta": dz}
        return named[output] if output else named
    return compute


SAME = {"x": identical_rows("M H", offset=-0.3), "dz": full("like z", 1.3)}
# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dbeta: correct <= 7.19e-05 (dbeta_in_the_first_sweep, bfloat16 M=4096, H=768: H not a power of two)
#   dgamma: correct <= 0.00127 (dbeta_before_dgamma_with_relaxed_atomics, bfloat16 M=4096, H=768: H not a power of two)
#   dx: correct <= 0.199 (solution, bfloat16 M=256, H=1000: H not a power of two, H wider than BLOCK_H (256))
#   x_hat_in_bf16: 1.88 (dgamma, bfloat16 M=256, H=1000: H not a power of two, H wider than BLOCK_H (256))
PUZZLE = puzzle(
    21, "layernorm_backward", "LayerNorm backward",
    skill="the LayerNorm backward pass: dx's two cross terms from row sums over chunks, dgamma and dbeta "
          "accumulated across rows with tl.atomic_add",
    chapter="Atomics and parameter gradients",
    inputs={"x": randn("M H"), "gamma": randn("H", mean=1.0, std=0.5), "beta": randn("H", std=0.5),
            "dz": randn("like z")},
    constants={"eps": 1e-5},
    reference=lambda x, gamma, beta, eps: {"z": (x - x.mean(-1, True)) * (x.var(-1, False, True) + eps).rsqrt()
                                           * gamma + beta},
    parts=[part("backward", "LayerNorm backward", ["layernorm_bwd_kernel"],
                grads={"dx": "x", "dgamma": "gamma", "dbeta": "beta"}, upstream={"z": "dz"},
                outputs=["dx", out("dgamma", accumulated=True, shares=closed("shares_dgamma")),
                         out("dbeta", accumulated=True, shares=closed("shares_dbeta"))],
                launch=lambda k, x, gamma, dz, dx, dgamma, dbeta, M, H, eps, BLOCK_H:
                k.layernorm_bwd_kernel[(M,)](x, gamma, dz, dx, dgamma, dbeta, H, eps, BLOCK_H=BLOCK_H))],
    params={"BLOCK_H": next_pow2("H", cap=1024)},
    condition=centring_cost,  # centring costs digits in fp32: max |row mean| / row spread
    formulas={f"eq-p21-{name}": (name, closed(name)) for name in ("dx", "dgamma", "dbeta")},
    variants=[variant("jacobian_diagonal", "formula", "dx matches the Jacobian's diagonal alone, g·rstd·(1 − 1/H − x̂²/H): "
                      "the cross terms are missing. Every x in the row moves the mean and the variance, so "
                      "dx = rstd·(g − mean(g) − x̂·mean(g·x̂)), g = dz·γ.", closed(None, jacobian_diagonal=True)),
              variant("padded_lanes", "fill", "padded lanes leaked into the variance: lanes at or past H load 0, and "
                      "0 − mean is not 0. Keep them out: diff = tl.where(cols < H, x - mean, 0.0).",
                      closed(None, padded=True)),
              variant("unbiased_variance", "formula", "matches the variance divided by H − 1: LayerNorm divides by H.",
                      closed(None, unbiased=True)),
              variant("eps_outside_sqrt", "formula", "matches rstd = 1 / (sqrt(var) + eps): eps belongs inside the square "
                      "root, rstd = 1 / sqrt(var + eps).", closed(None, eps_outside_sqrt=True))],
    hints={"wide": ("only the rows wider than BLOCK_H fail: loop over the whole row in BLOCK_H chunks "
                   "(for start in range(0, H, BLOCK_H)) in every sweep, the sums included, each carried from one chunk to the next.", ("loop", "accumulate"))},
    summaries=[SummaryPattern("only the case whose mean is far from 0 compared with its spread fails: E[x²] − "
                              "E[x]² cancels catastrophically in fp32; take the variance as mean((x − mean)²) "
                              "in a sweep after the mean.", lambda c: "cancellation" in c.tags, cause="stability"),
               SummaryPattern("only the case with a tiny spread (variance about eps) fails: is eps added inside "
                              "the square root, rstd = 1 / sqrt(var + eps)?", lambda c: "tiny" in c.tags, candidates=("formula",))],
    cases=[case(M=4, H=40, BLOCK_H=16, documented=True), case(M=5, H=7), case(M=1, H=100, BLOCK_H=32),
           case(M=37, H=48, BLOCK_H=16), case(M=8, H=256, BLOCK_H=64), case(M=6, H=1000, BLOCK_H=128),
           case("mean far from 0 (-2.3 + 0.5·randn)", M=6, H=96, BLOCK_H=64, inputs={"x": randn("M H", -2.3, 0.5)}),
           case("mean near 1000 (1000 + randn)", M=4, H=200, BLOCK_H=64, tags=("cancellation",),
                inputs={"x": randn("M H", mean=1000.0)}),
           case("tiny spread (0.003·randn): eps matters", M=4, H=64, tags=("tiny",),
                inputs={"x": randn("M H", std=0.003)}),
           case("identical rows, dz = 1.3: equal shares", M=48, H=24, BLOCK_H=16, inputs=SAME),
           case(M=4096, H=4096, gpu_only=True), case(M=2048, H=5120, gpu_only=True),
           case("2048 identical rows: programs at once", M=2048, H=200, BLOCK_H=64, gpu_only=True, inputs=SAME),
           case(M=4, H=40, BLOCK_H=16, dtype="bfloat16", gpu_only=False), case(M=256, H=1000, BLOCK_H=256, dtype="bfloat16"),
           case(M=4096, H=768, dtype="bfloat16"),
           case("bf16 mean far from 0", M=64, H=96, BLOCK_H=64, dtype="bfloat16",
                inputs={"x": randn("M H", -2.3, 0.5)})],
)
