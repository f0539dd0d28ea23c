"""What stopped a learner's kernel, said for the learner: one Diagnosis that points at the learner's line.

Two sources. An exception from the kernel (`describe`): Triton's compiler rejecting it (worded by
checker/diagnosis/compile_errors.py), a stub, a GPU fault, any other error. And the instruments'
faults (`explain`): the sanitizer and the lock protocol (checker/interpreter/) stop a launch with
a KernelFault that carries only facts (checker/evidence/model.py's Fault); the paragraphs the
learner reads about an out-of-bounds access, a race or a broken lock are written here, as is the
one about a store past an output's end that a guard band saw (checker/evidence/guards.py).

Codes: "fault.oob", "fault.race", "lock.<rule>" ("lock.plain_release", "lock.not_taken" ...),
"guard.overrun", "compile.*", "error.stub", "error.exception", "fault.gpu".
"""
from __future__ import annotations

import traceback
from dataclasses import replace, dataclass
from typing import Callable

import numpy as np

from checker.diagnosis import addresses
from checker.words import counted
from checker.diagnosis.compile_errors import compile_error, is_compile_error, mistake
from checker.diagnosis.interpreter_gaps import interpreter_gap
from checker.diagnosis.model import Diagnosis, HoldsDiagnosis, Span, Strength, asking
from checker.evidence.lanes import Site, lane_steps
from checker.evidence.model import Fault, Place
from checker.source import KernelSource


@dataclass
class KernelError(HoldsDiagnosis):
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
    if fault is not None:  # the instruments' verdict, worded from its facts
        return KernelError(getattr(fault, "kind", "fault"), fault.diagnosis, traceback=full)
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
    gap = interpreter_gap(str(root), source.line_text(line) if line else "")
    found = gap or mistake(str(root), source, line)
    code = "error.interpreter_gap" if gap else "error.mistake" if found else "error.exception"
    return KernelError("exception", Diagnosis(found or f"{type(root).__name__}: {text}", code=code, where=where),
                       source.describe_line(line) if line else "", source.line_text(line) if line else "", full)


# ---------------------------------------------------------------------------------------------
# The instruments' faults


def explain(fault: Fault) -> Diagnosis:
    """The paragraph a KernelFault's facts stand for (checker/interpreter/ raises them)."""
    return FAULT_EXPLAINERS[fault.kind](fault)


def _proof(message: str, fault: Fault, code: str, cls: str = "", asked: tuple = (), **data) -> Diagnosis:
    """A fault the run saw happen: its paragraph, and the cause class it names or the ones it asks about."""
    return Diagnosis(message, cls, tuple(asked), code=code, strength=Strength.PROOF, subject=fault.tensor,
                     where=Span(line=fault.where.lineno, code=fault.where.code) if fault.where.filename else None,
                     data={"program": fault.program, **data})


def _pid_text(pid: tuple) -> str:
    return f"({pid[0]}, {pid[1]}, {pid[2]})"


_SHOWN_OFFSETS = 6


def _offsets_text(offsets: np.ndarray) -> str:
    shown = ", ".join(str(int(o)) for o in offsets[:_SHOWN_OFFSETS])
    more = f", ... ({len(offsets)} offending offsets in all)" if len(offsets) > _SHOWN_OFFSETS else ""
    return shown + more


_VERB = {"load": "load from", "store": "store to", "atomic": "atomic update of"}


# findings whose own text shows the mask to write: no second, generic advice after them
_FINDINGS_WITH_THEIR_FIX = {"addr.axis_unmasked"}


def _mask_advice(name: str, layout, offsets: np.ndarray, op: str, tile: bool, had_mask: bool,
                 scalars: dict[str, int], certain: bool = True, le: bool = False) -> str:
    """How to write the mask, in the kernel's own names for the sizes where they are known. le: the
    finding is a `<=` where `<` belongs, so the advice is that one character."""
    span = layout.span
    if op == "load":
        call = f"tl.load({name} + offsets, mask=mask, other=0.0)"
    else:
        call = f"tl.{op}({name} + offsets, value, mask=mask)"
    if tile:
        rows, cols = (layout.shape[0], layout.shape[-1]) if len(layout.shape) > 1 else (1, span)
        cond = (f"(rows[:, None] < {addresses.size_name(scalars, rows, 'n_rows')}) & "
                f"(cols[None, :] < {addresses.size_name(scalars, cols, 'n_cols')})")
        call = call.replace("offsets", "rows[:, None] * stride + cols[None, :]")
    elif offsets[0] < 0:
        cond = f"(offsets >= 0) & (offsets < {addresses.size_name(scalars, span, 'n_elements')})"
    else:
        cond = f"offsets < {addresses.size_name(scalars, span, 'n_elements')}"
    if le:
        return f"The fix is one character, `<` for `<=`:\n    mask = {cond}"
    if not certain:
        lead = (f"If it is the mask: it must switch off every offset outside [0, {span}) (compare with this "
                f"tensor's size, and use `<`, not `<=`), e.g.")
    elif had_mask:
        lead = (f"This access already has a mask, but it lets these lanes through: it must switch off every "
                f"offset outside [0, {span}) (compare with the tensor's size, not the block size, and use "
                "`<`, not `<=`). For example:")
    else:
        lead = "Fix: switch off the lanes that fall outside with a mask, e.g."
    return f"{lead}\n    mask = {cond}\n    {call}"


