"""Small fixes that let one checker run on every Triton we support (3.6 on the GPU image, the newest
on the CPU). Each one names the version it is for and switches itself off where not needed."""
from __future__ import annotations

import inspect
import types
import weakref

from checker.interpreter.loop_variables import fix_range_loop_variables


def wraps_with(fn, flag: str) -> bool:
    """Is a wrapper marked `flag` anywhere in fn's chain of wrappers (each keeps the function it
    wraps in __wrapped__)? Two modules that wrap the same method (bf16 and the fixes below both wrap
    cast_impl) must look down the chain: each on top hides the other, and a check of the top alone
    wraps again at every call, until the chain is deeper than Python's recursion limit."""
    seen = 0
    while fn is not None and seen < 100:
        if getattr(fn, flag, False):
            return True
        fn, seen = getattr(fn, "__wrapped__", None), seen + 1
    return False


def fix_interpreter() -> None:
    """Every fix below, each switched off where its Triton does not need it."""
    fix_interpreter_index()
    fix_interpreter_patch_leak()
    fix_interpreter_comparison_type()
    fix_interpreter_bool_argument()
    fix_interpreter_float_to_int()
    fix_interpreter_float_exchange()
    fix_range_loop_variables()
    fix_interpreter_overflow_checks()


def fix_interpreter_overflow_checks() -> None:
    """Triton's interpreter checks every add, subtract and multiply of integers narrower than 64
    bits for overflow (both operands cast to int64, the result compared with the type's range, a
    device_assert): about a quarter of the interpreter's time on p28's kernels (12.2 s a check of
    its solution, 8.5 s without). A GPU build does none of it unless compiled with debug=True, and no
    interpreter case is large enough for an offset to overflow int32 (the offsets past 2**31 are a
    GPU-only case), so the interpreter runs as a GPU build does."""
    import dataclasses

    from triton.runtime import interpreter
    builder = getattr(interpreter, "interpreter_builder", None)
    options = getattr(builder, "options", None)
    if options is None or not getattr(options, "sanitize_overflow", False):
        return
    builder.options = dataclasses.replace(options, sanitize_overflow=False)


def fix_interpreter_index() -> None:
    """Triton 3.6's interpreter turns a scalar into a Python int with int(array) on a one-element
    array, which NumPy >= 2.4 refuses: `range(0, H, BLOCK)` inside a nested @triton.jit helper then
    fails with "only 0-dimensional arrays can be converted". Later Triton squeezes first; so do we."""
    from triton.runtime import interpreter
    original = interpreter._patch_lang_tensor
    if getattr(original, "checker_compat", False) or ".squeeze()" in inspect.getsource(original):
        return

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    patch_lang_tensor.checker_compat = True
    interpreter._patch_lang_tensor = patch_lang_tensor


def fix_interpreter_patch_leak() -> None:
    """A @triton.jit function called from a kernel (tl.sum, tl.cdiv, a learner's helper) patches
    triton.language for the interpreter and never undoes it (Triton 3.6 through 3.9: the scope
    `_patch_lang` returns is dropped). The launch undoes its own patches of `tl`, but not those of
    `tl.core`, so after the first launch Triton's compiler front end (checker/interpreter/frontend.py) would
    see interpreter stand-ins. Undo each call's patches when it returns."""
    from triton.runtime import interpreter
    original = interpreter.InterpretedFunction.__call__
    if getattr(original, "checker_compat", False) or "_patch_lang(self.fn)\n" not in inspect.getsource(original):
        return

    import triton.language as tl
    _remember_the_clean_language()
    languages: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # per function: its language modules

    def patched_already(fn) -> bool:
        """Inside a launch (or an enclosing helper) whose patches cover this function's language
        modules, patching again changes nothing: every patch is the same interpreter stand-in. It
        only costs time: inspect.getmembers over triton.language at every call of tl.sum, tl.cdiv or
        a learner's helper was a third of p22's check in the interpreter."""
        found = languages.get(fn)
        if found is None:
            found = languages[fn] = [v for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)]
        return bool(found) and all(not tl.core.is_builtin(vars(lang).get("load")) for lang in found)

    # a launch patches the language modules its kernel's globals hold (tl), and the first tl.sum then
    # patches tl.core for itself, again at every call: a launch patches both, once
    both = types.SimpleNamespace(__globals__={"tl": tl, "core": tl.core})
    patch_lang = interpreter._patch_lang
    if not getattr(patch_lang, "checker_compat", False):
        def patch_both(fn):
            return patch_lang(both)

        patch_both.checker_compat = True
        patch_both.__wrapped__ = patch_lang
        interpreter._patch_lang = patch_both

    def call(self, *args, **kwargs):
        scope = None if patched_already(self.fn) else interpreter._patch_lang(self.fn)
        try:
            fn = self.rewrite()
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                raise interpreter.InterpreterError(repr(e)) from e
        finally:
            if hasattr(scope, "restore"):
                scope.restore()

    call.checker_compat = True
    interpreter.InterpretedFunction.__call__ = call


