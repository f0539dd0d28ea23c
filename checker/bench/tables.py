"""A benchmark's rows as the learner reads them: the table, its header and notes, the ceiling's lines,
the markdown table and the chart (checker/bench/measured.py says what each column is)."""
from __future__ import annotations

import statistics

from checker.bench.measured import (CEILING_DRIFT, LARGE_COPY_BYTES, METHOD, ROUNDS, TIMING_REPS_MS,
                                    USUAL_COPY_GBPS, BenchRow)


def _fmt(value: float | None, unit: str) -> str:
    return "      -" if value is None else f"{value:7.0f}" if unit == "GB/s" else f"{value:7.2f}"


COLUMNS = (("yours", "ms"), ("torch", "torch_ms"), ("compile", "compile_ms"), ("liger", "liger_ms"))


def _columns(rows: list[BenchRow]) -> list[str]:
    """The timed columns: Liger's only where some row has it; then the spec's further baselines."""
    fixed = [name for name, _ in COLUMNS if name != "liger" or any(r.liger_ms for r in rows)]
    return fixed + list(dict.fromkeys(name for r in rows for name in r.extra_ms))


KEY_COLUMN = "best other / yours"  # the verdict of a row: above 1, yours is the fastest


def _label(name: str, rows: list[BenchRow]) -> str:
    """A column's name in the head: the torch column with the library PyTorch picked ("torch
    (cuDNN)"), all of them where the sizes got different ones (each cell then says its own)."""
    backends = list(dict.fromkeys(r.torch_backend for r in rows if r.torch_backend))
    return f"torch ({' / '.join(backends)})" if name == "torch" and backends else name


def _cells(rows: list[BenchRow]) -> tuple[str, list[str], list[list[str]]]:
    """Per row: size, then time and rate of each column (the best non-learner time marked *), the
    copy bandwidth, and the best non-learner time over yours; in TFLOP/s where the work has flops,
    else GB/s. Returns (unit, head, rows)."""
    unit = "TFLOP/s" if any(r.tflop for r in rows) else "GB/s"
    columns = _columns(rows)
    head = ["size"] + [h for name in columns for h in (f"{_label(name, rows)} ms", unit)] + ["copy GB/s", KEY_COLUMN]
    several = len({r.torch_backend for r in rows if r.torch_backend}) > 1
    cells = []
    # rows whose sizes are alike differ by a flag (causal or not): they are named by their case
    twins = {r.dims for r in rows if sum(o.dims == r.dims and o.dtype == r.dtype for o in rows) > 1}
    for r in rows:
        rate = r.tflops if unit == "TFLOP/s" else r.gbps
        best = r.best_other()
        row = [(r.case if r.dims in twins else r.dims) + ("" if r.dtype == "float32" else " " + r.dtype)]
        for name in columns:
            ms = r.column_ms(name)
            mark = "*" if name == best else ""
            own = f" ({r.torch_backend})" if name == "torch" and several and r.torch_backend else ""
            row += ["-", "-"] if ms is None else [f"{ms:.3f}{mark}{own}", _fmt(rate(ms), unit).strip()]
        best_ms = r.others().get(best)
        cells.append(row + [f"{r.copy_gbps:.0f}", f"{best_ms / r.ms:.2f}x" if best_ms else "-"])
    return unit, head, cells


def header(rows: list[BenchRow], device: str, notes: tuple[str, ...] = ()) -> list[str]:
    """What the numbers were measured against, and how (notes: the spec's own lines, Bench.notes)."""
    timing = " and ".join(sorted({r.timing for r in rows})) or "launches"
    versions = next(((r.torch_version, r.triton_version) for r in rows if r.torch_version), ("?", "?"))
    statuses = sorted({r.compile_status for r in rows if r.compile_status})
    lines = [f"Benchmark on {device}; torch {versions[0]}, triton {versions[1]}; timed in {timing}, "
             + METHOD.format(rounds=ROUNDS, reps=TIMING_REPS_MS) + ".",
             "torch.compile: " + ("; ".join(statuses) if statuses else "not measured") + ". "
             + _liger_words(rows)
             + " * marks the best time that is not yours; copy = the device's copy bandwidth, same run."]
    floors = list(dict.fromkeys(name for r in rows for name in r.floors))
    if floors:
        lines.append(", ".join(floors) + ": part of the work only (a floor under a design), never the best other.")
    if any(r.torch_backend for r in rows):
        lines.append("torch: the library PyTorch picked for this work, named from its GPU kernels.")
    for name, why in dict.fromkeys((name, why) for r in rows for name, why in r.absent.items()):
        where = [r.dims for r in rows if r.absent.get(name) == why]
        somewhere = any(name in r.extra_ms for r in rows)  # then it is left out at some sizes only
        lines.append(f"{name}: left out{' at ' + '; '.join(where) if somewhere else ''}, {why}.")
    versions = {name: v for r in rows for name, v in r.baseline_versions.items()}
    if versions:
        lines.append("baselines' libraries installed: " + ", ".join(f"{n} {v}" for n, v in versions.items()) + ".")
    return lines + ceiling_lines(rows, device) + list(notes)