def _out_of_bounds(fault: Fault) -> Diagnosis:
    f, name, pid = fault.facts, fault.tensor, fault.program
    layout, offsets = f["layout"], f["offsets"]
    # mask or address? the lanes' steps and the block's start against the tensor's layout
    finding = addresses.out_of_bounds(layout, f["lanes"], f["active"], f["site"], pid, f["grid"], f["scalars"],
                                      f["in_loop"], f["others"], had_mask=f["had_mask"])
    if f["in_loop"] and not finding.cause and finding.candidates and "loop" not in finding.candidates:
        # an access inside a loop that the lanes cannot place: the loop may run one step too far
        finding = replace(finding, candidates=(*finding.candidates, "loop"),
                          observed=finding.observed + " (The access is inside a loop: does the loop run a step too "
                                                      "far, past the last block it should reach?)")
    side = "before the start of" if offsets[0] < 0 else "past the end of"
    if len(offsets) > 1:
        these = f"Element offsets {_offsets_text(offsets)} are"
    else:
        these = f"Element offset {offsets[0]} is"
    shape = f" (`{name}` has shape {tuple(layout.shape)})" if len(layout.shape) > 1 else ""
    message = "\n".join([
        f"Out-of-bounds {_VERB[f['access']]} `{name}` in program {_pid_text(pid)}, at {addresses.at(fault.where)}",
        f"{these} {side} `{name}`: valid offsets are [0, {layout.span}){shape}.",
        "On a GPU this would touch memory that belongs to something else (wrong values, a crash, or "
        "another tensor silently overwritten); the checker stopped it before memory was touched.",
        *([finding.text + ("" if "mask" in (finding.cause, *finding.candidates) else " A mask would only hide this.")]
          if finding.text else []),
        # where a mask is (one of) the fixes, show how to write it
        *([_mask_advice(name, layout, offsets, f["op"], f["tile"], f["had_mask"], f["scalars"],
                        finding.cause == "mask", le=finding.code == "addr.mask_le")]
          if "mask" in (finding.cause, *finding.candidates) and finding.code not in _FINDINGS_WITH_THEIR_FIX else []),
    ])
    return _proof(message, fault, "fault.oob", finding.cause, finding.candidates, finding=finding.code,
                  offsets=[int(o) for o in offsets], **finding.data)


def _element_text(layout, contiguous: bool, offset: int) -> str:
    if contiguous and len(layout.shape) > 1 and 0 <= offset < int(np.prod(layout.shape)):
        index = ", ".join(str(int(i)) for i in np.unravel_index(offset, layout.shape))
        return f"element {offset} (index [{index}])"
    return f"element {offset}"


