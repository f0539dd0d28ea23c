"""The book's equations as code: one place, used by the chapters and by tests/test_book_math.py.

Every display equation in chapters 3-7 carries a MyST label (``$$ ... $$ (eq-...)``), and
``EQUATIONS`` below maps each label to a check that evaluates the equation in float64 and
returns its largest absolute difference from ``torch.autograd``.  The tests assert that every
label in the chapters has a check and that every check passes, so the book cannot print an
equation that the code does not verify.

Shapes: x is [M, H] (rows = tokens, H = hidden size); gamma, beta are [H];
W is [N, H] (PyTorch Linear layout); b is [N]; y = z @ W.T + b is [M, N].
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch

EPS = 1e-5


# --------------------------------------------------------------------------------------------
# LayerNorm forward
# --------------------------------------------------------------------------------------------
class LNStats(NamedTuple):
    mean: torch.Tensor  # [M, 1]
    var: torch.Tensor  # [M, 1], biased: divide by H
    rstd: torch.Tensor  # [M, 1], 1 / sqrt(var + eps)
    xhat: torch.Tensor  # [M, H]


def ln_stats(x: torch.Tensor, eps: float = EPS) -> LNStats:
    """mu = mean(x), sigma^2 = mean((x - mu)^2), rstd = 1/sqrt(sigma^2 + eps), xhat = (x - mu) rstd."""
    H = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / H
    var = ((x - mean) ** 2).sum(-1, keepdim=True) / H
    rstd = 1.0 / torch.sqrt(var + eps)
    return LNStats(mean, var, rstd, (x - mean) * rstd)


def layernorm(x, gamma, beta, eps: float = EPS):
    """z = gamma * xhat + beta."""
    return gamma * ln_stats(x, eps).xhat + beta


def variance_one_pass(x: torch.Tensor) -> torch.Tensor:
    """E[x^2] - E[x]^2: algebraically the variance, numerically fragile (shown in chapter 3)."""
    return (x * x).mean(-1, keepdim=True) - x.mean(-1, keepdim=True) ** 2


def variance_with_leaked_padding(x: torch.Tensor, block: int) -> torch.Tensor:
    """The variance a kernel computes when the BLOCK - H padded lanes (loaded as 0) are not
    masked before squaring: each contributes (0 - mu)^2 to the sum, which is still divided by H."""
    H = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / H
    return (((x - mean) ** 2).sum(-1, keepdim=True) + (block - H) * mean**2) / H


# --------------------------------------------------------------------------------------------
# LayerNorm backward
# --------------------------------------------------------------------------------------------
def ln_dx(dz, x, gamma, eps: float = EPS):
    """The full vector-Jacobian product: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dz * gamma."""
    s = ln_stats(x, eps)
    g = dz * gamma
    return s.rstd * (g - g.mean(-1, keepdim=True) - s.xhat * (g * s.xhat).mean(-1, keepdim=True))


def ln_dx_diagonal(dz, x, gamma, eps: float = EPS):
    """WRONG on purpose: only the diagonal of the Jacobian,
    dz * gamma * rstd * (1 - 1/H - (x - mu)^2 / (H (sigma^2 + eps)))."""
    H = x.shape[-1]
    s = ln_stats(x, eps)
    return dz * gamma * s.rstd * (1 - 1 / H - (x - s.mean) ** 2 / (H * (s.var + eps)))


def ln_jacobian_row(x_row, gamma, eps: float = EPS):
    """The H x H Jacobian dz_j / dx_i of one row (entry [j, i]):
    gamma_j * rstd * (delta_ij - 1/H - xhat_i xhat_j / H)."""
    H = x_row.shape[-1]
    s = ln_stats(x_row[None, :], eps)
    xh = s.xhat[0]
    eye = torch.eye(H, dtype=x_row.dtype)
    return gamma[:, None] * s.rstd[0] * (eye - 1.0 / H - torch.outer(xh, xh) / H)


def ln_dgamma(dz, x, eps: float = EPS):
    """dgamma = sum over rows of dz * xhat."""
    return (dz * ln_stats(x, eps).xhat).sum(0)


def ln_dbeta(dz):
    """dbeta = sum over rows of dz."""
    return dz.sum(0)


# --------------------------------------------------------------------------------------------
# Linear, and the fused LayerNorm + Linear
# --------------------------------------------------------------------------------------------
def linear(z, W, b):
    """y = z W^T + b."""
    return z @ W.T + b


def linear_dz(dy, W):
    """dz = dy W (the gradient reaching the Linear's input)."""
    return dy @ W


def linear_dW(dy, z):
    """dW = dy^T z."""
    return dy.T @ z


def linear_db(dy):
    """db = sum over rows of dy."""
    return dy.sum(0)


def fused_forward(x, gamma, beta, W, b, eps: float = EPS):
    return linear(layernorm(x, gamma, beta, eps), W, b)


def fused_backward(dy, x, gamma, beta, W, b, eps: float = EPS) -> dict:
    """All five gradients of y = LayerNorm(x) W^T + b, by the chain rule through z."""
    z = layernorm(x, gamma, beta, eps)
    dz = linear_dz(dy, W)
    return {
        "dx": ln_dx(dz, x, gamma, eps),
        "dgamma": ln_dgamma(dz, x, eps),
        "dbeta": ln_dbeta(dz),
        "dW": linear_dW(dy, z),
        "db": linear_db(dy),
    }


# --------------------------------------------------------------------------------------------
# Traffic model for chapter 4
# --------------------------------------------------------------------------------------------
def traffic_bytes(M, H, N, elem=2, fused=False) -> dict:
    """Bytes moved to and from global memory by LayerNorm then Linear, separately or fused.

    Each kernel is assumed to read each input once and write each output once (the ideal;
    tiling re-reads make real numbers larger).  Statistics (mean, rstd) are fp32.
    """
    x, z, y = M * H * elem, M * H * elem, M * N * elem
    params_ln, params_lin = 2 * H * elem, (N * H + N) * elem
    if fused:
        return {"read x": x, "read gamma, beta, W, b": params_ln + params_lin, "write y": y}
    return {
        "LN: read x": x,
        "LN: read gamma, beta": params_ln,
        "LN: write z": z,
        "Linear: read z": z,
        "Linear: read W, b": params_lin,
        "Linear: write y": y,
    }


# --------------------------------------------------------------------------------------------
# Checks against autograd, one per labelled equation
# --------------------------------------------------------------------------------------------
def make_inputs(M=4, H=8, N=6, seed=0, dtype=torch.float64):
    """Random float64 inputs; gamma and beta are not 1 and 0, so every term matters."""
    g = torch.Generator().manual_seed(seed)

    def r(*shape, scale=1.0, shift=0.0):
        return (torch.randn(*shape, generator=g, dtype=dtype) * scale + shift)

    return {
        "x": r(M, H, scale=2.0, shift=0.5),
        "gamma": r(H, scale=0.5, shift=1.0),
        "beta": r(H, scale=0.5),
        "W": r(N, H, scale=H**-0.5),
        "b": r(N, scale=0.1),
        "dy": r(M, N),
        "dz": r(M, H),
    }


def _leaf(t):
    return t.detach().clone().requires_grad_(True)


def autograd_layernorm(x, gamma, beta, dz, eps: float = EPS):
    """torch's own LayerNorm, and its gradients for the upstream gradient dz."""
    x, gamma, beta = _leaf(x), _leaf(gamma), _leaf(beta)
    z = torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps)
    z.backward(dz)
    return {"z": z.detach(), "dx": x.grad, "dgamma": gamma.grad, "dbeta": beta.grad}


