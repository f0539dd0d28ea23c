"""Pictures for part 8 (attention): which program reads which blocks of the score matrix.

The L × S scores s = scale · q kᵀ are never stored; the pictures show them anyway, one cell per
(query, key), coloured by the program that computes that score: a forward (and dQ) program owns a
row of blocks (a block of queries), a dK/dV program a column (a block of keys). Grey cells are
computed but masked (keys after the query when causal, padded keys and queries past L or S);
white cells are never computed: the blocks a causal program skips.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

from figures.base import MASKED, PALETTE, PAGE_IN, _cell, _finish, tile_label


def visited(first_q: int, first_k: int, block_q: int, block_k: int, S: int, causal: bool) -> bool:
    """Does the program pair (query block at first_q, key block at first_k) compute this block?
    A causal query block walks the keys up to its last query's diagonal, min(S, first_q + block_q)."""
    end = min(S, first_q + block_q) if causal else S
    return first_k < end


def _panel(ax, L, S, BQ, BK, causal, by_keys, title):
    gq, gk = -(-L // BQ), -(-S // BK)
    for i in range(gq * BQ):
        for j in range(gk * BK):
            bq, bk = i // BQ, j // BK
            program = bk if by_keys else bq
            if not visited(bq * BQ, bk * BK, BQ, BK, S, causal):
                continue  # never computed: left white
            inside = i < L and j < S and (j <= i or not causal)
            _cell(ax, j, i, PALETTE[program % len(PALETTE)] if inside else MASKED, lw=0.3)
    width, height = gk * BK, gq * BQ
    for b in range(1, gq):  # block boundaries, inside the grid only
        ax.plot([0, width], [b * BQ, b * BQ], color="black", lw=1.0)
    for b in range(1, gk):
        ax.plot([b * BK, b * BK], [0, height], color="black", lw=1.0)
    ax.add_patch(plt.Rectangle((0, 0), width, height, fill=False, lw=1.0))
    for p in range(gk if by_keys else gq):
        x, y = ((p * BK + min(BK, S - p * BK) / 2, -0.45 * BQ) if by_keys
                else (-0.45 * BK, p * BQ + min(BQ, L - p * BQ) / 2))
        tile_label(ax, x, y, f"pid {p}", PALETTE[p % len(PALETTE)])
    _finish(ax, width, height, title)
    if by_keys:
        ax.set_ylim(height + 2, -0.9 * BQ)
        ax.set_xlim(-2, width)
    else:
        ax.set_xlim(-0.9 * BK, width)
        ax.set_ylim(height + 2, 0)
    ax.text(width / 2, height + 0.5, "keys j →", ha="center", va="top", fontsize=9)
    ax.text(-0.5 if by_keys else -0.9 * BK, height / 2, "queries i →", ha="right", va="center",
            rotation=90, fontsize=9)


def attention_tiles(L: int = 40, S: int = 40, BQ: int = 16, BK: int = 16, causal: bool = True,
                    backward: bool = False):
    """The score matrix with each program's blocks: left, the forward's query-block programs (and
    the backward's dQ programs, which read the same blocks); right (backward=True), the dK/dV
    programs, one per key block, walking the queries. Returns the figure."""
    panels = 2 if backward else 1
    fig, axes = plt.subplots(1, panels, figsize=(PAGE_IN if backward else PAGE_IN * 0.6, 3.9))
    axes = list(axes) if backward else [axes]
    mask = "causal" if causal else "not causal"
    _panel(axes[0], L, S, BQ, BK, causal, False,
           f"{'forward and dQ' if backward else 'forward'}: a program per query block" if backward
           else f"L = {L}, S = {S}, BLOCK_Q = {BQ}, BLOCK_K = {BK}, {mask}")
    if backward:
        _panel(axes[1], L, S, BQ, BK, causal, True, "dK, dV: a program per key block")
        fig.suptitle(f"L = {L}, S = {S}, BLOCK_Q = {BQ}, BLOCK_K = {BK}, {mask}", fontsize=10)
    fig.tight_layout()
    return fig