# triton.language's modules as they were before any launch: (module, {name: value}). A launch cut
# short by an interrupt (a time limit's alarm, ■ in Jupyter) can stop inside the interpreter's patching
# or its undoing, where nothing else records what it replaced
_CLEAN_LANGUAGE: list = []


def _is_interpreters(value) -> bool:
    import functools

    from triton.runtime import interpreter
    if isinstance(value, functools.partial):
        value = value.func
    return getattr(getattr(value, "__code__", None), "co_filename", "") == interpreter.__file__


def _remember_the_clean_language() -> None:
    if _CLEAN_LANGUAGE:
        return
    import triton.language as tl
    for module in (tl.core, tl, tl.math):
        _CLEAN_LANGUAGE.append((module, {name: value for name, value in vars(module).items()
                                         if not _is_interpreters(value) and not (name == "static_print" and value is print)}))


def _restore_the_clean_language() -> None:
    """Put back, from the copy taken before any launch, every name the interpreter left patched."""
    for module, clean in _CLEAN_LANGUAGE:
        for name, value in list(vars(module).items()):
            if name in clean and value is not clean[name] and (
                    _is_interpreters(value) or (name == "static_print" and value is print)):
                setattr(module, name, clean[name])


def undo_leaked_patches() -> bool:
    """Put back what earlier interpreted calls left patched in triton.language's modules (before
    fix_interpreter_patch_leak ran in this process). True when the language is clean."""
    import functools

    import triton.language as tl
    from triton.runtime import interpreter
    here = interpreter.__file__

    def patched(value) -> bool:
        if isinstance(value, functools.partial):
            value = value.func
        return getattr(getattr(value, "__code__", None), "co_filename", "") == here

    def unwrap(value):
        while patched(value) and (getattr(value, "__kwdefaults__", None) or {}).get("member") is not None:
            value = value.__kwdefaults__["member"]  # interpreter._patch_attr keeps the original here
        return value

    def original(name, value, other):
        value = unwrap(value)
        # the same function under another name: tl re-exports tl.core's, tensor methods are them too
        for candidate in (other, getattr(tl.core.tensor, name, None)):
            if patched(value) and candidate is not None and not patched(unwrap(candidate)):
                value = unwrap(candidate)
        return value

    _restore_the_clean_language()
    clean = True
    for module, other in ((tl.core, tl), (tl, tl.core), (tl.math, None)):
        for name, value in list(vars(module).items()):
            if name == "static_print" and value is print:
                value = getattr(other, name, value) if other is not None else value
                if value is print:
                    clean = False
                    continue
            elif not patched(value):
                continue
            fixed = original(name, value, getattr(other, name, None) if other is not None else None)
            if patched(fixed):
                clean = False
            else:
                setattr(module, name, fixed)
    return clean


_COMPARISONS = ("icmpEQ", "icmpNE", "icmpSLT", "icmpSLE", "icmpSGT", "icmpSGE", "icmpULT", "icmpULE",
                "icmpUGT", "icmpUGE", "fcmpOEQ", "fcmpONE", "fcmpOLT", "fcmpOLE", "fcmpOGT", "fcmpOGE",
                "fcmpUEQ", "fcmpUNE", "fcmpULT", "fcmpULE", "fcmpUGT", "fcmpUGE")


