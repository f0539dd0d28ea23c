"""Pictures for puzzles 6 to 9 (elementwise backward, reductions): who adds into what.

Built on book/figures/base.py's helpers and colours; every function returns a matplotlib Figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

from figures.base import MASKED, PALETTE, _cell, _finish, unit


def _striped(ax, x, y, colors, w=1.0, h=1.0):
    """One element that several programs add into: a stripe of each one's colour."""
    n = len(colors)
    for k, color in enumerate(colors):
        ax.add_patch(Rectangle((x, y + k * h / n), w, h / n, facecolor=color, edgecolor="none"))
    ax.add_patch(Rectangle((x, y), w, h, facecolor="none", edgecolor="white", lw=1.2))


def broadcast_backward(M: int = 4, N: int = 6, block: int = 8, title: str | None = None):
    """z = relu(x[None, :] * y[:, None]) backward with one program per row: program i reads row i
    of dz (its colour), stores dy[i] alone, and adds a share into every element of dx (striped:
    each element holds one share per program)."""
    u = unit(block + 4.0, 0.2, 0.5)
    fig, ax = plt.subplots(figsize=(u * (block + 4.0) + 0.2, u * (M + 2.8) + 0.9))
    colors = [PALETTE[i % len(PALETTE)] for i in range(M)]
    for i in range(M):
        ax.text(-0.3, i + 0.5, f"pid {i}", ha="right", va="center", fontsize=9, color=colors[i])
        for j in range(block):
            if j < N:
                _cell(ax, j, i, colors[i], f"{i},{j}")
            else:
                _cell(ax, j, i, MASKED, "×", fontsize=8, textcolor="#888888")
        _cell(ax, block + 1.0, i, colors[i], f"dy[{i}]", w=1.2)  # one writer each
        ax.add_patch(FancyArrowPatch((block + 0.05, i + 0.5), (block + 0.95, i + 0.5),
                                     arrowstyle="-|>", mutation_scale=8, color="#777777", lw=0.8))
    top = M + 0.9
    for j in range(block):
        if j < N:
            _striped(ax, j, top, colors)
        else:
            _cell(ax, j, top, MASKED, "×", fontsize=8, textcolor="#888888")
    ax.text(-0.3, top + 0.5, "dx", ha="right", va="center", fontsize=10)
    ax.text(block + 1.6, -0.35, "plain store:\none writer", ha="center", va="bottom", fontsize=8)
    ax.text(N / 2, -0.35, "dz [i, j]: row i read by program i", ha="center", va="bottom", fontsize=8)
    ax.text(N / 2, top + 1.45, f"dx[j]: all {M} programs add a share (tl.atomic_add)", ha="center",
            va="center", fontsize=8)
    _finish(ax, block + 2, top + 1, title or f"M = {M} rows, N = {N}, BLOCK_N = {block}: grid = ({M},)",
            aspect="equal")
    ax.set_xlim(-1.8, block + 2.4)
    ax.set_ylim(top + 1.9, -0.9)
    fig.tight_layout()
    return fig


def column_blocks(M: int = 10, N: int = 6, block_m: int = 4, block_n: int = 8, title: str | None = None,
                  out: str = "y"):
    """A column sum over row blocks: program p owns rows p*block_m ... (its colour; rows past M
    masked), sums them down to a partial row, and adds that partial into the shared result
    (striped: one share per program in every element)."""
    programs = -(-M // block_m)
    rows = programs * block_m
    colors = [PALETTE[p % len(PALETTE)] for p in range(programs)]
    fig, ax = plt.subplots(figsize=(0.45 * block_n + 2.6, 0.42 * (rows + 3) + 0.9))
    for r in range(rows):
        p = r // block_m
        for j in range(block_n):
            if r < M and j < N:
                _cell(ax, j, r, colors[p])
            else:
                _cell(ax, j, r, MASKED, "×", fontsize=7, textcolor="#999999")
    for p in range(programs):
        h = min(block_m, M - p * block_m)
        ax.text(-0.3, p * block_m + h / 2, f"pid {p}", ha="right", va="center", fontsize=9, color=colors[p])
        if p:
            ax.plot([-0.1, block_n + 0.1], [p * block_m, p * block_m], color="black", lw=1.0)
    top = rows + 1.0
    for j in range(block_n):
        if j < N:
            _striped(ax, j, top, colors)
        else:
            _cell(ax, j, top, MASKED, "×", fontsize=7, textcolor="#999999")
    ax.text(-0.3, top + 0.5, out, ha="right", va="center", fontsize=10)
    ax.text(block_n / 2, top + 1.5, f"{out}[j]: {programs} partial sums, one per program\n(tl.atomic_add)",
            ha="center", va="center", fontsize=8)
    _finish(ax, block_n, top + 1, title or f"M = {M}, N = {N}, BLOCK_M = {block_m}, BLOCK_N = {block_n}:\n"
                                         f"grid = ({programs}, {-(-N // block_n)})", aspect="equal")
    ax.set_xlim(-1.8, block_n + 0.2)
    ax.set_ylim(top + 2.0, -0.4)
    fig.tight_layout()
    return fig