def autograd_linear(z, W, b, dy):
    z, W, b = _leaf(z), _leaf(W), _leaf(b)
    y = torch.nn.functional.linear(z, W, b)
    y.backward(dy)
    return {"y": y.detach(), "dz": z.grad, "dW": W.grad, "db": b.grad}


def autograd_fused(x, gamma, beta, W, b, dy, eps: float = EPS):
    x, gamma, beta, W, b = (_leaf(t) for t in (x, gamma, beta, W, b))
    z = torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, eps)
    y = torch.nn.functional.linear(z, W, b)
    y.backward(dy)
    return {"y": y.detach(), "dx": x.grad, "dgamma": gamma.grad, "dbeta": beta.grad, "dW": W.grad,
            "db": b.grad}


def _err(a, b) -> float:
    return (a - b).abs().max().item()


def check_ln_mean(i):
    return _err(ln_stats(i["x"]).mean[:, 0], i["x"].mean(-1))


def check_ln_var(i):
    return _err(ln_stats(i["x"]).var[:, 0], i["x"].var(-1, unbiased=False))


def check_ln_xhat(i):
    ref = torch.nn.functional.layer_norm(i["x"], (i["x"].shape[-1],), eps=EPS)
    return _err(ln_stats(i["x"]).xhat, ref)


def check_ln_forward(i):
    return _err(layernorm(i["x"], i["gamma"], i["beta"]),
                autograd_layernorm(i["x"], i["gamma"], i["beta"], i["dz"])["z"])


