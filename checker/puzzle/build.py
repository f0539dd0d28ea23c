"""From the short form to the Puzzle model: `puzzle(...)` takes the records a spec declares
(checker/puzzle/declare.py) and builds the generic Puzzle's callables: seeded inputs, NaN-filled
outputs, autograd's reference and the known-bug variants in float64, tolerances per dtype, the
cases' tags and the summary hints they allow. Mistakes an author makes are caught as the spec loads
(_validate: no torch needed).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import zlib
from typing import Any, Callable, Mapping, Sequence

from checker.puzzle.declare import BenchDecl, CaseDecl, PartDecl, Variant
from checker.puzzle.inputs import TensorInput
from checker.puzzle.launch import ARGUMENTS
from checker.puzzle.model import Bench, Case, Output, Part, Pattern, Puzzle, Reference, SpecError, Tolerance
from checker.puzzle.summaries import generic_summaries
from checker.puzzle.tolerances import ACCUMULATED_TOLERANCES, EXACT, TOLERANCES
from checker.tensors import rms


# ---------------------------------------------------------------------------------------------
# Calling declared functions by parameter name
# ---------------------------------------------------------------------------------------------
def wanted(fn: Callable[..., Any]) -> list[str] | None:
    """The names fn takes, or None if it takes **kwargs (then it gets everything)."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def call_by_name(fn: Callable[..., Any], names: Mapping[str, Any]) -> Any:
    """fn(**{the names it asks for})."""
    want = wanted(fn)
    if want is None:
        return fn(**names)
    return fn(**{n: names[n] for n in want})


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


