"""What a launch did besides its values, for the hints: what the sanitizer saw where it ran, else what
the kernels' text says (which outputs a load, a store or an atomic names; the inputs whose pointer a
kernel takes and never uses; atomics, a −inf, loads without other=)."""
from __future__ import annotations

import ast
import functools
import re

import torch

from checker.diagnosis.undefined_lanes import unfilled_loads
from checker.diagnosis.values import Evidence
from checker.evidence.model import MemoryEvidence
from checker.parsed import tree_of
from checker.puzzle.model import Part
from checker.source import KernelSource

ATOMIC_CALL = re.compile(r"\btl\.atomic_(add|max|min|and|or|xor)\s*\(")
MINUS_INF = re.compile(r"-\s*float\(\s*[\"']inf[\"']\s*\)|float\(\s*[\"']-inf[\"']\s*\)|-\s*(math|np|numpy)\.inf\b")


def written_by_text(source: KernelSource, names: list[str]) -> dict[str, set[str]]:
    """Without the sanitizer, what the kernels' text does to each output: a tl.load, tl.store or
    tl.atomic_* whose pointer expression names the output's parameter (z_ptr, dgamma_ptr). An output
    no call names is left out (unknown)."""
    return {name: set(kinds) for name, kinds in _written_by_text(source.text, tuple(names)).items()}


@functools.lru_cache(maxsize=32)  # asked of the same text for every failing case of a check
def _written_by_text(text: str, names: tuple[str, ...]) -> dict[str, frozenset[str]]:
    tree = tree_of(text)
    if tree is None:
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
    return {name: frozenset(found) for name, found in kinds.items()}


def unused_pointers(source: KernelSource, names: list[str], kernels: tuple[str, ...]) -> set[str] | None:
    """The inputs whose pointer parameter (b, b_ptr) some kernel of the part takes and none of its
    bodies uses: a load meant for them must read elsewhere. None where the text cannot be read."""
    tree = tree_of(source.text)
    if tree is None:
        return None
    taken, used = set(), set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name not in kernels:
            continue
        params = {a.arg for a in node.args.args}
        body = {n.id for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        for name in names:
            pointers = set(pointer_names(name)) & params
            taken |= {name} if pointers else set()
            used |= {name} if pointers & body else set()
    return taken - used


def collected(part: Part, memory: MemoryEvidence | None, source: KernelSource, inputs: dict) -> Evidence:
    """What the launch did besides its values: what the sanitizer saw where it ran, else the text."""
    peaks = [float(v.detach().abs().max()) for v in inputs.values()
             if torch.is_tensor(v) and v.is_floating_point() and v.numel()]
    evidence = Evidence(uses_atomics=bool(ATOMIC_CALL.search(source.text)), input_peak=max(peaks, default=0.0),
                        minus_inf=bool(MINUS_INF.search(source.text)), unfilled=unfilled_loads(source))
    evidence.kinds = written_by_text(source, [o.name for o in part.outputs])
    if memory is not None:
        evidence.sanitized = True
        kinds = memory.kinds
        evidence.kinds = {o.name: kinds[o.name] for o in part.outputs if o.name in kinds}
        names = {}
        for o in part.outputs:
            if o.name in kinds:
                names.update({v: o.name for v in pointer_names(o.name)})
        for tensor, place in memory.poison_reads:
            name = names.get(tensor, tensor)
            evidence.poison_read.setdefault(name, place.label)
    return evidence


def pointer_names(name: str) -> list[str]:
    """The kernel parameter names a learner gives an output's pointer: z -> z_ptr, z."""
    return [name, f"{name}_ptr", f"{name}ptr"]
