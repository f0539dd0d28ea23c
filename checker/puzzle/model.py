"""What a puzzle declares so the one generic checker can run it.

A puzzle module in checker/specs/ defines `PUZZLE = Puzzle(...)`. The runner knows nothing else
about any puzzle: adding a puzzle adds a spec, a notebook, a solution and tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from checker.diagnosis.model import Diagnosis, HoldsDiagnosis, Strength

REPO_ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = REPO_ROOT / "solutions"  # the reference kernels (the student edition has none: edition.py)
# GiB: a puzzle's GPU check that peaks under this declares nothing (Puzzle.gpu_memory)
SMALL_GPU_CHECK = 4.0


class SpecError(Exception):
    """A puzzle declaration that cannot work: a message for the puzzle's author, not the learner."""


@dataclass(frozen=True)
class Tolerance:
    """|out - ref| <= (atol + per_condition * condition) * scale + rtol * |ref|, element-wise.

    `scale` is the typical magnitude of the output (Reference.scales), so atol is relative to the
    size of the numbers involved. `condition` (Reference.condition, >= 1) says how many digits the
    inputs themselves cost: LayerNorm of x with mean 1000 and spread 1 loses 3 digits in fp32
    before any kernel does anything wrong.
    """
    atol: float
    rtol: float
    per_condition: float = 0.0
    per_row: float = 0.0    # added to rtol per row summed: M same-sign fp32 additions drift ~M*u


@dataclass(frozen=True)
class Case:
    """One input configuration. `tags` let summary patterns say which kind of case fails."""
    name: str
    dtype: str = "float32"          # "float32" or "bfloat16"
    gpu_only: bool = False
    documented: bool = False        # the configuration the puzzle text uses: reported in full
    tags: frozenset[str] = frozenset()
    params: Mapping[str, Any] = field(default_factory=dict)  # the case's parameters: blocks, tiles
    sizes: Mapping[str, int] = field(default_factory=dict)   # the short form's named sizes: {"M": 4, "N": 8}
    # or the case shown by its tensors' shapes, "[4, 4, 8] -> [4, 4, 16]" (checker/puzzle/declare.py
    # case(shape=...)): its sizes then stay the builder's own, out of the report and the hints
    shape: str = ""
    # part -> the name as that part's report shows it, and what the case is without its sizes and
    # dtype (the report's label): a note about a block is true only of the parts that block the
    # size with it (checker/puzzle/build.py). A part not listed: the name, as it is.
    titles: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    # each blocked size -> the parameter that blocks it ({"N": "BLOCK_N"}): where one block ends
    blocked: Mapping[str, str] = field(default_factory=dict)
    # a case shown by its shapes keeps its named sizes here (out of `sizes`, the report and the hints
    # that compare cases by size): what a block count or an experiment on the case needs
    hidden_sizes: Mapping[str, int] = field(default_factory=dict)

    @property
    def every_size(self) -> Mapping[str, int]:
        """The case's named sizes, shown or not."""
        return self.sizes or self.hidden_sizes
    # the case this one repeats with another value of a launch parameter (case(launches=...)): the
    # same sizes, data and parameters but that one
    variation_of: str = ""

    @property
    def blocks(self) -> dict[str, int]:
        """The case's block sizes: its integer parameters named BLOCK_*."""
        return {k: v for k, v in self.params.items()
                if k.startswith("BLOCK") and isinstance(v, int) and not isinstance(v, bool)}

    def block_of(self, size: str) -> int | None:
        """The block that blocks a size in this case (None: the size is not blocked)."""
        name = self.blocked.get(size)
        value = self.params.get(name) if name else None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def dims(self) -> str:
        if self.shape:
            return self.shape
        return ", ".join(f"{k}={v}" for k, v in self.sizes.items())

    def title(self, part: str) -> str:
        """The case's name as this part's report shows it."""
        return self.titles.get(part, self.name)

    def label(self, part: str) -> str:
        """What the case is, for this part, without its sizes and dtype ('' where only they say it)."""
        return self.labels.get(part, self.name)


