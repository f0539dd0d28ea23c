"""Pictures for part 1 (puzzles 2 to 5): which program handles which elements of a 2-D output,
and where the elements of a strided view sit in memory.

Built on book/figures/base.py's helpers and colours; every function returns a matplotlib Figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from figures.base import MASKED, MIN_PT, PALETTE, _cell, _finish, tile_label, unit

GREY = "#8C8C8C"


def _masked(ax, x, y, size=7):
    _cell(ax, x, y, MASKED, "×", fontsize=size, textcolor="#999999")


def outer_tiles(M: int, N: int, BM: int, BN: int, title: str | None = None, top: str = "x",
                left: str | None = "y"):
    """z[i, j] = x[j] + y[i] over a grid of BM x BN tiles: each program's tile of z in its colour,
    the piece of x it loads above its columns, the piece of y left of its rows; lanes past M or N
    masked (grey, crossed). With BM >= M and BN >= N this is the one-program launch of puzzle 3.
    `top` and `left` name the vectors along the columns and the rows (left=None: none)."""
    gm, gn = -(-M // BM), -(-N // BN)
    rows, cols = gm * BM, gn * BN
    u = unit(cols + 2.6, 0.3)
    fig, ax = plt.subplots(figsize=(u * (cols + 2.6) + 0.3, u * (rows + 2.7) + 0.7))
    one = gm * gn == 1
    for j in range(cols):  # x along the top: the piece program column pn loads
        pn = j // BN
        if j < N:
            _cell(ax, j, -1.6, GREY if one else PALETTE[pn % len(PALETTE)], f"{top}{j}" if u * 72 >= 3 * MIN_PT else None)
        else:
            _masked(ax, j, -1.6)
    for i in range(rows):  # y down the left: the piece program row pm loads
        pm = i // BM
        if left is None:
            pass
        elif i < M:
            _cell(ax, -1.6, i, GREY if one else PALETTE[(pm * gn) % len(PALETTE)], f"{left}{i}" if u * 72 >= 3 * MIN_PT else None)
        else:
            _masked(ax, -1.6, i)
        for j in range(cols):
            pn = j // BN
            if i < M and j < N:
                # one program: each cell names its (i, j); several: the tiles carry the program ids
                _cell(ax, j, i, PALETTE[(pm * gn + pn) % len(PALETTE)],
                      f"{i},{j}" if one and u * 72 >= 3 * MIN_PT else None)
            else:
                _masked(ax, j, i)
    if not one:
        for pm in range(gm):
            for pn in range(gn):
                h, w = min(BM, M - pm * BM), min(BN, N - pn * BN)
                tile_label(ax, pn * BN + w / 2, pm * BM + h / 2, f"({pm},{pn})", PALETTE[(pm * gn + pn) % len(PALETTE)])
        for pm in range(1, gm):
            ax.plot([-1.7, cols], [pm * BM, pm * BM], color="black", lw=1.2)
        for pn in range(1, gn):
            ax.plot([pn * BN, pn * BN], [-1.7, rows], color="black", lw=1.2)
    ax.text(cols + 0.2, -1.1, top, ha="left", va="center", fontsize=10)
    if left is not None:
        ax.text(-1.1, rows + 0.3, left, ha="center", va="top", fontsize=10)
    default = (f"M = {M}, N = {N}, one program, a {BM} × {BN} block" if one else
               f"M = {M}, N = {N}, {BM} × {BN} tiles: grid = ({gm}, {gn}), program (pid_m, pid_n)")
    _finish(ax, cols, rows, title or default)
    ax.set_xlim(-1.8, cols + 0.8)
    ax.set_ylim(rows + 0.9, -1.8)
    fig.tight_layout()
    return fig


def strided_view(M: int, N: int, stride_m: int, stride_n: int, title: str | None = None):
    """An [M, N] view whose element (m, n) sits m * stride_m + n * stride_n elements after the
    pointer: the view as the kernel indexes it (each cell shows its memory offset), and memory as
    one row of elements in address order, each cell naming the element of the view it holds."""
    size = (M - 1) * stride_m + (N - 1) * stride_n + 1
    u = unit(max(size, N) + 1.2, 0.2, 0.5)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(u * (max(size, N) + 1.2) + 0.2, u * (M + 1) + 2.0),
                                      gridspec_kw={"height_ratios": [M, 1.4]})
    where = {}
    for m in range(M):
        top.text(-0.3, m + 0.5, f"m={m}", ha="right", va="center", fontsize=8)
        for n in range(N):
            off = m * stride_m + n * stride_n
            where[off] = (m, n)
            _cell(top, n, m, PALETTE[m % len(PALETTE)], str(off), fontsize=8)
    for n in range(N):
        top.text(n + 0.5, M + 0.15, f"n={n}", ha="center", va="top", fontsize=8)
    _finish(top, N, M, title or f"x.stride() = ({stride_m}, {stride_n}): x[m, n] is at offset "
                                f"m * {stride_m} + n * {stride_n}")
    top.set_xlim(-1.2, max(N, 1))
    top.set_ylim(M + 0.7, 0)
    for off in range(size):
        if off in where:
            m, n = where[off]
            _cell(bottom, off, 0, PALETTE[m % len(PALETTE)], f"{m},{n}")
        else:
            _masked(bottom, off, 0)
    _finish(bottom, size, 1, "memory, in address order (offset 0, 1, 2, …): which element of x each holds")
    bottom.set_xlim(-1.2, max(size, 1))
    fig.tight_layout()
    return fig
