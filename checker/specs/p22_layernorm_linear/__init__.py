"""Puzzle 22: LayerNorm + Linear — forward, fused forward, fused backward with atomics."""
from __future__ import annotations

import math
import zlib

from checker.puzzle.model import Bench, Case, Output, Part, Pattern, Puzzle, Reference, SummaryPattern, Tolerance

# The command line imports specs to list puzzles and check sources statically; torch is imported
# only inside the functions, which run in the checker's worker process.

EPS = 1e-5
MIN_DOT_BLOCK = 16  # tl.dot needs every block dimension >= 16 on a GPU
# the fused kernel's [BLOCK_H, BLOCK_N] tiles of W.T are staged in shared memory: at BLOCK_H = 1024
# they need 344 KB on an H100 (limit 227 KB), so its K block stops at 128 and it loops over H
MAX_FUSED_BLOCK_H = 128


def fused_block_h(case: Case) -> int:
    return min(max(case.params["block_h"], MIN_DOT_BLOCK), MAX_FUSED_BLOCK_H)


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _case(name: str, dims_in: tuple, n_out: int, *, recipe: str = "random", block_h: int | None = None,
          tags: tuple = (), tiles: dict | None = None, **kw) -> Case:
    h = dims_in[-1]
    block_h = block_h or min(_pow2(h), 1024)
    tags = set(tags)
    if h & (h - 1):
        tags.add("non_pow2")
    if h > block_h:
        tags.add("wide")
    return Case(name=name, dims_in=tuple(dims_in), dims_out=tuple(dims_in[:-1]) + (n_out,),
                tags=frozenset(tags), params={"recipe": recipe, "block_h": block_h, **(tiles or {})}, **kw)


def cases() -> list[Case]:
    """The documented configuration first, then the matrix that catches known LayerNorm bugs."""
    fp32 = [
        _case("documented configuration", (4, 4, 8), 16, documented=True),
        _case("H=5, not a power of two", (7, 5), 3),
        _case("H=760, not a power of two", (2, 9, 760), 12),
        _case("H=1000, wider than its block (128)", (5, 1000), 20, block_h=128),
        _case("H=256, wider than its block (64)", (6, 256), 32, block_h=64),
        _case("H=5120: five full blocks of 1024, not a power of two", (2, 5120), 8),
        _case("one row", (1, 100), 7),
        _case("37 rows: no block size divides them", (37, 48), 40, tiles={"block_n": 32}),
        # an up-projection: the outputs span more blocks than the features, so a loop over the
        # outputs bounded by H is caught
        _case("more outputs than features (N=40 > H=16)", (3, 16), 40),
        _case("mean far from 0 (-2.3 + 0.5*randn)", (3, 5, 96), 16, recipe="far_mean"),
        _case("mean near 1000 (1000 + randn)", (4, 200), 16, recipe="mean_1000", tags=("cancellation",)),
        _case("tiny variance (3 + 0.003*randn): eps matters", (4, 64), 8, recipe="tiny_var",
              tags=("cancellation",)),
        _case("constant inputs (x=0.5, gamma=1, dy=1)", (8, 24), 16, recipe="constant"),
        _case("identical rows, dy=1, gamma=1 (equal shares)", (64, 40), 12, recipe="identical_rows"),
    ]
    gpu = [
        _case("H=5632: a half-full last block of 1024", (4, 5632), 16, gpu_only=True),
        _case("H=8462: an odd width, a ragged last block", (4, 8462), 16, gpu_only=True),
        _case("2048 identical rows: programs run at once", (2048, 64), 16, recipe="identical_rows",
              gpu_only=True),
    ]
    bf16 = [
        _case("bf16 documented configuration", (4, 4, 8), 16, dtype="bfloat16", gpu_only=False),
        _case("bf16 H=1000, wider than its block (128)", (5, 1000), 20, block_h=128, dtype="bfloat16",
              gpu_only=True),
        _case("bf16 H=5120", (2, 5120), 8, dtype="bfloat16", gpu_only=True),
        _case("bf16 mean far from 0", (3, 5, 96), 16, recipe="far_mean", dtype="bfloat16", gpu_only=True),
        _case("bf16 identical rows", (64, 40), 12, recipe="identical_rows", dtype="bfloat16", gpu_only=True),
    ]
    return fp32 + gpu + bf16