def _race(fault: Fault) -> Diagnosis:
    f, name, pid, other = fault.facts, fault.tensor, fault.program, fault.facts["other"]
    layout, lanes = f["layout"], f["lanes"]
    doing = {"load": "loads this element", "store": "stores to this element",
             "atomic": f"updates this element with tl.{f['op']}"}[f["access"]]
    # a load or an atomic races only with another program's plain store, so a conflict with an
    # access that was no store is this program's store meeting the other's load or atomic
    done = "stored to it with a plain tl.store" if f["other_stored"] else "reads it or updates it with an atomic"
    cause, candidates, finding = "atomic", (), None
    shared = f["shared"] and addresses.shared_overlap(layout, lanes, f["sites"], f["key"], pid, other, f["grid"],
                                                      f["scalars"], f["sizes"])
    if shared:  # the programs were never meant to meet here, though the output sums shares
        fix = f"This output sums shares from several programs, but not these two here. {shared.text}"
        cause, candidates, finding = shared.cause, shared.candidates, shared
    elif f["shared"]:
        fix = ("Fix: this output sums shares from several programs: add each share with tl.atomic_add "
               "(or another tl.atomic_* op), never with a load, an add and a store.")
    else:
        site = f["sites"].get(f["key"]) or Site(lane_steps(lanes), lanes.shape)
        finding = addresses.overlapping_writes(layout, lanes, site, pid, f["grid"], f["scalars"], f["sizes"])
        if finding is not None:
            fix = f"Each element of `{name}` belongs to exactly one program. {finding.text}"
            cause, candidates = finding.cause, finding.candidates
        else:
            cause, candidates = "", ("address", "mask")
            fix = (f"Each element of `{name}` belongs to exactly one program, so two programs reaching it "
                   "means their blocks overlap: either an offset is computed wrongly (each program's start "
                   "from tl.program_id, the strides), or lanes past the end of a block reach into the next "
                   "one and need a mask.")
    message = "\n".join([
        f"Data race on `{name}` {_element_text(layout, f['contiguous'], f['offset'])}, in program {_pid_text(pid)} at "
        f"{addresses.at(fault.where)}",
        f"Program {_pid_text(pid)} {doing}, but program {_pid_text(other)} {done} in the same launch.",
        "On a GPU, programs run in parallel, so these accesses happen in no fixed order and one "
        "program's update can overwrite another's. The interpreter runs programs one after another, "
        "so the answer can look right here and still be wrong on a GPU.",
        fix,
    ])
    return _proof(message, fault, "fault.race", cause, candidates, other=other,
                  finding=finding.code if finding else "")


# ---------------------------------------------------------------------------------------------
# The lock protocol (checker/interpreter/locks.py)

_SPIN = "    while tl.atomic_cas(lock, 0, 1) == 1:\n        pass"
_RELEASE = "    tl.debug_barrier()\n    tl.atomic_xchg(lock, 0)"
_LOCK_VERBS = {"load": "reads", "store": "stores to", "atomic": "updates"}


def _lock_at(place: Place) -> str:
    """The line, and its code below it (no colon without the code)."""
    return f"{place.label}:\n    {place.code}" if place.code else place.label


def _element(element: tuple[str, int]) -> str:
    return f"`{element[0]}` element {element[1]}"


def _guarded_text(element: tuple[str, int], count: bool) -> str:
    """A guarded element, and what it is: a word next to the locks, or a shared buffer's."""
    if count:
        return f"{_element(element)} (in the locks' tensor but not a lock: the count)"
    return f"{_element(element)} (shared by the programs of a group)"


def _unlocked(fault: Fault, pid: str) -> tuple[str, list[str]]:
    f = fault.facts
    head = (f"Lock not held: program {pid} {_LOCK_VERBS[f['access']]} {_guarded_text(f['element'], f['count'])} "
            f"at {_lock_at(fault.where)}")
    if f["released"] is not None:
        return "lock.released_early", [
            head, f"It released its lock before this, at {_lock_at(f['released'])}",
            "Every access to the group's shared state (the partial rows, the count) belongs between "
            "taking the lock and releasing it: move the release after the last of them."]
    if f["refused"] is not None and f["refused"][2:] != (0, 1):
        lock, place, cmp, val = f["refused"]
        return "lock.wrong_swap", [
            head, f"Its tl.atomic_cas on {_element(lock)} at {_lock_at(place)}",
            f"swaps {val} in where it finds {cmp}: a free lock holds 0, so this swap never takes one "
            f"(tl.atomic_cas(ptr, cmp, val) writes val only where the word equals cmp).",
            "Fix: swap 0 (free) for 1 (taken), and spin until the swap succeeds:", _SPIN]
    if f["refused"] is not None:
        lock, place, _, _ = f["refused"]
        return "lock.not_spinning", [
            head, f"Its tl.atomic_cas on {_element(lock)} at {_lock_at(place)}",
            "found the lock taken: the checker makes a program's first attempt fail, as it does on a GPU "
            "while another program of the group holds the lock. This program went on without the lock: "
            "is the result of tl.atomic_cas ignored, or does the loop spin while the swap succeeds "
            "(== 0) instead of while it fails (== 1)?",
            "Fix: spin until the swap from 0 (free) to 1 (taken) succeeds, then touch the shared state:", _SPIN]
    return "lock.not_taken", [
        head, "It has not taken the lock yet: another program of its group may be halfway through its "
        "own update of these values.",
        "Fix: take the lock first, and read or write the shared state (the count included) only "
        "while holding it:", _SPIN]


