"""Pictures for the atomics part (puzzles 17 to 19): where each program adds, when the address is data.

Built on book/figures/base.py's helpers and colours; every function returns a matplotlib Figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from figures.base import MASKED, PAGE_IN, PALETTE, _cell, _finish
from figures.base import unit as cell_unit


def scatter_adds(index, n_targets: int, block: int, title: str | None = None, source: str = "x",
                 target: str = "hist", unit: str = "bin", counts: bool = True, program: str = "pid"):
    """Elements (top, one colour per program, padded lanes grey) and the targets they add into
    (bottom): a line from element i to target index[i]; `program` names the programs. Targets
    that several programs reach are outlined in black (a plain store races there); each target
    shows how many elements add into it."""
    index = [int(v) for v in index]
    n = len(index)
    programs = -(-n // block)
    width = programs * block
    gap = 0.6  # between programs, so that blocks read as blocks
    xs = [i + gap * (i // block) for i in range(width)]
    span = xs[-1] + 1
    tw = max(1.0, min(2.0, span / max(n_targets, 1) * 0.8))  # target cell width
    tx = [(span - n_targets * tw * 1.25) / 2 + t * tw * 1.25 for t in range(n_targets)]
    left, right = min(0.0, tx[0]), max(span, tx[-1] + tw)
    u = cell_unit(right - left + 1.8, 0.1, 0.36)
    fig, ax = plt.subplots(figsize=(u * (right - left + 1.8) + 0.1, 3.3))
    ty = 4.2
    writers: dict[int, set] = {}
    for i in range(width):
        p = i // block
        if i < n:
            color = PALETTE[p % len(PALETTE)]
            _cell(ax, xs[i], 0, color, str(index[i]))
            t = index[i]
            writers.setdefault(t, set()).add(p)
            ax.plot([xs[i] + 0.5, tx[t] + tw / 2], [1.0, ty], color=color, lw=0.8, alpha=0.7)
        else:
            _cell(ax, xs[i], 0, MASKED, "×")
    for p in range(programs):
        ax.text(xs[p * block] + block / 2, -0.35, f"{program} {p}", ha="center", va="bottom", fontsize=8,
                color=PALETTE[p % len(PALETTE)])
    hits = np.bincount(index, minlength=n_targets)
    for t in range(n_targets):
        shared = len(writers.get(t, ())) > 1
        ax.add_patch(plt.Rectangle((tx[t], ty), tw, 1.0, facecolor="white",
                                   edgecolor="black" if shared else "#BBBBBB", lw=1.8 if shared else 1.0))
        ax.text(tx[t] + tw / 2, ty + 0.5, str(hits[t]) if counts else "", ha="center", va="center", fontsize=8)
        ax.text(tx[t] + tw / 2, ty + 1.35, f"{t}", ha="center", va="center", fontsize=8, color="#555555")
    ax.text(-0.3, 0.5, source, ha="right", va="center", fontsize=9)
    ax.text(tx[0] - 0.3, ty + 0.5, target, ha="right", va="center", fontsize=9)
    _finish(ax, span, ty + 1.7, title or f"N = {n}, BLOCK = {block}: each element adds 1 to its {unit}; "
                                          f"black = {unit}s that several programs add into", aspect="auto")
    ax.set_xlim(left - 1.6, right + 0.2)
    ax.set_ylim(ty + 1.8, -0.9)
    fig.tight_layout()
    return fig


def split_m_tiles(M: int, K: int, N: int, BM: int, BK: int, BN: int, pk: int = 0, pn: int = 0,
                  title: str | None = None):
    """dW = X^T dY split over M: the programs (pm, pk, pn), one per row block pm (one colour each),
    read their rows' part of X^T and of dY, and all add into the one tile (pk, pn) of dW."""
    import matplotlib.colors

    gm = -(-M // BM)
    grey, dark = matplotlib.colors.to_rgb(MASKED), matplotlib.colors.to_rgb("#333333")
    block_colour = [matplotlib.colors.to_rgb(PALETTE[b % len(PALETTE)]) for b in range(gm)]
    ks, ns = slice(pk * BK, (pk + 1) * BK), slice(pn * BN, (pn + 1) * BN)
    xt = np.tile(np.array(grey), (K, M, 1))
    dy = np.tile(np.array(grey), (M, N, 1))
    dw = np.tile(np.array(grey), (K, N, 1))
    for m in range(M):
        xt[ks, m] = block_colour[m // BM]
        dy[m, ns] = block_colour[m // BM]
    dw[ks, ns] = dark
    fig, axes = plt.subplots(1, 3, figsize=(PAGE_IN, 2.8), gridspec_kw={"width_ratios": [M, N, N]})
    for ax, image, name in zip(axes, (xt, dy, dw), (f"Xᵀ [{K}×{M}]", f"dY [{M}×{N}]", f"dW [{K}×{N}]")):
        rows, cols = image.shape[:2]
        ax.imshow(image, extent=(0, cols, rows, 0), interpolation="nearest")
        ax.set_title(name, loc="left", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
    for b in range(1, gm):  # row-block boundaries
        axes[0].axvline(b * BM, color="white", lw=2)
        axes[1].axhline(b * BM, color="white", lw=2)
    h, w = min(BK, K - pk * BK), min(BN, N - pn * BN)
    axes[2].text(pn * BN + w / 2, pk * BK + h / 2, f"{gm} shares\nadded here", ha="center", va="center",
                 fontsize=10, color="white", weight="bold")
    fig.suptitle(title or f"BLOCK_M = {BM}: the {gm} programs (pm, {pk}, {pn}), pm = 0 … {gm - 1}, each add\n"
                          f"Xᵀ[:, block pm] · dY[block pm, :] into the same tile", fontsize=9, y=0.04)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig
