"""One case of one part: make inputs, ask autograd, run the kernels safely, compare, diagnose."""
from __future__ import annotations

import re
import time
from contextlib import nullcontext
from dataclasses import replace

import torch

from checker.evidence.compare import compare
from checker.poison import poison, poison_of, unwritten_mask
from checker.diagnosis.model import NO_HINT, Diagnosis, Span, Strength, certain
from checker.diagnosis.operands import Operands
from checker.diagnosis.values import Evidence, output_hint
from checker.diagnosis.undefined_lanes import unfilled_loads
from checker.diagnosis.variants import refuted
from checker.diagnosis import literals
from checker.diagnosis.written_numbers import (beside_a_written_constant, beside_a_written_number,
                                               beside_documented_sizes, unwritten_beside_a_number,
                                               with_written_number,
                                               written_into_error,
                                               written_to_an_input)
from checker.diagnosis.addresses import seen_in_addresses
from checker.diagnosis.faults import describe, past_the_end
from checker.evidence.model import MemoryEvidence
from checker.evidence.guards import guard_inputs, guard_outputs, overruns
from checker.source import KernelSource
from checker.words import counted
from checker.puzzle.model import Case, Part, Puzzle

MAX_MAP = 64  # error maps for plots are pooled down to at most MAX_MAP x MAX_MAP


def _case_header(case: Case, part: Part) -> dict:
    # title and label: the case as this part's report names it (a note on a block this part's
    # kernels do not use would be false here)
    return {"case": case.name, "title": case.title(part.name), "label": case.label(part.name), "dims": case.dims,
            "dtype": case.dtype, "documented": case.documented, "tags": sorted(case.tags),
            "params": dict(case.params), "sized": bool(case.sizes)}


def in_learner_lines(d: Diagnosis, source: KernelSource) -> Diagnosis:
    """The diagnosis with its place as the learner finds it: the kernel, and the line within its
    cell or file. Its producers name lines of the combined text the kernels run from."""
    span = d.where
    if span is None or not span.line:
        return d
    return replace(d, where=Span(kernel=span.kernel or source.function_at(span.line), cell=span.cell,
                                 line=source.learner_line(span.line), code=span.code))


def error_event(exc: BaseException, source: KernelSource, written: dict | None = None) -> dict:
    """What stopped the kernels, as the report reads it. A fault the instruments saw (an access out
    of bounds, a race, a lock) names its line in its diagnosis only: its place and code are filled
    from there, so that the report, the JSON and a later case's "the same" line all have them.
    written: the numbers the learner's kernels write that the solution's do not (a fault on such a
    number asks about a size written in too: checker/diagnosis/written_numbers.py)."""
    error = describe(exc, source)
    span = error.diagnosis.where
    if span is not None and span.line and not error.where:
        error.where, error.code = source.describe_line(span.line), error.code or span.code
    error.diagnosis = in_learner_lines(with_written_number(error.diagnosis, written or {}, source.text), source)
    return error.to_json()


def _error_map(got: torch.Tensor, ref: torch.Tensor, allowed: float) -> dict:
    """|out - ref| / tolerance for the notebook's plot, max-pooled to at most MAX_MAP cells a side;
    rows and cols are the output's own (a 1-D output is one row), so the plot can say if it pooled."""
    diff = (got.detach().double().cpu().reshape(ref.shape) - ref).abs() / max(allowed, 1e-30)
    diff = torch.nan_to_num(diff, nan=1e6, posinf=1e6)
    grid = diff.reshape(1, 1, 1, -1) if diff.dim() <= 1 else diff.reshape(1, 1, diff.shape[0], -1)
    rows, cols = grid.shape[2], grid.shape[3]
    side = (min(MAX_MAP, rows), min(MAX_MAP * (MAX_MAP if rows == 1 else 1), cols))
    pooled = torch.nn.functional.adaptive_max_pool2d(grid, side)
    drawn = {"grid": pooled[0, 0].tolist(), "rows": rows, "cols": cols}
    if ref.numel() == 1:  # a scalar (a loss): the plot writes its two values out instead of a 1x1 map
        drawn.update(got=float(got.detach().double().cpu().reshape(-1)[0]), expected=float(ref.reshape(-1)[0]))
    return drawn


