"""Exceptions from a learner's kernel, as one short message that points at the learner's line."""
from __future__ import annotations

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


def describe(exc: BaseException, source: KernelSource) -> KernelError:
    chain = _chain(exc)
    full = "".join(traceback.format_exception(exc))
    fault = next((e for e in chain if type(e).__name__ == "KernelFault"), None)
    if fault is not None:  # the sanitizer's verdict: its message is already written for the learner
        return KernelError(getattr(fault, "kind", "fault"), str(fault), traceback=full,
                           cause=getattr(fault, "cause", ""), candidates=tuple(getattr(fault, "candidates", ())))
    root = next((e for e in chain if type(e).__name__ != "InterpreterError"), exc)
    compile_errors = [e for e in chain if type(e).__name__ in ("CompilationError", "CompileTimeAssertionFailure")]
    if compile_errors:
        # the learner's line is on the outermost compile error; the reason on the deepest link
        line = next((n for n in (_compile_error_line(e, source) for e in compile_errors) if n), 0)
        deepest = chain[-1]
        reason = getattr(deepest, "error_message", None)
        if not reason:
            text = str(deepest).strip().split("\n")
            reason = text[-1] if deepest in compile_errors else f"{type(deepest).__name__}: {text[0]}"
        return KernelError("compile", f"the kernel does not compile: {reason.strip()}",
                           source.describe_line(line) if line else "", source.line_text(line) if line else "", full,
                           cause="compile")
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
