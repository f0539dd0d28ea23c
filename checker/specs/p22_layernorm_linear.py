"""Puzzle 22: LayerNorm + Linear — forward, fused forward, fused backward with atomics."""
import math
import zlib

from checker.puzzle import (FP32_ROUNDING, SummaryPattern, Tolerance, bench, case, cdiv, custom, full, identical_rows,
                            next_pow2, out, part, puzzle, randn, rms, variant)
from checker.specs.families.layernorm import EPS, bug_variant, contributions, statistics

MIN_DOT_BLOCK = 16  # tl.dot needs every block dimension >= 16 on a GPU
# the fused kernel's [BLOCK_H, BLOCK_N] tiles of W.T are staged in shared memory: at BLOCK_H = 1024
# they need 344 KB on an H100 (limit 227 KB), so its K block stops at 128 and it loops over H
MAX_FUSED_BLOCK_H = 128


def fused_block_h(block_h: int) -> int:
    return min(max(block_h, MIN_DOT_BLOCK), MAX_FUSED_BLOCK_H)


def reference(x, gamma, beta, w, bias, eps):
    import torch.nn.functional as F
    z = F.layer_norm(x, (x.shape[-1],), gamma, beta, eps)
    return {"z": z, "y": F.linear(z, w, bias)}


def linear_weight(gen, dims, sizes):
    """W [N, H]: randn / sqrt(H), so that y = z W^T has about z's magnitude."""
    import torch
    return torch.randn(*dims, generator=gen, dtype=torch.float64) / math.sqrt(sizes["H"])


# -- launches -----------------------------------------------------------------------------------
def fused_forward(k, x, gamma, beta, w, bias, y, M, H, N, eps, block_h, **tiles):
    # [BLOCK_M, BLOCK_N] tiles of y; a case may make them differ, so a tile placed by the wrong one shows
    block_m, block_n = (tiles.get(t, MIN_DOT_BLOCK) for t in ("block_m", "block_n"))
    k.ln_linear_fwd_kernel[(cdiv(M, block_m), cdiv(N, block_n))](x, gamma, beta, w, bias, y, M, H, N, eps,
                                                                BLOCK_M=block_m, BLOCK_N=block_n,
                                                                BLOCK_H=fused_block_h(block_h))


def unfused(k, x, gamma, beta, w, bias, z, M, H, eps, block_h):
    import torch.nn.functional as F
    k.layernorm_fwd_kernel[(M,)](x, gamma, beta, z, H, eps, BLOCK_H=block_h)
    return {"y": F.linear(z, w, bias)}  # the provided matmul: y = z @ W.T + bias


def backward(k, x, gamma, beta, w, bias, dy, y, dx, dgamma, dbeta, dw, dbias, M, H, N, eps, block_h, **tiles):
    fused_forward(k, x, gamma, beta, w, bias, y, M, H, N, eps, block_h, **tiles)
    k.ln_linear_bwd_kernel[(M,)](x, gamma, beta, w, dy, dx, dgamma, dbeta, dw, dbias, H, N, eps,
                                 BLOCK_H=block_h, BLOCK_N=MIN_DOT_BLOCK)


# -- tolerances, scales and each row's share ----------------------------------------------------
# Tolerances: |out - ref| <= (atol + per_condition * condition) * scale + rtol * |ref| (checker/puzzle/model.py).
# scale: RMS of the output; for parameter gradients sqrt(M) times the RMS of one row's share, since
# the rounding error of a sum of M shares grows like sqrt(M). condition: how far the row means sit
# from 0 in units of spread; centring loses that many digits in fp32 (u = 2**-24 per rounding; we
# allow 16 of them). dbias = sum of dy never sees x.
# per_row: a running fp32 sum of M same-sign shares (atomics add one share at a time) drifts by up
# to ~M*u/2 relative: measured 2.6e-5 for 2048 identical rows on an H100, against M*u = 1.2e-4.
# Chosen from the measured error of the reference kernels and tight enough that every kernel in
# tests/bugs/p22.py fails. bf16 outputs keep 8 significant bits (relative rounding 2**-9);
# parameter gradients accumulate in fp32 from bf16 inputs, so they stay tighter.
FP32 = Tolerance(atol=2e-5, rtol=2e-5, per_condition=16 * FP32_ROUNDING)
BF16_OUT = Tolerance(atol=1.5e-2, rtol=1.5e-2, per_condition=16 * FP32_ROUNDING)
PLAIN = {"float32": FP32, "bfloat16": BF16_OUT}
SUMMED = {"float32": Tolerance(atol=2e-5, rtol=2e-5, per_condition=16 * FP32_ROUNDING, per_row=FP32_ROUNDING),
          "bfloat16": Tolerance(atol=2e-3, rtol=2e-3, per_condition=16 * FP32_ROUNDING, per_row=FP32_ROUNDING)}