def make_inputs(case: Case, device: str, seed: int = 0) -> dict:
    """Seeded per case (reproducible reports); --seed changes every case's data."""
    import torch
    gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
    h, n = case.dims_in[-1], case.dims_out[-1]
    m = math.prod(case.dims_in[:-1])
    randn = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64)  # noqa: E731
    recipe = case.params["recipe"]
    x = {"random": lambda: randn(m, h),
         "far_mean": lambda: -2.3 + 0.5 * randn(m, h),
         "mean_1000": lambda: 1000 + randn(m, h),
         "tiny_var": lambda: 3 + 0.003 * randn(m, h),
         "constant": lambda: torch.full((m, h), 0.5, dtype=torch.float64),
         "identical_rows": lambda: (0.25 * torch.arange(h) % 1.75 - 0.5).double().expand(m, h).clone(),
         }[recipe]()
    deterministic = recipe in ("constant", "identical_rows")
    gamma = torch.ones(h, dtype=torch.float64) if deterministic else 1 + 0.5 * randn(h)
    beta = 0.5 * randn(h)
    w = randn(n, h) / math.sqrt(h)
    bias = 0.5 * randn(n)
    dy = torch.ones(m, n, dtype=torch.float64) if deterministic else randn(m, n)
    dtype = getattr(torch, case.dtype)
    as_dev = lambda t: t.to(dtype).to(device).contiguous()  # noqa: E731
    return {"x": as_dev(x), "gamma": as_dev(gamma), "beta": as_dev(beta), "w": as_dev(w),
            "bias": as_dev(bias), "dy": as_dev(dy), "eps": EPS}


def _rms(t) -> float:
    return float(t.double().pow(2).mean().sqrt()) if t.numel() else 0.0


def reference(inputs: dict, case: Case) -> Reference:
    import torch
    from checker.specs.p22_layernorm_linear import formulas
    cpu = {k: (v.detach().cpu().double() if torch.is_tensor(v) else v) for k, v in inputs.items()}
    x, gamma, beta, w, bias, dy = (cpu[k] for k in ("x", "gamma", "beta", "w", "bias", "dy"))
    outputs = formulas.autograd_reference(x, gamma, beta, w, bias, dy, EPS)
    mean, rstd = formulas.statistics(x, EPS)
    shares = formulas.contributions(x, gamma, beta, w, dy, mean, rstd)
    rows = math.sqrt(x.shape[0])
    dz_gamma = (dy @ w) * gamma
    scales = {
        "ln_output": _rms(outputs["ln_output"]),
        "output": _rms(outputs["output"]),
        # dx = rstd * (g - mean(g) - ...): measure it by its terms, which do not cancel
        "grad_input": _rms(rstd * dz_gamma),
        # accumulated over M rows: the error of a sum of M shares grows like sqrt(M)
        **{name: rows * _rms(share) for name, share in shares.items()},
    }
    block_h = case.params["block_h"]
    alternatives = formulas.bug_variants(x, gamma, beta, w, bias, dy, EPS, (block_h, fused_block_h(case)))
    # centring costs digits when |mean| >> spread: condition = max |mean| * rstd over rows
    condition = max(1.0, float((mean.abs() * rstd).max()))
    return Reference(outputs=outputs, scales=scales, condition=condition, rows=x.shape[0], contributions=shares,
                     alternatives=alternatives)


