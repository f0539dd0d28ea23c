"""One case of one part: make inputs, ask autograd, run the kernels safely, compare, diagnose.

The loop of one case is here; what it leans on has a module each: the references kept across
checks (references.py), what a launch did besides its values (evidence.py), a GPU's synced and
repeated launches (on_gpu.py) and the notebook's picture of an output's error (error_map.py).
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import replace

import torch

from checker.case.error_map import error_map
from checker.case.evidence import collected, unused_pointers
from checker.case.on_gpu import SyncedKernels, relaunched
from checker.case.references import REFERENCES
from checker.evidence.compare import compare
from checker.poison import poison, poison_of, unwritten_mask
from checker.diagnosis.model import NO_HINT, Diagnosis, Span
from checker.diagnosis.operands import Operands
from checker.diagnosis.values import output_hint
from checker.diagnosis.run_facts import inputs_changed, wrong_shape
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
from checker.puzzle.model import Case, Part, Puzzle

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
            produced = part.launch(SyncedKernels(kernels) if device == "cuda" else kernels, inputs, outputs, case)
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
            wrong = wrong_shape(output.label, list(ref.shape), shape)
            comparisons.append({"label": output.label, "ok": False, "forward": output.forward,
                                "title": output.title or output.label, **wrong.to_json()})
            continue
        unwritten = unwritten_mask(got) if poisoned.get(output.name) else None
        diagnosis, ruled_out = NO_HINT, []
        comparison = compare(output.label, got, ref, reference.scales[output.name], tol,
                             unwritten, reference.condition, _terms(reference, output))
        if not comparison.ok and diagnose:
            if evidence is None:
                evidence = collected(part, memory, source, before)
                evidence.unwritten = _unwritten_counts(part, produced, poisoned)
            others = {o.name: (produced.get(o.name), puzzle.tolerance(case.dtype, o)) for o in part.outputs
                      if o.name != output.name}
            if operands is None:
                operands = Operands(puzzle, case, before, unused_pointers(source, list(before), part.kernels))
            diagnosis = output_hint(puzzle, output, got, reference, tol, comparison, evidence, case, others, operands)
            maps[output.label] = error_map(got, ref, comparison.allowed)
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
        comparisons += relaunched(part, kernels, inputs, case, produced)
    ok = all(c["ok"] for c in comparisons) and not mutated
    hints = _address_hints(memory, source, _written(puzzle, part, source)) if not ok and diagnose else []
    if mutated:
        hints.append(inputs_changed(mutated).to_json())
    if not ok and evidence is None:
        evidence = collected(part, memory, source, before)
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
