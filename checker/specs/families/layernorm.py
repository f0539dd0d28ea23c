"""LayerNorm's mathematics in float64, written once for the LayerNorm puzzles (p21-p26): the
reference, the row statistics, the closed-form backward the book derives, each row's share of the
parameter gradients, and what kernels with well-known bugs compute.

The checker's verdict uses autograd (`autograd_reference`, or a spec's own reference through
F.layer_norm); the closed forms evaluate the equations the pages print, tests assert the two agree,
and the bug variants evaluate the same formulas with one thing wrong, which is what a buggy kernel
computes. A wrong output that matches a variant earns that variant's hint.

torch is imported inside the functions: a spec that imports this module still loads without it.
"""
from __future__ import annotations

import math
from typing import Any

EPS = 1e-5

Tensors = dict  # name -> tensor


# called by parameter name (reference=, condition=): they take no eps, which is EPS for every puzzle here
def layernorm(x, gamma, beta) -> Tensors:
    """The reference of a LayerNorm puzzle: z = LayerNorm(x) (autograd differentiates it)."""
    import torch.nn.functional as F
    return {"z": F.layer_norm(x, (x.shape[-1],), gamma, beta, EPS)}


def layernorm_linear(x, gamma, beta, w, b) -> Tensors:
    """y = LayerNorm(x) Wᵀ + b: the reference of the fused LayerNorm + Linear step (p26)."""
    import torch.nn.functional as F
    return {"y": F.linear(F.layer_norm(x, (x.shape[-1],), gamma, beta, EPS), w, b)}


def centring_cost(x) -> float:
    """Digits that centring costs in fp32: max |row mean| / row spread (1 for centred data). A spec
    passes it as condition= (checker/puzzle/model.py Tolerance)."""
    return max(1.0, float((x.mean(-1).abs() / (x.var(-1, unbiased=False) + EPS).sqrt()).max()))


def autograd_reference(x, gamma, beta, w, bias, dy, eps: float) -> Tensors:
    """y = LayerNorm(x) @ W.T + bias and its gradients, by torch autograd in float64. x: [M, H]."""
    import torch.nn.functional as F
    leaves = [t.detach().double().requires_grad_() for t in (x, gamma, beta, w, bias)]
    x64, g64, b64, w64, bias64 = leaves
    z = F.layer_norm(x64, (x64.shape[-1],), g64, b64, eps)
    y = F.linear(z, w64, bias64)
    y.backward(dy.double())
    return {"z": z.detach(), "y": y.detach(), "dx": x64.grad, "dgamma": g64.grad, "dbeta": b64.grad,
            "dw": w64.grad, "dbias": bias64.grad}


def statistics(x, eps: float, *, unbiased: bool = False, eps_outside_sqrt: bool = False,
               padded_lanes: int = 0, centred: bool = True) -> tuple[Any, Any]:
    """Row mean and rstd, right by default; the flags reproduce four known bugs.

    padded_lanes: lanes past H whose 0 leaked into the variance as (0 - mean)^2.
    centred=False: the variance taken around 0, the mean of x^2 (the `- mean` left out of the
    squares). With as many padded lanes as H it is exactly what padded_lanes gives (H lanes of
    mean^2 add H * mean^2): declared, it makes the checker ask which of the two where both fit.
    """
    h = x.shape[-1]
    mean = x.mean(dim=-1, keepdim=True)
    sq = ((x - mean if centred else x) ** 2).sum(dim=-1, keepdim=True) + padded_lanes * mean ** 2
    var = sq / (h - 1 if unbiased else h)
    rstd = 1.0 / (var.sqrt() + eps) if eps_outside_sqrt else 1.0 / (var + eps).sqrt()
    return mean, rstd


def formulas(x, gamma, beta, w, bias, dy, mean, rstd, *, jacobian_diagonal: bool = False) -> Tensors:
    """The book's equations, chapter 3 to 6, with the statistics given.

    x_hat = (x - mean) rstd        z = gamma x_hat + beta        y = z W^T + bias
    dz = dy W        dW = dy^T z   dbias = sum_rows dy           (LayerNorm's own: layernorm_backward)
    """
    dz = dy @ w
    ln = layernorm_backward(x, gamma, beta, dz, mean, rstd, jacobian_diagonal=jacobian_diagonal)
    return {**ln, "y": ln["z"] @ w.T + bias, "dw": dy.T @ ln["z"], "dbias": dy.sum(0)}


