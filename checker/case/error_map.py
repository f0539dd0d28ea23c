"""An output's error as a picture for the notebook's plot: |out - ref| / tolerance, pooled."""
from __future__ import annotations

import torch

MAX_MAP = 64  # error maps for plots are pooled down to at most MAX_MAP x MAX_MAP


def error_map(got: torch.Tensor, ref: torch.Tensor, allowed: float) -> dict:
    """|out - ref| / tolerance for the notebook's plot, max-pooled to at most MAX_MAP cells a side;
    rows and cols are the output's own (a 1-D output is one row), so the plot can say if it pooled."""
    diff = (got.detach().double().cpu().reshape(ref.shape) - ref).abs() / max(allowed, 1e-30)
    diff = torch.nan_to_num(diff, nan=1e6, posinf=1e6)
    grid = diff.reshape(1, 1, 1, -1) if diff.dim() <= 1 else diff.reshape(1, 1, diff.shape[0], -1)
    rows, cols = grid.shape[2], grid.shape[3]
    side = (min(MAX_MAP, rows), min(MAX_MAP * (MAX_MAP if rows == 1 else 1), cols))
    pooled = torch.nn.functional.adaptive_max_pool2d(grid, side)
    drawn = {"grid": pooled[0, 0].tolist(), "rows": rows, "cols": cols}
    if ref.numel() == 1:  # a scalar (a loss): the plot writes its two values out instead of a 1x1 map
        drawn.update(got=float(got.detach().double().cpu().reshape(-1)[0]), expected=float(ref.reshape(-1)[0]))
    return drawn