def _lock(fault: Fault) -> Diagnosis:
    f, pid, rule = fault.facts, _pid_text(fault.program), fault.facts["rule"]
    cause, candidates = "lock", ()
    if rule == "unlocked":
        code, lines = _unlocked(fault, pid)
        lines.append("On a GPU the programs of a group run at the same time; without the lock they read and write "
                     "the same partial row at once and shares are lost. The interpreter runs programs one after "
                     "another, so the values alone can look right here.")
    elif rule == "plain_release":
        code, lines = "lock.plain_release", [
            f"Lock written with a plain store: program {pid} stores to {_element(f['lock'])}, "
            f"{'the lock it holds' if f['holds'] else 'a lock'}, at {_lock_at(fault.where)}",
            "A plain store is not atomic, and on a GPU nothing orders it after the program's other stores: "
            "the next program can find the lock free before this program's partial row has landed.",
            "Fix: release with an atomic exchange, after a barrier:", _RELEASE]
    elif rule == "reads_its_lock":
        code, lines = "lock.reads_its_lock", [
            f"A lock read as data: program {pid} loads {_element(f['lock'])}, the lock it holds, at "
            f"{_lock_at(fault.where)}",
            "While this program holds the lock the word is 1, whatever the other programs did: a value kept "
            "there (a count, a flag) is lost to the lock. Is this meant to be another word? In this puzzle "
            "the group's count sits next to the locks, at locks_ptr + G + group."]
    elif rule == "unfenced":
        code, lines = "lock.unfenced", [
            f"Lock released before the stores it guards: program {pid} releases {_element(f['lock'])} at "
            f"{_lock_at(fault.where)}",
            f"but no tl.debug_barrier() came after its store to `{f['store'][0]}` at {_lock_at(f['store'][1])}",
            "On a GPU each thread of a program stores its own lanes; without a barrier some of them may still "
            "be storing the partial row when the next program takes the lock and reads it.",
            "Fix: a barrier between the last store and the release:", _RELEASE]
    else:  # "other_lock": one value touched under two locks
        lines = [f"Two locks for one value: program {pid} touches {_guarded_text(f['element'], f['count'])} at "
                 f"{_lock_at(fault.where)}",
                 f"holding the lock {_element(f['now'])}, but an earlier program touched it holding the lock "
                 f"{_element(f['first'])}."]
        if f["rows"] > 1:  # the lanes past the row's end reach the next group's row: a mask, or the lock?
            code, cause, candidates = "lock.rows_spanned", "", ("mask", "lock")
            lines.append(
                f"This one access reaches {f['rows']} rows of `{f['element'][0]}` (rows of {f['width']}): its lanes "
                f"past the end of the row land in the next group's row, which the next lock guards. Is a mask missing "
                f"there (cols < H), or one that lets the lanes past H through? If every lane is meant, compute the "
                f"lock from the same group as the row it guards.")
        else:
            code = "lock.other_lock"
            lines.append(
                "Two programs holding different locks do not exclude each other: on a GPU they update this value "
                "at the same time. Compute the lock from the same group as the partial row it guards (group = "
                "row % G: the lock locks_ptr + group, the partial row group * H, the count locks_ptr + G + group).")
    return _proof("\n".join(lines), fault, code, cause, candidates, rule=rule)


FAULT_EXPLAINERS: dict[str, Callable[[Fault], Diagnosis]] = {
    "out_of_bounds": _out_of_bounds,
    "race": _race,
    "lock": _lock,
}


# ---------------------------------------------------------------------------------------------
# A store past an output's end, seen in its guard band (where nothing stopped it)


def past_the_end(name: str, first: int) -> Diagnosis:
    """What the learner reads: what was seen, and the two causes it fits, as questions. The same words
    for every case where the store lands right after the end, so that the report says them once."""
    where = "the memory right after it" if first == 0 else f"memory {counted(first, 'element')} after its end"
    return Diagnosis(
        f"the kernels wrote past the end of `{name}`: {where} changed. Nothing stops such a store on "
        f"a GPU; it overwrites whatever lies there. Does a store into `{name}` lack the mask that "
        f"switches off the lanes past the end, or are its offsets computed past the tensor (a stride, "
        f"a row or block offset)?", "", ("mask", "address"), code="guard.overrun", strength=Strength.PROOF,
        subject=name, data={"first": first})