def layernorm_backward(x, gamma, beta, dz, mean, rstd, *, jacobian_diagonal: bool = False) -> Tensors:
    """LayerNorm's forward and backward given dz, the gradient at its output (p21 has no Linear:
    its dz arrives as is, and an [H, H] identity in its place would cost three H^3 products).

    g = dz gamma
    dx = rstd (g - mean(g) - x_hat mean(g x_hat))          (the full vector-Jacobian product)
    dgamma = sum_rows dz x_hat   dbeta = sum_rows dz
    jacobian_diagonal=True uses the element-wise trap dx = g rstd (1 - 1/H - x_hat^2 / H).
    """
    h = x.shape[-1]
    x_hat = (x - mean) * rstd
    g = dz * gamma
    if jacobian_diagonal:
        dx = g * rstd * (1 - 1 / h - x_hat ** 2 / h)
    else:
        dx = rstd * (g - g.mean(dim=-1, keepdim=True) - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
    return {"z": gamma * x_hat + beta, "dx": dx, "dgamma": (dz * x_hat).sum(0), "dbeta": dz.sum(0)}


def contributions(x, gamma, beta, w, dy, mean, rstd) -> Tensors:
    """Each row's share of the accumulated gradients: [M, ...]; the gradients are their sums."""
    x_hat = (x - mean) * rstd
    z = gamma * x_hat + beta
    dz = dy @ w
    return {"dgamma": dz * x_hat, "dbeta": dz, "dw": dy[:, :, None] * z[:, None, :], "dbias": dy}


# a variance bug whose rstd falls below this fraction of the right one predicts x_hat ~ 0 (z ~ beta)
COLLAPSED = 0.05


def padded_lane_count(h: int, block: int) -> int:
    return math.ceil(h / block) * block - h


VARIANTS = ("jacobian_diagonal", "unbiased_variance", "eps_outside_sqrt", "variance_not_centred", "w_transposed")


def bug_variant(name: str, x, gamma, beta, w, bias, dy, eps: float, blocks: tuple[int, ...]) -> Tensors | None:
    """What a kernel with the well-known bug `name` computes (one of VARIANTS, or padded_lanes_<block>
    for a block width in `blocks`), or None where it says nothing: a padded-lanes bug at a width that
    pads no lane or is not the case's, and a variance bug whose rstd is a small fraction of the right
    one in some row (padded lanes or an uncentred variance where the mean is 1000 times the spread):
    its x_hat is nearly 0 there, so its output is nearly beta, which any kernel that loses x_hat
    matches too.
    """
    mean, rstd = statistics(x, eps)

    def with_stats(**bug) -> Tensors | None:
        bug_mean, bug_rstd = statistics(x, eps, **bug)
        if float((bug_rstd / rstd).min()) < COLLAPSED:
            return None
        return formulas(x, gamma, beta, w, bias, dy, bug_mean, bug_rstd)

    h, n = x.shape[-1], w.shape[0]
    if name == "jacobian_diagonal":
        return formulas(x, gamma, beta, w, bias, dy, mean, rstd, jacobian_diagonal=True)
    if name == "unbiased_variance":
        return with_stats(unbiased=True)
    if name == "eps_outside_sqrt":
        return with_stats(eps_outside_sqrt=True)
    if name == "variance_not_centred":
        return with_stats(centred=False)
    if name == "w_transposed":
        # W read as if it were [H, N] row-major: element (n, h) comes from flat index h * N + n
        w_t = w.reshape(-1).reshape(h, n).T
        transposed = formulas(x, gamma, beta, w_t, bias, dy, mean, rstd)
        transposed["dw"] = transposed["dw"].T.reshape(n, h)
        return transposed
    block = int(name.removeprefix("padded_lanes_"))
    lanes = padded_lane_count(h, block)
    return with_stats(padded_lanes=lanes) if block in blocks and lanes else None


def bug_variants(x, gamma, beta, w, bias, dy, eps: float, blocks: tuple[int, ...]) -> dict[str, Tensors]:
    """Every variant that applies, by name (see bug_variant)."""
    names = [*VARIANTS, *(f"padded_lanes_{block}" for block in sorted(set(blocks)))]
    found = {name: bug_variant(name, x, gamma, beta, w, bias, dy, eps, blocks) for name in names}
    return {name: outputs for name, outputs in found.items() if outputs is not None}
