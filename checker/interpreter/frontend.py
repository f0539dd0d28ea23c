"""Triton's GPU front end on every interpreted launch: a kernel no GPU compiles fails on the CPU too.

The interpreter runs a kernel as Python, so it accepts code that Triton's compiler rejects: a
`break`, an `if` on a block, a running sum that starts as a scalar and becomes a block, a global
that is not a constexpr, a call to a plain Python function. Before each interpreted launch we
lower the kernel to Triton IR for a CUDA target, exactly as a GPU launch would (same binder, so
the same argument types, constexprs and specializations), without a driver or a GPU: only the
front end (AST -> Triton IR) runs, never the backend passes. A rejection raises
`GpuCompileError`, which checker/diagnosis/faults.py turns into a learner-facing "compile" error.

Anything that goes wrong for reasons that are not the learner's (an API this Triton lacks, an
internal error, a kernel the front end cannot see as the interpreter does) is swallowed: the
interpreter then runs the kernel as before. Results are cached per launch specialization.

In interpreter mode every `@triton.jit` function, Triton's own (tl.sum, tl.cdiv ...) included,
is an InterpretedFunction, which the code generator cannot call. While one kernel is lowered we
put a JITFunction in place of each InterpretedFunction in the kernel's globals and in
triton.language's modules, and put them back right after.
"""
from __future__ import annotations

import ast
import hashlib
import io
import linecache
import sys
import warnings
import weakref
from contextlib import contextmanager, redirect_stdout
from typing import Any, Iterator

# A CUDA target the front end lowers for. The capability only picks which fp8 conversions exist;
# sm_80 (A100) is the oldest GPU the puzzles' bf16 cases are meant for.
_ARCH = 80
_WARP = 32

_cache: dict[tuple, BaseException | None] = {}     # launch key -> the rejection, or None (compiled)
_CACHE_LIMIT = 2048
# InterpretedFunction -> its JITFunction twin (a JITFunction itself is no key: its hash walks the
# functions it calls, which fails while they are InterpretedFunctions)
_jit_twins: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
_binders: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()  # InterpretedFunction -> binder
_backend: list = []                                # [(target, backend), MLIR context] once made
_library: list = []                                # (namespace, name, InterpretedFunction) of triton.language
_enabled = False


class GpuCompileError(Exception):
    """Triton's GPU compiler rejects the kernel; `__cause__` is its CompilationError."""

    def __init__(self, kernel: str, error: BaseException) -> None:
        super().__init__(f"{kernel} does not compile for a GPU: {reason(error)}")
        self.kernel = kernel
        self.error = error


def reason(error: BaseException) -> str:
    """The compiler's own one-line reason: the deepest link of the chain (a helper's `break`, the
    assertion a type check raised)."""
    while error.__cause__ is not None:
        error = error.__cause__
    text = getattr(error, "error_message", None) or f"{type(error).__name__}: {error}"
    lines = [ln for ln in str(text).strip().split("\n") if ln.strip()]
    return lines[-1].strip() if lines else type(error).__name__


def enable() -> None:
    """Lower every interpreted launch from now on (idempotent). Silently does nothing where this
    Triton lacks what it needs."""
    global _enabled
    if _enabled:
        return
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return
    original = InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        if not warmup:
            check_launch(self, args, kwargs)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    run.__wrapped__ = original
    InterpretedFunction.run = run
    _enabled = True


def disable() -> None:
    """Launch as the interpreter alone does (tests that run kernels outside a check)."""
    global _enabled
    if not _enabled:
        return
    from triton.runtime.interpreter import InterpretedFunction
    InterpretedFunction.run = InterpretedFunction.run.__wrapped__
    _enabled = False


def check_launch(interpreted: Any, args: tuple, kwargs: dict) -> None:
    """Raise GpuCompileError if the GPU front end rejects this launch of `interpreted`."""
    try:
        prepared = _prepare(interpreted, args, kwargs)
    except Exception:  # noqa: BLE001 - an API this Triton lacks, arguments it cannot bind: not ours to judge
        return
    if prepared is None:
        return
    key, lower = prepared
    if key not in _cache:
        if len(_cache) >= _CACHE_LIMIT:  # a long test run checks thousands of kernels: keep memory flat
            _cache.clear()
        _cache[key] = lower()
    rejection = _cache[key]
    if rejection is not None:
        raise GpuCompileError(interpreted.fn.__name__, rejection) from rejection


def _context(ir, backend):
    """One MLIR context for every lowering: making one and loading its dialects each time costs
    more than most kernels' lowering."""
    if len(_backend) < 2:
        context = ir.context()
        ir.load_dialects(context)
        backend.load_dialects(context)
        _backend.append(context)
    return _backend[1]


def _target_and_backend():
    if not _backend:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend
        target = GPUTarget("cuda", _ARCH, _WARP)
        _backend.append((target, make_backend(target)))
    return _backend[0]


def _twin(interpreted: Any) -> Any:
    """The JITFunction a GPU launch would have made of this function."""
    twin = _jit_twins.get(interpreted)
    if twin is None:
        from triton.runtime.jit import JITFunction
        try:
            twin = JITFunction(interpreted.fn, **interpreted.kwargs)
        except TypeError:  # an option this Triton's JITFunction does not take
            twin = JITFunction(interpreted.fn)
        _jit_twins[interpreted] = twin
    return twin


