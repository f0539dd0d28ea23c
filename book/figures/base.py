"""Pictures for the book: which program handles what, masked lanes, where a result is wrong;
and the colours, sizes and cell helpers the other modules of this package draw with.

Every function returns a matplotlib Figure; the chapters display it.  Kept here so the pages
show one line (`figures.base.lanes(40, 16)`) and a reader can open the code when curious.

Legible at page width: the book's column is 688 px wide in a 1280 px window, and a figure no
wider than `PAGE_IN` inches is shown at its own size, 96 px per inch, where a font of `MIN_PT`
points is 10.7 px. So every figure here is at most `PAGE_IN` wide and writes nothing smaller than
`MIN_PT`; a picture of many cells makes its cells smaller (`unit`), not its text. Importing this
module makes the page's figures SVG, whose text the book's browser test measures.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
from matplotlib.artist import Artist
from matplotlib.patches import PathPatch, Rectangle
from matplotlib.path import Path

# one colour per program (colour-blind friendly, from matplotlib's "tab10" minus red/green pairs)
PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974",
           "#64B5CD", "#C44E52"]
MASKED = "#E6E6E6"
PAGE_IN = 7.1   # the widest figure the column shows at its own size (688 px at 96 px per inch)
MIN_PT = 8      # the smallest text, 10.7 px at that size
plt.rcParams.update({"font.size": 10, "figure.dpi": 100, "svg.fonttype": "none",
                     "legend.fontsize": 9, "xtick.labelsize": 9, "ytick.labelsize": 9})


def _svg_on_this_page():
    """Figures shown by the page that imports this module are SVG (text stays text)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "kernel"):
        shell.run_line_magic("config", "InlineBackend.figure_formats = ['svg']")


_svg_on_this_page()


def unit(cells: float, margin_in: float = 0.0, preferred: float = 0.42) -> float:
    """The side of one cell, in inches, for a picture `cells` cells wide plus `margin_in` inches of
    labels: `preferred`, or less, so that the picture fits in PAGE_IN."""
    return min(preferred, (PAGE_IN - margin_in) / cells)


class _Cells(Artist):
    """All the cells of one axes, and the crosses of its masked ones, as one artist drawn as one
    SVG path per colour: a picture of a thousand cells stays quick to draw and small to load."""

    def __init__(self):
        super().__init__()
        self.cells: dict = {}    # (colour, edge width) -> [(x, y, w, h)]
        self.crosses: list = []  # [(x0, y0, x1, y1)]
        self.set_zorder(1)

    def draw(self, renderer):
        patches = []
        for (color, lw), rects in self.cells.items():
            verts, codes = [], []
            for x, y, w, h in rects:
                verts += [(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)]
                codes += [Path.MOVETO, Path.LINETO, Path.LINETO, Path.LINETO, Path.CLOSEPOLY]
            patches.append(PathPatch(Path(verts, codes), facecolor=color, edgecolor="white", lw=lw))
        if self.crosses:
            verts = [p for x0, y0, x1, y1 in self.crosses for p in ((x0, y0), (x1, y1))]
            codes = [Path.MOVETO, Path.LINETO] * len(self.crosses)
            patches.append(PathPatch(Path(verts, codes), facecolor="none", edgecolor="#999999", lw=1.0))
        for patch in patches:
            patch.set_transform(self.axes.transData)
            patch.set_clip_path(self.axes.patch)
            patch.set_figure(self.figure)
            patch.draw(renderer)


def _layer(ax) -> _Cells:
    if not hasattr(ax, "_tgp_cells"):
        ax._tgp_cells = _Cells()
        ax.add_artist(ax._tgp_cells)
    return ax._tgp_cells


def _cell(ax, x, y, color, text=None, w=1.0, h=1.0, fontsize=MIN_PT, textcolor="white", lw=1.2):
    layer = _layer(ax)
    layer.cells.setdefault((color if isinstance(color, str) else tuple(map(float, color)), lw), []).append((x, y, w, h))
    if text == "×":  # a masked lane: a cross drawn as lines, legible at any cell size
        layer.crosses += [(x + 0.3 * w, y + 0.3 * h, x + 0.7 * w, y + 0.7 * h),
                          (x + 0.3 * w, y + 0.7 * h, x + 0.7 * w, y + 0.3 * h)]
    elif text is not None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=max(fontsize, MIN_PT),
                color=textcolor)


