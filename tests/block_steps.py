"""Where a reference kernel steps by a block size, and what each CPU case makes of it.

A kernel with two block sizes (BLOCK_M and BLOCK_K, CHUNK and BLOCK_N, BLOCK_G and BLOCK_COLS ...)
can step a loop, or place its tile, by the wrong one; that goes unseen unless some case makes the
step matter (two steps or more) while the two sizes differ. This module finds the steps in the
solution's source (`for s in range(a, b, BLOCK)`, `tl.program_id(k) * BLOCK`) and the values every
CPU case launches each kernel with (the spec's own launch, its kernels recorded, not run), so that
tests/test_contract.py can ask for such a case in every puzzle.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from checker.puzzle.model import Puzzle


@dataclass(frozen=True)
class Step:
    """A block size that a kernel steps by: a loop's step, or a tile's stride across programs."""
    kernel: str
    line: int
    block: str              # the constexpr parameter stepped by
    text: str               # the source of the loop header or of the product, for messages
    bounds: tuple = ()      # a loop: (start, stop) expressions
    axis: int = -1          # a tile: the grid axis of tl.program_id(axis)


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[str, ...]
    constexprs: tuple[str, ...]
    body: tuple[ast.stmt, ...]


def kernels(puzzle: Puzzle) -> dict[str, Kernel]:
    """The puzzle's kernels in its solution: parameters, constexpr parameters, body."""
    tree = ast.parse(puzzle.solution.read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in puzzle.kernel_names:
            params = tuple(a.arg for a in node.args.args)
            constexprs = tuple(a.arg for a in node.args.args
                               if a.annotation is not None and ast.unparse(a.annotation).endswith("constexpr"))
            found[node.name] = Kernel(node.name, params, constexprs, tuple(node.body))
    return found


def _program_id_axis(node: ast.AST, pids: dict[str, int]) -> int | None:
    if isinstance(node, ast.Name) and node.id in pids:
        return pids[node.id]
    if (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("program_id") and node.args
            and isinstance(node.args[0], ast.Constant)):
        return int(node.args[0].value)
    return None


def steps(kernel: Kernel) -> list[Step]:
    """Loops stepping by a constexpr, and tiles placed at program_id(axis) * a constexpr."""
    pids = {}  # names bound to tl.program_id(axis) directly
    for node in kernel.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            axis = _program_id_axis(node.value, {})
            if axis is not None:
                pids[node.targets[0].id] = axis
    found = []
    for node in ast.walk(ast.Module(body=list(kernel.body), type_ignores=[])):
        if (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)
                and ast.unparse(node.iter.func).split(".")[-1] in ("range", "static_range")
                and len(node.iter.args) == 3 and isinstance(node.iter.args[2], ast.Name)
                and node.iter.args[2].id in kernel.constexprs):
            found.append(Step(kernel.name, node.lineno, node.iter.args[2].id, ast.unparse(node.iter),
                              bounds=tuple(node.iter.args[:2])))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for pid, block in ((node.left, node.right), (node.right, node.left)):
                axis = _program_id_axis(pid, pids)
                if axis is not None and isinstance(block, ast.Name) and block.id in kernel.constexprs:
                    found.append(Step(kernel.name, node.lineno, block.id, ast.unparse(node), axis=axis))
    return found


class _Recorder:
    """Stands in for the kernels module in a spec's launch: records every launch, runs nothing."""

    def __init__(self) -> None:
        self.launches: list[tuple[str, tuple, tuple, dict]] = []

    def __getattr__(self, name: str):
        recorder = self

        class Launcher:
            def __getitem__(self, grid):
                def launch(*args, **kwargs):
                    shape = grid(kwargs) if callable(grid) else grid
                    recorder.launches.append((name, tuple(int(g) for g in shape), args, kwargs))
                return launch
        return Launcher()


def launches(puzzle: Puzzle) -> Iterator[tuple[str, str, tuple, dict[str, Any]]]:
    """(case name, kernel, grid, argument values by parameter name) for every CPU case and part."""
    found = kernels(puzzle)
    for case in puzzle.cases():
        if case.gpu_only:
            continue
        for part in puzzle.parts:
            inputs = puzzle.make_inputs(case, "cpu")
            recorder = _Recorder()
            part.launch(recorder, inputs, part.allocate(inputs, case), case)
            for name, grid, args, kwargs in recorder.launches:
                params = found[name].params
                values = {**dict(zip(params, args)), **{k: v for k, v in kwargs.items() if k in params}}
                yield case.name, name, grid, values


_OPS: dict[type, Callable[[int, int], int]] = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                                               ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
                                               ast.Mod: lambda a, b: a % b}
_CALLS: dict[str, Callable[..., int]] = {"minimum": min, "maximum": max, "min": min, "max": max,
                                         "cdiv": lambda a, b: -(-a // b)}


def _value(node: ast.AST, env: dict[str, Any], grid: tuple) -> int | None:
    """An integer expression of the kernel's arguments at program 0, or None if it is not one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        v = env.get(node.id)
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _value(node.left, env, grid), _value(node.right, env, grid)
        return None if a is None or b is None or (b == 0 and type(node.op) in (ast.FloorDiv, ast.Mod)) \
            else _OPS[type(node.op)](a, b)
    if isinstance(node, ast.Call):
        fn = ast.unparse(node.func).split(".")[-1]
        if fn in ("program_id", "num_programs") and node.args and isinstance(node.args[0], ast.Constant):
            axis = int(node.args[0].value)
            return 0 if fn == "program_id" else (grid[axis] if axis < len(grid) else 1)
        if fn in _CALLS:
            args = [_value(a, env, grid) for a in node.args]
            return None if None in args else _CALLS[fn](*args)
    return None


def _assign(body: list[ast.stmt], env: dict[str, Any], grid: tuple) -> None:
    """The kernel's top-level names, as program 0 computes them; under `if FLAG:` on a constexpr
    flag (CAUSAL), the branch the launch's value of the flag compiles."""
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            env[node.targets[0].id] = _value(node.value, env, grid)
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and isinstance(env.get(node.test.id), bool):
            _assign(node.body if env[node.test.id] else node.orelse, env, grid)


def matters(step: Step, kernel: Kernel, grid: tuple, values: dict[str, Any]) -> bool | None:
    """Does this launch take the step at least twice (program 0's loop; the tile's grid axis)?
    None when the loop's bounds are not plain integer arithmetic on the arguments."""
    if step.axis >= 0:
        return (grid[step.axis] if step.axis < len(grid) else 1) >= 2
    env = dict(values)
    _assign(kernel.body, env, grid)
    start, stop = (_value(b, env, grid) for b in step.bounds)
    block = values.get(step.block)
    if start is None or stop is None or not isinstance(block, int) or block <= 0:
        return None
    return math.ceil((stop - start) / block) >= 2