def ceiling_lines(rows: list[BenchRow], device: str) -> list[str]:
    """How the copy ceiling was measured, and where it is not to be trusted: a run whose large copy
    is more than CEILING_DRIFT off the device's usual rate (the device, not the kernel, was slow or
    fast), and sizes whose own copy fell short of the large one (too few bytes to reach the memory's
    rate: a fraction of it is a fraction of a lower ceiling). Rows measured before the large copy
    was kept say nothing."""
    measured = [r for r in rows if r.copy_large_gbps]
    if not measured:
        return []
    large = statistics.median(r.copy_large_gbps for r in measured)
    lines = [f"copy: the same bytes as each size, timed at both ends of every round (the median of {2 * ROUNDS}); "
             f"a copy of {LARGE_COPY_BYTES / 2**31:.0f} GiB in the same rounds (read and written): {large:.0f} GB/s."]
    usual = USUAL_COPY_GBPS.get(device)
    if usual and abs(large / usual - 1) > CEILING_DRIFT:
        lines.append(f"! this run's large copy moved {large:.0f} GB/s, {large / usual - 1:+.0%} from this device's usual "
                     f"{usual:.0f}: the copy or the device was off its usual rate, and every fraction of the copy here "
                     "is suspect.")
    short = [r for r in measured if r.copy_gbps < (1 - CEILING_DRIFT) * r.copy_large_gbps]
    if short:
        each = ", ".join(f"{r.dims}{'' if r.dtype == 'float32' else ' ' + r.dtype} "
                         f"({r.copy_gbps / r.copy_large_gbps:.0%})" for r in short)
        lines.append(f"! the copy of the same bytes fell short of the large copy at {each}: too few bytes to reach "
                     "the memory's rate, so a fraction of it there is a fraction of a lower ceiling.")
    return lines


def _liger_words(rows: list[BenchRow]) -> str:
    """What the Liger column is, or why there is none (rows measured before the status was kept
    say only that it is absent)."""
    if any(r.liger_ms for r in rows):
        return "Liger-Kernel: its kernel for the same work."
    statuses = {r.liger_status for r in rows}
    if "not installed" in statuses:
        return "Liger-Kernel: not installed here (pip install liger-kernel to time it)."
    if statuses == {"no kernel"}:
        return "Liger-Kernel: it has no kernel for this work."
    return "Liger-Kernel: not measured."


def memory_lines(rows: list[BenchRow]) -> list[str]:
    """Per size, each column's scratch memory (speed.scratch_bytes), where it was measured."""
    lines = []
    for r in rows:
        if r.scratch_mib:
            each = ", ".join(f"{name} {mib:,.0f}" for name, mib in r.scratch_mib.items())
            lines.append(f"scratch memory, MiB (peak beyond inputs and returned outputs), {r.dims}: {each}")
    return lines