BIAS_SUMMED = {"float32": Tolerance(atol=1e-5, rtol=1e-5, per_row=FP32_ROUNDING),
               "bfloat16": Tolerance(atol=2e-3, rtol=2e-3, per_row=FP32_ROUNDING)}


def share(name: str):
    """By name: each row's share of an accumulated gradient ([M, ...])."""
    return lambda x, gamma, beta, w, dy, eps: contributions(x, gamma, beta, w, dy, *statistics(x, eps))[name]


def summed(name: str):
    """An accumulated gradient, its scale sqrt(M) times the RMS of one row's share."""
    def scale(x, gamma, beta, w, dy, eps):
        return math.sqrt(x.shape[0]) * rms(share(name)(x, gamma, beta, w, dy, eps))
    return out(name, accumulated=True, shares=share(name), scale=scale,
               tolerance=BIAS_SUMMED if name == "dbias" else SUMMED)


def dx_scale(x, gamma, w, dy, eps):
    """dx = rstd * (g - mean(g) - ...): measure it by its terms, which do not cancel."""
    _, rstd = statistics(x, eps)
    return rms(rstd * ((dy @ w) * gamma))


def centring(x, eps):
    """Centring costs digits when |mean| >> spread: condition = max |mean| * rstd over rows."""
    mean, rstd = statistics(x, eps)
    return max(1.0, float((mean.abs() * rstd).max()))


Z = out("z", title="LayerNorm output", tolerance=PLAIN)
Y = out("y", title="Forward", tolerance=PLAIN)
GRADS = [out("dx", tolerance=PLAIN, scale=dx_scale),
         *(summed(name) for name in ("dgamma", "dbeta", "dw", "dbias"))]


# -- known bugs -----------------------------------------------------------------------------------
def bug(name: str):
    """By name: what a kernel with this known bug computes (the family's variants), nothing where it
    does not apply (a padded-lanes bug at another block width, or one that leaves x_hat ~ 0)."""
    def compute(x, gamma, beta, w, bias, dy, eps, block_h):
        return bug_variant(name, x, gamma, beta, w, bias, dy, eps, (block_h, fused_block_h(block_h))) or {}
    return compute


MASK_HINT = ("padded lanes leaked into the result: lanes at or past H load 0 (or garbage), and 0 - mean "
             "is not 0. Mask them out of the variance: diff = tl.where(cols < H, x - mean, 0.0).")
VARIANTS = [
    variant("jacobian_diagonal", "formula",
            "dx matches the element-wise 'Jacobian diagonal' formula dz*gamma*rstd*(1 - 1/H - x_hat^2/H): "
            "the mean and variance cross terms are missing. Every x in the row moves mean and variance, "
            "so dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat)) with g = dz * gamma.", bug("jacobian_diagonal")),
    variant("unbiased_variance", "formula",
            "matches LayerNorm with the unbiased variance (divided by H - 1): LayerNorm divides by H.",
            bug("unbiased_variance")),
    variant("eps_outside_sqrt", "formula",
            "matches rstd = 1 / (sqrt(var) + eps): eps belongs inside the square root, "
            "rstd = 1 / sqrt(var + eps). It only shows when the variance is as small as eps.", bug("eps_outside_sqrt")),
    variant("variance_not_centred", "formula",
            "matches the variance taken around 0, the mean of x^2: each lane's square must be of its "
            "distance from the mean, diff = x - mean (masked), var = sum(diff * diff) / H.", bug("variance_not_centred")),
    variant("w_transposed", "address",
            "matches W read transposed: W is [N, H] (PyTorch Linear layout), so W[n, h] is at "
            "w_ptr + n * H + h.", bug("w_transposed")),
    *(variant(f"padded_lanes_{b}", "fill", MASK_HINT, bug(f"padded_lanes_{b}"))
      for b in (8, 16, 32, 64, 128, 256, 512, 1024)),
]


