"""Pictures for the matrix-multiply part (puzzles 13 to 16): which program reads which tiles.

Built on book/figures/base.py's helpers and colours; every function returns a matplotlib Figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from figures.base import MASKED, MIN_PT, PAGE_IN, PALETTE, _cell, _finish, unit

DONE = "#F4C7A1"   # tiles a program has already added (earlier steps of its loop)
NOW = "#DD8452"    # the tiles loaded at the step shown
OWNED = "#4C72B0"  # the output tile the program writes


def _shade(color: str, step: int) -> tuple:
    """The program's colour, darker for later steps of its loop."""
    import matplotlib.colors
    return tuple(np.array(matplotlib.colors.to_rgb(color)) * (1.0 - 0.2 * step))


def matvec_programs(M: int, K: int, BM: int, BK: int, title: str | None = None):
    """y = A x with one program per block of BM rows: program p's rows of A in its colour, darker
    for each later step of BK columns; x above (the same pieces for every program), y to the right.
    Cells past M or K are masked (grey, crossed)."""
    gm, gk = -(-M // BM), -(-K // BK)
    rows, cols = gm * BM, gk * BK
    u = unit(cols + 5.3, 0.1, 0.34)
    fig, ax = plt.subplots(figsize=(u * (cols + 5.3) + 0.1, u * (rows + 3.5) + 0.7))
    for k in range(cols):  # x, above A
        _cell(ax, k, -1.6, _shade("#8C8C8C", k // BK) if k < K else MASKED, None if k < K else "×")
    ax.text(-0.4, -1.1, "x", ha="right", va="center", fontsize=10)
    for m in range(rows):
        p = m // BM
        for k in range(cols):
            if m < M and k < K:
                _cell(ax, k, m, _shade(PALETTE[p % len(PALETTE)], k // BK))
            else:
                _cell(ax, k, m, MASKED, "×")
        _cell(ax, cols + 1.5, m, PALETTE[p % len(PALETTE)] if m < M else MASKED, None if m < M else "×")
    for p in range(gm):
        ax.text(-0.4, p * BM + min(BM, M - p * BM) / 2, f"pid {p}", ha="right", va="center", fontsize=9,
                color=PALETTE[p % len(PALETTE)])
    for s in range(1, gk):  # step boundaries through x and A
        ax.plot([s * BK, s * BK], [-1.7, rows + 0.1], color="black", lw=1.0, ls=(0, (2, 2)))
    for p in range(1, gm):  # program boundaries through A and y
        ax.plot([-0.1, cols + 2.6], [p * BM, p * BM], color="black", lw=1.0)
    ax.text(cols / 2, rows + 0.9, "A: one step of the loop = BK columns (darker = later step)", ha="center",
            va="top", fontsize=8, color="#555555")
    ax.text(cols + 2.0, -1.1, "y", ha="center", va="center", fontsize=10)
    _finish(ax, cols + 2.5, rows, title or f"M = {M}, K = {K}, BLOCK_M = {BM}, BLOCK_K = {BK}: "
                                          f"grid = ({gm},), {gk} step{'s' if gk > 1 else ''} over K")
    ax.set_xlim(-2.6, cols + 2.7)
    ax.set_ylim(rows + 2.0, -2.0)
    fig.tight_layout()
    return fig


def _matrix(ax, n_rows, n_cols, color_of, label_of=None, fontsize=MIN_PT):
    for i in range(n_rows):
        for j in range(n_cols):
            text = label_of(i, j) if label_of else None
            color = color_of(i, j)
            _cell(ax, j, i, color, text, fontsize=fontsize,
                  textcolor="white" if color in (NOW, OWNED) else "#444444")


def linear_tiles(M=4, N=6, K=8, BM=2, BN=3, BK=4, pm=1, pn=1, k=1):
    """y = x W^T + b for W stored [N, K]: program (pm, pn) at step k loads a [BM, BK] tile of x and a
    [BK, BN] tile of W^T. That tile is not a block of rows of W: it is BN rows of W, BK columns wide,
    read with the strides swapped. Each cell of W shows its offset from w_ptr (n * K + k)."""
    fig, axes = plt.subplots(1, 3, figsize=(PAGE_IN, 0.3 * max(M, N, K) + 1.6),
                             gridspec_kw={"width_ratios": [K, K, N]})
    xa, wa, wta = axes
    in_k = lambda j: k * BK <= j < (k + 1) * BK  # noqa: E731
    before = lambda j: j < k * BK  # noqa: E731
    rows = lambda i: pm * BM <= i < (pm + 1) * BM  # noqa: E731
    outs = lambda j: pn * BN <= j < (pn + 1) * BN  # noqa: E731

    def pick(mine, kk):
        return NOW if mine and in_k(kk) else (DONE if mine and before(kk) else MASKED)

    _matrix(xa, M, K, lambda i, j: pick(rows(i), j))
    _matrix(wa, N, K, lambda n, j: pick(outs(n), j), lambda n, j: str(n * K + j))
    _matrix(wta, K, N, lambda j, n: pick(outs(n), j), lambda j, n: str(n * K + j))
    _finish(xa, K, M, f"x [{M}×{K}]")
    _finish(wa, K, N, f"W as stored [{N}×{K}]")
    _finish(wta, N, K, f"W read as Wᵀ [{K}×{N}]")
    for ax in axes:
        ax.title.set_fontsize(9)
    fig.suptitle(f"program ({pm},{pn}), step {k}: orange = the [{BM}×{BK}] tile of x and the [{BK}×{BN}] tile of "
                 f"Wᵀ loaded now\n(light = steps already added); numbers = offsets n·K + k from w_ptr",
                 fontsize=9, y=0.06)
    fig.tight_layout()
    return fig


def dw_tiles(M=6, N=4, K=6, BM=2, BN=2, BK=3, pn=1, pk=0, m=1):
    """dW = dY^T X for dY stored [M, N]: program (pn, pk) owns one [BN, BK] tile of dW and walks all
    M rows in steps of BM. At step m it loads dY[rows, its BN columns] (read as the [BN, BM] tile of
    dY^T) and X[rows, its BK columns], and adds their product to its tile: no other program writes it."""
    fig, axes = plt.subplots(1, 3, figsize=(PAGE_IN, 0.4 * max(M, N) + 1.6), gridspec_kw={"width_ratios": [N, K, K]})
    dya, xa, dwa = axes
    in_m = lambda i: m * BM <= i < (m + 1) * BM  # noqa: E731
    before = lambda i: i < m * BM  # noqa: E731
    outs = lambda j: pn * BN <= j < (pn + 1) * BN  # noqa: E731
    cols = lambda j: pk * BK <= j < (pk + 1) * BK  # noqa: E731

    def pick(mine, i):
        return NOW if mine and in_m(i) else (DONE if mine and before(i) else MASKED)

    _matrix(dya, M, N, lambda i, j: pick(outs(j), i))
    _matrix(xa, M, K, lambda i, j: pick(cols(j), i))
    _matrix(dwa, N, K, lambda n, j: OWNED if outs(n) and cols(j) else MASKED)
    _finish(dya, N, M, f"dY [{M}×{N}]")
    _finish(xa, K, M, f"X [{M}×{K}]")
    _finish(dwa, K, N, f"dW [{N}×{K}]: tile ({pn},{pk})")
    for ax in axes:
        ax.title.set_fontsize(9)
    fig.suptitle(f"program ({pn},{pk}), step {m} of the loop over M: orange = the BM = {BM} rows loaded now\n"
                 "(light = steps already added); the dY tile enters tl.dot transposed, [BN×BM]",
                 fontsize=9, y=0.06)
    fig.tight_layout()
    return fig