def check_ln_dx(i):
    return _err(ln_dx(i["dz"], i["x"], i["gamma"]),
                autograd_layernorm(i["x"], i["gamma"], i["beta"], i["dz"])["dx"])


def check_ln_jacobian(i):
    x0 = i["x"][0]
    J = torch.autograd.functional.jacobian(
        lambda r: torch.nn.functional.layer_norm(r, (r.shape[-1],), i["gamma"], i["beta"], EPS), x0)
    return _err(ln_jacobian_row(x0, i["gamma"]), J)


def check_ln_dgamma(i):
    return _err(ln_dgamma(i["dz"], i["x"]),
                autograd_layernorm(i["x"], i["gamma"], i["beta"], i["dz"])["dgamma"])


def check_ln_dbeta(i):
    return _err(ln_dbeta(i["dz"]), autograd_layernorm(i["x"], i["gamma"], i["beta"], i["dz"])["dbeta"])


def check_linear_forward(i):
    z = layernorm(i["x"], i["gamma"], i["beta"])
    return _err(linear(z, i["W"], i["b"]), autograd_linear(z, i["W"], i["b"], i["dy"])["y"])


def check_linear_dz(i):
    z = layernorm(i["x"], i["gamma"], i["beta"])
    return _err(linear_dz(i["dy"], i["W"]), autograd_linear(z, i["W"], i["b"], i["dy"])["dz"])


def check_linear_dW(i):
    z = layernorm(i["x"], i["gamma"], i["beta"])
    return _err(linear_dW(i["dy"], z), autograd_linear(z, i["W"], i["b"], i["dy"])["dW"])


def check_linear_db(i):
    z = layernorm(i["x"], i["gamma"], i["beta"])
    return _err(linear_db(i["dy"]), autograd_linear(z, i["W"], i["b"], i["dy"])["db"])


def check_fused_forward(i):
    ref = autograd_fused(i["x"], i["gamma"], i["beta"], i["W"], i["b"], i["dy"])["y"]
    return _err(fused_forward(i["x"], i["gamma"], i["beta"], i["W"], i["b"]), ref)


def check_fused_backward(i):
    ref = autograd_fused(i["x"], i["gamma"], i["beta"], i["W"], i["b"], i["dy"])
    ours = fused_backward(i["dy"], i["x"], i["gamma"], i["beta"], i["W"], i["b"])
    return max(_err(ours[k], ref[k]) for k in ours)


def check_sum_of_row_shares(i):
    """dgamma as a sum of per-row contributions, added in any order (chapter 7)."""
    shares = i["dz"] * ln_stats(i["x"]).xhat  # [M, H]: row r's share
    perm = torch.randperm(shares.shape[0], generator=torch.Generator().manual_seed(1))
    return _err(shares[perm].sum(0), autograd_layernorm(i["x"], i["gamma"], i["beta"], i["dz"])["dgamma"])


def check_ln_var_leaked(i, block=None):
    """The leaked-padding variance formula against the computation it describes: pad the row
    with zeros to `block` lanes, subtract the mean, square every lane, divide by H."""
    x = i["x"]
    H = x.shape[-1]
    block = block or 1 << H.bit_length()  # a power of two > H: some lanes are padding
    padded = torch.cat([x, torch.zeros(x.shape[0], block - H, dtype=x.dtype)], dim=-1)
    mean = padded.sum(-1, keepdim=True) / H
    direct = ((padded - mean) ** 2).sum(-1) / H
    return _err(variance_with_leaked_padding(x, block)[:, 0], direct)


def _jac_row(fn, i):
    """Jacobian of fn(row) -> tensor at the first row of x, by autograd."""
    return torch.autograd.functional.jacobian(fn, i["x"][0])


def check_ln_dmu(i):
    H = i["x"].shape[-1]
    J = _jac_row(lambda r: r.mean(), i)
    return _err(torch.full((H,), 1.0 / H, dtype=J.dtype), J)


def check_ln_dvar(i):
    r = i["x"][0]
    J = _jac_row(lambda r: r.var(unbiased=False), i)
    return _err(2 * (r - r.mean()) / r.shape[-1], J)


def check_ln_drstd(i):
    r = i["x"][0]
    s = ln_stats(r[None, :])
    J = _jac_row(lambda r: 1.0 / torch.sqrt(r.var(unbiased=False) + EPS), i)
    return _err(-s.rstd[0, 0] ** 3 * (r - s.mean[0, 0]) / r.shape[-1], J)


def check_ln_dxhat(i):
    """dxhat_j/dx_i = rstd (delta_ij - 1/H - xhat_i xhat_j / H): the Jacobian with gamma = 1."""
    r = i["x"][0]
    H = r.shape[-1]
    J = _jac_row(lambda r: torch.nn.functional.layer_norm(r, (H,), eps=EPS), i)
    return _err(ln_jacobian_row(r, torch.ones(H, dtype=r.dtype)), J)


