"""The cross-entropy family (p27, and p28 through its logits): the loss and its gradient as the pages
derive them, in float64, with the known bugs as flags; the digits a gradient loses; targets with
ignored rows and confident rows. torch is imported inside the functions.
"""
from checker.puzzle import custom

IGNORE = -100  # ignore_index as PyTorch's default and the statements have it: a row that adds nothing


def counted(target):
    """The rows that count: a target that is a class (0 <= t < V). Every case marks its ignored rows
    with its ignore_index, which is negative: -100, or -1 in the case launched again with
    IGNORE_INDEX = -1 (a kernel must compare with the argument it gets, not with -100 written in).
    So the float64 side needs no ignore_index of its own."""
    return target >= 0


def mean_loss(logits, target):
    """The puzzles' loss: the mean of the counted rows' losses, and 0 where no row counts (every
    target ignore_index). PyTorch's mean is 0 / 0 = NaN there; its gradient is 0 all the same. A
    batch of padding alone then adds nothing to a training step, instead of a NaN that spreads."""
    import torch.nn.functional as F
    import torch
    valid = counted(target)
    n = valid.sum().clamp(min=1)
    return F.cross_entropy(logits, torch.where(valid, target, IGNORE), ignore_index=IGNORE,
                           reduction="sum").reshape(1) / n


def ce(logits, target, dloss, *, pad: int = 0, rows=None, upstream: bool = True, sign: float = 1.0,
       round_p: bool = False, lse=None):
    """loss and dlogits as the page derives them, or with one known bug: `pad` phantom columns of
    logit 0 in the sum, the mean over `rows` instead of the counted ones, no upstream factor, the
    sign reversed, p rounded to bf16 before the − 1, or another logsumexp."""
    import torch
    valid = counted(target)
    n = torch.as_tensor(valid.sum() if rows is None else rows).clamp(min=1)  # none counted: 0 (mean_loss)
    if lse is None:
        lse = (logits.exp().sum(1) + pad).log() if pad else logits.logsumexp(1)
    safe = torch.where(valid, target, 0).long()
    x_t = logits.gather(1, safe[:, None])[:, 0]
    loss = torch.where(valid, lse - x_t, 0.0).sum() / n
    p = (logits - lse[:, None]).exp()
    one_hot = torch.zeros_like(p).scatter_(1, safe[:, None], 1.0) * valid[:, None]
    if round_p:
        p = p.to(torch.bfloat16).double()
    scale = (dloss if upstream else 1.0) / n
    return {"loss": loss.reshape(1), "dlogits": sign * (p - one_hot) * valid[:, None] * scale}


def padded_zero(logits, target, dloss, V, BLOCK_V):
    """Padded lanes load 0.0: each adds exp(0) = 1 (one phantom logit 0) to the row's sum. Where the
    phantoms swamp a row (its logits far below 0), every p is then 0, as many other bugs make it:
    there this formula says nothing, and gives the answer."""
    import torch
    pad = -V % BLOCK_V
    lse = logits.logsumexp(1)
    if pad:
        phantom = (logits.exp().sum(1) + pad).log()
        lse = torch.where(lse > phantom - 10.0, phantom, lse)
    return ce(logits, target, dloss, lse=lse)


def padded_rows_counted(logits, target, dloss, M, BLOCK_M):
    """The count's padded lanes load a real class (0, say): each counts as a row."""
    return ce(logits, target, dloss, rows=counted(target).sum() + (-M % BLOCK_M))


def digits_lost(logits, target, dloss) -> float:
    """The gradient's elements are differences of numbers of the size of dloss / n (p_target − 1) and
    its exponents are differences of logits (x − lse): it is exact to a few roundings of
    max(1, |logits|) · dloss / n, however small it is itself. A confident row's gradient is 1e-4 of
    that; this factor widens the tolerance by those roundings (1 for plain rows)."""
    import torch
    g = ce(logits, target, dloss)["dlogits"]
    rms = float(g.pow(2).mean().sqrt()) if g.numel() else 0.0
    n = max(int(counted(target).sum()), 1)
    unit = max(1.0, float(logits.abs().max())) * float(dloss.abs().max()) / n
    return max(1.0, unit / rms) if rms > 0 else 1.0


def every_target_ignored(rows: str = "M"):
    """Every target ignore_index: no row counts, and the loss and its gradient are 0 (mean_loss)."""
    def draw(gen, dims, sizes):
        import torch
        return torch.full(dims, sizes.get("IGNORE_INDEX", IGNORE), dtype=torch.int64)
    return custom(rows, draw, dtype="int32", note="every target ignore_index")


def with_ignored(every: int, rows: str = "M"):
    """Targets in [0, V), every `every`-th row (from row 1) set to ignore_index; `rows` names the size."""
    def draw(gen, dims, sizes):
        import torch
        target = torch.randint(0, sizes["V"], dims, generator=gen, dtype=torch.int64)
        target[1::every] = sizes.get("IGNORE_INDEX", IGNORE)
        return target
    return custom(rows, draw, dtype="int32", note=f"every {every}th row from row 1 ignore_index")


def confident_column(row: int, V: int) -> int:
    return (7 * row + 3) % V


def confident_target(rows: str = "M"):
    """Each row's target at its confident column; `rows` names the size (M in p27, N in p28)."""
    def draw(gen, dims, sizes):
        import torch
        return torch.tensor([confident_column(r, sizes["V"]) for r in range(dims[0])], dtype=torch.int64)
    return custom(rows, draw, dtype="int32", note="the confident column of each row")


# the summary hint of the cases with confident rows
CONFIDENT = ("only the cases with confident rows fail (the target's logit 10 above the rest, p_target = 1 − 1e-4): "
             "is p rounded to bfloat16 before the − 1, or is the loss or the sum kept in bfloat16? In bf16, "
             "1 − 1e-4 is 1.0, and the target's gradient vanishes. Keep p in fp32 through p − 1 and round once, "
             "at the store.")