# ---------------------------------------------------------------------------------------------
# The declared puzzle
# ---------------------------------------------------------------------------------------------
class DeclaredPuzzle:
    """Builds the generic Puzzle's callables from a short declaration."""

    def __init__(self, number: int, slug: str, inputs: Mapping[str, Any], reference: Callable[..., Any],
                 parts: Sequence[PartDecl], cases: Sequence[CaseDecl], constants: Mapping[str, Any],
                 params: Mapping[str, Any], blocks: Mapping[str, str], variants: Sequence[Variant],
                 condition: Callable[..., float] | None, float64_on_cpu: bool = False):
        self.number, self.slug = number, slug
        self.tensors = {k: v for k, v in inputs.items() if isinstance(v, TensorInput)}
        self.constants = {**{k: v for k, v in inputs.items() if not isinstance(v, TensorInput)}, **constants}
        self.reference_fn, self.parts, self.case_decls = reference, tuple(parts), tuple(cases)
        self.default_params, self.blocks, self.variants = dict(params), dict(blocks), tuple(variants)
        self.condition_fn = condition
        # a shape may name a parameter as well as a size (p31's k: "B KV S D", KV defaulting to H): the
        # parameters are not sizes a case must give
        self.size_names = list(dict.fromkeys(n for t in self.tensors.values() for n in t.names()
                                             if n not in self.default_params))
        self.outs = {o.name: o for p in self.parts for o in p.outputs}
        self.grads = {g: wrt for p in self.parts for g, wrt in p.grads.items()}
        self.upstream = {y: dy for p in self.parts for y, dy in p.upstream.items()}
        self.overrides: dict[str, dict[str, TensorInput]] = {}
        self.seeds: dict[str, int] = {}            # case name -> its declared seed
        self.hidden_sizes: dict[str, dict[str, int]] = {}  # case name -> sizes of a case shown by shape
        self.decls: dict[str, CaseDecl] = {}       # case name -> its declaration (the experiments derive from it)
        self.cases = self._build_cases()
        self.float64_on_cpu = False  # its formulas make CPU tensors: its references are computed there
        self.reference_on_cpu = float64_on_cpu  # the spec asks for its references' CPU bits (not for shapes)

    # -- cases --------------------------------------------------------------------------------
    def _block_name(self, size: str, params: Mapping[str, Any], blocks: Mapping[str, str] | None = None) -> str | None:
        """The parameter that blocks a size (BLOCK_N blocks N, or what `blocks` says; a part's own
        `blocks` before the puzzle's)."""
        name = (blocks or {}).get(size) or self.blocks.get(size) or (
            f"BLOCK_{size}" if f"BLOCK_{size}" in params else None)
        if name is None and "BLOCK" in params and len(self.size_names) == 1:
            name = "BLOCK"
        return name

    def _block_of(self, size: str, params: Mapping[str, Any], blocks: Mapping[str, str] | None = None) -> int | None:
        name = self._block_name(size, params, blocks)
        value = params.get(name) if name else None
        return value if isinstance(value, int) else None

    def _notes(self, sizes: Mapping[str, int], params: Mapping[str, Any],
               blocks: Mapping[str, str] | None = None) -> list[str]:
        """What a case's name says of its sizes: not a power of two, wider than the block that
        blocks it (named by the parameter: a puzzle's parts may block the size differently)."""
        notes = []
        for size, n in sizes.items():
            block = self._block_of(size, params, blocks)
            if not _pow2(n):
                notes.append(f"{size} not a power of two")
            if block and n > block:
                notes.append(f"{size} wider than {self._block_name(size, params, blocks)} ({block})")
        return notes

    @staticmethod
    def _name(decl: CaseDecl, dims: str, notes: list[str]) -> str:
        if decl.name:
            return decl.name
        name = "documented configuration" if decl.documented else (f"{dims}: {', '.join(notes)}" if notes else dims)
        return name if decl.dtype == "float32" else f"{decl.dtype} {name}"

    @staticmethod
    def _label(decl: CaseDecl, dims: str, notes: list[str]) -> str:
        """What the case is without its sizes and dtype: the declared name (less the sizes it
        starts with), or the notes."""
        if decl.name:
            for lead in (f"{dims}: ", f"{dims}, "):
                if dims and decl.name.startswith(lead):
                    return decl.name[len(lead):]
            return "" if decl.name == dims else decl.name
        return "documented configuration" if decl.documented else ", ".join(notes)

    def _build_cases(self, decls: Sequence[CaseDecl] | None = None) -> list[Case]:
        built = []
        for decl in self.case_decls if decls is None else decls:
            sizes = {n: int(decl.values[n]) for n in self.size_names if n in decl.values}
            missing = [n for n in self.size_names if n not in sizes]
            if missing:
                raise SpecError(f"p{self.number:02d}: a case does not give the size(s) {missing}")
            params = {}
            for name, value in {**self.default_params, **{k: v for k, v in decl.values.items()
                                                          if k not in sizes}}.items():
                params[name] = call_by_name(value, sizes) if callable(value) else value
            tags = set(decl.tags)
            blocked = {size: self._block_name(size, params) for size in sizes
                       if self._block_of(size, params) is not None}
            for size, n in sizes.items():
                block = self._block_of(size, params)
                if not _pow2(n) and block:  # the mask hint is about blocked sizes only
                    tags.update(("non_pow2", f"non_pow2_{size}"))
                if n == 1:
                    tags.add("single")
                    if block:  # one row, one key of a blocked size: a slip in the formula cannot show
                        tags.add("trivial")
                if block and n > block:
                    tags.update(("wide", f"wide_{size}"))  # wide_N: summary patterns per dimension
                if block and n % block:
                    tags.update(("tail", f"tail_{size}"))  # tail_N: which dimension's last block is partial
            if decl.inputs:
                tags.add("recipe")
            dims = ", ".join(f"{k}={v}" for k, v in sizes.items())
            name = self._name(decl, dims, self._notes(sizes, params))
            # each part's report names the case by the notes true of its own blocks
            part_notes = {p.name: self._notes(sizes, params, p.blocks) for p in self.parts}
            titles = {part: self._name(decl, dims, notes) for part, notes in part_notes.items()}
            labels = {part: self._label(decl, dims, notes) for part, notes in part_notes.items()}
            if decl.inputs:
                self.overrides[name] = dict(decl.inputs)
            if decl.seed is not None:
                self.seeds[name] = decl.seed
            if decl.shape:
                self.hidden_sizes[name] = sizes
            self.decls[name] = decl
            built.append(Case(name=name, dtype=decl.dtype, gpu_only=decl.gpu_only, documented=decl.documented,
                              tags=frozenset(tags), params=params, sizes={} if decl.shape else sizes,
                              shape=decl.shape, titles=titles, labels=labels, blocked=blocked,
                              hidden_sizes=sizes if decl.shape else {}))
            built += self._launched_again(decl, name)
        return built

    def derive(self, case: Case, change: Mapping[str, Any]) -> Case:
        """A case like `case` with one declared property changed (checker/experiment.py): a size or a
        parameter by name (a parameter computed from the sizes follows a changed size, unless the case
        set it itself), "dtype", or "inputs": "plain" (the puzzle's own inputs instead of the case's
        recipe). Its name says its sizes and the parameters it sets, so that its data, its reference
        and its report are its own; it is never documented and runs on every backend."""
        decl = self.decls[case.name]
        values = {**decl.values, **{k: v for k, v in change.items() if k not in ("dtype", "inputs")}}
        dtype = change.get("dtype", decl.dtype)
        plain = change.get("inputs") == "plain"
        sizes = {n: int(values[n]) for n in self.size_names if n in values}
        dims = ", ".join(f"{k}={v}" for k, v in sizes.items())
        set_params = {k: v for k, v in values.items() if k not in sizes and not callable(v)
                      and self.default_params.get(k) != v}
        name = ", ".join([dims, *(f"{k}={v}" for k, v in set_params.items())])
        if decl.inputs and not plain:  # the case's own inputs, named as the case names them
            name += f" ({decl.name})" if decl.name else " (its own inputs)"
        name = name if dtype == "float32" else f"{dtype} {name}"
        # the tags a case declares name what its inputs or its own settings make it ("causal", "cancellation"):
        # they go with the inputs, and with a setting of its own that the change takes away
        own_setting = any(k in decl.values and k not in sizes and decl.values[k] != v for k, v in change.items())
        derived = dataclasses.replace(decl, values=values, name=name, documented=False, dtype=dtype, gpu_only=False,
                                      inputs={} if plain else decl.inputs, launches={},
                                      tags=() if plain or own_setting else decl.tags, shape="")
        [built] = self._build_cases([derived])  # registers its recipe and its seed under its name
        return built

    def _launched_again(self, decl: CaseDecl, name: str) -> list[Case]:
        """The case again with each other value of its launch parameters (case(launches=...)), on its
        data (its seed), named after it: a pair that differs in that value alone."""
        again = []
        for param, values in decl.launches.items():
            for value in values:
                # a value the launch chooses (a program count), or an argument's value (ignore_index)
                said = f"with {ARGUMENTS[param]} = {value}" if param in ARGUMENTS else f"launched with {param} = {value}"
                repeat = dataclasses.replace(decl, values={**decl.values, param: value}, documented=False,
                                             name=f"{name}, {said}", launches={},
                                             seed=self._seed(name))
                again += [dataclasses.replace(c, variation_of=name) for c in self._build_cases([repeat])]
        return again

    def data_of(self, case: Case) -> str:
        """What the case's data is drawn from: its inputs' recipe and its seed (Puzzle.data_of)."""
        return repr((sorted(self.overrides.get(case.name, {}).items(), key=str), self._seed(case.name)))

    def _seed(self, name: str) -> int:
        """A case's data seed: declared, or made from the puzzle's slug and the case's name."""
        return self.seeds.get(name, zlib.crc32(f"{self.slug}/{name}".encode()))

    def sizes(self, case: Case) -> Mapping[str, int]:
        """The case's named sizes, also where it is shown by its shapes (Case.shape)."""
        return case.sizes or self.hidden_sizes.get(case.name, {})

    # -- inputs -------------------------------------------------------------------------------
    def _names(self, case: Case, values: Mapping[str, Any]) -> dict:
        return {**self.constants, **case.params, **self.sizes(case), **values}

    def make_inputs(self, case: Case, device: str, seed: int = 0) -> dict:
        import torch
        gen = torch.Generator().manual_seed(self._seed(case.name) + seed)
        recipes = {**self.tensors, **self.overrides.get(case.name, {})}
        # a recipe reads the case's sizes and its parameters (p27's ignore_index marks the ignored rows)
        sizes = {**case.params, **self.sizes(case)}
        drawn: dict[str, Any] = {}
        for name, recipe in recipes.items():
            if recipe.like is None:
                dims = tuple(sizes[n] for n in recipe.names())
                drawn[name] = recipe.draw(gen, dims[::-1] if recipe.transposed else dims, sizes)
        later = [n for n, r in recipes.items() if r.like is not None]
        if later:  # upstream gradients take the shape of the forward outputs
            shapes = self._forward_shapes(drawn, recipes, case)
            for name in later:
                drawn[name] = recipes[name].draw(gen, shapes[recipes[name].like], sizes)
        inputs = {}
        for name, value in drawn.items():
            recipe = recipes[name]
            dtype = getattr(torch, case.dtype if recipe.dtype == "float" else recipe.dtype)
            # rounded where it goes (a GPU rounds a large case's float64 draw in a fraction of the
            # CPU's time; float64 to float32 or bfloat16 rounds the same on both)
            tensor = value.to(device).to(dtype).contiguous()
            inputs[name] = tensor.T if recipe.transposed else tensor
        return {**inputs, **self.constants}

    def _forward_shapes(self, drawn: Mapping[str, Any], recipes: Mapping[str, TensorInput], case: Case) -> dict:
        """The forward outputs' shapes, from the forward run on the meta device (shapes, no arithmetic:
        a large case's forward in float64 took seconds); computed where the forward cannot run there
        (a shape that depends on the values)."""
        import torch
        try:
            forward = self._meta_forward({name: (value.shape, recipes[name].dtype == "float")
                                          for name, value in drawn.items()}, case)
        except Exception:  # noqa: BLE001 (any failure there only means: compute it)
            forward = self._forward(self._as_reference_inputs(drawn, recipes, case.dtype), case)
        return {name: tuple(value.shape) for name, value in forward.items() if torch.is_tensor(value)}

    def _meta_forward(self, kinds: Mapping[str, tuple[Any, bool]], case: Case,
                      rest: Mapping[str, Any] | None = None) -> dict:
        """The forward on the meta device: each tensor input by name -> (shape, floating), float64 or
        long tensors with no values, and the other inputs (a scalar eps) as they are. It raises where
        an output's shape depends on values."""
        import torch
        return self._forward({**(rest or {}), **{name: torch.empty(tuple(shape), device="meta",
                                                           dtype=torch.float64 if floating else torch.long)
                                         for name, (shape, floating) in kinds.items()}}, case)

    def _as_reference_inputs(self, drawn: Mapping[str, Any], recipes: Mapping[str, TensorInput],
                             dtype: str) -> dict:
        """What the kernels will see, in float64: rounded to the case's dtype first."""
        import torch
        values = {}
        for name, value in drawn.items():
            if recipes[name].dtype == "float":
                values[name] = value.to(getattr(torch, dtype)).double()
            else:
                values[name] = value.to(getattr(torch, recipes[name].dtype)).long()
        return values

    # -- reference ----------------------------------------------------------------------------
    def _forward(self, values: Mapping[str, Any], case: Case) -> dict:
        return dict(call_by_name(self.reference_fn, self._names(case, values)))

    def reference(self, inputs: dict, case: Case) -> Reference:
        return self._in_float64(inputs, lambda values: self._reference(values, case), self.reference_on_cpu)

    def _in_float64(self, inputs: dict, work: Callable[[dict], Any], on_cpu: bool = False) -> Any:
        """work(float64 copies of the inputs), on the inputs' device, its tensors brought to the CPU.
        A GPU computes a large case's reference, its known-bug variants and its shares in a fraction
        of the time the CPU takes (most of a GPU check's time went there). A spec whose formulas
        build tensors of their own on the CPU (an index from torch.arange) fails there on the first
        such case: it is computed on the CPU from then on."""
        import torch
        device = next((v.device for v in inputs.values() if torch.is_tensor(v)), torch.device("cpu"))
        if device.type != "cpu" and not self.float64_on_cpu and not on_cpu:
            try:
                return _to_cpu(work(self._float64_values(inputs, device)))
            except RuntimeError as err:
                if "device" not in str(err):
                    raise
                self.float64_on_cpu = True
        return work(self._float64_values(inputs, "cpu"))

    def answer(self, inputs: dict, case: Case) -> dict:
        """Autograd's outputs alone, in float64 on the CPU, for inputs the checker changed (no
        variants, no shares): what a hypothesis about the operands predicts."""
        return {k: v.double() for k, v in self._outputs(self._float64_values(inputs, "cpu"), case).items()}

    def _outputs(self, values: dict, case: Case) -> dict:
        import torch
        leaves = {}
        for wrt in set(self.grads.values()):
            leaves[wrt] = values[wrt].clone().requires_grad_()
        outputs = self._forward({**values, **leaves}, case)
        if self.grads:
            ys = [outputs[y] for y in self.upstream]
            dys = [values[dy] for dy in self.upstream.values()]
            wrts = list(leaves)
            found = torch.autograd.grad(ys, [leaves[w] for w in wrts], dys, allow_unused=True)
            by_input = {w: (g if g is not None else torch.zeros_like(leaves[w])) for w, g in zip(wrts, found)}
            for grad, wrt in self.grads.items():
                outputs[grad] = by_input[wrt]
        return {k: v.detach() for k, v in outputs.items()}

    def _reference(self, values: dict, case: Case) -> Reference:
        outputs = self._outputs(values, case)
        names = self._names(case, values)
        contributions, touched, scales = {}, {}, {}
        for name, output in self.outs.items():
            ref = outputs[name].double()
            scales[name] = rms(ref)
            if output.shares is not None:
                shares, touch = _dense_shares(call_by_name(output.shares, names), tuple(ref.shape))
                contributions[name], touched[name] = shares, touch
                counts = touch.sum(0).clamp(min=1)
                # the rounding of a sum of n shares grows like sqrt(n)
                scales[name] = max(scales[name], float(counts.max()) ** 0.5 * rms(shares[touch]))
            if output.scale is not None:
                scales[name] = float(call_by_name(output.scale, names))
        alternatives = {}
        for v in self.variants:
            # to the CPU as each is made (the reference goes there anyway): a dozen known bugs' dW of a
            # 128256-word vocabulary held on the GPU at once were 3 GiB of p28's check
            alternatives[v.name] = {k: t.detach().double().cpu() for k, t in call_by_name(v.compute, names).items()}
        condition = float(call_by_name(self.condition_fn, names)) if self.condition_fn else 1.0
        return Reference(outputs={k: v.double() for k, v in outputs.items()}, scales=scales,
                         condition=condition, contributions=contributions, touched=touched,
                         alternatives=alternatives)

    def equation_error(self, formula: tuple[str, Callable[..., Any]], case: Case) -> float:
        """max |formula - autograd| / RMS(autograd) for one case, in float64."""
        name, fn = formula
        inputs = self.make_inputs(case, "cpu")
        truth = self.reference(inputs, case).outputs[name]
        values = self._cpu_values(inputs)
        got = call_by_name(fn, self._names(case, values)).double()
        return float((got - truth).abs().max()) / max(rms(truth), 1e-300)

    # -- parts --------------------------------------------------------------------------------
    def tolerance(self, dtype: str, output: Output) -> Tolerance:
        declared = self.outs[output.name]
        if declared.tolerance and dtype in declared.tolerance:
            return declared.tolerance[dtype]
        if declared.dtype.startswith("int"):
            return EXACT
        return (ACCUMULATED_TOLERANCES if declared.accumulated else TOLERANCES)[dtype]

    def _forward_likes(self, inputs: dict, case: Case) -> dict:
        """The forward's outputs for their shapes and kinds only: run on the meta device (no
        arithmetic: a benchmark's attention at 16 heads of 16384 keys needs 32 GiB for its float64
        scores), or computed where the forward cannot run there."""
        import torch
        try:
            return self._meta_forward({name: (value.shape, value.is_floating_point())
                                       for name, value in inputs.items() if torch.is_tensor(value)}, case,
                                      {name: value for name, value in inputs.items() if not torch.is_tensor(value)})
        except Exception:  # noqa: BLE001 (any failure there only means: compute it)
            return self._in_float64(inputs, lambda values: self._forward(values, case))

    def allocate(self, decl: PartDecl) -> Callable[[dict, Case], dict]:
        def allocate(inputs: dict, case: Case) -> dict:
            import torch
            reference = self._forward_likes(inputs, case)
            device = next(v.device for v in inputs.values() if torch.is_tensor(v))
            outs = {}
            for o in (o for o in decl.outputs if not o.provided):  # the launch returns those itself
                like = reference[o.name] if o.name in reference else self._grad_shape(o.name, inputs)
                is_int = not like.is_floating_point() if o.name in reference else False
                if o.dtype != "like":
                    dtype = getattr(torch, o.dtype)
                elif is_int:
                    dtype = torch.int32
                else:
                    dtype = torch.float32 if o.accumulated else getattr(torch, case.dtype)
                fill = 0 if o.accumulated or not dtype.is_floating_point else float("nan")
                outs[o.name] = torch.full(tuple(like.shape), fill, dtype=dtype, device=device)
            return outs
        return allocate

    def _grad_shape(self, name: str, inputs: dict):
        return inputs[self.grads[name]]

    def _cpu_values(self, inputs: dict) -> dict:
        return self._float64_values(inputs, "cpu")

    @staticmethod
    def _float64_values(inputs: dict, device: Any) -> dict:
        import torch
        return {k: (v.detach().to(device).double() if v.is_floating_point() else v.detach().to(device).long())
                for k, v in inputs.items() if torch.is_tensor(v)}

    def launch(self, decl: PartDecl) -> Callable[[Any, dict, dict, Case], dict]:
        def launch(kernels, inputs: dict, outputs: dict, case: Case) -> dict:
            extra = _launch_with(decl.launch, kernels, self._names(case, {**inputs, **outputs}))
            # a launch may return outputs it computed itself (a provided matmul); a kernel launch
            # returns a compiled kernel on a GPU and None in the interpreter: neither is an output
            return {**outputs, **(extra if isinstance(extra, dict) else {})}
        return launch