# -- cases ----------------------------------------------------------------------------------------
# The inputs of the special cases: x's recipe, and for "deterministic" ones gamma = 1 and dy = 1
FAR_MEAN = {"x": randn("M H", -2.3, 0.5)}
EQUAL = {"gamma": full("H", 1.0), "dy": full("like y", 1.0)}
CONSTANT = {"x": full("M H", 0.5), **EQUAL}
IDENTICAL = {"x": identical_rows("M H", step=0.25, period=1.75, offset=-0.5), **EQUAL}


def shaped(name: str, dims_in: tuple, n_out: int, *, tags: tuple = (), **kw):
    """A case by its tensors' shapes, x [*batch, H] -> y [*batch, N]: the kernels see M = prod(batch)
    rows. Its seed is made from its name alone, as before p22 was declared in the short form. A case
    shown by its shapes keeps its sizes from the summary patterns too: it is tagged with its H."""
    batch, h = dims_in[:-1], dims_in[-1]
    shape = f"{list(dims_in)} -> {list(batch) + [n_out]}"
    return case(name, M=math.prod(batch), H=h, N=n_out, shape=shape, seed=zlib.crc32(name.encode()),
                tags=(*tags, f"H={h}"), **kw)


def torch_step(x, gamma, beta, w, bias, dy, wrap):
    """The same work in PyTorch: LayerNorm + Linear forward through `wrap` (torch.compile for the
    compiled column, so its backward is compiled too), then autograd's backward."""
    import torch
    import torch.nn.functional as F
    leaves = [t.detach().requires_grad_() for t in (x, gamma, beta, w, bias)]
    forward = wrap(lambda x, gamma, beta, w, bias: F.linear(F.layer_norm(x, (x.shape[-1],), gamma, beta, EPS),
                                                            w, bias))

    def step():
        return torch.autograd.grad(forward(*leaves), leaves, dy)
    return step


