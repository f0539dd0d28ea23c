"""python -m checker pNN --bench: how fast the learner's kernels are, on a GPU, next to PyTorch.

Only after the kernels pass the GPU check (a fast wrong kernel is not fast). Per benchmark size:
the median time of the learner's part, of the same work in PyTorch eager, under torch.compile and,
where Liger-Kernel has that kernel and is installed, with Liger's, each as GB/s (the bytes the work
must move, spec.Bench.traffic) and TFLOP/s where it has flops, and the device's copy bandwidth
measured in the same run: the ceiling a memory-bound kernel can reach.

torch.compile compiles the same work the learner's kernels do: the spec builds the PyTorch work
from a `wrap` it is given (torch.compile, or nothing for eager) around the forward computation, so a
backward is the compiled forward's own backward graph, and a training step is compiled whole. The
column says whether compile really compiled (Dynamo's counters: graphs made, graph breaks), so a
column that ran eager under another name cannot pass for a compiled one.
Each is captured once in a CUDA graph and the graph's replay is timed (triton's do_bench: the L2
cache flushed before every run): the GPU's time, without Python's launch overhead (tens of
microseconds per launch, more than a small kernel's whole run). Where one of them cannot be
captured, all of that size fall back to plain launches, and the table says which. The columns (and
the copy that measures the ceiling) are timed in turn, ROUNDS times over, and each keeps the median
of its rounds: a GPU's clock drifts as it warms (on an H100, the same product took 5 % longer a
minute later), and timing one after the other would hand that drift to whichever ran last.

The timing runs in the checker's worker process (worker.run_bench, timing.py); the table and the
chart are drawn in the parent (tables.py); a row and how it was measured, which both read, is here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

TIMING_REPS_MS = 100  # triton.testing.do_bench's time budget per measurement
ROUNDS = 3  # turns of (learner, PyTorch, torch.compile, Liger); each keeps its median
# The ceiling. The copy of a size's own bytes is timed at both ends of every round (the median of
# 2 x ROUNDS: one bad measurement cannot move it), and a large copy beside it gives the memory's rate
# with no launch or cache effect to hide behind. One row of p30 once read 2,409 GB/s for the copy
# where the others read ~2,950: cudaMemcpy's rate at a gigabyte, not the device's (ceiling.py).
LARGE_COPY_BYTES = 2 * 2**30  # 1 GiB read and 1 GiB written
# a device's usual large-copy rate, read + write, as this project's machines measured it (2026-11):
# a run more than CEILING_DRIFT away from it says so, and its fractions of the copy are suspect
USUAL_COPY_GBPS = {"NVIDIA H100 80GB HBM3": 3000.0, "NVIDIA H200": 4300.0}
CEILING_DRIFT = 0.10
METHOD = ("medians of {rounds} interleaved rounds of triton.testing.do_bench ({reps} ms each, the L2 cache "
          "flushed before every run)")


@dataclass
class BenchRow:
    case: str
    dims: str
    dtype: str
    ms: float
    torch_ms: float
    compile_ms: float | None       # None: torch.compile did not work here
    gbytes: float                  # the work's traffic, 1e9 bytes
    tflop: float | None
    copy_gbps: float               # device copy bandwidth, read + write
    device: str = ""
    timing: str = "launches"       # "CUDA graphs" or "launches" (see the module docstring)
    compile_status: str = ""       # "compiled", "compiled with N graph breaks", "ran eager: ...", "failed: ..."
    liger_ms: float | None = None  # Liger-Kernel's kernel for the same work, where it has one
    torch_version: str = ""
    triton_version: str = ""
    scratch_mib: dict[str, float] | None = None  # per column, where the spec asks (scratch_bytes)
    extra_ms: dict[str, float] = field(default_factory=dict)  # the spec's further baselines, by column name
    liger_status: str = ""         # "kernel", "not installed", or "no kernel" (the spec names none)
    # --profile: per column ("yours", "compile"), the kernels of one run: [name, µs, launches] (kernel_times)
    kernels: dict[str, list[list]] | None = None
    floors: list[str] = field(default_factory=list)  # extra_ms columns that do only part of the work
    torch_backend: str = ""        # the library PyTorch picked for the torch column ("cuDNN"), where the spec names it
    copy_samples_gbps: list[float] = field(default_factory=list)  # each timing of the same-bytes copy
    copy_large_gbps: float | None = None  # the LARGE_COPY_BYTES copy, same rounds: the memory's own rate
    absent: dict[str, str] = field(default_factory=dict)  # the spec's further baselines left out here, and why
    baseline_versions: dict[str, str] = field(default_factory=dict)  # the baselines' libraries installed: name -> version

    def others(self) -> dict[str, float]:
        """The non-learner times of this row, by column."""
        found = {"torch": self.torch_ms, "compile": self.compile_ms, "liger": self.liger_ms, **self.extra_ms}
        return {name: ms for name, ms in found.items() if ms is not None}

    def column_ms(self, name: str) -> float | None:
        """The time of one column: "yours", a fixed baseline, or one of the spec's further baselines."""
        return self.ms if name == "yours" else {**self.others()}.get(name)

    def best_other(self) -> str:
        """The fastest column that is not yours and does the whole work (a floor does only part)."""
        others = {name: ms for name, ms in self.others().items() if name not in self.floors}
        return min(others, key=others.get) if others else ""

    def gbps(self, ms: float | None) -> float | None:
        return None if ms is None else self.gbytes / (ms / 1e3)

    def tflops(self, ms: float | None) -> float | None:
        return None if ms is None or self.tflop is None else self.tflop / (ms / 1e3)