def _launch_with(fn: Callable[..., Any], kernels: Any, names: Mapping[str, Any]) -> Any:
    """launch(kernels, **the names it asks for): the first parameter is the kernels module."""
    want = wanted(fn)
    if want is None:
        return fn(kernels, **names)
    return fn(kernels, **{n: names[n] for n in want[1:]})


def _to_cpu(found: Any) -> Any:
    """A Reference, a dict of tensors or a tensor, with every tensor moved to the CPU."""
    import torch
    if torch.is_tensor(found):
        return found.cpu()
    if isinstance(found, dict):
        return {k: _to_cpu(v) for k, v in found.items()}
    if isinstance(found, Reference):
        return dataclasses.replace(found, **{f.name: _to_cpu(getattr(found, f.name))
                                            for f in dataclasses.fields(found)})
    return found


def _dense_shares(shares: Any, shape: tuple) -> tuple[Any, Any]:
    """[S, *shape] shares and which elements each touches, from dense or (index, values) form."""
    import torch
    if isinstance(shares, tuple):
        index, values = shares
        index = index.reshape(-1).long()
        values = values.double().reshape(index.numel(), *shape[1:]) if len(shape) > 1 else \
            values.double().reshape(-1)
        dense = torch.zeros((index.numel(),) + tuple(shape), dtype=torch.float64, device=values.device)
        touch = torch.zeros((index.numel(),) + tuple(shape), dtype=torch.bool, device=values.device)
        rows = torch.arange(index.numel(), device=values.device)
        dense[rows, index] = values
        touch[rows, index] = True
        return dense, touch
    dense = shares.double()
    return dense, torch.ones_like(dense, dtype=torch.bool)