def fix_interpreter_comparison_type() -> None:
    """Triton 3.9's interpreter labels a comparison's result with its operands' type (int32 for
    `pid == 0`, fp32 for `flag > 0`) although it holds booleans. A scalar comparison broadcast
    to a block then becomes int32 or fp32 data, and `(offs < N) & (pid == 0)` fails as a mask
    ("mask has unsupported dtype", or "ufunc 'bitwise_and' not supported"), although a GPU
    compiles it. Label comparisons int1, as the compiler does."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter
    builder = interpreter.InterpreterBuilder
    probe = interpreter.TensorHandle(np.array([1], dtype=np.int32), tl.int32)
    try:
        if builder.create_icmpEQ(interpreter.interpreter_builder, probe, probe).dtype == tl.int1:
            return  # this Triton labels them right
    except Exception:  # noqa: BLE001 - a Triton whose builder differs: leave it alone
        return
    for name in _COMPARISONS:
        original = getattr(builder, f"create_{name}", None)
        if original is None or getattr(original, "checker_compat", False):
            continue

        def compare(self, lhs, rhs, original=original):
            result = original(self, lhs, rhs)
            if result.data.dtype == np.bool_ and result.dtype != tl.int1:
                return interpreter.TensorHandle(result.data, tl.int1)
            return result

        compare.checker_compat = True
        setattr(builder, f"create_{name}", compare)


def fix_interpreter_bool_argument() -> None:
    """Triton 3.6's interpreter turns a Python bool argument into int32 data labelled int1 and
    refuses it ("numpy data itemsize (32 bits) exceeds dtype primitive_bitwidth (1 bits)"); a GPU
    takes it as an i1. Later Triton converts bools first; so do we."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter
    original = interpreter._implicit_cvt
    if getattr(original, "checker_compat", False):
        return
    try:
        original(True)
        return  # this Triton converts bools itself
    except Exception:  # noqa: BLE001
        pass

    def implicit_cvt(arg):
        if isinstance(arg, bool):
            return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np.bool_), tl.int1), tl.int1)
        return original(arg)

    implicit_cvt.checker_compat = True
    interpreter._implicit_cvt = implicit_cvt


def float_to_int(values, np_dtype):
    """What a GPU's float-to-integer conversion gives (PTX cvt.rzi): toward zero, saturated at the
    type's bounds, NaN as 0. numpy wraps or returns garbage where the value does not fit."""
    import numpy as np
    info = np.iinfo(np_dtype)
    data = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0)
    low, high = data < info.min, data >= float(info.max)
    inside = np.where(low | high, 0.0, np.trunc(data)).astype(np_dtype)
    return np.where(low, info.min, np.where(high, info.max, inside)).astype(np_dtype)


def fix_interpreter_float_to_int() -> None:
    """`.to(tl.int8)` (or any integer type) of a float that does not fit: a GPU saturates it, the
    interpreter (numpy) wraps it around. Saturate, as a GPU does."""
    import numpy as np
    from triton.runtime import interpreter
    builder = interpreter.InterpreterBuilder
    original = builder.cast_impl
    if wraps_with(original, "checker_compat"):
        return

    def cast_impl(self, src, dst_type):
        src_type, dst = src.dtype.scalar, dst_type.scalar
        if src_type.is_floating() and dst.is_int() and dst.primitive_bitwidth > 1:
            np_dtype = interpreter._get_np_dtype(dst_type)
            return interpreter.TensorHandle(float_to_int(src.data, np_dtype), dst)
        return original(self, src, dst_type)

    cast_impl.checker_compat = True
    cast_impl.__wrapped__ = original
    builder.cast_impl = cast_impl


def fix_interpreter_float_exchange() -> None:
    """`tl.atomic_xchg` on fp32 or fp64 memory: a GPU swaps the bits, Triton's interpreter (3.6
    through 3.9) refuses with "ValueError: Unsupported data type". An exchange moves bits and
    computes nothing, so swap them as integers of the same width."""
    import numpy as np
    from triton.runtime import interpreter
    builder = interpreter.InterpreterBuilder
    original = builder.create_atomic_rmw
    if wraps_with(original, "checker_compat"):
        return
    as_bits = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}

    def create_atomic_rmw(self, rmwOp, ptr, val, mask, *rest, **named):
        bits = as_bits.get(np.asarray(val.data).dtype)
        if bits is None or getattr(rmwOp, "name", str(rmwOp)).split(".")[-1] != "XCHG":
            return original(self, rmwOp, ptr, val, mask, *rest, **named)
        float_type = np.asarray(val.data).dtype
        swapped = original(self, rmwOp, ptr, interpreter.TensorHandle(np.ascontiguousarray(val.data).view(bits),
                                                                      val.dtype.scalar), mask, *rest, **named)
        return interpreter.TensorHandle(np.asarray(swapped.data).view(float_type), val.dtype.scalar)

    create_atomic_rmw.checker_compat = True
    create_atomic_rmw.__wrapped__ = original
    builder.create_atomic_rmw = create_atomic_rmw