def against(rows: list[BenchRow], name: str, label: str) -> str:
    """For a memory-bound page: per size, yours and column `name`'s (`label`, e.g. "Liger-Kernel's
    kernel") fraction of the copy bandwidth and which is faster (two kernels at the memory's limit can
    differ by less than the clock's drift)."""
    timed = [(r, r.column_ms(name)) for r in rows if r.column_ms(name)]
    faster = [r for r, ms in timed if r.ms < ms]
    each = "; ".join(f"{r.dims}{'' if r.dtype == 'float32' else ' ' + r.dtype}: {r.ms:.4f} ms against {ms:.4f} ms, "
                     f"{r.gbps(r.ms) / r.copy_gbps:.3f} and {r.gbps(ms) / r.copy_gbps:.3f} of the copy bandwidth"
                     for r, ms in timed)
    above = [r.dims for r, _ in timed if r.gbps(r.ms) > r.copy_gbps]
    caveat = (f" At {', '.join(above)} the copy of the same bytes, timed in the same rounds, was slower than "
              "this kernel: there the copy is no ceiling." if above else "")
    missing = "".join(f" Not timed at {r.dims}: {r.absent[name]}." for r in rows if name in r.absent)
    return f"Faster than {label} at {len(faster)} of {len(timed)} sizes ({each}).{caveat}{missing}"


def against_liger(rows: list[BenchRow]) -> str:
    return against(rows, "liger", "Liger-Kernel's kernel")


def table(rows: list[BenchRow], device: str, notes: tuple[str, ...] = ()) -> list[str]:
    """The printed table: per size, time and throughput of yours and of each baseline."""
    unit, head, cells = _cells(rows)
    widths = [28] + [10, 8] * (len(head) // 2 - 1) + [9, 18]
    fmt = lambda row: " ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))  # noqa: E731
    return header(rows, device, notes) + [fmt(head)] + [fmt(row) for row in cells] + memory_lines(rows) + kernel_lines(rows)


def kernel_lines(rows: list[BenchRow]) -> list[str]:
    """--profile: per size, the kernels of one run, yours next to torch.compile's."""
    from checker.bench.kernel_times import lines
    return [line for r in rows if r.kernels for line in [""] + lines(r.dims, r.kernels)]


def markdown_table(rows: list[BenchRow]) -> str:
    """The table as Markdown, for the book (a page column is narrower than the terminal's table):
    the rate of yours only, beside its time. Its key column, the best other time over yours, comes right after the size: a table wider than
    the column scrolls, and the verdict must not be what scrolls out of sight."""
    unit, head, cells = _cells(rows)
    if unit == "TFLOP/s":  # the copy bandwidth bounds memory-bound work only: a narrower table without it
        drop = head.index("copy GB/s")
        head, cells = head[:drop] + head[drop + 1:], [row[:drop] + row[drop + 1:] for row in cells]
    # the other baselines' rates go (the same work: a rate says no more than its time), yours stays
    keep = [i for i, name in enumerate(head) if not (name == unit and i > 2)]
    head, cells = [head[i] for i in keep], [[row[i] for i in keep] for row in cells]
    key = head.index(KEY_COLUMN)
    head, cells = [head[0], head[key], *head[1:key], *head[key + 1:]], \
        [[row[0], row[key], *row[1:key], *row[key + 1:]] for row in cells]
    return "\n".join("| " + " | ".join(row) + " |" for row in [head, ["---"] * len(head)] + cells)


def chart(rows: list[BenchRow], title: str):
    """Per size: yours, PyTorch and torch.compile, as TFLOP/s where the work is counted in flops
    (a matmul), else as GB/s with the device's copy bandwidth as the ceiling. Returns the figure."""
    import matplotlib.pyplot as plt
    import numpy as np
    flops = any(r.tflop for r in rows)
    rate = (lambda r, ms: r.tflops(ms) or 0) if flops else (lambda r, ms: r.gbps(ms) or 0)  # noqa: E731
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(rows) + 2), 3.6))
    pytorch = _label("torch", rows).replace("torch", "PyTorch")
    series = [("yours", [rate(r, r.ms) for r in rows]), (pytorch, [rate(r, r.torch_ms) for r in rows]),
              ("torch.compile", [rate(r, r.compile_ms) for r in rows])]
    if any(r.liger_ms for r in rows):
        series.append(("Liger-Kernel", [rate(r, r.liger_ms) for r in rows]))
    for name in dict.fromkeys(n for r in rows for n in r.extra_ms):
        series.append((name, [rate(r, r.extra_ms.get(name)) for r in rows]))
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=label)
    if not flops:
        ax.plot(x, [r.copy_gbps for r in rows], "k--", marker="_", markersize=20, label="device copy")
    ax.set_xticks(x, [r.dims for r in rows], fontsize=8)
    ax.set_ylabel("TFLOP/s" if flops else "GB/s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
