"""Pictures for puzzle 10 (row mean and variance): one program's two passes over its row.

Built on book/figures/base.py's helpers and colours; every function returns a matplotlib Figure.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch

from figures.base import MASKED, PALETTE, _cell, _finish, unit


def two_passes(N: int = 20, block: int = 8, row: int = 0, title: str | None = None):
    """One program (row `row`) reads its row twice in chunks of `block` lanes (darker = a later
    step): pass 1 sums x into the mean, pass 2 sums (x - mean)^2 into the variance. The padded
    lanes of the last chunk load 0: harmless in pass 1, and set to 0 by tl.where in pass 2,
    where 0 - mean would otherwise add mean^2."""
    chunks = -(-N // block)
    width = chunks * block
    base = np.array(matplotlib.colors.to_rgb(PALETTE[row % len(PALETTE)]))
    u = unit(width + 9.1, 0.1, 0.34)
    fig, ax = plt.subplots(figsize=(u * (width + 9.1) + 0.1, 3.3))
    passes = [(0.9, "pass 1:\nacc += x", "mean = Σ / N"), (3.1, "pass 2:\nacc += (x − μ)²", "var = Σ / N")]
    for y, label, result in passes:
        ax.text(-0.4, y + 0.5, label, ha="right", va="center", fontsize=9)
        for c in range(width):
            if c < N:
                _cell(ax, c, y, tuple(base * (1.0 - 0.18 * (c // block))), str(c))
            else:  # a padded lane: masked load, other=0.0; in pass 2 tl.where keeps it at 0
                _cell(ax, c, y, MASKED, "0", textcolor="#888888")
        for k in range(chunks):
            ax.text(k * block + block / 2, y - 0.3, f"step {k}", ha="center", va="center", fontsize=8,
                    color="#555555")
        ax.add_patch(FancyArrowPatch((width + 0.1, y + 0.5), (width + 1.3, y + 0.5), arrowstyle="-|>",
                                     mutation_scale=9, color="#555555", lw=0.9))
        ax.text(width + 1.45, y + 0.5, result, ha="left", va="center", fontsize=9)
        for k in range(1, chunks):
            ax.plot([k * block, k * block], [y - 0.15, y + 1.15], color="black", lw=1.0, ls=(0, (2, 2)))
    # the mean of pass 1 feeds pass 2
    ax.add_patch(FancyArrowPatch((width + 2.8, 2.05), (width + 0.4, 3.0), arrowstyle="-|>", mutation_scale=9,
                                 color="#555555", lw=0.9, connectionstyle="arc3,rad=-0.25"))
    ax.text(width + 2.2, 2.6, "μ", ha="left", va="center", fontsize=9, color="#555555")
    ax.text(width, 4.55, "padded lanes: tl.where(mask, x − μ, 0.0) → 0, not μ²",
            ha="right", va="center", fontsize=8, color="#555555")
    _finish(ax, width, 4.9, title or f"one program, N = {N}, BLOCK_N = {block}: "
                                     f"{chunks} chunks per pass, the row read twice", aspect="auto")
    ax.set_xlim(-3.6, width + 5.5)
    ax.set_ylim(4.9, 0.2)
    fig.tight_layout()
    return fig
