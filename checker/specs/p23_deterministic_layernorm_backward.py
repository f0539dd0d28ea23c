"""Puzzle 23: a LayerNorm backward with reproducible parameter gradients (partial buffers, no atomics)."""
from checker.puzzle import case, cdiv, full, identical_rows, next_pow2, out, part, puzzle, randn
from checker.specs.families.layernorm import EPS, centring_cost, layernorm


def grouped_dgamma(x, dz, ROWS_PER_PROGRAM):
    """dgamma the puzzle's way, in float64: a partial sum per group of rows, then the sum of those."""
    mean = x.mean(-1, keepdim=True)
    x_hat = (x - mean) / (x.var(-1, unbiased=False, keepdim=True) + EPS).sqrt()
    shares = dz * x_hat
    return sum(shares[p:p + ROWS_PER_PROGRAM].sum(0) for p in range(0, x.shape[0], ROWS_PER_PROGRAM))


def launch(k, x, gamma, dz, dx, dgamma, dbeta, M, H, ROWS_PER_PROGRAM, BLOCK_H, BLOCK_P, BLOCK_COLS):
    import torch
    programs = cdiv(M, ROWS_PER_PROGRAM)
    # one row per program, fp32 whatever the input dtype; zeros so that a row nobody wrote adds 0
    dgamma_part = torch.zeros(programs, H, dtype=torch.float32, device=x.device)
    dbeta_part = torch.zeros_like(dgamma_part)
    k.ln_bwd_partial_kernel[(programs,)](x, gamma, dz, dx, dgamma_part, dbeta_part, M, H, EPS,
                                         ROWS_PER_PROGRAM=ROWS_PER_PROGRAM, BLOCK_H=BLOCK_H)
    k.ln_bwd_reduce_kernel[(cdiv(H, BLOCK_COLS),)](dgamma_part, dbeta_part, dgamma, dbeta, programs, H,
                                                   BLOCK_P=BLOCK_P, BLOCK_COLS=BLOCK_COLS)


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dbeta: correct <= 7.47e-06 (solution, bfloat16 M=4096, H=768: H not a power of two, H wider than BLOCK_COLS (32))
#   dgamma: correct <= 0.000141 (reduce_one_partial_row_at_a_time, bfloat16 M=4096, H=768: H not a power of two, H wider than BLOCK_COLS (32))
#   dx: correct <= 0.205 (solution, bfloat16 M=4096, H=768: H not a power of two, H wider than BLOCK_COLS (32))
PUZZLE = puzzle(
    23, "deterministic_layernorm_backward", "Deterministic LayerNorm backward",
    skill="reproducible parameter gradients: per-program partial sums, then a reduction in a fixed order",
    chapter="Fast and deterministic",
    inputs={"x": randn("M H"), "gamma": randn("H", mean=1.0, std=0.5), "beta": randn("H", std=0.5),
            "dz": randn("like z")},
    reference=layernorm,
    parts=[part("backward", "LayerNorm backward, the same bits every run",
                ["ln_bwd_partial_kernel", "ln_bwd_reduce_kernel"],
                outputs=["dx", out("dgamma", dtype="float32"), out("dbeta", dtype="float32")],
                grads={"dx": "x", "dgamma": "gamma", "dbeta": "beta"}, upstream={"z": "dz"},
                launch=launch, repeat=20)],
    params={"BLOCK_H": next_pow2("H"), "ROWS_PER_PROGRAM": 4, "BLOCK_P": 8, "BLOCK_COLS": 32},
    blocks={"H": "BLOCK_COLS"},
    condition=centring_cost,
    formulas={"eq-p23-grouped": ("dgamma", grouped_dgamma)},
    cases=[case(M=8, H=16, documented=True),
           case(M=37, H=100),
           case(M=1, H=48),
           case(M=64, H=40, ROWS_PER_PROGRAM=1),
           case(M=50, H=8, ROWS_PER_PROGRAM=16),
           case("identical rows, dz = 1.3: equal shares", M=48, H=24,
                inputs={"x": identical_rows("M H"), "dz": full("like z", 1.3)}),
           case("mean near 1000", M=16, H=64, inputs={"x": randn("M H", mean=1000.0)}),
           case(M=4096, H=1024, gpu_only=True),
           case(M=2048, H=5120, ROWS_PER_PROGRAM=16, gpu_only=True),
           case(M=8, H=40, dtype="bfloat16", gpu_only=False),
           case(M=256, H=1000, dtype="bfloat16"),
           case(M=4096, H=768, dtype="bfloat16")],
)
