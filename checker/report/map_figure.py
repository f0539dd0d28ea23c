"""The memory map drawn: for the tensors a case's kernels touched, every element coloured by the
program that wrote it (or read it, for an input), beside the same map of the reference solution's
launch on the same case; elements never written, races, the lanes a mask switched off and the
lanes that left the tensor, drawn past its edge where they pointed.

The data is a case result's "memory_map" (checker/evidence/memory_map.py); this module only lays
it out and says what it shows (`notes`: the sentences that go with the picture). Drawn with
matplotlib's Figure, not pyplot: nothing is shown or kept unless a caller does so. The colours,
the grey crossed masked lanes and a program's name on a patch of its colour are the book's
(book/figures/base.py), so the picture a chapter teaches with is the one the checker shows.
Sizes: at most PAGE_IN inches wide, no text under MIN_PT points (the book's column, and a
notebook at 1280 px, show it at its own size).
"""
from __future__ import annotations

import io
import math
from typing import Optional

from checker.words import counted

# the book's program colours without its red, which here means "out of bounds"
PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C", "#CCB974", "#64B5CD"]
MASKED, NEVER, SEVERAL, OUT, RACE = "#E6E6E6", "#FFFFFF", "#5F5F5F", "#D62728", "#D62728"
PAGE_IN, MIN_PT = 7.1, 8
MAX_TENSORS = 4        # rows of the figure: the outputs first, then inputs that tell something
MAX_LABELS = 48        # program names written on one panel
MAX_ROW_IN = 3.0       # inches one tensor's map may be high (its cells smaller, not its text)
DPI = 100


# ---- which tensors ----

def chosen(memory_map: dict) -> list[tuple[dict, Optional[dict]]]:
    """(yours, the reference's) per tensor worth a row: every output; an input where a lane left it,
    or (when no fault stopped the launch early) where your kernel reads it otherwise than the
    reference does."""
    reference = {t["tensor"]: t for t in (memory_map.get("reference") or {}).get("tensors", [])}
    stopped = memory_map.get("stopped") is not None
    rows = []
    for t in memory_map.get("tensors", []):
        ref = reference.get(t["tensor"])
        if t["role"] == "output":
            rows.append((t, ref))
        elif t["counts"]["out_of_bounds"] or (not stopped and ref is not None and not _same_partition(t, ref)):
            rows.append((t, ref))
    return rows[:MAX_TENSORS]


def _same_partition(a: dict, b: dict) -> bool:
    """The same cells inside the tensor, and the same elements together under one program (whatever
    its number): an input read by programs numbered otherwise is the same picture."""
    if [p["rows"] for p in a["panels"]] != [p["rows"] for p in b["panels"]]:
        inside = lambda t: ["".join(c for c in r if c.islower()) for p in t["panels"] for r in p["rows"]]  # noqa: E731
        if inside(a) != inside(b):
            return False
    pairs: dict[int, int] = {}
    back: dict[int, int] = {}
    for pa, pb in zip(a["panels"], b["panels"]):
        for ra, rb, sa, sb in zip(pa["program"], pb["program"], pa["rows"], pb["rows"]):
            for x, y, ca, cb in zip(ra, rb, sa, sb):
                if not (ca.islower() and cb.islower()):
                    continue
                if pairs.setdefault(x, y) != y or back.setdefault(y, x) != x:
                    return False
    return True


# ---- the words that go with it ----

def worth_drawing(memory_map: dict) -> bool:
    """Whether some launch touched a tensor: a kernel that stopped before any access (it did not
    compile, say) has nothing to draw."""
    return any(t["counts"]["never"] < t["counts"]["elements"] or t["counts"]["out_of_bounds"]
               for t in memory_map.get("tensors", []))


