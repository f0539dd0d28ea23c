"""Valid Triton that Triton's interpreter cannot run, said in one sentence with what runs on both.

checker/interpreter/compat.py shims what it can (a `range` loop's variable typed as a GPU types it,
an atomic exchange of floats); what is left, or a Triton where a shim switched itself off, lands
here: the learner's kernel is not wrong, the CPU's stand-in for a GPU is.
"""
from __future__ import annotations

import re


def interpreter_gap(reason: str, line_text: str) -> str:
    """The sentence for an error that only the interpreter raises ('' if the error is no such gap)."""
    called = re.search(r"libdevice\.(\w+)", line_text)
    if called and "NoneType" in reason:
        return (f"Triton's interpreter cannot run libdevice functions (`libdevice.{called.group(1)}` here), "
                f"which a GPU compiles: on the CPU write it with tl's own math (tl.exp, tl.log, tl.sqrt, "
                f"tl.sigmoid, ...), which runs on both.")
    attribute = re.search(r"'int' object has no attribute '(\w+)'", reason)
    if attribute:
        return (f"in Triton's interpreter this value is a Python int (a `range` loop's variable, say), where a "
                f"GPU makes it a tensor, so `.{attribute.group(1)}` fails here only: write tl.cast(value, "
                f"tl.int64) (or the function tl.{attribute.group(1)}(value, ...)), which runs on both.")
    if "Unsupported data type" in reason:
        return ("Triton's interpreter cannot run this operation on this data type, which a GPU can (an atomic "
                "other than add, max, min or exchange on floats, say): on the CPU do it on integers of the "
                "same width (x.to(tl.int32, bitcast=True)), which runs on both.")
    return ""