class _SyncedKernels:
    """On a GPU, wait for each learner kernel right after its launch: a fault then surfaces at the
    learner's kernel, not at whatever CUDA call comes next (a provided matmul, say)."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name: str):
        kernel = getattr(self.module, name)
        if not hasattr(kernel, "__getitem__"):
            return kernel
        return _SyncedLauncher(kernel)


class _SyncedLauncher:
    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        launch = self.kernel[grid]

        def run(*args, **kwargs):
            result = launch(*args, **kwargs)
            torch.cuda.synchronize()
            return result
        return run


def _reproducibility(part: Part, kernels, inputs: dict, case: Case, first: dict) -> list[dict]:
    """Launch again, part.repeat - 1 times, and compare every output bit for bit with the first run."""
    found = []
    for launch in range(2, part.repeat + 1):
        outputs = part.allocate(inputs, case)
        for output in part.outputs:
            if output.name in outputs and not output.accumulated:
                poison(outputs[output.name])
        again = part.launch(_SyncedKernels(kernels), inputs, outputs, case)
        torch.cuda.synchronize()
        for output in part.outputs:
            a, b = first[output.name], again[output.name]
            differ = int((a.reshape(-1).view(torch.uint8 if a.element_size() == 1 else _same_width_int(a))
                          != b.reshape(-1).view(torch.uint8 if b.element_size() == 1 else _same_width_int(b))).sum())
            if differ and all(f["label"] != output.label for f in found):
                differs = certain(f"not reproducible: launch {launch} of {part.repeat} differs from launch 1 in "
                                  f"{differ} of {counted(a.numel(), 'element')}, bit for bit. Atomic additions "
                                  f"land in a different order every run, and floating-point addition is not "
                                  f"associative: sum each program's share into its own slot, then reduce "
                                  f"the slots in a fixed order.", "determinism", code="values.not_reproducible",
                                  strength=Strength.PROOF, subject=output.label, data={"differ": differ})
                found.append({"label": output.label, "ok": False, "forward": output.forward,
                              "title": output.title or output.label, **differs.to_json()})
    return found


def _same_width_int(t: torch.Tensor) -> torch.dtype:
    return {2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]


def _unwritten_counts(part, produced: dict, poisoned: dict) -> dict[str, int]:
    """The part's poisoned outputs that still hold some of the fill after the run, and how many elements."""
    counts = {o.name: int(unwritten_mask(produced[o.name]).sum()) for o in part.outputs
              if poisoned.get(o.name) and produced.get(o.name) is not None}
    return {name: n for name, n in counts.items() if n}


def _terms(reference, output) -> "int | torch.Tensor":
    """How many shares each element of an accumulated output sums (0 for plain outputs)."""
    if not output.accumulated:
        return 0
    if output.name in reference.touched:
        return reference.touched[output.name].sum(0).double()
    if output.name in reference.contributions:
        return reference.contributions[output.name].shape[0]
    return reference.rows


def _sanitizer():
    """The sanitizer when it guards this process's launches (the interpreter), else None."""
    from checker.interpreter import sanitizer
    return sanitizer if sanitizer.enabled() else None


ATOMIC_CALL = re.compile(r"\btl\.atomic_(add|max|min|and|or|xor)\s*\(")
MINUS_INF = re.compile(r"-\s*float\(\s*[\"']inf[\"']\s*\)|float\(\s*[\"']-inf[\"']\s*\)|-\s*(math|np|numpy)\.inf\b")


def _written_by_text(source: KernelSource, names: list[str]) -> dict[str, set[str]]:
    """Without the sanitizer, what the kernels' text does to each output: a tl.load, tl.store or
    tl.atomic_* whose pointer expression names the output's parameter (z_ptr, dgamma_ptr). An output
    no call names is left out (unknown)."""
    import ast
    try:
        tree = ast.parse(source.text)
    except SyntaxError:
        return {}
    kinds: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
            continue
        call = node.func.attr
        kind = {"store": "store", "load": "load"}.get(call, "atomic" if call.startswith("atomic_") else "")
        if not kind:
            continue
        used = {n.id.lower() for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)}
        for name in names:
            if any(u == name.lower() or u.startswith(f"{name.lower()}_") for u in used):
                kinds.setdefault(name, set()).add(kind)
    return kinds


