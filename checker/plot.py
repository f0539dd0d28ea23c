"""Where a wrong output differs: one heat map per wrong output of the first failing case."""
from __future__ import annotations

from checker.report import Report

MAX_PANELS = 4


def plot_failures(report: Report):
    """Draw |out - ref| / tolerance (pooled); values above 1 fail. Returns the figure, or None."""
    failing = [r for r in report.results if r.get("error_maps")]
    if not failing:
        return None
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.colors import LogNorm

    result = failing[0]
    maps = list(result["error_maps"].items())[:MAX_PANELS]
    fig, axes = plt.subplots(1, len(maps), figsize=(4.2 * len(maps), 3.4), squeeze=False)
    for ax, (label, grid) in zip(axes[0], maps):
        data = np.clip(np.asarray(grid, dtype=float), 1e-3, 1e6)
        if data.ndim == 1:
            data = data[None, :]
        image = ax.imshow(data, aspect="auto", cmap="magma", norm=LogNorm(vmin=1e-3, vmax=max(10.0, data.max())),
                          interpolation="nearest")
        ax.set_title(f"{label}\n|got - expected| / tolerance", fontsize=9)
        ax.set_xlabel("column (pooled)" if data.shape[0] > 1 else "element (pooled)")
        ax.set_ylabel("row (pooled)" if data.shape[0] > 1 else "")
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle(f"{result['part']}: {result['case']} {result['dims']} — above 1 is wrong", fontsize=10)
    fig.tight_layout()
    plt.show()
    return fig
