"""How a short-form puzzle draws its input tensors: a shape by size names and a recipe per input.

    inputs={"x": randn("M H"), "gamma": randn("H", mean=1.0, std=0.5), "dy": randn("like y")}

Each recipe draws in float64 (int64 for integers) on the CPU from the case's seeded generator; the
checker rounds the result to the case's dtype where the kernels run. torch is imported only inside
the draws (a spec loads without it).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class TensorInput:
    """A tensor input drawn per case: `shape` names sizes ("M N"), or "like y" for the shape of the
    reference's output y (upstream gradients)."""
    shape: str
    draw: Callable[..., Any]          # (generator, shape tuple, sizes) -> CPU tensor (float64 or int64)
    dtype: str = "float"              # "float": the case's dtype; else a torch dtype name ("int32")
    transposed: bool = False          # stored as its transpose and viewed back: a non-contiguous [M, K]
    note: str = ""                    # what it is, for the book (e.g. "mean 1000")

    @property
    def like(self) -> str | None:
        return self.shape.split()[1] if self.shape.startswith("like ") else None

    def names(self) -> list[str]:
        return [] if self.like else self.shape.split()


def randn(shape: str, mean: float = 0.0, std: float = 1.0, *, transposed: bool = False) -> TensorInput:
    """Normal values, mean + std * N(0, 1)."""
    def draw(gen, dims, sizes):
        import torch
        return mean + std * torch.randn(*dims, generator=gen, dtype=torch.float64)
    return TensorInput(shape, draw, transposed=transposed, note=f"mean {mean:g}, std {std:g}")


def uniform(shape: str, low: float, high: float) -> TensorInput:
    def draw(gen, dims, sizes):
        import torch
        return low + (high - low) * torch.rand(*dims, generator=gen, dtype=torch.float64)
    return TensorInput(shape, draw, note=f"uniform in [{low:g}, {high:g})")


def full(shape: str, value: float) -> TensorInput:
    """Every element the same: sums of equal shares expose lost and overwritten updates."""
    def draw(gen, dims, sizes):
        import torch
        return torch.full(dims, float(value), dtype=torch.float64)
    return TensorInput(shape, draw, note=f"all {value:g}")


SPREADS = {"late": "the last element of each row {gap:g} above the rest",
           "early": "the first element of each row {gap:g} above the rest",
           "low_first": "the first half of each row {gap:g} below the rest"}


def spread_rows(shape: str, kind: str, gap: float = 200.0) -> TensorInput:
    """randn rows whose values spread wider than exp's range (fp32 exp overflows past 88.7 and
    underflows below −103): a softmax shifted by anything but the row's running max (the row's
    mean, the first block's max, a max not updated block by block) overflows or loses the row.
    kind: "late" (the max arrives in the last block), "early" (in the first), "low_first" (the
    first half of the row far below the rest: the first block's max is far below the row's)."""
    if kind not in SPREADS:
        raise ValueError(f"spread_rows: kind {kind!r}, one of {sorted(SPREADS)}")

    def draw(gen, dims, sizes):
        import torch
        x = torch.randn(*dims, generator=gen, dtype=torch.float64)
        if kind == "late":
            x[..., -1] = x.max(-1).values + gap
        elif kind == "early":
            x[..., 0] = x.max(-1).values + gap
        else:
            x[..., : dims[-1] // 2] -= gap
        return x
    return TensorInput(shape, draw, note=SPREADS[kind].format(gap=gap))


def randint(shape: str, low: int | str, high: int | str, *, dtype: str = "int32") -> TensorInput:
    """Integers in [low, high); a bound may name a size ("V")."""
    def draw(gen, dims, sizes):
        import torch
        lo, hi = (sizes[b] if isinstance(b, str) else b for b in (low, high))
        return torch.randint(lo, hi, dims, generator=gen, dtype=torch.int64)
    return TensorInput(shape, draw, dtype=dtype, note=f"integers in [{low}, {high})")


def custom(shape: str, fn: Callable[..., Any], *, dtype: str = "float", note: str = "") -> TensorInput:
    """fn(generator, shape tuple, sizes) -> a CPU tensor (float64 values, or int64 for integers)."""
    return TensorInput(shape, fn, dtype=dtype, note=note)


def identical_rows(shape: str, *, step: float = 0.37, period: float = 1.1, offset: float = 0.0) -> TensorInput:
    """Every row the same, column j holding step·j mod period + offset: values whose ratios are not
    simple, so that equal shares summed across rows expose a lost or an overwritten update (and no
    random draw: the generator is left as it was)."""
    def draw(gen, dims, sizes):
        import torch
        return (step * torch.arange(dims[-1], dtype=torch.float64) % period + offset).expand(dims).clone()
    return TensorInput(shape, draw, note=f"identical rows ({step:g}·j mod {period:g} + {offset:g})")