# bf16 margins (tests/bf16_margins.py), NVIDIA H100 80GB HBM3, 2026-12-07: max |error| / tolerance on the
# bf16 cases: the correct kernels' largest per output, and each rounding the page names as a bug
#   dbeta: correct <= 9.08e-05 (solution, bf16 identical rows)
#   dbias: correct <= 0 (solution, bf16 H=1000, wider than its block (128))
#   dgamma: correct <= 0.000395 (solution, bf16 identical rows)
#   dw: correct <= 0.000495 (solution, bf16 identical rows)
#   dx: correct <= 0.187 (solution, bf16 mean far from 0)
#   y: correct <= 0.3 (solution, bf16 documented configuration)
#   z: correct <= 0.189 (solution, bf16 H=1000, wider than its block (128))
#   fused_product_in_fp16: 0.151 (y, bf16 documented configuration)
PUZZLE = puzzle(
    22, "layernorm_linear", "LayerNorm + Linear",
    skill="fusion: LayerNorm in a matmul's prologue; a fused backward that accumulates four parameter "
          "gradients with atomics",
    chapter="LayerNorm + Linear",
    inputs={"x": randn("M H"), "gamma": randn("H", 1.0, 0.5), "beta": randn("H", std=0.5),
            "w": custom("N H", linear_weight), "bias": randn("N", std=0.5), "dy": randn("like y")},
    constants={"eps": EPS},
    reference=reference,
    # the unfused forward's y comes from the provided matmul, which its launch returns
    parts=[part("unfused", "Unfused Forward", ["layernorm_fwd_kernel"],
                outputs=[Z, out("y", title="Forward", tolerance=PLAIN, provided=True)], launch=unfused),
           part("fused", "Fused Forward", ["ln_linear_fwd_kernel"], outputs=[Y], launch=fused_forward),
           part("backward", "Backward Pass", ["ln_linear_fwd_kernel", "ln_linear_bwd_kernel"], outputs=[Y, *GRADS],
                grads={"dx": "x", "dgamma": "gamma", "dbeta": "beta",
                       "dw": "w", "dbias": "bias"},
                upstream={"y": "dy"}, launch=backward)],
    params={"block_h": next_pow2("H", cap=1024)},
    blocks={"H": "block_h"},
    condition=centring,
    variants=VARIANTS,
    # its references were computed on the CPU before the short form: a GPU check keeps their last bits
    float64_on_cpu=True,
    # p22's own four, in this order; none of the generic ones (a tail, bf16 alone, other sizes)
    summaries=[SummaryPattern("only cases whose hidden size H is not a power of two fail: check the masks "
                              "(cols < H, not cols < BLOCK_H) and keep padded lanes out of sums.",
                              lambda c: "non_pow2" in c.tags, candidates=("mask", "fill")),
               SummaryPattern("only rows wider than one block fail: look at what changes from the first chunk of "
                              "the row to the next. Does every pass walk all of H in BLOCK_H chunks (statistics "
                              "included), carry each sum from one chunk to the next, and add what belongs once per "
                              "row (a bias's gradient, a row's statistic) outside the loop over the chunks?",
                              lambda c: "wide" in c.tags, candidates=("loop", "accumulate")),
               SummaryPattern("only cases whose mean is far from 0 compared with their spread fail: "
                              "mean(x^2) - mean(x)^2 cancels catastrophically in fp32; compute the variance as "
                              "mean((x - mean)^2) in a second pass.",
                              lambda c: "cancellation" in c.tags, cause="stability"),
               SummaryPattern("every case with H != 8 fails: is the hidden size hard-coded? Use the H argument.",
                              lambda c: "H=8" not in c.tags, coverage=1.0, candidates=("hardcoded",))],
    hints={"non_pow2": None, "tail": None, "wide": None, "bfloat16": None, "documented": None},
    # the documented configuration first, then the matrix that catches known LayerNorm bugs
    cases=[shaped("documented configuration", (4, 4, 8), 16, documented=True),
           shaped("H=5, not a power of two", (7, 5), 3),
           shaped("H=760, not a power of two", (2, 9, 760), 12),
           shaped("H=1000, wider than its block (128)", (5, 1000), 20, block_h=128),
           shaped("H=256, wider than its block (64)", (6, 256), 32, block_h=64),
           shaped("H=5120: five full blocks of 1024, not a power of two", (2, 5120), 8),
           shaped("one row", (1, 100), 7),
           shaped("37 rows: no block size divides them", (37, 48), 40, block_n=32),
           # an up-projection: the outputs span more blocks than the features, so a loop over the
           # outputs bounded by H is caught
           shaped("more outputs than features (N=40 > H=16)", (3, 16), 40),
           shaped("mean far from 0 (-2.3 + 0.5*randn)", (3, 5, 96), 16, inputs=FAR_MEAN),
           shaped("mean near 1000 (1000 + randn)", (4, 200), 16, tags=("cancellation",),
                  inputs={"x": randn("M H", 1000.0)}),
           shaped("tiny variance (3 + 0.003*randn): eps matters", (4, 64), 8, tags=("cancellation",),
                  inputs={"x": randn("M H", 3.0, 0.003)}),
           shaped("constant inputs (x=0.5, gamma=1, dy=1)", (8, 24), 16, inputs=CONSTANT),
           shaped("identical rows, dy=1, gamma=1 (equal shares)", (64, 40), 12, inputs=IDENTICAL),
           shaped("H=5632: a half-full last block of 1024", (4, 5632), 16, gpu_only=True),
           shaped("H=8462: an odd width, a ragged last block", (4, 8462), 16, gpu_only=True),
           shaped("2048 identical rows: programs run at once", (2048, 64), 16, gpu_only=True, inputs=IDENTICAL),
           shaped("bf16 documented configuration", (4, 4, 8), 16, dtype="bfloat16", gpu_only=False),
           shaped("bf16 H=1000, wider than its block (128)", (5, 1000), 20, block_h=128, dtype="bfloat16"),
           shaped("bf16 H=5120", (2, 5120), 8, dtype="bfloat16"),
           shaped("bf16 mean far from 0", (3, 5, 96), 16, dtype="bfloat16", inputs=FAR_MEAN),
           shaped("bf16 identical rows", (64, 40), 12, dtype="bfloat16", inputs=IDENTICAL)],
    bench=bench("backward", [shaped(f"M=4096, H=N={h}", (4096, h), h, dtype=dtype)
                             for dtype in ("float32", "bfloat16") for h in (1024, 4096)],
                # bytes a fused forward + backward must move at least: x twice (forward, backward), W
                # twice, y and dx written, dy read, dW written (fp32); the small vectors are negligible
                traffic=lambda x, M, H, N: x.element_size() * (3 * M * H + 2 * N * H + 2 * M * N) + 4 * N * H,
                flops=lambda M, N, H: 3 * 2.0 * M * N * H,  # y = z W^T, dz = dy W, dW = dy^T z
                torch=torch_step),
)
