"""What Triton's compiler (and its interpreter) reject in a learner's kernel, said for the learner.

Two tables: the compiler's reasons that need a translation (`_advice`: a `break`, a condition on a
block, a type changing in a loop, a global ...) and the beginner's mistakes that the compiler and
the interpreter both reject, each in its own words (`mistake`: a block indexed element by element,
`//` on floats, blocks of different shapes meeting, a name never assigned). checker/diagnosis/faults.py words the rest of
what stops a kernel.
"""
from __future__ import annotations

import ast
import re

from checker.diagnosis.model import Diagnosis, Span, Strength
from checker.parsed import tree_of
from checker.source import KernelSource


def is_compile_error(exc: BaseException) -> bool:
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"CompilationError", "CompileTimeAssertionFailure", "GpuCompileError"})


def _compile_error_line(exc: BaseException, source: KernelSource) -> int:
    """Triton's CompilationError knows the node's line within the kernel's own source text."""
    node, src = getattr(exc, "node", None), getattr(exc, "src", None)
    lineno = getattr(node, "lineno", None)
    if not lineno or not src:
        return 0
    src_lines = src.split("\n")
    wanted = src_lines[lineno - 1].strip() if lineno <= len(src_lines) else ""
    text = source.text.splitlines()
    def_line = next((ln.strip() for ln in src_lines if ln.lstrip().startswith("def ")), "")
    starts = [i + 1 for i, ln in enumerate(text) if ln.strip() == def_line]
    # versions differ: the line may be relative to the def (or its decorator) or absolute
    for candidate in [s + lineno - 1 - k for s in starts for k in (0, 1)] + [lineno]:
        if 0 < candidate <= len(text) and text[candidate - 1].strip() == wanted:
            return candidate
    return 0


def _pretty_type(text: str) -> str:
    """Triton's "<['16'], fp32>" -> "a [16] block of fp32"; "fp32" -> "an fp32 scalar"."""
    block = re.fullmatch(r"<\[(.*)\], (\w+)>", text.strip())
    if block:
        dims = ", ".join(d.strip(" '") for d in block.group(1).split(","))
        return f"a [{dims}] block of {block.group(2)}"
    article = "an" if text.strip()[:1] in "aefhilmnorsx" else "a"
    return f"{article} {text.strip()} scalar"


# Python syntax Triton's compiler has no translation for, by the AST node's name
_CONSTRUCTS = {"Try": "try/except", "Raise": "raise", "Lambda": "lambda", "With": "with", "Global": "global",
               "Nonlocal": "nonlocal", "Delete": "del", "Yield": "yield", "Match": "match", "ListComp": "a list "
               "comprehension", "DictComp": "a dict comprehension", "SetComp": "a set comprehension",
               "GeneratorExp": "a generator expression", "Await": "await", "AsyncFor": "async for"}
_BUILTINS = {"abs": "tl.abs(x)", "sum": "tl.sum(x, axis=0)", "round": "tl.floor(x + 0.5)",
             "pow": "x ** y (or tl.exp2(y * tl.log2(x)))"}


def _assigned(name: str, source: KernelSource) -> bool:
    """Does the learner's text assign `name` anywhere (=, +=, a for loop's variable)?"""
    return bool(re.search(rf"(^|[^\w.]){re.escape(name)}\s*(=[^=]|[+\-*/]=)|\bfor\s+{re.escape(name)}\b",
                          source.text, re.M))