def puzzle(number: int, slug: str, title: str, *, inputs: Mapping[str, Any], reference: Callable[..., Any],
           parts: Sequence[PartDecl], cases: Sequence[CaseDecl], constants: Mapping[str, Any] | None = None,
           params: Mapping[str, Any] | None = None, blocks: Mapping[str, str] | None = None,
           variants: Sequence[Variant] = (), summaries: Sequence[Any] = (),
           hints: Mapping[str, str | tuple[str, tuple[str, ...]] | None] | None = None,
           condition: Callable[..., float] | None = None,
           formulas: Mapping[str, tuple[str, Callable[..., Any]]] | None = None,
           bench: BenchDecl | None = None, skill: str = "", chapter: str = "",
           float64_on_cpu: bool = False, gpu_memory: float = 0.0) -> Puzzle:
    """A Puzzle from its short declaration (see the module docstring).

    slug: "add_constant" (the files are pNN_<slug>); params: default case parameters, e.g.
    {"BLOCK": next_pow2("N")}; blocks: which parameter blocks which size when the name does not
    say (BLOCK_N blocks N); hints: override the generic summary hints, by tag ("wide", "tail",
    "non_pow2") or "bfloat16" or "documented": a text (asking about the generic candidate causes),
    (text, candidate causes), or None (no such hint); summaries: puzzle-specific SummaryPatterns,
    tried before the generic ones;
    formulas: the closed forms the book page prints, by equation label: {"eq-p06-dx": ("dx", fn)},
    fn by name (float64 inputs) -> the output's value; tests check each against autograd.
    float64_on_cpu: in a GPU check too, compute the float64 reference, variants and shares on the
    CPU (by default the GPU computes them, much faster, to the same digits but for the last ones).
    gpu_memory: GiB the GPU check allocates at its peak, as measured (tests/gpu_memory.py), where it
    is more than model.SMALL_GPU_CHECK; at most 14, so that it fits a learner's 16 GiB card.
    """
    full_slug = f"p{number:02d}_{slug}"
    declared = DeclaredPuzzle(number, full_slug, inputs, reference, parts, cases, constants or {}, params or {},
                              blocks or {}, variants, condition, float64_on_cpu)
    spec_parts = []
    for decl in declared.parts:
        outputs = tuple(Output(o.name, o.name, forward=o.name not in declared.grads, accumulated=o.accumulated,
                               title=o.title or o.name, share_unit=o.share_unit) for o in decl.outputs)
        spec_parts.append(Part(decl.name, decl.title, decl.kernels, outputs, declared.allocate(decl),
                               declared.launch(decl), repeat=decl.repeat))
    generic = generic_summaries(declared, hints or {})
    timed = None
    if bench is not None:
        bench_cases = declared._build_cases([dataclasses.replace(c, documented=False, gpu_only=True)
                                             for c in bench.cases])
        names = lambda inputs, case: declared._names(case, inputs)  # noqa: E731
        timed = Bench(part=bench.part, cases=lambda: list(bench_cases),
                      traffic=lambda i, c: float(call_by_name(bench.traffic, names(i, c))),
                      torch=lambda i, c, wrap: call_by_name(bench.torch, {**names(i, c), "wrap": wrap}),
                      flops=(lambda i, c: float(call_by_name(bench.flops, names(i, c)))) if bench.flops else None,
                      liger=(lambda i, c: call_by_name(bench.liger, names(i, c))) if bench.liger else None,
                      memory=bench.memory,
                      # wraps: a baseline's own attributes (why_absent: why it is left out) go with it
                      extra={name: (lambda fn: functools.wraps(fn)(lambda i, c: call_by_name(fn, names(i, c))))(fn)
                             for name, fn in {**bench.extra, **bench.floors}.items()},
                      floors=tuple(bench.floors), backend=bench.backend, notes=bench.notes)
    result = Puzzle(number=number, slug=full_slug, title=title, parts=tuple(spec_parts), bench=timed,
                    cases=lambda: list(declared.cases), make_inputs=declared.make_inputs,
                    reference=declared.reference, tolerance=declared.tolerance,
                    patterns=tuple(Pattern(v.name, v.hint, v.cause) for v in declared.variants),
                    summary_patterns=tuple(summaries) + tuple(generic), skill=skill, chapter=chapter,
                    equations=tuple(formulas or {}),
                    equation_error=lambda label, c: declared.equation_error((formulas or {})[label], c),
                    answer=declared.answer, derive=declared.derive, sizes_of=declared.sizes, data_of=declared.data_of,
                    input_dims={n: tuple(r.names()) for n, r in declared.tensors.items() if r.names()},
                    gpu_memory=gpu_memory)
    _validate(result, declared)
    return result