def describe(memory_map: dict) -> str:
    """The map in words (the picture's alternative text): per tensor drawn, what stands out."""
    said = []
    for yours, _ in chosen(memory_map):
        c, verb = yours["counts"], "written" if yours["what"] == "written" else "read"
        facts = [f"{c['never']} of {counted(c['elements'], 'element')} never {verb}" if c["never"] else "",
                 f"{counted(c['race'], 'element')} two programs raced on" if c["race"] else "",
                 f"{counted(c['out_of_bounds'], 'lane')} out of bounds" if c["out_of_bounds"] else ""]
        facts = [f for f in facts if f] or [f"every element {verb}"]
        said.append(f"{yours['tensor']} {_shape(yours)}: {', '.join(facts)}")
    return "Memory map. " + "; ".join(said) + "."

def title(memory_map: dict, case: str) -> str:
    """The figure's first line: the case."""
    return f"Memory map of the case {case}" if case else "Which program touched each element"


def launches(memory_map: dict, rows: list) -> str:
    """The figure's second line: the kernels drawn and their grids."""
    found = []
    for pair in rows:
        for t in pair:
            if t is not None and f"{t['kernel']}, grid {_grid(t['grid'])}" not in found:
                found.append(f"{t['kernel']}, grid {_grid(t['grid'])}")
    return "; ".join(found)


def notes(memory_map: dict) -> list[str]:
    """What the picture cannot say itself: where the launch stopped, the tiles, lanes drawn nowhere."""
    said = []
    stopped = memory_map.get("stopped")
    if stopped:
        what = {"out_of_bounds": "an access out of bounds", "race": "a race", "lock": "a lock broken"}.get(
            stopped["kind"], stopped["kind"])
        said.append(f"The checker stopped your launch at {what}: program {_pid(stopped['program'])}, on "
                    f"`{stopped['tensor']}` ({stopped['where']}). Nothing after that ran, so what the later "
                    f"programs would have written is blank in your map.")
    for yours, ref in chosen(memory_map):
        for t, whose in ((yours, "your map"), (ref, "the reference's")):
            if t is None:
                continue
            if t["tile"] != [1, 1]:
                said.append(f"`{t['tensor']}` is large: in {whose}, each cell is a tile of {t['tile'][0]}×"
                            f"{t['tile'][1]} elements, drawn as the most telling of them (a race, a lane out "
                            f"of bounds, an element never written first).")
            if t["more_panels"]:
                said.append(f"`{t['tensor']}` {_shape(t)}: the first {len(t['panels'])} of its "
                            f"{len(t['panels']) + t['more_panels']} slices are drawn.")
            far = t.get("far_outside", 0)
            if far and t["counts"]["out_of_bounds"]:
                said.append(f"In {whose}, {counted(far, 'lane')} of `{t['tensor']}` pointed further out than drawn.")
    if memory_map.get("reference") is None:
        said.append("No reference solution here to draw beside yours.")
    if not memory_map.get("complete", True):
        said.append("The launches made more accesses than the trace keeps: the map shows the first of them.")
    return said


def _pid(p: list | tuple) -> str:
    return "(" + ", ".join(str(int(i)) for i in p) + ")"


def _shape(t: dict) -> str:
    return "[" + ", ".join(str(n) for n in t["shape"]) + "]"


