"""p28's page: which of the gradient's tiles Cut Cross-Entropy's filter keeps, computed when the page is
built, on the CPU, from logits drawn as each kind of input is built to give them. The GPU study
(research/linear_ce/recompute.py) builds its peaked inputs from peaked_plan and measures the same
kinds (FAMILIES) with the same threshold (FILTER_EPS): it imports them from here."""
import math

import torch

# Cut Cross-Entropy's default threshold for bf16: bf16's machine epsilon, 2^-7, over 32
FILTER_EPS = 2.0 ** -12


def peaked_plan(N: int, V: int, plausible: int, zipf: bool, device: str = "cuda", bulk_mass: float = 0.01,
                generator: "torch.Generator | None" = None):
    """Rows whose softmax a trained model might give: per row `plausible` tokens (the target first,
    drawn uniformly or, with zipf, with probability ∝ 1 / (id + 1), as in a vocabulary ordered by
    frequency), the target's logit L and the others' L − 1; the rest of the vocabulary's logits about
    N(0, 1), carrying about bulk_mass of the row's softmax. Returns the tokens [N, plausible] and
    their logits [plausible]."""
    weights = 1.0 / torch.arange(1, V + 1, device=device) if zipf else torch.ones(V, device=device)
    tokens = torch.multinomial(weights, N * plausible, replacement=True, generator=generator).reshape(N, plausible)
    bulk = V * math.exp(0.5)  # the N(0, 1) logits' exp, summed
    top = math.log((1 - bulk_mass) / bulk_mass * bulk / (1 + (plausible - 1) * math.exp(-1.0)))
    return tokens, torch.tensor([top] + [top - 1.0] * (plausible - 1), device=device)


FAMILIES = {"benchmark's (random)": None, "peaked: 8 tokens, Zipf": (8, True),
            "peaked: target alone, Zipf": (1, True), "peaked: target alone, uniform": (1, False)}


def kept_shares(rows: int, V: int, H: int, TILE_M: int = 128, TILE_N: int = 256, eps: float = FILTER_EPS) -> dict:
    """Per kind of inputs (FAMILIES), the share of the gradient's [TILE_M, TILE_N] tiles the filter
    keeps, from `rows` rows of logits drawn as the inputs are built to give them (the benchmark's
    N(0, 0.02²·H); peaked_plan's), on the CPU: what the filter skips depends on the logits alone."""
    gen = torch.Generator().manual_seed(0)
    shares = {}
    for name, plan in FAMILIES.items():
        if plan is None:
            z = 0.02 * H ** 0.5 * torch.randn(rows, V, generator=gen)
            target = torch.randint(0, V, (rows,), generator=gen)
        else:
            z = torch.randn(rows, V, generator=gen)
            tokens, logits = peaked_plan(rows, V, *plan, device="cpu", generator=gen)
            z.scatter_(1, tokens, logits.expand(rows, -1).contiguous())
            target = tokens[:, 0]
        d = torch.softmax(z, dim=1)
        d[torch.arange(rows), target] -= 1.0
        tiles_n = -(-V // TILE_N)
        d = torch.nn.functional.pad(d.abs(), (0, tiles_n * TILE_N - V))
        largest = d.reshape(rows // TILE_M, TILE_M, tiles_n, TILE_N).amax(dim=(1, 3))
        shares[name] = float((largest >= eps).double().mean())
    return shares