def _unused_pointers(source: KernelSource, names: list[str], kernels: tuple[str, ...]) -> set[str] | None:
    """The inputs whose pointer parameter (b, b_ptr) some kernel of the part takes and none of its
    bodies uses: a load meant for them must read elsewhere. None where the text cannot be read."""
    import ast
    try:
        tree = ast.parse(source.text)
    except SyntaxError:
        return None
    taken, used = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name not in kernels:
            continue
        params = {a.arg for a in node.args.args}
        body = {n.id for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        for name in names:
            pointers = set(_pointer_names(name)) & params
            taken |= {name} if pointers else set()
            used |= {name} if pointers & body else set()
    return taken - used


def _evidence(part: Part, memory: MemoryEvidence | None, source: KernelSource, inputs: dict) -> Evidence:
    """What the launch did besides its values: what the sanitizer saw where it ran, else the text."""
    peaks = [float(v.detach().abs().max()) for v in inputs.values()
             if torch.is_tensor(v) and v.is_floating_point() and v.numel()]
    evidence = Evidence(uses_atomics=bool(ATOMIC_CALL.search(source.text)), input_peak=max(peaks, default=0.0),
                        minus_inf=bool(MINUS_INF.search(source.text)), unfilled=unfilled_loads(source))
    evidence.kinds = _written_by_text(source, [o.name for o in part.outputs])
    if memory is not None:
        evidence.sanitized = True
        kinds = memory.kinds
        evidence.kinds = {o.name: kinds[o.name] for o in part.outputs if o.name in kinds}
        names = {}
        for o in part.outputs:
            if o.name in kinds:
                names.update({v: o.name for v in _pointer_names(o.name)})
        for tensor, place in memory.poison_reads:
            name = names.get(tensor, tensor)
            evidence.poison_read.setdefault(name, place.label)
    return evidence


def _pointer_names(name: str) -> list[str]:
    """The kernel parameter names a learner gives an output's pointer: z -> z_ptr, z."""
    return [name, f"{name}_ptr", f"{name}ptr"]


def _written(puzzle: Puzzle, part: Part, source: KernelSource) -> dict:
    """The numbers the learner's kernels of this part write and the solution's do not."""
    return literals.foreign_integers(source.text, list(part.kernels), puzzle.solution)


def _address_hints(memory: MemoryEvidence | None, source: KernelSource, written: dict) -> list[dict]:
    """Address evidence from the sanitizer for a case whose results are wrong."""
    return [] if memory is None else [in_learner_lines(with_written_number(d, written, source.text), source).to_json()
                                      for d in seen_in_addresses(memory)]


MAP_NONE, MAP_IF_FAILING, MAP_ALWAYS = "", "failing", "always"   # run_case's map_case


def _tracing(sanitizer, map_case: str):
    """The trace of the launches' accesses (checker/interpreter/trace.py), kept where a map may be
    drawn of this case: the interpreter's checks on, and a map asked for."""
    if sanitizer is None or not map_case:
        return nullcontext()
    from checker.interpreter import trace
    return trace.recording()


def _memory_map(launches, part: Part, inputs: dict, outputs: dict, exc: BaseException | None) -> dict:
    """Who touched which element of each output and input, from the trace (checker/evidence/memory_map.py);
    stopped: the fault that ended the last launch, where one did."""
    from checker.evidence.memory_map import Tensor, as_json, memory_map
    named = [(o.name, "output", outputs.get(o.name)) for o in part.outputs]
    named += [(name, "input", value) for name, value in inputs.items()]
    tensors = [Tensor(name, role, t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.element_size())
               for name, role, t in named if torch.is_tensor(t) and t.device.type == "cpu" and t.numel()]
    fault = getattr(exc, "fault", None)
    stopped = None if fault is None else {"kind": fault.kind, "program": list(fault.program), "tensor": fault.tensor,
                                          "where": fault.where.label}
    return as_json(memory_map(launches, tensors, stopped))


def _mutated_inputs(before: dict, inputs: dict) -> list[str]:
    return [name for name, value in before.items()
            if torch.is_tensor(value) and not torch.equal(value, inputs[name])]


class ReferenceCache:
    """Float64 references by (puzzle, case, seed), kept across checks in one process (a warm
    worker, a test run): the reference of a case depends only on its inputs, and every kernel checked
    against the same case (a class's notebooks, a catalog, the parts of a puzzle) shares it. Least
    recently used first out, past a total size (the GPU cases' references are large)."""

    def __init__(self, limit_bytes: int = 1 << 31):
        self.limit = limit_bytes
        self.entries: dict[tuple, tuple] = {}   # key -> (reference, bytes), oldest first

    def get(self, key: tuple):
        entry = self.entries.pop(key, None)
        if entry is None:
            return None
        self.entries[key] = entry
        return entry[0]

    def put(self, key: tuple, reference) -> None:
        size = _size(reference)
        self.entries[key] = (reference, size)
        while sum(s for _, s in self.entries.values()) > self.limit and len(self.entries) > 1:
            self.entries.pop(next(iter(self.entries)))


def _size(reference) -> int:
    tensors = list(reference.outputs.values()) + list(reference.contributions.values())
    tensors += list(reference.touched.values()) + [t for alt in reference.alternatives.values() for t in alt.values()]
    return sum(t.numel() * t.element_size() for t in tensors if torch.is_tensor(t))


REFERENCES = ReferenceCache()


def run_case(puzzle: Puzzle, part: Part, case: Case, kernels, source: KernelSource, device: str,
             seed: int, on_launch=None, diagnose: bool = True, map_case: str = MAP_NONE) -> dict:
    """on_launch: called right before the kernels run (the runner times only them against --timeout).
    A case's float64 reference (autograd and the known-bug variants) comes from REFERENCES.
    diagnose: False for a verdict and its numbers alone, no hints (an experiment's case: checker/experiment.py).
    map_case: MAP_IF_FAILING or MAP_ALWAYS: the result carries the case's memory map ("memory_map":
    who touched which element, from the interpreter's trace of this run) if it fails, or always."""
    result = _case_header(case, part)
    clock = [time.perf_counter()]
    inputs = puzzle.make_inputs(case, device, seed)  # fresh for every part: a kernel may mutate them
    # a derived case (checker/experiment.py) may share its name with another made from another case,
    # on other data: its parameters and what its data is drawn from are part of the key
    key = (puzzle.key, case.name, case.dtype, repr(sorted(case.params.items(), key=str)),
           puzzle.data_of(case) if puzzle.data_of else "", seed)
    reference = REFERENCES.get(key)
    if reference is None:
        reference = puzzle.reference(inputs, case)
        REFERENCES.put(key, reference)
    outputs = part.allocate(inputs, case)
    clock.append(time.perf_counter())
    poisoned = {}
    for output in part.outputs:
        if output.name in outputs and not output.accumulated:
            poison(outputs[output.name])  # an output never written keeps the checker's own NaN
            poisoned[output.name] = True
    before = {name: value.clone() for name, value in inputs.items() if torch.is_tensor(value)}
    sanitizer = _sanitizer() if device == "cpu" else None
    # where nothing stops a store past an output's end, a band after it shows one (checker/evidence/guards.py)
    guards = guard_outputs(outputs) if sanitizer is None else []
    if sanitizer is None:
        guard_inputs(inputs)  # and a load past an input's end reads the same pattern on every run
    # what the sanitizer sees comes back in `memory`; a race message depends on whether the output sums
    # shares, and a read of the fill is evidence
    recording = nullcontext() if sanitizer is None else sanitizer.recording(
        outputs, shared=[outputs[o.name] for o in part.outputs if o.accumulated and o.name in outputs],
        poisoned=[(outputs[name], *poison_of(outputs[name])) for name in poisoned
                  if poison_of(outputs[name]) is not None])
    traced = _tracing(sanitizer, map_case)
    launches = None
    try:
        if on_launch is not None:
            on_launch()
        with recording as memory, traced as launches:
            produced = part.launch(_SyncedKernels(kernels) if device == "cuda" else kernels, inputs, outputs, case)
        if device == "cuda":
            torch.cuda.synchronize()
        clock.append(time.perf_counter())
    except BaseException as exc:  # learner code: any exception is a verdict, not a crash
        if isinstance(exc, KeyboardInterrupt):
            raise
        error = error_event(exc, source, _written(puzzle, part, source) if diagnose else None)
        fatal = device == "cuda" and error["kind"] == "gpu_fault"
        facts = literals.source_facts(puzzle, part, case, source.text, compared=False) if diagnose else {}
        error = written_into_error(error, facts.get("literals") or [])
        drawn = {"memory_map": _memory_map(launches, part, inputs, outputs, exc)} if launches is not None else {}
        return {**result, "status": "error", "error": error, "fatal": fatal, **facts, **drawn}

    mutated = _mutated_inputs(before, inputs)
    comparisons, maps, evidence, operands = [], {}, None, None
    overrun = overruns(guards)
    for output in part.outputs:
        got = produced.get(output.name)
        ref = reference.outputs[output.name]
        tol = puzzle.tolerance(case.dtype, output)
        if got is None or tuple(got.shape) != tuple(ref.shape) and got.numel() != ref.numel():
            shape = None if got is None else list(got.shape)
            wrong = Diagnosis(f"wrong shape: expected {list(ref.shape)}, got {shape}", code="values.shape",
                              strength=Strength.PROOF, subject=output.label)
            comparisons.append({"label": output.label, "ok": False, "forward": output.forward,
                                "title": output.title or output.label, **wrong.to_json()})
            continue
        unwritten = unwritten_mask(got) if poisoned.get(output.name) else None
        diagnosis, ruled_out = NO_HINT, []
        comparison = compare(output.label, got, ref, reference.scales[output.name], tol,
                             unwritten, reference.condition, _terms(reference, output))
        if not comparison.ok and diagnose:
            if evidence is None:
                evidence = _evidence(part, memory, source, before)
                evidence.unwritten = _unwritten_counts(part, produced, poisoned)
            others = {o.name: (produced.get(o.name), puzzle.tolerance(case.dtype, o)) for o in part.outputs
                      if o.name != output.name}
            if operands is None:
                operands = Operands(puzzle, case, before, _unused_pointers(source, list(before), part.kernels))
            diagnosis = output_hint(puzzle, output, got, reference, tol, comparison, evidence, case, others, operands)
            maps[output.label] = _error_map(got, ref, comparison.allowed)
            ruled_out = refuted(puzzle, output, got, reference, tol)
        comparisons.append({**comparison.to_json(), **diagnosis.to_json(), "forward": output.forward,
                            "title": output.title or output.label,
                            **({"refuted": ruled_out} if ruled_out else {})})
    for output in part.outputs:
        if output.name in overrun:
            label = f"{output.label} past its end"
            comparisons.append({"label": label, "ok": False, "forward": output.forward, "title": label,
                                **past_the_end(output.name, overrun[output.name]).to_json()})
    if device == "cuda" and part.repeat > 1 and all(c["ok"] for c in comparisons):
        comparisons += _reproducibility(part, kernels, inputs, case, produced)
    ok = all(c["ok"] for c in comparisons) and not mutated
    hints = _address_hints(memory, source, _written(puzzle, part, source)) if not ok and diagnose else []
    if mutated:
        hints.append(certain(f"the kernel changed its inputs: {', '.join(mutated)}. Inputs are read-only (the "
                             f"caller still needs them: a backward reads what the forward read); write only to the "
                             f"outputs, and keep a value you need to change in a register or a scratch buffer.",
                             "inplace", code="values.inplace", strength=Strength.PROOF,
                             data={"inputs": mutated}).to_json())
    if not ok and evidence is None:
        evidence = _evidence(part, memory, source, before)
    seen = {name: sorted(kinds) for name, kinds in (evidence.kinds or {}).items()} if evidence else {}
    clock.append(time.perf_counter())
    # seconds per phase: inputs + autograd reference, the kernels (compilation included), comparing
    timings = {"prepare": clock[1] - clock[0], "kernels": clock[2] - clock[1], "compare": clock[3] - clock[2]}
    if not ok and diagnose:
        result.update(literals.source_facts(puzzle, part, case, source.text))
        found = result.get("literals") or []
        comparisons = [beside_documented_sizes(c, found) for c in comparisons]
        hints = [beside_documented_sizes(h, found) for h in hints]
        comparisons = [beside_a_written_number(c, hints) for c in comparisons]
        comparisons = [unwritten_beside_a_number(c, _written(puzzle, part, source)) for c in comparisons]
        floats = literals.foreign_floats(source.text, list(part.kernels), puzzle.solution)
        comparisons = [beside_a_written_constant(c, floats) for c in comparisons]
        if mutated:  # an output never written where an input was written: the store went through its pointer
            comparisons = [written_to_an_input(c, mutated) for c in comparisons]
    if launches is not None and (map_case == MAP_ALWAYS or not ok):
        result["memory_map"] = _memory_map(launches, part, inputs, outputs, None)
    return {**result, "status": "pass" if ok else "fail", "comparisons": comparisons, "hints": hints,
            "accesses": seen,  # what the kernels did to each output (load, store, atomic), where known
            "mutated": mutated, "error_maps": maps, "timings": timings}
