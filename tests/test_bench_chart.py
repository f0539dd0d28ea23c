"""The speed charts of the book's pages (book/figures/base.py, bench_chart), drawn from the pages'
own measurements: every group of bars has a label of its own, labels never run together, and the
legend sits below them (p31's labels ran together under its legend: fourteen groups of five lines)."""
from __future__ import annotations

import json
import sys

import pytest

from book_pages import ROOT
from checker.bench.measured import BenchRow

sys.path.insert(0, str(ROOT / "book"))


@pytest.mark.parametrize("key", ["p25", "p31"])  # labels side by side; labels slanted
def test_a_speed_charts_labels_are_apart_and_its_legend_below_them(key):
    import matplotlib
    matplotlib.use("Agg")
    from figures import base
    data = json.loads((ROOT / "book" / "data" / f"{key}_bench.json").read_text(encoding="utf-8"))
    fig = base.bench_chart([BenchRow(**row) for row in data["rows"]], key)
    ax = fig.axes[0]
    fig.canvas.draw()
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert len({t.get_text() for t in labels}) == len(data["rows"])  # each group its own label
    boxes = [t.get_window_extent() for t in labels]
    if not labels[0].get_rotation():
        assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:]))
    assert ax.get_legend().get_window_extent().y1 < min(b.y0 for b in boxes)
    matplotlib.pyplot.close(fig)