def tile_label(ax, x, y, text, color):
    """A program's name in the middle of its tile, on a patch of its colour (above the cell lines)."""
    ax.text(x, y, text, ha="center", va="center", fontsize=11, color="white", weight="bold",
            bbox=dict(boxstyle="round,pad=0.2", fc=color, ec="none"))


def _finish(ax, width, height, title=None, aspect="equal"):
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_aspect(aspect)
    ax.axis("off")
    if title:
        ax.set_title(title, loc="left", fontsize=10)


def lanes(n: int, block: int, title: str | None = None, per_program: bool = True):
    """A 1-D launch over n elements with blocks of `block` lanes: one row of lanes per program;
    lanes at or past n are masked (grey, crossed)."""
    programs = -(-n // block)
    u = unit(block, 1.0)
    fig, ax = plt.subplots(figsize=(u * block + 1.0, u * programs + 0.6))
    labels = u * 72 >= 3 * MIN_PT  # room for a three-digit offset
    for p in range(programs):
        ax.text(-0.3, p + 0.5, f"pid {p}" if per_program else f"iter {p}", ha="right", va="center",
                fontsize=9, color=PALETTE[p % len(PALETTE)])
        for lane in range(block):
            off = p * block + lane
            if off < n:
                _cell(ax, lane, p, PALETTE[p % len(PALETTE)], str(off) if labels else None)
            else:
                _cell(ax, lane, p, MASKED, "×", fontsize=9, textcolor="#888888")
    masked = programs * block - n
    _finish(ax, block, programs,
            title or f"n = {n}, BLOCK = {block}: {programs} programs, {masked} masked lane"
            f"{'s' if masked != 1 else ''}")
    ax.set_xlim(-2.2, block)
    fig.tight_layout()
    return fig


def tiles_2d(M: int, N: int, BM: int, BN: int, title: str | None = None):
    """A 2-D grid: each program (pid_m, pid_n) owns a BM x BN tile of an M x N output."""
    gm, gn = -(-M // BM), -(-N // BN)
    u = unit(gn * BN, 0.4, 0.36)
    fig, ax = plt.subplots(figsize=(u * gn * BN + 0.4, u * gm * BM + 0.6))
    for i in range(gm * BM):
        for j in range(gn * BN):
            pm, pn = i // BM, j // BN
            color = PALETTE[(pm * gn + pn) % len(PALETTE)]
            if i < M and j < N:
                _cell(ax, j, i, color, lw=0.5)
            else:
                _cell(ax, j, i, MASKED, "×", lw=0.5)
    for pm in range(gm):
        for pn in range(gn):
            h = min(BM, M - pm * BM)  # label the middle of the tile's real (unmasked) part
            w = min(BN, N - pn * BN)
            tile_label(ax, pn * BN + w / 2, pm * BM + h / 2, f"({pm},{pn})", PALETTE[(pm * gn + pn) % len(PALETTE)])
    _finish(ax, gn * BN, gm * BM,
            title or f"{M}×{N} output, {BM}×{BN} tiles: grid = ({gm}, {gn})")
    fig.tight_layout()
    return fig


def row_programs(M: int, H: int, block: int, title: str | None = None, programs: int | None = None):
    """LayerNorm's launch: one program per row; each program walks its row in chunks of `block`
    lanes (darker = later chunk); lanes past H in the last chunk are masked. With `programs` < M,
    program p walks rows p, p + programs, ... (its colour marks its rows)."""
    chunks = -(-H // block)
    width = chunks * block
    u = unit(width + 2.5, 0.3, 0.22)
    fig, ax = plt.subplots(figsize=(u * (width + 2.5) + 0.3, 0.5 * M + 0.9))
    for r in range(M):
        pid = r if programs is None else r % programs
        base = np.array(matplotlib.colors.to_rgb(PALETTE[pid % len(PALETTE)]))
        label = f"pid {r}" if programs is None else f"row {r}: pid {pid}"
        ax.text(-0.4, r + 0.5, label, ha="right", va="center", fontsize=9)
        for c in range(width):
            shade = 1.0 - 0.18 * (c // block)
            lw = 1.2 if u * 72 > 12 else 0.6
            if c < H:
                _cell(ax, c, r, tuple(base * shade), lw=lw)
            else:
                _cell(ax, c, r, MASKED, "×", lw=lw)
    for k in range(1, chunks):
        ax.axvline(k * block, color="black", lw=1.0, ls=(0, (2, 2)))
    _finish(ax, width, M, title or f"M = {M} rows, H = {H}, BLOCK_H = {block}: grid = ({M},), "
                                   f"{chunks} chunk{'s' if chunks > 1 else ''} per row", aspect="auto")
    ax.set_xlim(-2.5 if programs is None else -4.5, width)
    fig.tight_layout()
    return fig


def dot_tiles(M=4, N=4, K=6, BM=2, BN=2, BK=3, pm=1, pn=0, k=1):
    """tl.dot in a loop: program (pm, pn) multiplies a BM x BK tile of A by a BK x BN tile of B
    for each k step, accumulating into its BM x BN tile of C."""
    fig, axes = plt.subplots(1, 3, figsize=(PAGE_IN, 2.9), gridspec_kw={"width_ratios": [K, N, N]})
    hl, done, cur = "#DD8452", "#F4C7A1", "#4C72B0"
    A, B, C = axes
    for i in range(M):
        for j in range(K):
            in_rows = pm * BM <= i < (pm + 1) * BM
            color = hl if in_rows and k * BK <= j < (k + 1) * BK else (done if in_rows and j < k * BK else MASKED)
            _cell(A, j, i, color)
    for i in range(K):
        for j in range(N):
            in_cols = pn * BN <= j < (pn + 1) * BN
            color = hl if in_cols and k * BK <= i < (k + 1) * BK else (done if in_cols and i < k * BK else MASKED)
            _cell(B, j, i, color)
    for i in range(M):
        for j in range(N):
            mine = pm * BM <= i < (pm + 1) * BM and pn * BN <= j < (pn + 1) * BN
            _cell(C, j, i, cur if mine else MASKED)
    _finish(A, K, M, f"A [{M}×{K}]")
    _finish(B, N, K, f"B [{K}×{N}]")
    _finish(C, N, M, f"C: tile ({pm},{pn}) += dot")
    fig.suptitle(f"program ({pm},{pn}), k step {k}: orange = the tiles loaded now,\nlight = steps already added",
                 fontsize=9, y=0.08)
    fig.tight_layout()
    return fig


def diff_map(wrong, right, title: str, xlabel="column (hidden index)", ylabel="row", atol=None):
    """Where a result differs from the reference: |wrong - right| per element."""
    d = np.abs(np.asarray(wrong, dtype=float) - np.asarray(right, dtype=float))
    fig, ax = plt.subplots(figsize=(min(0.5 * d.shape[1] + 2.2, PAGE_IN), 0.45 * d.shape[0] + 1.3))
    im = ax.imshow(d, cmap="magma_r", aspect="auto", vmin=0)
    ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))  # rows and columns are whole
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    cb = fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
    cb.set_label("|wrong − right|")
    if atol is not None:
        ys, xs = np.nonzero(d > atol)
        ax.scatter(xs, ys, marker="s", facecolors="none", edgecolors="#1f77b4", s=60, lw=1,
                   label=f"> atol {atol:g}")
        ax.legend(loc="upper right", bbox_to_anchor=(1.0, 1.35), fontsize=8, frameon=False)
    ax.set_title(title, loc="left", fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    return fig


def bars(values: dict, title: str, unit: str = "MiB", scale: float = 2**20, colors=None):
    """Horizontal bars, e.g. bytes moved per step."""
    names = list(values)
    v = np.array([values[k] / scale for k in names])
    fig, ax = plt.subplots(figsize=(PAGE_IN - 0.8, 0.38 * len(names) + 1.0))
    ax.barh(range(len(names)), v, color=colors or [PALETTE[i % len(PALETTE)] for i in range(len(names))])
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    for i, x in enumerate(v):
        ax.text(x, i, f" {x:,.1f} {unit}", va="center", fontsize=9)
    ax.set_xlim(0, v.max() * 1.25)
    ax.set_title(title, loc="left", fontsize=11)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def race_timeline(schedule, title="Two programs, one shared accumulator"):
    """Draw an interleaving of load/add/store steps.  `schedule` is a list of
    (program, action, value_text) in time order; the shared value is drawn in the middle."""
    fig, ax = plt.subplots(figsize=(PAGE_IN, 2.3))
    progs = sorted({p for p, _, _ in schedule})
    for t, (p, action, text) in enumerate(schedule):
        y = progs.index(p) * 2
        color = PALETTE[progs.index(p)]
        _cell(ax, t * 1.6, y, color, f"{action}\n{text}", w=1.5, h=0.9, fontsize=8)
    for i, p in enumerate(progs):
        ax.text(-0.2, i * 2 + 0.45, f"pid {p}", ha="right", va="center", fontsize=9)
    ax.annotate("time →", (len(schedule) * 1.6, 1.45), ha="right", fontsize=9, color="#555555",
                annotation_clip=False)
    _finish(ax, len(schedule) * 1.6, len(progs) * 2 - 1, title)
    ax.set_xlim(-1.5, len(schedule) * 1.6)
    fig.tight_layout()
    return fig


def accumulation_schemes(M: int = 16, rows_per_program: int = 4):
    """Who writes where: M programs adding into one shared gradient with atomics, versus
    per-program partial buffers reduced by a second kernel in a fixed order."""
    P = -(-M // rows_per_program)
    fig, axes = plt.subplots(1, 2, figsize=(PAGE_IN, 3.4))
    ys = np.linspace(0.5, M - 0.5, M)

    def target(ax, x, y, h, text, color="#333333"):
        ax.add_patch(Rectangle((x, y - h / 2), 2.0, h, facecolor="white", edgecolor=color, lw=1.5))
        ax.text(x + 1.0, y, text, ha="center", va="center", fontsize=8)

    ax = axes[0]
    for r, y in enumerate(ys):
        c = PALETTE[r % len(PALETTE)]
        _cell(ax, 0, y - 0.4, c, w=0.8, h=0.8)
        ax.plot([0.8, 4.0], [y, M / 2], color=c, lw=0.8, alpha=0.8)
    target(ax, 4.0, M / 2, 2.0, "dgamma [H]\n(shared)")
    ax.text(0.4, -0.6, "program per row", ha="center", fontsize=8)
    ax.text(2.4, M + 0.9, f"{M} atomic_adds on the same H addresses", ha="center", fontsize=8)
    ax.set_title("atomics", loc="left", fontsize=10)

    ax = axes[1]
    for r, y in enumerate(ys):
        p = r // rows_per_program
        c = PALETTE[p % len(PALETTE)]
        _cell(ax, 0, y - 0.4, c, w=0.8, h=0.8)
        py = (p + 0.5) * rows_per_program
        ax.plot([0.8, 2.4], [y, py], color=c, lw=0.8, alpha=0.8)
    for p in range(P):
        py = (p + 0.5) * rows_per_program
        c = PALETTE[p % len(PALETTE)]
        ax.add_patch(Rectangle((2.4, py - 0.9), 1.6, 1.8, facecolor=c, alpha=0.25, edgecolor=c))
        ax.text(3.2, py, f"partial[{p}]", ha="center", va="center", fontsize=8)
        ax.plot([4.0, 5.6], [py, M / 2], color="#555555", lw=0.8, ls="--")
    target(ax, 5.6, M / 2, 2.0, "dgamma [H]")
    ax.text(0.4, -0.6, f"{rows_per_program} rows per program", ha="center", fontsize=8)
    ax.text(3.2, M + 0.9, "plain stores, one writer each", ha="center", fontsize=8)
    ax.text(6.6, M / 2 - 2.6, "second kernel:\nfixed-order sum", ha="center", fontsize=8)
    ax.set_title("partial buffers + a second reduction", loc="left", fontsize=10)
    for ax, width in zip(axes, (6.2, 7.8)):
        ax.set_xlim(-0.2, width)
        ax.set_ylim(M + 1.6, -1.4)
        ax.axis("off")
    fig.tight_layout()
    return fig


def bench_chart(rows, title: str):
    """Measured speed per benchmark size: the kernel ("yours": the reference solution when the book
    shows it), PyTorch and torch.compile, as TFLOP/s where the work is counted in flops (a
    matmul), else as GB/s with the device's copy bandwidth as the ceiling. Each group of bars is
    labelled with what sets it apart (its size, its dtype), so that the fp32 and the bf16 runs
    of one size are told apart; what all rows share goes under the axis."""
    flops = any(r.tflop for r in rows)

    def rate(r, ms):
        return (r.tflops(ms) if flops else r.gbps(ms)) or 0

    parts = [r.dims.split(", ") for r in rows]
    if len({(r.dims, r.dtype) for r in rows}) < len(rows):  # the sizes do not tell the rows apart: their cases do
        parts = [r.case.split(", ") for r in rows]
    common = [p for p in parts[0] if all(p in ps for ps in parts)]
    varying = [[p for p in ps if p not in common] for ps in parts]
    keys = {p.split("=")[0] for ps in varying for p in ps}
    short = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
    dtypes = {r.dtype for r in rows}
    labels = []
    for ps, r in zip(varying, rows):
        size = ps[0].split("=", 1)[1] if len(keys) == 1 and len(ps) == 1 and "=" in ps[0] else "\n".join(ps)
        labels.append(size + (f"\n{short.get(r.dtype, r.dtype)}" if len(dtypes) > 1 else ""))
    x = np.arange(len(rows), dtype=float)
    for i in range(1, len(rows)):  # a gap where the dtype changes
        if rows[i].dtype != rows[i - 1].dtype:
            x[i:] += 0.6
    fig, ax = plt.subplots(figsize=(PAGE_IN, 3.4))
    series = [("yours", [rate(r, r.ms) for r in rows]), ("PyTorch", [rate(r, r.torch_ms) for r in rows]),
              ("torch.compile", [rate(r, r.compile_ms) for r in rows])]
    for name in dict.fromkeys(n for r in rows for n in getattr(r, "extra_ms", {})):  # the spec's further baselines
        series.append((name, [rate(r, r.extra_ms[name]) if name in r.extra_ms else 0 for r in rows]))
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=label, color=PALETTE[i])
    if not flops:
        ax.plot(x, [r.copy_gbps for r in rows], ls="none", marker="_", markersize=18, mew=2, color="black",
                label="device copy")
    ax.set_xticks(x, labels, fontsize=MIN_PT)
    under = ", ".join(common)
    if len(keys) == 1:
        under = f"{next(iter(keys))}" + (f" ({under})" if under else "")
    ax.set_xlabel(under, fontsize=9)
    ax.set_ylabel("TFLOP/s" if flops else "GB/s")
    ax.set_title(title, loc="left", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    if _crowded(fig, ax.get_xticklabels()):  # side by side they would run together: slanted, one line each
        ax.set_xticks(x, [label.replace("\n", ", ") for label in labels], fontsize=MIN_PT, rotation=35,
                      ha="right", rotation_mode="anchor")
        fig.set_size_inches(PAGE_IN, 5.0)  # room for them, and the bars keep their height
        fig.tight_layout()
    # the legend under whatever the axis shows below it (labels of one line or five, slanted or not)
    ax.legend(fontsize=MIN_PT + 1, ncol=4, loc="upper left", bbox_to_anchor=(0, _below(fig, ax) - 0.03),
              frameon=False)
    return fig


def _crowded(fig, texts) -> bool:
    """Do neighbouring tick labels touch (or nearly)?"""
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in texts if t.get_text()]
    return any(a.x1 + 2 > b.x0 for a, b in zip(boxes, boxes[1:]))


def _below(fig, ax) -> float:
    """The lowest point of the axis's tick labels and label, in axes coordinates (below 0)."""
    fig.canvas.draw()
    shown = [t for t in [*ax.get_xticklabels(), ax.xaxis.label] if t.get_text()]
    bottom = min((t.get_window_extent().y0 for t in shown), default=ax.get_window_extent().y0)
    return ax.transAxes.inverted().transform((0, bottom))[1]
