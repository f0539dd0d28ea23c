"""Where a wrong output differs: one panel per wrong output of the report's first failure, a heat map
of a block, a bar for a scalar."""
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

    maps = list(result["error_maps"].items())[:MAX_PANELS]
    fig, axes = plt.subplots(1, len(maps), figsize=(4.2 * len(maps), 3.4), squeeze=False)
    for ax, (label, error_map) in zip(axes[0], maps):
        if error_map["rows"] * error_map["cols"] == 1:
            _scalar(ax, label, error_map)
        else:
            _heat_map(fig, ax, label, error_map)
    fig.suptitle(f"{result['part']}: {result['case']} ({result['dims']}) — above 1 is wrong", fontsize=10)
    fig.tight_layout()
    plt.show()
    return fig


def _heat_map(fig, ax, label: str, error_map: dict) -> None:
    """A block output: each element's |got - expected| / tolerance as a colour."""
    import numpy as np
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import MaxNLocator
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


def _scalar(ax, label: str, error_map: dict) -> None:
    """A scalar output (a loss): one bar of |got - expected| / tolerance against the line at 1, and
    the two values written out; a 1x1 heat map would say nothing and crowd its ticks."""
    ratio = min(max(float(error_map["grid"][0][0]), 1e-3), 1e6)
    ax.barh([0], [ratio], color="#b2182b" if ratio > 1 else "#2166ac", height=0.35)
    ax.set_ylim(-0.4, 1.0)  # the bar low, its values written above it
    ax.axvline(1.0, color="black", linewidth=1, linestyle="--")
    ax.set_xscale("log")
    ax.set_xlim(1e-3, max(10.0, ratio * 3))
    ax.set_yticks([])
    ax.set_xlabel("|got - expected| / tolerance (the dashed line: 1)", fontsize=8)
    ax.set_title(f"{label} (a scalar)", fontsize=9)
    if "got" in error_map:
        ax.text(0.02, 0.9, f"got {error_map['got']:.6g}\nexpected {error_map['expected']:.6g}\n"
                f"{ratio:.3g} × the tolerance", transform=ax.transAxes, va="top", fontsize=9)