def _name(p: int, grid: list) -> str:
    """A program as the learner's tl.program_id calls give it: 2, or (1, 0) on a 2-D grid."""
    _, ny, nz = grid
    ids = (p // (ny * nz), p // nz % ny, p % nz)
    used = 3 if nz > 1 else (2 if ny > 1 else 1)
    return str(ids[0]) if used == 1 else "(" + ",".join(str(i) for i in ids[:used]) + ")"


# ---- the picture ----

def figure(memory_map: dict, case: str = "", captions: bool = False, reference_only: bool = False,
           tensors: list[str] | None = None):
    """The map as a matplotlib Figure: a row per chosen tensor, yours on the left and the reference's
    on the right (reference_only: the map given is the reference solution's, drawn alone, for the
    book; tensors: which, by name, default its outputs). captions: the notes written under the
    picture too (a PNG read on its own; the HTML writes them as text)."""
    import numpy as np
    from matplotlib.figure import Figure

    if reference_only:
        rows = [(t, None) for t in memory_map.get("tensors", [])
                if (t["tensor"] in tensors if tensors else t["role"] == "output")][:MAX_TENSORS]
    else:
        rows = chosen(memory_map)
    sides = 1 if reference_only or memory_map.get("reference") is None else 2
    left, gap = 0.45, 0.3                       # inches: the row numbers, between the two sides
    col_in = (PAGE_IN - left - 0.1 - gap * (sides - 1)) / sides
    drawn = [t for pair in rows for t in pair if t is not None]
    unit = min(0.3, min((col_in / max(1, _cols(t)) for t in drawn), default=0.3),
               min((MAX_ROW_IN / max(1, _rows(t)) for t in drawn), default=0.3))
    heights = [max(_height(t, unit) for t in pair if t is not None) for pair in rows]
    said = _wrap_lines(notes(memory_map), 118) if captions else []
    head = 0.82 if sides == 2 else 0.6
    row_head = 0.5                              # a row's title and its column numbers
    legend_in = 0.62
    total = head + sum(h + row_head + 0.15 for h in heights) + legend_in + 0.17 * len(said) + 0.15
    fig = Figure(figsize=(PAGE_IN, total), dpi=DPI)
    inch_y = lambda inches: 1 - inches / total  # noqa: E731 - figure fraction of a depth in inches
    fig.text(0.1 / PAGE_IN, inch_y(0.08), title(memory_map, case), fontsize=MIN_PT + 1, weight="bold", va="top")
    fig.text(0.1 / PAGE_IN, inch_y(0.3), launches(memory_map, rows), fontsize=MIN_PT + 1, va="top", color="#333333")
    if sides == 2:
        for k, who in enumerate(("your kernel", "the reference solution")):
            fig.text((left + k * (col_in + gap)) / PAGE_IN, inch_y(head - 0.26), who, fontsize=MIN_PT + 1, weight="bold",
                     va="top", color="#222222")
    top = head
    seen: set[str] = set()
    for (yours, ref), h in zip(rows, heights):
        for k, t in enumerate([yours, ref][:sides]):
            x = (left + k * (col_in + gap)) / PAGE_IN
            if t is None:
                fig.text(x, inch_y(top + row_head), "(not an argument of the reference's launch)", fontsize=MIN_PT,
                         va="top")
                continue
            w_in, h_in = _cols(t) * unit, _height(t, unit)
            ax = fig.add_axes([x, inch_y(top + row_head + h_in), w_in / PAGE_IN, h_in / total])
            seen |= _draw(ax, t, unit, np)
            fig.text(x, inch_y(top + 0.04), f"{t['tensor']} {_shape(t)}: {_verb(t)}",
                     fontsize=MIN_PT + 1, va="top")
        top += h + row_head + 0.15
    _legend(fig, seen, inch_y(top), rows)
    for i, line in enumerate(said):
        fig.text(0.1 / PAGE_IN, inch_y(top + legend_in + 0.17 * i), line, fontsize=MIN_PT, va="top")
    return fig


def _verb(t: dict) -> str:
    """What the colours of a tensor's map say: who wrote it (an output), who read it (an input)."""
    return "who wrote each element" if t["what"] == "written" else "who read each element"


def _grid(grid: list) -> str:
    used = 3 if grid[2] > 1 else (2 if grid[1] > 1 else 1)
    return "(" + ", ".join(str(g) for g in grid[:used]) + ("," if used == 1 else "") + ")"


def png(memory_map: dict, case: str = "", dpi: int = DPI, captions: bool = False) -> bytes:
    """The figure as PNG bytes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    fig = figure(memory_map, case, captions)
    FigureCanvasAgg(fig)
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=dpi)
    return out.getvalue()


def _wrap_lines(said: list[str], width: int) -> list[str]:
    import textwrap
    return [line for s in said for line in textwrap.wrap(s.replace("`", ""), width)]


def _cols(t: dict) -> int:
    return max((len(p["rows"][0]) if p["rows"] else 1) for p in t["panels"]) if t["panels"] else 1


def _rows(t: dict) -> float:
    return sum(len(p["rows"]) for p in t["panels"]) + 0.6 * (len(t["panels"]) - 1)


def _height(t: dict, unit: float) -> float:
    rows = sum(len(p["rows"]) for p in t["panels"]) + 0.6 * (len(t["panels"]) - 1)
    return max(rows * unit, 0.1)


def _colour(state: str, program: int) -> str:
    if state in "wrs":
        return PALETTE[program % len(PALETTE)] if program >= 0 else NEVER
    return {"s": SEVERAL, "n": NEVER, "m": MASKED, "M": MASKED, "O": OUT}.get(state, NEVER)


def _draw(ax, t: dict, unit: float, np) -> set[str]:
    """One tensor's panels on one axes, stacked top to bottom, a cell a unit; returns the states drawn."""
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_rgb

    seen: set[str] = set()
    y = 0.0
    width = _cols(t)
    lines, crosses, races, outline, shared = [], [], [], [], []
    placed: list[tuple] = []   # the boxes of the names written so far, in cells
    for panel in t["panels"]:
        states = [list(r) for r in panel["rows"]]
        rows, cols = len(states), len(states[0]) if states else 0
        image = np.ones((rows, width, 3))
        for i in range(rows):
            for j in range(cols):
                s = states[i][j]
                if s == ".":
                    continue
                seen.add(s)
                image[i, j] = to_rgb(_colour(s, panel["program"][i][j]))
                if s in "mM":
                    crosses += _cross(j, y + i, 0.3)
                elif s == "r":
                    races += _cross(j, y + i, 0.12)
                elif s == "s":   # several programs: the first one's colour, struck through
                    shared.append([(j, y + i + 1), (j + 1, y + i)])
        ax.imshow(image, extent=(0, width, y + rows, y), interpolation="nearest", aspect="auto", zorder=1)
        if unit * 72 >= 5:   # the cells apart, where there is room for a line between them
            lines += [[(j, y), (j, y + rows)] for j in range(cols + 1)]
            lines += [[(0, y + i), (cols, y + i)] for i in range(rows + 1)]
        outline += _edges(states, y)
        if panel["label"]:
            ax.text(-0.4 * 0.3 / unit, y + rows / 2, panel["label"], ha="right", va="center", fontsize=MIN_PT)
        _labels(ax, panel, y, t["grid"], unit, placed)
        y += rows + 0.6
    ax.add_collection(LineCollection(lines, colors="white", linewidths=0.8, zorder=2))
    ax.add_collection(LineCollection(crosses, colors="#888888", linewidths=1.0, zorder=3))
    ax.add_collection(LineCollection(shared, colors="white", linewidths=1.2 if unit * 72 >= 8 else 0.6, zorder=3))
    ax.add_collection(LineCollection(races, colors=RACE, linewidths=2.0, zorder=4))
    ax.add_collection(LineCollection(outline, colors="black", linewidths=1.6, zorder=5))
    ax.set_xlim(0, width)
    ax.set_ylim(y - 0.6, 0)
    ax.axis("off")
    _axis_words(ax, t, unit)
    return seen


def _cross(x: float, y: float, inset: float) -> list:
    """The two strokes of an × in the cell at (x, y), `inset` from its sides."""
    near, far = inset, 1 - inset
    return [[(x + near, y + near), (x + far, y + far)], [(x + near, y + far), (x + far, y + near)]]


def _edges(states: list[list[str]], y: float) -> list:
    """The tensor's edge: every side between a cell inside it and one outside (or the panel's border)."""
    inside = lambda i, j: 0 <= i < len(states) and 0 <= j < len(states[i]) and states[i][j].islower()  # noqa: E731
    segs = []
    for i, row in enumerate(states):
        for j in range(len(row)):
            if not inside(i, j):
                continue
            if not inside(i - 1, j):
                segs.append([(j, y + i), (j + 1, y + i)])
            if not inside(i + 1, j):
                segs.append([(j, y + i + 1), (j + 1, y + i + 1)])
            if not inside(i, j - 1):
                segs.append([(j, y + i), (j, y + i + 1)])
            if not inside(i, j + 1):
                segs.append([(j + 1, y + i), (j + 1, y + i + 1)])
    return segs


def _patches(panel: dict) -> list[tuple[str, int, list]]:
    """The connected patches of cells one program wrote, several shared (the same first one, the
    same count) or two raced on (the same two), largest first: ("p", (program,), cells), ("s",
    (first program, count), cells) or ("r", (the program met, the one that came), cells)."""
    states, programs, counts, met = panel["rows"], panel["program"], panel["count"], panel.get("met")
    rows = len(states)
    cols = len(states[0]) if rows else 0

    def key(i: int, j: int):
        s = states[i][j]
        if s == "r" and met is not None:
            return ("r", programs[i][j], met[i][j])
        if s in "wrO" and programs[i][j] >= 0:
            return ("p", programs[i][j])
        return ("s", programs[i][j], counts[i][j]) if s == "s" else None

    seen = [[False] * cols for _ in range(rows)]
    found = []
    for i in range(rows):
        for j in range(cols):
            k = key(i, j)
            if seen[i][j] or k is None:
                continue
            cells, stack = [], [(i, j)]
            seen[i][j] = True
            while stack:
                a, b = stack.pop()
                cells.append((a, b))
                for c, d in ((a + 1, b), (a - 1, b), (a, b + 1), (a, b - 1)):
                    if 0 <= c < rows and 0 <= d < cols and not seen[c][d] and key(c, d) == k:
                        seen[c][d] = True
                        stack.append((c, d))
            found.append((k[0], k[1:], cells))
    return sorted(found, key=lambda f: -len(f[2]))


def _labels(ax, panel: dict, y: float, grid: list, unit: float, placed: list) -> None:
    """A name on each patch: the program's (as tl.program_id gives it) on a patch of its colour, how
    many programs share the cells ("×3"), or the two that raced there ("0 & 1"); only where the name
    fits and covers no other name."""
    fontsize = MIN_PT + 1
    for kind, value, cells in _patches(panel)[:MAX_LABELS]:
        text = {"p": lambda: _name(value[0], grid), "s": lambda: f"×{value[1]}",
                "r": lambda: f"{_name(value[0], grid)} & {_name(value[1], grid)}"}[kind]()
        w = (0.6 * fontsize * len(text) + 4) / 72 / unit     # the name's box, in cells
        h = (fontsize + 4) / 72 / unit
        ys = [a for a, _ in cells]
        row = max(set(ys), key=lambda r: (ys.count(r), -abs(r - (min(ys) + max(ys)) / 2)))
        mid = sorted(b for a, b in cells if a == row)
        cx = (mid[0] + mid[-1] + 1) / 2 if mid[-1] - mid[0] + 1 == len(mid) else mid[len(mid) // 2] + 0.5
        rows_with = [a for a in set(ys) if any(b <= cx < b + 1 for a2, b in cells if a2 == a)]
        cy = (min(rows_with) + max(rows_with) + 1) / 2 if rows_with else row + 0.5
        room_w = len(mid) if mid[-1] - mid[0] + 1 == len(mid) else 1
        room_h = len(rows_with)
        if room_w < w * 0.95 and not (room_h >= 2 and room_w >= w * 0.6):
            continue
        box = (cx - w / 2, y + cy - h / 2, cx + w / 2, y + cy + h / 2)
        if box[0] < 0 or box[2] > len(panel["rows"][0]):   # a name never sticks out of the map
            continue
        if any(not (box[2] < b[0] or b[2] < box[0] or box[3] < b[1] or b[3] < box[1]) for b in placed):
            continue
        placed.append(box)
        colour = _colour("w", value[0])
        ax.text(cx, y + cy, text, ha="center", va="center", fontsize=fontsize, color="white", weight="bold",
                zorder=6, bbox=dict(boxstyle="round,pad=0.15", fc=colour, ec="none"))


def _axis_words(ax, t: dict, unit: float) -> None:
    """Where the cells are: the element index along the top and at each row's start (a 1-D tensor
    wrapped into rows), or the rows and columns (a 2-D one), on the first panel."""
    panel = t["panels"][0] if t["panels"] else None
    if panel is None:
        return
    tr, tc = t["tile"]
    rows, cols = len(panel["rows"]), len(panel["rows"][0])
    every_r = max(1, math.ceil(MIN_PT * 1.25 / 72 / unit))
    every_c = max(1, math.ceil(MIN_PT * 0.62 * len(str(cols * tc)) * 1.8 / 72 / unit))
    grey = dict(fontsize=MIN_PT, color="#555555")
    if t.get("wrap"):
        start, per_row = t.get("start", 0), t["wrap"]
        for j in range(0, cols, every_c):
            ax.text(j + 0.5, -0.15 / unit * 0.3, str(start + j * tc), ha="center", va="bottom", **grey)
        if rows > 1:
            for i in range(0, rows, every_r):
                ax.text(-0.1 / unit * 0.3, i + 0.5, str(start + i * per_row), ha="right", va="center", **grey)
        return
    row0 = panel["row0"]
    for i in range(0, rows, every_r):
        ax.text(-0.1 / unit * 0.3, i + 0.5, str((row0 + i) * tr), ha="right", va="center", **grey)
    for j in range(0, cols, every_c):
        ax.text(j + 0.5, -0.15 / unit * 0.3, str(j * tc), ha="center", va="bottom", **grey)


def _legend(fig, seen: set[str], y: float, rows: list) -> None:
    """What each colour and mark means: the programs' colours, then only the states drawn."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    inputs = any(t is not None and t["what"] == "read" for pair in rows for t in pair)
    outputs = any(t is not None and t["what"] == "written" for pair in rows for t in pair)
    did = " / ".join(w for w, there in (("wrote", outputs), ("read", inputs)) if there) or "wrote"
    handles = [Patch(facecolor=PALETTE[0], label=f"the program that {did} it (its tl.program_id on it)")]
    meaning = {
        "s": Patch(facecolor=PALETTE[0], edgecolor="white", hatch="//",
                   label="×n: n programs, the first one's colour (atomics" + (", or reads)" if inputs else ")")),
        "r": Line2D([], [], color=RACE, marker="x", markersize=9, markeredgewidth=2, linestyle="none",
                    label="a race: two programs, no atomic"),
        "n": Patch(facecolor=NEVER, edgecolor="#999999", label="no program " + did.replace("wrote", "wrote to")
                   .replace(" / ", " or ") + " it"),
        "m": Patch(facecolor=MASKED, edgecolor="#999999", hatch="xx", label="a lane the mask switched off"),
        "O": Patch(facecolor=OUT, label="a lane out of bounds (stopped)"),
    }
    for state in "snrmO":
        if state in seen or (state == "m" and "M" in seen):
            handles.append(meaning[state])
    handles.append(Line2D([], [], color="black", linewidth=1.6, label="the tensor's edge"))
    fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.1 / PAGE_IN, y), ncol=2, fontsize=MIN_PT,
               frameon=False, handlelength=1.6, columnspacing=1.0, borderaxespad=0.0, labelspacing=0.4)