def _validate(result: Puzzle, declared: DeclaredPuzzle) -> None:
    """Mistakes a puzzle author makes, caught when the spec loads (no torch needed)."""
    key = result.key
    known_inputs = set(declared.tensors) | set(declared.constants)
    outs = set(declared.outs)
    params = {n for c in declared.cases for n in c.params}
    available = known_inputs | outs | set(declared.size_names) | params
    for decl in declared.parts:
        want = wanted(decl.launch)
        if want is not None:
            unknown = [n for n in want[1:] if n not in available]
            if unknown:
                raise SpecError(f"{key}: part {decl.name!r}'s launch asks for {unknown}, which no input, "
                                f"output, size or case parameter provides")
        for grad, wrt in decl.grads.items():
            if wrt not in declared.tensors or declared.tensors[wrt].dtype != "float":
                raise SpecError(f"{key}: gradient {grad!r} is of {wrt!r}, which is not a float tensor input")
        for y, dy in decl.upstream.items():
            if dy not in declared.tensors or declared.tensors[dy].like != y:
                raise SpecError(f"{key}: upstream gradient {dy!r} must be an input declared with shape 'like {y}'")
    want = wanted(declared.reference_fn)
    if want is not None:
        unknown = [n for n in want if n not in known_inputs | set(declared.size_names) | params]
        if unknown:
            raise SpecError(f"{key}: the reference asks for {unknown}, which no input, size or parameter provides")
    if sum(c.documented for c in declared.cases) != 1:
        raise SpecError(f"{key}: exactly one case must be documented=True (the one the puzzle text uses)")
    if len({c.name for c in declared.cases}) != len(declared.cases):
        raise SpecError(f"{key}: two cases have the same name; give one a name=")
    if not declared.cases[0].documented:
        raise SpecError(f"{key}: the documented case comes first")
    if not declared.parts:
        raise SpecError(f"{key}: no parts")
