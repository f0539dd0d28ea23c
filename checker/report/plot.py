"""Where a wrong output differs: one heat map per wrong output of the report's first failure."""
from __future__ import annotations

from checker.report.model import Report

MAX_PANELS = 4


def first_failure(report: Report) -> dict | None:
    """The first case that did not pass, as the report lists it (None if all passed)."""
    return next((r for r in report.results if r.get("status") != "pass"), None)


def plot_failures(report: Report):
    """Draw |out - ref| / tolerance for the first failing case; values above 1 fail. Returns the
    figure, or None when that case has nothing to draw (it raised, or faulted: the text says why)."""
    result = first_failure(report)
    if result is None or not result.get("error_maps"):
        return None
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import MaxNLocator

    maps = list(result["error_maps"].items())[:MAX_PANELS]
    fig, axes = plt.subplots(1, len(maps), figsize=(4.2 * len(maps), 3.4), squeeze=False)
    for ax, (label, error_map) in zip(axes[0], maps):
        data = np.clip(np.asarray(error_map["grid"], dtype=float), 1e-3, 1e6)
        rows, cols = error_map["rows"], error_map["cols"]
        image = ax.imshow(data, aspect="auto", cmap="magma", norm=LogNorm(vmin=1e-3, vmax=max(10.0, data.max())),
                          interpolation="nearest", extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
        ax.set_title(f"{label}\n|got - expected| / tolerance", fontsize=9)
        pooled = data.shape != (rows, cols)
        ax.set_xlabel(("element" if rows == 1 else "column") + (" (each cell: the worst of several)" if pooled else ""),
                      fontsize=8)
        ax.set_ylabel("" if rows == 1 else "row")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if rows == 1:
            ax.set_yticks([])
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(f"{result['part']}: {result['case']} ({result['dims']}) — above 1 is wrong", fontsize=10)
    fig.tight_layout()
    plt.show()
    return fig