@dataclass(frozen=True)
class Output:
    """A tensor the learner's kernels produce and the checker compares."""
    name: str                       # key in the outputs dict
    label: str                      # printed name, e.g. "dgamma"
    forward: bool                   # forward output (else a gradient)
    accumulated: bool = False       # several programs add shares into one element (atomics)
    title: str = ""                 # the documented case's "<title> max difference" line (default: label)
    share_unit: str = "row"         # accumulated: what one share comes from, in hints ("row", "token")


@dataclass
class Reference:
    """Autograd's answer for one case, in float64, plus what hints need."""
    outputs: dict[str, Any]                   # name -> tensor
    scales: dict[str, float]                  # name -> typical magnitude (tolerance scale)
    condition: float = 1.0                    # digits the input costs (see Tolerance)
    rows: int = 1                             # rows summed into accumulated outputs (when terms is silent)
    contributions: dict[str, Any] = field(default_factory=dict)  # accumulated name -> [S, ...] shares
    # accumulated name -> [S, ...] bool: which elements share s adds to (default: all of them), for
    # sparse accumulation (an embedding row, a histogram bin gets as many shares as it has hits)
    touched: dict[str, Any] = field(default_factory=dict)
    alternatives: dict[str, dict[str, Any]] = field(default_factory=dict)  # pattern -> outputs of a known bug


@dataclass(frozen=True, init=False)
class Pattern(HoldsDiagnosis):
    """A known bug: if a wrong output matches `Reference.alternatives[name]`, its diagnosis (the
    `hint`, and `cause`, its class in checker/diagnosis/model.py CAUSES) is the output's."""
    name: str
    diagnosis: Diagnosis

    def __init__(self, name: str, hint: str, cause: str | tuple) -> None:
        object.__setattr__(self, "name", name)
        asked = tuple(cause) if isinstance(cause, tuple) else ()
        object.__setattr__(self, "diagnosis", Diagnosis(hint, "" if asked else cause, asked, code=f"variant.{name}"))

    @property
    def hint(self) -> str:
        return self.diagnosis.text


@dataclass(frozen=True, init=False)
class SummaryPattern(HoldsDiagnosis):
    """If only cases selected by `selects` fail, at least `coverage` of them do, and other cases
    pass, its diagnosis is shown. Which cases fail is weak evidence on its own: `cause` names the
    class only where that pattern leaves one explanation (only bf16 fails: precision); otherwise
    `candidates` lists the classes the hint asks about, likeliest first (checker/diagnosis/model.py)."""
    selects: Callable[[Case], bool]
    coverage: float
    diagnosis: Diagnosis

    def __init__(self, hint: str, selects: Callable[[Case], bool], coverage: float = 0.5, cause: str = "",
                 candidates: Sequence[str] = (), code: str = "cases.pattern") -> None:
        object.__setattr__(self, "selects", selects)
        object.__setattr__(self, "coverage", coverage)
        object.__setattr__(self, "diagnosis", Diagnosis(hint, cause, tuple(candidates), code=code,
                                                        strength=Strength.PATTERN))

    @property
    def hint(self) -> str:
        return self.diagnosis.text


@dataclass(frozen=True)
class Part:
    """One checkable piece of a puzzle (a command-line flag: --unfused, --fused, --backward)."""
    name: str
    title: str                      # e.g. "Backward Pass"
    kernels: tuple[str, ...]        # kernel names this part launches
    outputs: tuple[Output, ...]
    allocate: Callable[[dict, Case], dict]            # inputs -> empty outputs (the runner fills NaN)
    launch: Callable[[Any, dict, dict, Case], dict]   # kernels, inputs, outputs -> outputs (+ derived)
    forward_label: str = "Forward pass"               # the documented case's verdict lines
    gradient_label: str = "Gradients"
    # GPU only: launch this many times and demand identical bits every time (a deterministic
    # kernel); the interpreter runs programs one after another, so it cannot tell
    repeat: int = 0