def _advice(reason: str, source: KernelSource) -> str:
    """What the compiler's reason means for a learner, and what to write instead ('' if unknown)."""
    m = re.search(r"unsupported AST node type: (\w+)", reason)
    if m and m.group(1) == "Break":
        return ("`break` leaves a loop early, which Triton's compiler does not support: a Triton loop always "
                "runs to its end. Put the exit into "
                "the loop's condition (`while i < n and not done:`, with `done` a scalar set in the body), or "
                "let every step run and keep the values you need with tl.where.")
    if m and m.group(1) == "Continue":
        return ("`continue` skips the rest of a step, which Triton's compiler does not support. Put the rest "
                "of the step under an `if` on a scalar, or compute it and discard it with tl.where or a mask.")
    if m:
        what = _CONSTRUCTS.get(m.group(1), f"`{m.group(1)}`")
        return f"{what} is Python that Triton's compiler does not translate."
    if "Boolean value of Tensor with more than one value is ambiguous" in reason:
        return ("an `if`, `while`, `and`, `or` or `not` needs one value for the whole program (a scalar), and "
                "this condition is a block. Choose per element with "
                "tl.where(condition, a, b), or pass the condition as mask= to tl.load and tl.store; combine "
                "block conditions with & and |, each comparison in parentheses.")
    m = re.search(r"Loop-carried variable (\w+) has initial type (.+?) but is re-assigned to (.+?) in loop", reason)
    if m:
        return (f"`{m.group(1)}` changes type in the loop: it starts as {_pretty_type(m.group(2))} and becomes "
                f"{_pretty_type(m.group(3))}. On a GPU a variable keeps one type through a loop: start it with "
                f"the type it will have (tl.zeros([BLOCK], dtype=tl.float32) for a block), or reduce inside the "
                f"loop (tl.sum) to keep a scalar.")
    m = re.search(r"Mismatched type for (\w+) between then block \((.+?)\) and else block \((.+?)\)", reason)
    if m:
        return (f"`{m.group(1)}` gets a different type in each branch of the `if`: {_pretty_type(m.group(2))}, "
                f"then {_pretty_type(m.group(3))}. On a GPU it must have one type after the `if`: give it the "
                f"same shape and dtype in both branches (tl.full([BLOCK], 0.0, tl.float32) for a block of zeros), "
                f"or choose per element with tl.where.")
    m = re.search(r"Cannot access global variable (\w+)", reason)
    if m:
        name = m.group(1)
        if re.search(rf"^\s*def\s+{re.escape(name)}\s*\(", source.text, re.M):
            return (f"`{name}` is a plain Python function: a GPU kernel can call only @triton.jit functions "
                    f"and tl.* . Put @triton.jit above `def {name}`.")
        return (f"the kernel reads the global `{name}`, which a GPU kernel cannot see: it sees its arguments, "
                f"and globals defined as `{name} = tl.constexpr(...)`. Pass `{name}` as an argument (a "
                f"tl.constexpr parameter for a block size), or define it with tl.constexpr(...).")
    m = re.search(r"\b(\w+) is not defined\b", reason)
    if m:
        name = m.group(1)
        if name in _BUILTINS:
            return f"Python's `{name}` does not exist in a GPU kernel: write {_BUILTINS[name]}."
        if not _assigned(name, source):
            return ""  # a name never assigned is a mistake the interpreter rejects too: `mistake` says it
        return (f"`{name}` is not defined on every path to this line: on a GPU a variable first assigned "
                f"inside a loop or an `if` does not exist after it. Give it its starting value before the loop "
                f"(or the `if`).")
    if re.search(r"'(Tuple|List)' object has no attribute 'func'", reason):
        import triton
        return (f"a `for` over a tuple or a list (`for x in (a, b):`), which Triton's compiler (triton "
                f"{triton.__version__}) does not translate: a kernel's `for` runs over range(...) or "
                f"tl.static_range(...). Write the body once per value, or loop over an index with "
                f"tl.static_range and compute the value from it.")
    if "loop body should only have one block" in reason or "return` statements inside" in reason:
        return ("a `return` inside a loop, which Triton's compiler does not support: a loop always runs to its end. "
                "Return after the loop; to stop early, keep a scalar flag and switch the work off with tl.where "
                "or a mask.")
    m = re.search(r"used as tl.static_range (\w+) value is not a constexpr", reason)
    if m:
        return ("tl.static_range unrolls its loop while compiling, so its bounds must be tl.constexpr (a "
                "constexpr parameter or a number). For a bound known only at run time write range(...).")
    if "only tuple comprehensions are supported" in reason:
        return ("a list comprehension is Python that Triton's compiler does not translate: write the loop out, "
                "or build a tuple "
                "(tuple(... for ...) with tl.static_range bounds).")
    return ""


# Mistakes that both Triton's compiler and its interpreter reject, each in its own words; the
# learner's line tells which mistake it is. `mistake` says it once, for either.
_ELEMENT_REASONS = re.compile(r"__setitem__ is not supported|does not support item assignment|object is not "
                              r"iterable|unsupported tensor index|`_semantic` argument must be provided")
_REDUCTIONS = {"sum", "max", "min", "argmax", "argmin", "reduce", "xor_sum"}


