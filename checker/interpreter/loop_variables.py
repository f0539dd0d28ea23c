"""A `range` loop's variable as a GPU types it, in Triton's interpreter.

A GPU compiles `for row in range(pid, M, tl.num_programs(0)):` into a loop whose variable is an
integer tensor (int32, or int64 when a bound is), so `row.to(tl.int64) * stride` compiles. The
interpreter runs the loop in Python and hands the body a Python int: `.to` fails with "'int'
object has no attribute 'to'" (Triton 3.6 through 3.9), on the book's own hint for p27. The
interpreter rewrites every kernel's source before it runs it (`FunctionRewriter`); we add one
rule to that rewrite: the iterable of a `range` or `tl.range` loop yields scalar tensors typed as
the GPU types them. `tl.static_range` is left alone: there the GPU's variable is a constexpr.
"""
from __future__ import annotations

import ast
from typing import Iterator

RANGE_WRAPPER = "_checker_typed_range"  # the name the rewritten source calls; lives in the interpreter's globals
_RANGE_NAMES = ("range",)  # `range(...)` and `tl.range(...)`: not `tl.static_range`


def _is_range_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id in _RANGE_NAMES) or \
        (isinstance(func, ast.Attribute) and func.attr in _RANGE_NAMES)


def _loop_dtype(bounds):
    """The GPU's type for the loop variable: the bounds' integer types promoted, a Python int being
    int32 where it fits, else int64 (triton's code generator promotes lb, ub and step alike)."""
    import triton.language as tl
    wide = False
    for bound in bounds:
        if isinstance(bound, tl.constexpr):
            bound = bound.value
        if isinstance(bound, tl.tensor):
            wide = wide or bound.dtype.primitive_bitwidth > 32
        elif isinstance(bound, int):
            wide = wide or not -2**31 <= bound < 2**31
    return tl.int64 if wide else tl.int32


def typed_range(range_fn, *bounds, **options) -> Iterator:
    """What the rewritten `for x in range(...)` iterates: range_fn's values as scalar tensors."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter
    dtype = _loop_dtype(bounds)
    np_dtype = np.int64 if dtype == tl.int64 else np.int32
    for value in range_fn(*bounds, **options):
        yield tl.tensor(interpreter.TensorHandle(np.array([value], dtype=np_dtype), dtype), dtype)


def transformer_with_typed_ranges(base: type) -> type:
    """A subclass of the interpreter's AST transformer that also routes range loops through
    typed_range: `for r in range(a, b, c)` becomes `for r in _checker_typed_range(range, a, b, c)`."""

    class TypedRanges(base):
        checker_typed_ranges = True

        def visit_For(self, node: ast.For) -> ast.AST:
            node = self.generic_visit(node)
            call = node.iter
            if _is_range_call(call) and not any(isinstance(a, ast.Starred) for a in call.args):
                node.iter = ast.copy_location(
                    ast.Call(func=ast.Name(id=RANGE_WRAPPER, ctx=ast.Load()), args=[call.func, *call.args],
                             keywords=call.keywords), call)
            return node

    TypedRanges.__name__ = TypedRanges.__qualname__ = f"TypedRanges({base.__name__})"
    return TypedRanges


def fix_range_loop_variables() -> None:
    """Install the rule (idempotent); a Triton whose interpreter has no FunctionRewriter is left
    alone, and the report's note on "'int' object has no attribute" says what to write instead."""
    from triton.runtime import interpreter
    rewriter = getattr(interpreter, "FunctionRewriter", None)
    current = getattr(rewriter, "ast_transformer", None)
    if current is None or getattr(current, "checker_typed_ranges", False):
        return
    setattr(interpreter, RANGE_WRAPPER, typed_range)  # the rewrite copies the interpreter's globals into the kernel's
    rewriter.ast_transformer = transformer_with_typed_ranges(type(current))()
    interpreter.InterpretedFunction.rewritten_fn.clear()  # rewritten before the rule: rewrite again