# Tolerances: |out - ref| <= (atol + per_condition * condition) * scale + rtol * |ref| (checker/puzzle/model.py).
# scale: Reference.scales (RMS of the output; for parameter gradients sqrt(M) times the RMS of one
# row's share, since the rounding error of a sum of M shares grows like sqrt(M)). condition: how far
# the row means sit from 0 in units of spread; centring loses that many digits in fp32
# (u = 2**-24 per rounding; we allow 16 of them). grad_linear_bias = sum of dy never sees x.
# per_row: a running fp32 sum of M same-sign shares (atomics add one share at a time) drifts by up
# to ~M*u/2 relative: measured 2.6e-5 for 2048 identical rows on an H100, against M*u = 1.2e-4.
# Chosen from the measured error of the reference kernels (tests/test_p22_tolerances.py keeps the
# margin) and tight enough that every kernel in tests/catalog/p22 fails.
FP32_ROUNDING = 2.0 ** -24
_FP32 = Tolerance(atol=2e-5, rtol=2e-5, per_condition=16 * FP32_ROUNDING)
_FP32_SUM = Tolerance(atol=2e-5, rtol=2e-5, per_condition=16 * FP32_ROUNDING, per_row=FP32_ROUNDING)
# bf16 outputs keep 8 significant bits (relative rounding 2**-9); parameter gradients accumulate in
# fp32 from bf16 inputs, so they stay tighter.
_BF16_OUT = Tolerance(atol=1.5e-2, rtol=1.5e-2, per_condition=16 * FP32_ROUNDING)
_BF16_GRAD = Tolerance(atol=2e-3, rtol=2e-3, per_condition=16 * FP32_ROUNDING, per_row=FP32_ROUNDING)
TOLERANCES = {
    "float32": {"output": _FP32, "ln_output": _FP32, "grad_input": _FP32, "grad_ln_weight": _FP32_SUM,
                "grad_ln_bias": _FP32_SUM, "grad_linear_weight": _FP32_SUM,
                "grad_linear_bias": Tolerance(atol=1e-5, rtol=1e-5, per_row=FP32_ROUNDING)},
    "bfloat16": {"output": _BF16_OUT, "ln_output": _BF16_OUT, "grad_input": _BF16_OUT,
                 "grad_ln_weight": _BF16_GRAD, "grad_ln_bias": _BF16_GRAD, "grad_linear_weight": _BF16_GRAD,
                 "grad_linear_bias": Tolerance(atol=2e-3, rtol=2e-3, per_row=FP32_ROUNDING)},
}


def tolerance(dtype: str, output: Output) -> Tolerance:
    return TOLERANCES[dtype][output.name]


Y = Output("output", "output", forward=True, title="Forward")
Z = Output("ln_output", "ln_output", forward=True, title="LayerNorm output")
GRADS = (Output("grad_input", "grad_input", forward=False),
         Output("grad_ln_weight", "grad_ln_weight", forward=False, accumulated=True),
         Output("grad_ln_bias", "grad_ln_bias", forward=False, accumulated=True),
         Output("grad_linear_weight", "grad_linear_weight", forward=False, accumulated=True),
         Output("grad_linear_bias", "grad_linear_bias", forward=False, accumulated=True))


def _sizes(inputs: dict) -> tuple[int, int, int]:
    m, h = inputs["x"].shape
    return m, h, inputs["w"].shape[0]


def _empty(inputs: dict, *shape):
    import torch
    return torch.empty(*shape, dtype=inputs["x"].dtype, device=inputs["x"].device)


def _fp32_zeros(inputs: dict, *shape):
    import torch
    # parameter gradients accumulate in fp32 whatever the input dtype: a bf16 atomic add would
    # round every row's share to 8 bits
    return torch.zeros(*shape, dtype=torch.float32, device=inputs["x"].device)