def check_ln_dx_offdiag(i):
    """What the diagonal formula leaves out: -(rstd/H) (sum_{j!=i} g_j + xhat_i sum_{j!=i} g_j xhat_j)."""
    s = ln_stats(i["x"])
    H = i["x"].shape[-1]
    g = i["dz"] * i["gamma"]
    others_g = g.sum(-1, keepdim=True) - g
    others_gx = (g * s.xhat).sum(-1, keepdim=True) - g * s.xhat
    formula = -(s.rstd / H) * (others_g + s.xhat * others_gx)
    ref = autograd_layernorm(i["x"], i["gamma"], i["beta"], i["dz"])["dx"]
    return _err(formula, ref - ln_dx_diagonal(i["dz"], i["x"], i["gamma"]))


def diagonal_trap_error(i) -> float:
    """How far the Jacobian-diagonal formula is from autograd (large: it is wrong)."""
    return _err(ln_dx_diagonal(i["dz"], i["x"], i["gamma"]),
                autograd_layernorm(i["x"], i["gamma"], i["beta"], i["dz"])["dx"])


# --------------------------------------------------------------------------------------------
# Attention (chapter 9): q = x [M, H] (M queries, head size H), keys and values [N, H], dO = dz
# --------------------------------------------------------------------------------------------
def attention_inputs(i) -> dict:
    """One head from the shared inputs: q = x, k = W·√H (scores of order 1), v a fixed function of W
    (any values serve an identity), dO = dz."""
    W = i["W"]
    return {"q": i["x"], "k": W * W.shape[1] ** 0.5, "v": torch.cos(3.0 * W) + W.roll(1, 1), "do": i["dz"]}


def attention_scores(q, k, causal: bool):
    s = q @ k.T * q.shape[-1] ** -0.5
    if causal:  # query i sees keys j <= i (top-left aligned, as PyTorch's is_causal)
        s = s.masked_fill(torch.ones(s.shape, dtype=torch.bool).triu(1), float("-inf"))
    return s


def autograd_attention(q, k, v, do, causal: bool) -> dict:
    """PyTorch's own attention (F.scaled_dot_product_attention) and its gradients."""
    q, k, v = _leaf(q), _leaf(k), _leaf(v)
    o = torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]
    o.backward(do)
    return {"o": o.detach(), "dq": q.grad, "dk": k.grad, "dv": v.grad}


def attention_backward(q, k, v, do, causal: bool) -> dict:
    """The chapter's equations, one after the other."""
    P = attention_scores(q, k, causal).softmax(-1)
    o = P @ v
    dv = P.T @ do                                  # eq-attn-dv
    dp = do @ v.T                                  # eq-attn-dp
    delta = (do * o).sum(-1, keepdim=True)         # eq-attn-delta
    ds = P * (dp - delta)                          # eq-attn-ds
    scale = q.shape[-1] ** -0.5
    return {"P": P, "o": o, "dp": dp, "delta": delta, "ds": ds, "dv": dv, "dq": scale * ds @ k,
            "dk": scale * ds.T @ q}


def _both_masks(check):
    def run(i) -> float:
        a = attention_inputs(i)
        return max(check(a, causal) for causal in (False, True))
    return run


def _check_attention_forward(a, causal):
    mine = attention_backward(a["q"], a["k"], a["v"], a["do"], causal)["o"]
    return _err(mine, autograd_attention(a["q"], a["k"], a["v"], a["do"], causal)["o"])


def _check_attention_grad(name):
    def check(a, causal):
        mine = attention_backward(a["q"], a["k"], a["v"], a["do"], causal)[name]
        return _err(mine, autograd_attention(a["q"], a["k"], a["v"], a["do"], causal)[name])
    return check


def _check_attention_dp(a, causal):
    """dP = dO Vᵀ: the gradient of o = P V with respect to P, by autograd."""
    P = _leaf(attention_scores(a["q"], a["k"], causal).softmax(-1))
    (P @ a["v"]).backward(a["do"])
    return _err(attention_backward(a["q"], a["k"], a["v"], a["do"], causal)["dp"], P.grad)


def _check_attention_ds(a, causal):
    """dS = P ∘ (dP − Δ): the gradient with respect to the scores s, by autograd through the softmax."""
    s = _leaf(attention_scores(a["q"], a["k"], causal))
    (s.softmax(-1) @ a["v"]).backward(a["do"])
    return _err(attention_backward(a["q"], a["k"], a["v"], a["do"], causal)["ds"], s.grad.nan_to_num(0.0))


