"""What stopped a learner's kernel, said for the learner: one Diagnosis that points at the learner's line.

An exception from the kernel (`describe`): Triton's compiler rejecting it (worded by
checker/diagnosis/compile_errors.py), a stub, a GPU fault, the sanitizer's faults, any other
error; and a store past an output's end that a guard band saw (checker/evidence/guards.py).
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass

from checker.diagnosis.compile_errors import compile_error, is_compile_error, mistake
from checker.diagnosis.model import Diagnosis, Span, Strength, asking
from checker.source import KernelSource


@dataclass
class KernelError:
    """What stopped the kernels, for the report. diagnosis: what the learner reads, and the cause it
    names or the causes it asks about."""
    kind: str          # "not_implemented", "exception", "compile", "out_of_bounds", "race", "gpu_fault", ...
    diagnosis: Diagnosis
    where: str = ""    # "cell 5, line 3"
    code: str = ""     # the learner's line of code
    traceback: str = ""  # the whole story, shown with --verbose

    @property
    def message(self) -> str:
        """One short paragraph for the learner."""
        return self.diagnosis.text

    @property
    def cause(self) -> str:
        return self.diagnosis.cause

    @property
    def candidates(self) -> tuple[str, ...]:
        return self.diagnosis.candidates

    def to_json(self) -> dict:
        return {"kind": self.kind, "message": self.message, "where": self.where, "code": self.code,
                "traceback": self.traceback, "cause": self.cause, "candidates": list(self.candidates),
                "diagnosis": self.diagnosis.to_json()}


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



def describe(exc: BaseException, source: KernelSource) -> KernelError:
    chain = _chain(exc)
    full = "".join(traceback.format_exception(exc))
    fault = next((e for e in chain if type(e).__name__ == "KernelFault"), None)
    if fault is not None:  # the sanitizer's verdict: its message is already written for the learner
        kind = getattr(fault, "kind", "fault")
        return KernelError(kind, Diagnosis(str(fault), getattr(fault, "cause", ""),
                                           tuple(getattr(fault, "candidates", ())), code=f"fault.{kind}",
                                           strength=Strength.PROOF), traceback=full)
    root = next((e for e in chain if type(e).__name__ != "InterpreterError"), exc)
    if any(is_compile_error(e) for e in chain):
        found, line = compile_error(chain, source)
        return KernelError("compile", found, source.describe_line(line) if line else "",
                           source.line_text(line) if line else "", full)
    line = _learner_frame(exc, source)
    where = Span(line=line, code=source.line_text(line)) if line else None
    if isinstance(root, NotImplementedError):
        return KernelError("not_implemented", Diagnosis(str(root) or "not implemented yet", "stub", code="error.stub",
                                                        strength=Strength.PROOF, where=where),
                           source.describe_line(line) if line else "", "", full)
    text = str(root).strip().split("\n")[0]
    if "illegal memory access" in text or "CUDA error" in text:
        return KernelError("gpu_fault", asking(
            f"the GPU stopped the kernel: {text}. On a GPU an out-of-bounds access may crash like this, or "
            "silently read garbage; run the check on the CPU (the interpreter names the line and the offsets).",
            "mask", "address", code="fault.gpu"), "", "", full)
    found = mistake(str(root), source, line)
    return KernelError("exception", Diagnosis(found or f"{type(root).__name__}: {text}",
                                              code="error.mistake" if found else "error.exception", where=where),
                       source.describe_line(line) if line else "", source.line_text(line) if line else "", full)


# ---------------------------------------------------------------------------------------------
# A store past an output's end, seen in its guard band (where nothing stopped it)


def past_the_end(name: str, first: int) -> Diagnosis:
    """What the learner reads: what was seen, and the two causes it fits, as questions. The same words
    for every case where the store lands right after the end, so that the report says them once."""
    where = "the memory right after it" if first == 0 else f"memory {first} elements after its end"
    return Diagnosis(
        f"the kernels wrote past the end of `{name}`: {where} changed. Nothing stops such a store on "
        f"a GPU; it overwrites whatever lies there. Does a store into `{name}` lack the mask that "
        f"switches off the lanes past the end, or are its offsets computed past the tensor (a stride, "
        f"a row or block offset)?", "", ("mask", "address"), code="guard.overrun", strength=Strength.PROOF,
        subject=name, data={"first": first})