def _launch_fused_forward(k, inputs: dict, y, case: Case) -> None:
    m, h, n = _sizes(inputs)
    # [BLOCK_M, BLOCK_N] tiles of y; a case may make them differ, so a tile placed by the wrong one shows
    block_m, block_n = (case.params.get(k, MIN_DOT_BLOCK) for k in ("block_m", "block_n"))
    grid = (triton_cdiv(m, block_m), triton_cdiv(n, block_n))
    k.ln_linear_fwd_kernel[grid](inputs["x"], inputs["gamma"], inputs["beta"], inputs["w"], inputs["bias"], y,
                                 m, h, n, inputs["eps"], BLOCK_M=block_m, BLOCK_N=block_n,
                                 BLOCK_H=fused_block_h(case))


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _allocate_unfused(inputs: dict, case: Case) -> dict:
    m, h, _ = _sizes(inputs)
    return {"ln_output": _empty(inputs, m, h)}


def _launch_unfused(k, inputs: dict, out: dict, case: Case) -> dict:
    m, h, _ = _sizes(inputs)
    k.layernorm_fwd_kernel[(m,)](inputs["x"], inputs["gamma"], inputs["beta"], out["ln_output"], h,
                                 inputs["eps"], BLOCK_H=case.params["block_h"])
    import torch.nn.functional as F
    # the provided matmul: y = z @ W.T + bias
    return {**out, "output": F.linear(out["ln_output"], inputs["w"], inputs["bias"])}


def _allocate_fused(inputs: dict, case: Case) -> dict:
    m, _, n = _sizes(inputs)
    return {"output": _empty(inputs, m, n)}


def _launch_fused(k, inputs: dict, out: dict, case: Case) -> dict:
    _launch_fused_forward(k, inputs, out["output"], case)
    return out


def _allocate_backward(inputs: dict, case: Case) -> dict:
    m, h, n = _sizes(inputs)
    return {"output": _empty(inputs, m, n), "grad_input": _empty(inputs, m, h),
            "grad_ln_weight": _fp32_zeros(inputs, h), "grad_ln_bias": _fp32_zeros(inputs, h),
            "grad_linear_weight": _fp32_zeros(inputs, n, h), "grad_linear_bias": _fp32_zeros(inputs, n)}


def _launch_backward(k, inputs: dict, out: dict, case: Case) -> dict:
    m, h, n = _sizes(inputs)
    _launch_fused_forward(k, inputs, out["output"], case)
    k.ln_linear_bwd_kernel[(m,)](inputs["x"], inputs["gamma"], inputs["beta"], inputs["w"], inputs["dy"],
                                 out["grad_input"], out["grad_ln_weight"], out["grad_ln_bias"],
                                 out["grad_linear_weight"], out["grad_linear_bias"], h, n, inputs["eps"],
                                 BLOCK_H=case.params["block_h"], BLOCK_N=MIN_DOT_BLOCK)
    return out


def _bench_cases() -> list[Case]:
    return [_case(f"M=4096, H=N={h}", (4096, h), h, gpu_only=True, dtype=dtype)
            for dtype in ("float32", "bfloat16") for h in (1024, 4096)]


def _traffic(inputs: dict, case: Case) -> float:
    """Bytes a fused forward + backward must move at least: x twice (forward, backward), W twice,
    y and dx written, dy read, dW written (fp32); the small vectors are negligible."""
    m, h, n = _sizes(inputs)
    size = inputs["x"].element_size()
    return size * (3 * m * h + 2 * n * h + 2 * m * n) + 4 * n * h


def _flops(inputs: dict, case: Case) -> float:
    m, h, n = _sizes(inputs)
    return 3 * 2.0 * m * n * h  # y = z W^T, dz = dy W, dW = dy^T z


def _torch_step(inputs: dict, case: Case, wrap):
    """The same work in PyTorch: LayerNorm + Linear forward through `wrap` (torch.compile for the
    compiled column, so its backward is compiled too), then autograd's backward."""
    import torch
    import torch.nn.functional as F
    leaves = [inputs[k].detach().requires_grad_() for k in ("x", "gamma", "beta", "w", "bias")]
    dy = inputs["dy"]
    forward = wrap(lambda x, gamma, beta, w, bias: F.linear(F.layer_norm(x, (x.shape[-1],), gamma, beta, EPS),
                                                            w, bias))

    def step():
        return torch.autograd.grad(forward(*leaves), leaves, dy)
    return step