def _statement(tree: ast.AST, lineno: int) -> ast.AST | None:
    """The innermost statement at `lineno`; of a compound one (if, for, while) only its header."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno and (node.end_lineno or 0) <= (best.end_lineno or 0):
                best = node
    if isinstance(best, (ast.If, ast.While)):
        return best.test
    if isinstance(best, ast.For):
        return best.iter
    return None if isinstance(best, (ast.FunctionDef, ast.With, ast.Try)) else best


def _element_index(node: ast.AST) -> ast.Subscript | None:
    """`x[i]`: a block indexed by an element (Triton's blocks take only [:, None]-style indices)."""
    def is_axis(index: ast.AST) -> bool:
        return isinstance(index, ast.Slice) or (isinstance(index, ast.Constant) and index.value is None)
    for sub in ast.walk(node):
        if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name):
            index = sub.slice
            parts = index.elts if isinstance(index, ast.Tuple) else [index]
            if not all(is_axis(part) for part in parts):
                return sub
    return None


def _axis_of(call: ast.Call) -> str:
    """The axis a reduction call names ('' if none: it reduces the whole block to a scalar)."""
    for keyword in call.keywords:
        if keyword.arg == "axis":
            return ast.unparse(keyword.value)
    positional = call.args[1:] if isinstance(call.func, ast.Attribute) and _is_tl(call.func.value) else call.args
    return ast.unparse(positional[0]) if positional else ""


def _is_tl(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("tl", "triton_language")


def _reduction_in(node: ast.AST) -> ast.Call | None:
    """A reduction along an axis in `node`: tl.sum(x, axis=0), x.max(1), ..."""
    for call in ast.walk(node):
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr in _REDUCTIONS and _axis_of(call) not in ("", "None")):
            return call
    return None


