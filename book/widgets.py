"""Interactive explorers built from ipywidgets that keep working in the static HTML.

A widget whose callback runs Python needs a live kernel; the built book has none.  So every
picture an explorer can show is drawn at build time, and the choice between them is wired up
in the browser with ``jslink`` (button index -> ``Stack.selected_index``), which the saved
widget state carries.  The same code works unchanged in a live notebook.
"""

from __future__ import annotations

import html

import ipywidgets as W

from figures.base import MASKED, PALETTE


def _lane_html(n: int, block: int, width_px: int = 22) -> str:
    """One row of `block` lanes per program (or loop iteration), as plain HTML."""
    programs = -(-n // block)
    rows = []
    for p in range(programs):
        cells = []
        for lane in range(block):
            off = p * block + lane
            if off < n:
                style = f"background:{PALETTE[p % len(PALETTE)]};color:white"
                text = str(off)
            else:
                style = f"background:{MASKED};color:#888"
                text = "×"
            cells.append(
                f'<span class="tgp-lane" style="{style};width:{width_px}px" title="offset {off}">'
                f"{text}</span>")
        rows.append(f'<div class="tgp-row"><span class="tgp-pid">pid {p}</span>{"".join(cells)}</div>')
    masked = programs * block - n
    pow2 = block & (block - 1) == 0
    note = (
        f"<b>H = {n}, BLOCK = {block}</b>: {programs} program{'s' if programs > 1 else ''} "
        f"(<code>triton.cdiv({n}, {block})</code>), {programs * block} lanes, "
        f"<b>{masked} masked</b> (<code>offs &lt; {n}</code> is False there). "
    )
    if masked == 0:
        note += "No lane is masked: a kernel that forgot its mask would still be right here — "
        note += "which is exactly why widths like this one hide mask bugs."
    else:
        note += (f"Lanes {n}..{programs * block - 1} load <code>other</code> (0.0) and must stay out "
                 "of every sum and every store.")
    if not pow2:
        note += " (Triton requires BLOCK to be a power of two.)"
    return (f'<div class="tgp-explorer"><p>{note}</p>{"".join(rows)}</div>')


def lanes_explorer(sizes=(8, 32, 40, 100), blocks=(8, 16, 32, 64), start=(40, 16)):
    """Choose a hidden size H and a block size; see the programs and the masked lanes.
    `start` is the (H, BLOCK) shown first."""
    first_size = sizes.index(start[0]) if start[0] in sizes else 0
    first_block = blocks.index(start[1]) if start[1] in blocks else 0
    size_buttons = W.ToggleButtons(options=[f"H = {n}" for n in sizes], description="hidden size",
                                   index=first_size)
    pages = []
    for n in sizes:
        block_buttons = W.ToggleButtons(options=[f"BLOCK = {b}" for b in blocks], description="block",
                                        index=first_block)
        views = W.Stack([W.HTML(_lane_html(n, b)) for b in blocks], selected_index=first_block)
        W.jslink((block_buttons, "index"), (views, "selected_index"))
        pages.append(W.VBox([block_buttons, views]))
    outer = W.Stack(pages, selected_index=first_size)
    W.jslink((size_buttons, "index"), (outer, "selected_index"))
    return W.VBox([size_buttons, outer], layout=W.Layout(padding="4px"))


def table_html(rows, header) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="tgp-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def choice_explorer(label: str, options: dict):
    """A row of buttons; each shows one pre-built widget (figure, HTML table, ...)."""
    buttons = W.ToggleButtons(options=list(options), description=label)
    views = W.Stack(list(options.values()), selected_index=0)
    W.jslink((buttons, "index"), (views, "selected_index"))
    return W.VBox([buttons, views])


def figure_widget(fig) -> W.Image:
    """A matplotlib figure as an Image widget (SVG), so explorers can switch between figures."""
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    return W.Image(value=buf.getvalue(), format="svg+xml", layout=W.Layout(max_width="100%"))