@dataclass(frozen=True)
class Bench:
    """How `python -m checker pNN --bench` times a part on a GPU, next to PyTorch doing the same."""
    part: str                                         # the part whose kernels are timed
    cases: Callable[[], list[Case]]                   # the benchmark sizes (GPU only, no reference needed)
    traffic: Callable[[dict, Case], float]            # inputs, case -> bytes the work must move (GB/s)
    # inputs, case, wrap -> a function doing the same work in PyTorch, its forward computation
    # passed through wrap (torch.compile for the compiled column, the identity for eager)
    torch: Callable[[dict, Case, Callable], Callable[[], Any]]
    flops: Callable[[dict, Case], float] | None = None  # inputs, case -> floating-point operations (TFLOP/s)
    liger: Callable[[dict, Case], Callable[[], Any]] | None = None  # Liger-Kernel's kernel for the work
    # more baselines, each a column of its own (eager only): name -> (inputs, case) -> the work, e.g.
    # PyTorch's attention with one backend forced next to the backend PyTorch picks
    extra: Mapping[str, Callable[[dict, Case], Callable[[], Any]]] = field(default_factory=dict)
    memory: bool = False                              # also report each column's scratch memory (speed.scratch_bytes)
    floors: tuple[str, ...] = ()                      # extra columns doing only part of the work: never the best other
    # the torch column's GPU kernel names -> the library PyTorch picked ("cuDNN"), for the table's head
    backend: Callable[[list[str]], str] | None = None
    notes: tuple[str, ...] = ()                       # lines for the table's head (how flops are counted)


@dataclass(frozen=True)
class Puzzle:
    number: int
    slug: str                       # "p22_layernorm_linear": names the notebook and the solution
    title: str
    parts: tuple[Part, ...]
    cases: Callable[[], list[Case]]
    make_inputs: Callable[[Case, Any], dict]          # case, device -> input tensors
    reference: Callable[[dict, Case], Reference]
    tolerance: Callable[[str, Output], Tolerance]     # dtype, output -> tolerance
    patterns: tuple[Pattern, ...] = ()
    summary_patterns: tuple[SummaryPattern, ...] = ()
    # the page's labelled equations ($$ ... $$ (eq-p06-dx)) -> (label, case) -> max |formula - autograd|
    equations: tuple[str, ...] = ()
    equation_error: Callable[[str, Case], float] | None = None
    skill: str = ""                 # what the puzzle teaches, one line (the book's table of puzzles)
    chapter: str = ""               # the book part it belongs to, e.g. "Programs, blocks and masks"
    bench: Bench | None = None      # --bench: sizes and the PyTorch baseline (None: not benchmarked)
    # the outputs alone (autograd's, float64 on the CPU) for inputs the checker changed: a hypothesis
    # about operands is tested by recomputing the answer (checker/diagnosis/operands.py)
    answer: Callable[[dict, Case], dict] | None = None
    # each input's dimensions by the size names that give them ("q" -> ("B", "H", "N", "D")), where declared
    input_dims: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # (case, change) -> a case like it with one declared property changed: a size or a parameter by
    # name, "dtype", or "inputs": "plain" (checker/experiment.py shrinks a failing case with it)
    derive: Callable[[Case, Mapping[str, Any]], Case] | None = None
    # a case's named sizes, also those of a case shown by its tensors' shapes (Case.shape hides them)
    sizes_of: Callable[[Case], Mapping[str, int]] | None = None
    # what a case's data is drawn from (its inputs' recipe, its seed): a derived case's name leaves out
    # what it takes from the case it came from, so a cache of results keys on this beside the case
    data_of: Callable[[Case], str] | None = None
    # GiB the GPU check allocates at its peak (its hungriest case: inputs, float64 reference, kernels'
    # buffers), as measured (tests/gpu_memory.py); 0: at most SMALL_GPU_CHECK. Every check fits a
    # learner's 16 GiB card; the GPU suite keeps the larger ones from running side by side
    gpu_memory: float = 0.0

    @property
    def key(self) -> str:
        return f"p{self.number:02d}"

    @property
    def notebook(self) -> Path:
        return REPO_ROOT / "puzzles" / f"{self.slug}.ipynb"

    @property
    def solution(self) -> Path:
        return SOLUTIONS / f"{self.slug}.py"

    def part(self, name: str) -> Part:
        for part in self.parts:
            if part.name == name:
                return part
        raise KeyError(name)

    @property
    def kernel_names(self) -> tuple[str, ...]:
        names: list[str] = []
        for part in self.parts:
            names += [k for k in part.kernels if k not in names]
        return tuple(names)
