"""The short form's vocabulary: what a spec writes to declare its outputs, parts, cases, benchmark
and known bugs. Each call returns a plain record (a Decl); checker/puzzle/build.py turns the records
into the Puzzle model (checker/puzzle/model.py). A spec imports all of it from `checker.puzzle`.

    PUZZLE = puzzle(
        1, "add_constant", "Add a constant",
        inputs={"x": randn("N")},
        reference=lambda x: {"z": x + 10},
        parts=[part("forward", "Add 10", ["add_constant_kernel"], outputs=["z"],
                    launch=lambda k, x, z, N, BLOCK: k.add_constant_kernel[(1,)](x, z, N, BLOCK=BLOCK))],
        cases=[case(N=8, BLOCK=8, documented=True), case(N=1000, BLOCK=1024)],
    )

Names are the glue: `reference` and `launch` receive, by parameter name, the inputs, the outputs,
the sizes (every name used in an input's shape), the case's parameters (BLOCK, ...) and the
puzzle's constants. A backward part names its gradients, `grads={"dx": "x"}`, and the upstream
gradient of each forward output, `upstream={"y": "dy"}`: autograd computes the truth from the
same reference, so a gradient formula is never written twice.

The rest of the vocabulary lives by concept: inputs.py (randn, custom, ...), launch.py (scratch,
cdiv, ...), tolerances.py. Nothing here imports torch or triton: `python -m checker --list` stays
instant; tensors are made only in the checker's worker process.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from checker.puzzle.inputs import TensorInput
from checker.puzzle.model import Tolerance


@dataclass(frozen=True)
class Out:
    """An output the kernels write. Plain outputs start as NaN (so 'never written' shows);
    accumulated ones start at zero and are fp32 (or int32) whatever the input dtype."""
    name: str
    accumulated: bool = False
    dtype: str = "like"               # "like": the case's dtype (integers stay int32); or "float32", "int32"
    shares: Callable[..., Any] | None = None   # by name -> [S, ...] shares, or (index [S], values [S, ...])
    share_unit: str = "row"           # what one share comes from, in hints ("row", "token", "program")
    tolerance: Mapping[str, Tolerance] | None = None   # per dtype, overriding the defaults
    title: str = ""                   # the documented case's "<title> max difference" line
    # by name -> the output's typical magnitude, which its tolerance is relative to (model.Tolerance);
    # default: the RMS of the reference output (for shares, sqrt(their count) times their RMS if larger)
    scale: Callable[..., float] | None = None
    # the launch computes it itself from what the kernels wrote (a provided matmul) and returns it: no
    # buffer is made for it, so a NaN in it is arithmetic's, not the never-written fill
    provided: bool = False


def out(name: str, **kw) -> Out:
    return Out(name, **kw)


@dataclass(frozen=True)
class PartDecl:
    name: str
    title: str
    kernels: tuple[str, ...]
    outputs: tuple[Out, ...]
    launch: Callable[..., Any]
    grads: Mapping[str, str] = field(default_factory=dict)      # output name -> input it differentiates
    upstream: Mapping[str, str] = field(default_factory=dict)   # forward output -> its upstream gradient input
    repeat: int = 0                   # GPU: launches that must give identical bits (spec.Part.repeat)
    # size -> the parameter that blocks it in this part's kernels, where not the puzzle's `blocks`
    # (a part that takes a row in one block of its own width): the cases' notes follow it
    blocks: Mapping[str, str] = field(default_factory=dict)


def part(name: str, title: str, kernels: Sequence[str], *, outputs: Sequence[str | Out],
         launch: Callable[..., Any], grads: Mapping[str, str] | None = None,
         upstream: Mapping[str, str] | None = None, repeat: int = 0,
         blocks: Mapping[str, str] | None = None) -> PartDecl:
    outs = tuple(o if isinstance(o, Out) else Out(o) for o in outputs)
    return PartDecl(name, title, tuple(kernels), outs, launch, dict(grads or {}), dict(upstream or {}), repeat,
                    dict(blocks or {}))


@dataclass(frozen=True)
class CaseDecl:
    values: Mapping[str, Any]         # sizes and parameters by name (a parameter may be a function of sizes)
    name: str = ""
    documented: bool = False
    dtype: str = "float32"
    gpu_only: bool = False
    tags: tuple[str, ...] = ()
    inputs: Mapping[str, TensorInput] = field(default_factory=dict)   # this case's own recipes
    seed: int | None = None           # its data's seed (default: from the puzzle's slug and the case's name)
    shape: str = ""                   # shown by its tensors' shapes instead of its sizes (model.Case.shape)
    # launch parameter -> other values: the same case again with each (its data too), launched so
    launches: Mapping[str, tuple] = field(default_factory=dict)


def case(name: str = "", *, documented: bool = False, dtype: str = "float32", gpu_only: bool | None = None,
         tags: Iterable[str] = (), inputs: Mapping[str, TensorInput] | None = None, seed: int | None = None,
         shape: str = "", launches: Mapping[str, Iterable[Any]] | None = None, **values) -> CaseDecl:
    """One configuration: sizes and block parameters by name, e.g. case(N=1000, BLOCK=128).

    gpu_only: left out, a bf16 case runs on a GPU only and an fp32 case everywhere. The
    interpreter computes bf16 as a GPU does (checker/interpreter/bf16.py), but slowly: a small bf16 case
    says gpu_only=False to run on the CPU too, where it catches what only bf16 shows (a sum
    kept in bf16).
    seed: the generator's seed for this case's inputs, in place of one made from the puzzle's slug
    and the case's name: it keeps a case's data when the case is renamed (p22 keeps the seeds its
    cases had before the short form, made from the name alone).
    shape: the case shown by its tensors' shapes, "[4, 4, 8] -> [4, 4, 16]", instead of by its
    sizes (x of shape [4, 4, 8] is M = 16 rows of H = 8 to the kernels): the report then says
    "dimensions", and its sizes stay out of the hints that reason about named sizes, as for a case
    declared without them.
    launches: a value the launch chooses (a persistent grid's PROGRAMS) -> other values to launch the
    case with, e.g. {"PROGRAMS": (2, 5)}: the case is checked once more with each, on the same data,
    so that a kernel that assumes the launch (a step of 3 where tl.num_programs(0) belongs) fails one
    of them, and the pair that differs in that value alone says so (checker/diagnosis/launch_assumed.py)."""
    if gpu_only is None:
        gpu_only = dtype == "bfloat16"
    return CaseDecl(dict(values), name, documented, dtype, gpu_only, tuple(tags), dict(inputs or {}), seed, shape,
                    {param: tuple(others) for param, others in (launches or {}).items()})


@dataclass(frozen=True)
class BenchDecl:
    part: str
    cases: tuple[CaseDecl, ...]
    traffic: Callable[..., float]               # by name -> bytes the work must move
    torch: Callable[..., Callable[[], Any]]     # by name (and wrap) -> the same work in PyTorch
    flops: Callable[..., float] | None = None
    liger: Callable[..., Callable[[], Any]] | None = None
    extra: Mapping[str, Callable[..., Callable[[], Any]]] = field(default_factory=dict)
    memory: bool = False
    floors: Mapping[str, Callable[..., Callable[[], Any]]] = field(default_factory=dict)
    backend: Callable[[list[str]], str] | None = None
    notes: tuple[str, ...] = ()


def bench(part: str, cases: Sequence[CaseDecl], *, traffic: Callable[..., float],
          torch: Callable[..., Callable[[], Any]], flops: Callable[..., float] | None = None,
          liger: Callable[..., Callable[[], Any]] | None = None, memory: bool = False,
          extra: Mapping[str, Callable[..., Callable[[], Any]]] | None = None,
          floors: Mapping[str, Callable[..., Callable[[], Any]]] | None = None,
          backend: Callable[[list[str]], str] | None = None, notes: Sequence[str] = ()) -> BenchDecl:
    """What --bench times (GPU only): a part at these sizes, next to `torch` doing the same work.
    torch receives, besides inputs and sizes by name, `wrap`: it passes its forward computation
    through it (torch.compile for the compiled column), so that compile compiles the same work.
    liger: the same work with Liger-Kernel's kernel, where Liger has one (optional at run time).
    memory: also report each column's scratch memory, the peak it allocates beyond its inputs and
    what it returns (a fused kernel's point may be the memory it does not use).
    extra: more baselines by column name, each by name -> the work (eager), e.g. {"flash": ...}.
    floors: columns like extra's that do only part of the work, the part a design cannot go under
    (its products by cuBLAS, say): shown, never counted as the best time that is not yours.
    backend: the GPU kernels' names of the torch column's run -> the library PyTorch picked for it
    ("cuDNN"), named in the table's head: "PyTorch" alone does not say which kernel was beaten.
    notes: lines the table's head carries, e.g. how the flops of a causal size are counted."""
    return BenchDecl(part, tuple(cases), traffic, torch, flops, liger, dict(extra or {}), memory, dict(floors or {}),
                     backend, tuple(notes))


@dataclass(frozen=True)
class Variant:
    """A known bug as a formula: what a kernel with that bug computes, the cause class it belongs to
    (checker/diagnosis/model.py) and the hint it earns. Where two mistakes compute the same (a mask
    left out, or a walk that runs unmasked into the block that needs it), `cause` is a tuple of the
    classes: the hint then asks about each."""
    name: str
    cause: str | tuple
    hint: str
    compute: Callable[..., Mapping[str, Any]]   # by name (float64 inputs, sizes, params) -> outputs


def variant(name: str, cause: str | tuple, hint: str, compute: Callable[..., Mapping[str, Any]]) -> Variant:
    return Variant(name, cause, hint, compute)