_source_keys: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()  # InterpretedFunction -> key


def _source_key(interpreted: Any, twin: Any) -> str:
    """What the lowering depends on besides the launch's types: the kernel's own text, its
    helpers' and the globals they read (Triton's own cache key, so that a check of other kernels
    in the same file, or of the same kernel pasted into notebook cells, reuses it); where that
    fails (a call of a plain function, which the front end will reject), the whole file's text."""
    key = _source_keys.get(interpreted)
    if key is None:
        try:
            with _jit_functions_in_place(interpreted.fn.__globals__):
                key = twin.cache_key
            used = getattr(twin, "used_global_vals", {}) or {}
            key += repr(sorted((name, repr(value)) for (name, _), (value, _) in used.items()))
        except Exception:  # noqa: BLE001
            fn = interpreted.fn
            lines = linecache.getlines(fn.__code__.co_filename)
            text = "".join(lines) if lines else repr(fn.__code__.co_code)
            key = fn.__code__.co_filename + hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()
        _source_keys[interpreted] = key
    return key


def _prepare(interpreted: Any, args: tuple, kwargs: dict):
    """(cache key, a function that lowers and returns the rejection or None), or None."""
    from triton.runtime.jit import create_function_from_signature
    target, backend = _target_and_backend()
    twin = _twin(interpreted)
    binder = _binders.get(interpreted)
    if binder is None:
        binder = create_function_from_signature(twin.signature, twin.params, backend)
        _binders[interpreted] = binder
    bound, specialization, options = binder(*args, **kwargs)
    # the types and constexprs decide what the front end accepts; alignment and divisibility
    # hints (the second item of a non-constexpr entry) only annotate the arguments
    types = [s if s[0] == "constexpr" else s[0] for s in specialization]
    key = (interpreted.fn.__qualname__, _source_key(interpreted, twin), repr(types), repr(sorted(options.items())))

    def lower() -> BaseException | None:
        return _lower(twin, backend, target, bound, specialization, options)
    return key, lower


def _lower(twin: Any, backend: Any, target: Any, bound: dict, specialization: list, options: dict):
    """Run the front end once; the learner's rejection, or None (compiled, or not ours to judge)."""
    from triton._C.libtriton import ir
    from triton.compiler import ASTSource
    from triton.compiler.errors import CompilationError

    from checker.interpreter.compat import undo_leaked_patches
    if not undo_leaked_patches():  # interpreter stand-ins we cannot take out: the front end would misread
        return None
    try:
        # a verifier failure prints the whole module: not for the learner's eyes
        with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")  # option defaults announced by newer Tritons: not the learner's
            parsed, signature, constexprs, attrs = twin._pack_args(backend, dict(options), bound, specialization,
                                                                   options)
            context = _context(ir, backend)
            codegen_fns = dict(backend.get_codegen_implementation(parsed))
            # the smallest tl.dot a GPU's tensor cores take depends on the block sizes, which the
            # puzzle's cases choose, not the learner: the interpreter's small cases need not meet it
            codegen_fns["min_dot_size"] = lambda lhs, rhs: (1, 1, 1)
            source = ASTSource(twin, signature, constexprs, attrs)
            with _jit_functions_in_place(twin.fn.__globals__):
                source.make_ir(target, parsed, codegen_fns, backend.get_module_map(), context)
    except CompilationError as error:
        return error if _learners(error) else None
    except Exception:  # noqa: BLE001 - internal errors, verifier failures: never the learner's verdict
        return None
    return None


def _learners(error: BaseException) -> bool:
    """A rejection is the learner's unless the front end tripped over the interpreter's own
    objects (a @triton.jit function we did not swap back to a JITFunction), or over a stub's
    `raise NotImplementedError` (the interpreter says "not implemented", which is the news)."""
    seen, link = 0, error
    while link is not None and seen < 20:
        if "InterpretedFunction" in str(link) or "interpreter" in _frames(link):
            return False
        if _raises_not_implemented(link):
            return False
        link, seen = link.__cause__ or link.__context__, seen + 1
    return True


def _raises_not_implemented(error: BaseException) -> bool:
    node = getattr(error, "node", None)
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _frames(exc: BaseException) -> str:
    import traceback
    return " ".join(f.filename for f in traceback.extract_tb(exc.__traceback__)
                    if "triton" in f.filename and "runtime" in f.filename)


@contextmanager
def _jit_functions_in_place(learner_globals: dict) -> Iterator[None]:
    """Swap every InterpretedFunction in these namespaces for its JITFunction twin, then back."""
    from triton.runtime.interpreter import InterpretedFunction
    if not _library:  # Triton's own @jit functions: the same objects for the whole process
        _library.extend((vars(m), name, value) for module_name, m in list(sys.modules.items())
                        if m is not None and module_name.startswith("triton.language")
                        for name, value in list(vars(m).items()) if isinstance(value, InterpretedFunction))
    found = [(learner_globals, name, value) for name, value in list(learner_globals.items())
             if isinstance(value, InterpretedFunction)]
    swapped = []
    try:
        for namespace, name, value in found + _library:
            if namespace.get(name) is value:
                swapped.append((namespace, name, value))
                namespace[name] = _twin(value)
        yield
    finally:
        for namespace, name, value in swapped:
            namespace[name] = value