def _reduction_feeding(tree: ast.AST, statement: ast.AST, lineno: int) -> ast.Call | None:
    """The nearest reduction along an axis whose result reaches the statement at `lineno`: on that
    line, or through the assignments before it in the same function (None if there is none)."""
    found = _reduction_in(statement)
    if found is not None:
        return found
    function = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                     and n.lineno <= lineno <= (n.end_lineno or n.lineno)), None)
    if function is None:
        return None
    assignments = [n for n in ast.walk(function) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                   and n.lineno < lineno and n.value is not None]
    wanted = [n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    seen: set[str] = set()
    while wanted:
        name = wanted.pop(0)
        if name in seen:
            continue
        seen.add(name)
        defs = [a for a in assignments if any(isinstance(t, ast.Name) and t.id == name
                                              for target in (a.targets if isinstance(a, ast.Assign) else [a.target])
                                              for t in ast.walk(target))]
        if not defs:
            continue
        latest = max(defs, key=lambda a: a.lineno)
        found = _reduction_in(latest.value)
        if found is not None:
            return found
        wanted += [n.id for n in ast.walk(latest.value) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return None


def _shape_mismatch(reason: str) -> str:
    """'4 and 8 elements along dimension 0', from Triton's words for blocks that do not broadcast."""
    m = re.search(r"incompatible dimensions at index (\d+): (\d+) and (\d+)", reason)
    if m:
        return f"{m.group(2)} and {m.group(3)} elements along dimension {m.group(1)}"
    m = re.search(r"expanded size of the tensor \((\d+)\) must match the existing size \((\d+)\) at "
                  r"non-singleton dimension (\d+)", reason)
    if m:
        return f"{m.group(2)} and {m.group(1)} elements along dimension {m.group(3)}"
    m = re.search(r"Cannot broadcast, rank mismatch: \[?([\d, ]*)\]?, \[?([\d, ]*)\]?", reason)
    if m:
        return f"of shapes [{m.group(1)}] and [{m.group(2)}]"
    return ""


def mistake(reason: str, source: KernelSource, line: int) -> str:
    """A beginner's mistake that Triton's compiler and its interpreter both reject, in one sentence
    that fits either ('' if the reason and the learner's line are no such mistake)."""
    if not line:
        return ""
    tree = tree_of(source.text)
    if tree is None:
        return ""
    statement = _statement(tree, line)
    if statement is None:
        return ""
    if _ELEMENT_REASONS.search(reason):
        sub = _element_index(statement)
        if sub is not None:
            name, index = sub.value.id, ast.unparse(sub.slice)
            lane = f"tl.arange(0, BLOCK) == {index}"
            if isinstance(sub.ctx, ast.Store):
                what, how = "writes", f"to change one lane, `{name} = tl.where({lane}, value, {name})`"
            else:
                what, how = "reads", f"for one lane's value, `tl.sum(tl.where({lane}, {name}, 0), axis=0)`"
            loop = ", without a loop over its elements" if source.in_loop(line) else ""
            return (f"`{name}[{index}]` {what} one element of the block `{name}`, and a Triton block cannot be "
                    f"indexed element by element (`{name}[:, None]` only adds an axis). Compute on the whole "
                    f"block at once{loop}; {how}.")
    m = re.search(r"unexpected type ((?:fp|bf)\d+\w*)", reason)
    if m and any(isinstance(n, ast.FloorDiv) for n in ast.walk(statement)):
        return (f"`//` is integer division (it rounds down to a whole number), which Triton has for integers "
                f"only, and this line uses it on {m.group(1)} values. Divide with `/`; to round the quotient "
                f"down as well, tl.floor(a / b).")
    m = re.search(r"\b(\w+)'? is not defined\b", reason)
    if m and m.group(1) not in _BUILTINS and not _assigned(m.group(1), source):
        # never assigned anywhere: a typo, or a name from outside the kernel
        return (f"`{m.group(1)}` is not defined: the kernel never assigns it, and it is none of its arguments. "
                f"A typo, or a name from outside the kernel? A kernel sees only its arguments, tl.*, and "
                f"globals defined with tl.constexpr(...).")
    shapes = _shape_mismatch(reason)
    if shapes:
        message = (f"two blocks of different shapes meet on this line, {shapes} (two blocks combine only where "
                   f"each dimension has the same length, or 1).")
        reduction = _reduction_feeding(tree, statement, line)
        if reduction is None:
            return message + (" Where does each block get its shape: a reduction's axis, a [:, None] or "
                              "[None, :] missing or misplaced, another block size?")
        if reduction.lineno == line:
            found = f"`{ast.unparse(reduction)}` on this line"
        else:
            code = ast.get_source_segment(source.text, _statement(tree, reduction.lineno) or reduction)
            found = f"at {source.describe_line(reduction.lineno)}, `{' '.join((code or '').split())}`"
        return message + (f" A reduction along the wrong axis may be the cause: {found} reduces along axis "
                          f"{_axis_of(reduction)}; of a [rows, columns] block, axis=0 leaves one value per column "
                          f"and axis=1 one per row.")
    return ""



def _fixed_condition(reason: str, source: KernelSource, line: int) -> str:
    """`while True:`: a loop on a condition known when the kernel compiles. Triton's compiler fails
    on it with an AttributeError of its own (the constant has no run-time value to test); said only
    where the learner's line is such a `while` ('' otherwise)."""
    if "'constexpr' object has no attribute" not in reason or not line:
        return ""
    tree = tree_of(source.text)
    if tree is None:
        return ""
    loop = next((n for n in ast.walk(tree) if isinstance(n, ast.While) and n.lineno == line), None)
    if loop is None:
        return ""
    return (f"`while {ast.unparse(loop.test)}:` tests a condition fixed when the kernel compiles, and Triton's "
            f"compiler translates a `while` only on a condition the loop changes (a Triton loop has no `break` "
            f"either). Loop while a variable says so (`while i < n:`, with `i` changed in the body), or over "
            f"range(...).")


def compile_error(chain: list[BaseException], source: KernelSource) -> tuple[Diagnosis, int]:
    """What Triton's compiler rejecting a kernel means (on a GPU, or checker/interpreter/frontend.py's run of
    the same front end in the interpreter), and the learner's line it points at (0 if none)."""
    compile_errors = [e for e in chain if is_compile_error(e)]
    # the most precise learner line: the deepest compile error that points into the learner's text
    # (a `break` inside a helper); a reason raised inside Triton's library points at the call
    line = next((n for n in (_compile_error_line(e, source) for e in reversed(compile_errors)) if n), 0)
    deepest = chain[-1]
    reason = getattr(deepest, "error_message", None)
    if not reason:
        text = str(deepest).strip().split("\n")
        reason = text[-1] if deepest in compile_errors else f"{type(deepest).__name__}: {text[0]}"
    reason = reason.strip()
    where = Span(line=line, code=source.line_text(line)) if line else None
    found = mistake(reason, source, line)
    if found:  # the interpreter rejects it too: no "on a GPU only" here
        return Diagnosis(f"the kernel does not compile: {found}", "compile", code="compile.mistake",
                         strength=Strength.PROOF, where=where, data={"reason": reason}), line
    advice = _advice(reason, source) or _fixed_condition(reason, source, line)
    frontend = any(type(e).__name__ == "GpuCompileError" for e in chain)
    if advice:
        message = f"the kernel does not compile for a GPU: {advice}"
        if frontend:
            message += " (The interpreter alone would run it; on a GPU it never starts.)"
    else:
        message = f"the kernel does not compile{' for a GPU' if frontend else ''}: {reason}"
    return Diagnosis(message, "compile", code="compile.advice" if advice else "compile.reason",
                     strength=Strength.PROOF, where=where, data={"reason": reason}), line