def _check_attention_delta(a, causal):
    """Δ_i = Σ_j P_ij dP_ij equals dO_i · O_i."""
    r = attention_backward(a["q"], a["k"], a["v"], a["do"], causal)
    return _err((r["P"] * r["dp"]).sum(-1, keepdim=True), r["delta"])


def _check_attention_lse(a, causal):
    """P_ij = exp(s_ij − lse_i) with lse_i = log Σ_j exp(s_ij): the softmax from its logsumexp."""
    s = attention_scores(a["q"], a["k"], causal)
    return _err((s - s.logsumexp(-1, keepdim=True)).exp(), s.softmax(-1))


class Equation(NamedTuple):
    chapter: str
    what: str
    check: Callable[[dict], float]


# label (as written in the chapter) -> what it states, and how it is checked
EQUATIONS: dict[str, Equation] = {
    "eq-ln-mean": Equation("03", "mu = mean of a row", check_ln_mean),
    "eq-ln-var": Equation("03", "sigma^2 = biased variance of a row", check_ln_var),
    "eq-ln-xhat": Equation("03", "xhat = (x - mu) rstd", check_ln_xhat),
    "eq-ln-forward": Equation("03", "z = gamma xhat + beta", check_ln_forward),
    "eq-ln-var-leaked": Equation("03", "variance with BLOCK - H padded lanes leaking in",
                                 check_ln_var_leaked),
    "eq-linear-forward": Equation("04", "y = z W^T + b", check_linear_forward),
    "eq-fused-forward": Equation("04", "y = LayerNorm(x) W^T + b", check_fused_forward),
    "eq-ln-dmu": Equation("05", "dmu/dx_i = 1/H", check_ln_dmu),
    "eq-ln-dvar": Equation("05", "dsigma^2/dx_i = 2 (x_i - mu) / H", check_ln_dvar),
    "eq-ln-drstd": Equation("05", "drstd/dx_i = -rstd^3 (x_i - mu) / H", check_ln_drstd),
    "eq-ln-dxhat": Equation("05", "dxhat_j/dx_i = rstd (delta_ij - 1/H - xhat_i xhat_j / H)",
                            check_ln_dxhat),
    "eq-ln-jacobian": Equation("05", "dz_j/dx_i = gamma_j rstd (delta_ij - 1/H - xhat_i xhat_j / H)",
                               check_ln_jacobian),
    "eq-ln-dx": Equation("05", "dx = rstd (g - mean(g) - xhat mean(g xhat))", check_ln_dx),
    "eq-ln-dx-offdiag": Equation("05", "what the diagonal-only formula leaves out", check_ln_dx_offdiag),
    "eq-ln-dgamma": Equation("05", "dgamma = sum_rows dz xhat", check_ln_dgamma),
    "eq-ln-dbeta": Equation("05", "dbeta = sum_rows dz", check_ln_dbeta),
    "eq-linear-dz": Equation("06", "dz = dy W", check_linear_dz),
    "eq-linear-dW": Equation("06", "dW = dy^T z", check_linear_dW),
    "eq-linear-db": Equation("06", "db = sum_rows dy", check_linear_db),
    "eq-fused-backward": Equation("06", "the chain rule through z", check_fused_backward),
    "eq-row-shares": Equation("07", "a parameter gradient is a sum of row shares", check_sum_of_row_shares),
    "eq-attn-forward": Equation("09", "o = softmax(scale q k^T) v", _both_masks(_check_attention_forward)),
    "eq-attn-lse": Equation("09", "P = exp(s - lse)", _both_masks(_check_attention_lse)),
    "eq-attn-dv": Equation("09", "dV = P^T dO", _both_masks(_check_attention_grad("dv"))),
    "eq-attn-dp": Equation("09", "dP = dO V^T", _both_masks(_check_attention_dp)),
    "eq-attn-ds": Equation("09", "dS = P o (dP - Delta)", _both_masks(_check_attention_ds)),
    "eq-attn-delta": Equation("09", "Delta_i = sum_j P_ij dP_ij = dO_i . O_i", _both_masks(_check_attention_delta)),
    "eq-attn-dq": Equation("09", "dQ = scale dS K", _both_masks(_check_attention_grad("dq"))),
    "eq-attn-dk": Equation("09", "dK = scale dS^T Q", _both_masks(_check_attention_grad("dk"))),
}

# Labels of equations the book shows in order to prove them WRONG (checked to be far off).
WRONG_EQUATIONS: dict[str, Callable[[dict], float]] = {
    "eq-ln-dx-diagonal": diagonal_trap_error,
}