MASK_HINT = ("padded lanes leaked into the result: lanes at or past H load 0 (or garbage), and 0 - mean "
             "is not 0. Mask them out of the variance: diff = tl.where(cols < H, x - mean, 0.0).")

PUZZLE = Puzzle(
    number=22,
    slug="p22_layernorm_linear",
    title="LayerNorm + Linear",
    parts=(
        Part("unfused", "Unfused Forward", ("layernorm_fwd_kernel",), (Z, Y), _allocate_unfused, _launch_unfused),
        Part("fused", "Fused Forward", ("ln_linear_fwd_kernel",), (Y,), _allocate_fused, _launch_fused),
        Part("backward", "Backward Pass", ("ln_linear_fwd_kernel", "ln_linear_bwd_kernel"), (Y,) + GRADS,
             _allocate_backward, _launch_backward),
    ),
    cases=cases,
    make_inputs=make_inputs,
    reference=reference,
    tolerance=tolerance,
    patterns=(
        Pattern("jacobian_diagonal", cause="formula", hint=
                "dx matches the element-wise 'Jacobian diagonal' formula dz*gamma*rstd*(1 - 1/H - x_hat^2/H): "
                "the mean and variance cross terms are missing. Every x in the row moves mean and variance, "
                "so dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat)) with g = dz * gamma."),
        Pattern("unbiased_variance", cause="formula", hint=
                "matches LayerNorm with the unbiased variance (divided by H - 1): LayerNorm divides by H."),
        Pattern("eps_outside_sqrt", cause="formula", hint=
                "matches rstd = 1 / (sqrt(var) + eps): eps belongs inside the square root, "
                "rstd = 1 / sqrt(var + eps). It only shows when the variance is as small as eps."),
        Pattern("variance_not_centred", cause="formula", hint=
                "matches the variance taken around 0, the mean of x^2: each lane's square must be of its "
                "distance from the mean, diff = x - mean (masked), var = sum(diff * diff) / H."),
        Pattern("w_transposed", cause="address", hint=
                "matches W read transposed: W is [N, H] (PyTorch Linear layout), so W[n, h] is at "
                "w_ptr + n * H + h."),
        *(Pattern(f"padded_lanes_{b}", MASK_HINT, "fill") for b in (8, 16, 32, 64, 128, 256, 512, 1024)),
    ),
    bench=Bench(part="backward", cases=_bench_cases, traffic=_traffic, torch=_torch_step, flops=_flops),
    skill="fusion: LayerNorm in a matmul's prologue; a fused backward that accumulates four parameter "
          "gradients with atomics",
    chapter="LayerNorm + Linear",
    summary_patterns=(
        SummaryPattern("only cases whose hidden size H is not a power of two fail: check the masks "
                       "(cols < H, not cols < BLOCK_H) and keep padded lanes out of sums.",
                       lambda c: "non_pow2" in c.tags, candidates=("mask", "fill")),
        SummaryPattern("only rows wider than one block fail: loop over the row in BLOCK_H chunks "
                       "(for start in range(0, H, BLOCK_H)) in every pass, statistics included, each sum carried from one "
                       "chunk to the next.",
                       lambda c: "wide" in c.tags, candidates=("loop", "accumulate")),
        SummaryPattern("only cases whose mean is far from 0 compared with their spread fail: "
                       "mean(x^2) - mean(x)^2 cancels catastrophically in fp32; compute the variance as "
                       "mean((x - mean)^2) in a second pass.",
                       lambda c: "cancellation" in c.tags, cause="stability"),
        SummaryPattern("every case with H != 8 fails: is the hidden size hard-coded? Use the H argument.",
                       lambda c: c.dims_in[-1] != 8, coverage=1.0, candidates=("hardcoded",)),
    ),
)
