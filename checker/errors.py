"""Exceptions from a learner's kernel, as one short message that points at the learner's line."""
from __future__ import annotations

import re
import traceback
from dataclasses import asdict, dataclass

from checker.source import KernelSource


@dataclass
class KernelError:
    kind: str          # "not_implemented", "exception", "compile", "out_of_bounds", "race", "gpu_fault", ...
    message: str       # one short paragraph for the learner
    where: str = ""    # "cell 5, line 3"
    code: str = ""     # the learner's line of code
    traceback: str = ""  # the whole story, shown with --verbose
    cause: str = ""    # the class the evidence names (checker/hints.py), or '' ...
    candidates: tuple = ()  # ... and the classes it asks about

    def to_json(self) -> dict:
        data = asdict(self)
        data["candidates"] = list(self.candidates)
        return data


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _learner_frame(exc: BaseException, source: KernelSource) -> int:
    """Innermost line of the learner's code, from the deepest cause outwards (0 if none)."""
    for link in reversed(_chain(exc)):
        lines = [f.lineno for f in traceback.extract_tb(link.__traceback__) if f.filename == source.filename]
        if lines:
            return lines[-1] or 0
    return 0


def _is_compile_error(exc: BaseException) -> bool:
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
        if not re.search(rf"(^|[^\w.]){re.escape(name)}\s*(=[^=]|[+\-*/]=)|\bfor\s+{re.escape(name)}\b", source.text,
                         re.M):
            # never assigned anywhere: a typo, or a name from outside the kernel
            return (f"NameError: `{name}` is not defined: the kernel never assigns it, and it is none of its "
                    f"arguments. A typo, or a name from outside the kernel? A kernel sees only its arguments, "
                    f"tl.*, and globals defined with tl.constexpr(...).")
        return (f"`{name}` is not defined on every path to this line: on a GPU a variable first assigned "
                f"inside a loop or an `if` does not exist after it. Give it its starting value before the loop "
                f"(or the `if`).")
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


def _compile_error(chain: list[BaseException], source: KernelSource, full: str) -> KernelError:
    """One message for Triton's compiler rejecting a kernel: on a GPU, or checker/frontend.py's run of
    the same front end in the interpreter."""
    compile_errors = [e for e in chain if _is_compile_error(e)]
    # the most precise learner line: the deepest compile error that points into the learner's text
    # (a `break` inside a helper); a reason raised inside Triton's library points at the call
    line = next((n for n in (_compile_error_line(e, source) for e in reversed(compile_errors)) if n), 0)
    deepest = chain[-1]
    reason = getattr(deepest, "error_message", None)
    if not reason:
        text = str(deepest).strip().split("\n")
        reason = text[-1] if deepest in compile_errors else f"{type(deepest).__name__}: {text[0]}"
    reason = reason.strip()
    advice = _advice(reason, source)
    frontend = any(type(e).__name__ == "GpuCompileError" for e in chain)
    if advice:
        message = f"the kernel does not compile for a GPU: {advice}"
        if frontend:
            message += " (The interpreter alone would run it; on a GPU it never starts.)"
    else:
        message = f"the kernel does not compile{' for a GPU' if frontend else ''}: {reason}"
    return KernelError("compile", message, source.describe_line(line) if line else "",
                       source.line_text(line) if line else "", full, cause="compile")


def describe(exc: BaseException, source: KernelSource) -> KernelError:
    chain = _chain(exc)
    full = "".join(traceback.format_exception(exc))
    fault = next((e for e in chain if type(e).__name__ == "KernelFault"), None)
    if fault is not None:  # the sanitizer's verdict: its message is already written for the learner
        return KernelError(getattr(fault, "kind", "fault"), str(fault), traceback=full,
                           cause=getattr(fault, "cause", ""), candidates=tuple(getattr(fault, "candidates", ())))
    root = next((e for e in chain if type(e).__name__ != "InterpreterError"), exc)
    if any(_is_compile_error(e) for e in chain):
        return _compile_error(chain, source, full)
    line = _learner_frame(exc, source)
    if isinstance(root, NotImplementedError):
        return KernelError("not_implemented", str(root) or "not implemented yet",
                           source.describe_line(line) if line else "", "", full, cause="stub")
    text = str(root).strip().split("\n")[0]
    if "illegal memory access" in text or "CUDA error" in text:
        return KernelError("gpu_fault", f"the GPU stopped the kernel: {text}. On a GPU an out-of-bounds "
                           "access may crash like this, or silently read garbage; run the check on the CPU "
                           "(the interpreter names the line and the offsets).", "", "", full,
                           candidates=("mask", "address"))
    return KernelError("exception", f"{type(root).__name__}: {text}",
                       source.describe_line(line) if line else "", source.line_text(line) if line else "", full)
