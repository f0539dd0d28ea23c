"""Pictures for the normalisation backward puzzles (20 and 21): one program per row, and the
parameter gradients that every row's program adds into.

Built on book/figures/base.py's helpers and colours; every function returns a matplotlib Figure.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from figures.base import MASKED, PALETTE, _cell, unit


def _row_colour(r: int, chunk: int) -> tuple:
    """Program r's colour, darker for each later chunk of its row."""
    return tuple(np.array(matplotlib.colors.to_rgb(PALETTE[r % len(PALETTE)])) * (1.0 - 0.18 * chunk))


def rows_into_shared(M: int = 4, H: int = 40, block: int = 16, shared=("dgamma",), chunk: int = 1,
                     title: str | None = None):
    """One program per row, each walking its row in chunks of `block` (darker = later chunk, crossed =
    masked lanes past H). Below, the [H] parameter gradients that every program adds its row's share
    into: the arrows show chunk `chunk` of every row landing on the same elements, which is why each
    addition must be a tl.atomic_add."""
    chunks = -(-H // block)
    width = chunks * block
    gap = 1.6
    u = unit(width + 5.0, 0.1, 0.2)
    lw = 1.2 if u * 72 > 12 else 0.6
    fig, ax = plt.subplots(figsize=(u * (width + 5.0) + 0.1, 0.3 * (M + gap + 1.3 * len(shared)) + 1.3))
    for r in range(M):
        ax.text(-0.5, r + 0.5, f"pid {r}", ha="right", va="center", fontsize=8)
        for c in range(width):
            if c < H:
                _cell(ax, c, r, _row_colour(r, c // block), lw=lw)
            else:
                _cell(ax, c, r, MASKED, "×", lw=lw)
    for k in range(1, chunks):
        ax.plot([k * block] * 2, [-0.2, M + 0.2], color="black", lw=0.9, ls=(0, (2, 2)))
    lo, hi = chunk * block, min((chunk + 1) * block, H)
    for r in range(M):  # the chunk shown, in every row
        ax.add_patch(matplotlib.patches.Rectangle((lo, r + 0.06), hi - lo, 0.88, fill=False, edgecolor="black",
                                                  lw=1.6))
    for i, name in enumerate(shared):
        y = M + gap + 1.3 * i
        ax.text(-0.5, y + 0.5, f"{name} [H]", ha="right", va="center", fontsize=8)
        for c in range(H):  # H elements: the row's padded lanes have nothing here to add to
            _cell(ax, c, y, "#FFFFFF" if lo <= c < hi else "#F2F2F2", lw=lw)
            ax.add_patch(matplotlib.patches.Rectangle((c, y), 1, 1, fill=False, edgecolor="#555555", lw=0.4))
        ax.add_patch(matplotlib.patches.Rectangle((lo, y), hi - lo, 1, fill=False, edgecolor="black", lw=1.6))
    mid = (lo + hi) / 2
    for r in range(M):  # a fan of arrows, one per program, onto the same elements
        x0 = mid + (r - (M - 1) / 2) * min(1.2, (hi - lo) / M)
        ax.annotate("", xy=(mid, M + gap - 0.08), xytext=(x0, M + 0.1),
                    arrowprops=dict(arrowstyle="-|>", color=PALETTE[r % len(PALETTE)], lw=1.4))
    ax.text(hi + 0.6, M + gap / 2, f"chunk {chunk} of all {M} rows adds into\nthe same elements: "
            "tl.atomic_add", ha="left", va="center", fontsize=8, color="#333333")
    ax.set_xlim(-4.5, width + 0.5)
    ax.set_ylim(M + gap + 1.3 * len(shared) + 0.2, -0.3)
    ax.set_aspect("auto")
    ax.axis("off")
    ax.set_title(title or f"M = {M}, H = {H}, BLOCK_H = {block}: grid = ({M},), {chunks} chunks per row",
                 loc="left", fontsize=10)
    fig.tight_layout()
    return fig


def sweeps(sums: list[str], writes: list[str], adds: list[str], title: str | None = None):
    """The sweeps one program makes over its row, in order: what each reads and what it produces.
    `sums`: one line per sweep that only reduces (its row sums); the last sweep writes `writes`
    and atomically adds `adds`."""
    steps = [(f"sweep {i + 1}", text, PALETTE[0]) for i, text in enumerate(sums)]
    steps.append((f"sweep {len(sums) + 1}", "\n".join(writes + [f"atomic_add: {a}" for a in adds]), PALETTE[1]))
    fig, ax = plt.subplots(figsize=(min(2.9 * len(steps) + 0.6, 7.1), 1.9))
    for i, (head, text, color) in enumerate(steps):
        x = i * 2.9
        _cell(ax, x, 0, color, head, w=2.5, h=0.45, fontsize=9)
        ax.add_patch(matplotlib.patches.Rectangle((x, 0.45), 2.5, 1.2, facecolor="white", edgecolor=color, lw=1.2))
        ax.text(x + 1.25, 1.05, text, ha="center", va="center", fontsize=8)
        if i:
            ax.annotate("", xy=(x - 0.05, 0.9), xytext=(x - 0.35, 0.9), arrowprops=dict(arrowstyle="->", lw=1.0))
    ax.set_xlim(-0.1, 2.9 * len(steps))
    ax.set_ylim(1.75, -0.35 if title else -0.05)
    ax.axis("off")
    if title:
        ax.set_title(title, loc="left", fontsize=10)
    fig.tight_layout()
    return fig
