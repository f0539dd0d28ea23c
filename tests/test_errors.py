"""Errors from learner code become one short message at the learner's line (no GPU needed: the
compile errors are built the way Triton's compiler chains them)."""
from __future__ import annotations

import ast

from checker.diagnosis.faults import describe
from checker.source import from_file


def _source(tmp_path, code: str):
    path = tmp_path / "kernels.py"
    path.write_text(code, encoding="utf-8")
    return from_file(path, "kernels.py")


def test_compile_error_names_the_reason_and_the_learners_line(tmp_path):
    from triton.compiler.errors import CompilationError
    code = "@triton.jit\ndef k(x_ptr, BLOCK: tl.constexpr):\n    y = tl.zeros([BLOCK + 1], dtype=tl.float32)\n"
    source = _source(tmp_path, code)
    learner_src = code.split("\n", 1)[1]          # Triton keeps the function's text from `def`
    learner_node = ast.parse(learner_src).body[0].body[0].value
    library_src = "def zeros(shape, dtype):\n    return core.full(shape, 0, dtype)\n"
    library_node = ast.parse(library_src).body[0].body[0].value
    try:
        try:
            raise CompilationError(library_src, library_node, "Shape element 0 must be a power of 2")
        except CompilationError as inner:
            raise CompilationError(learner_src, learner_node, None) from inner
    except CompilationError as outer:
        error = describe(outer, source)
    assert error.kind == "compile"
    assert error.message == "the kernel does not compile: Shape element 0 must be a power of 2"
    assert error.where == "`k`, kernels.py, line 3"  # the kernel first: JupyterLab shows no cell numbers
    assert error.code == "y = tl.zeros([BLOCK + 1], dtype=tl.float32)"
    assert "core.full" not in error.message


def test_exception_in_a_nested_call_points_at_the_innermost_learner_line(tmp_path):
    source = _source(tmp_path, "def helper(v):\n    return v / 0\n\ndef kernel(v):\n    return helper(v)\n")
    namespace: dict = {}
    exec(compile(source.text, source.filename, "exec"), namespace)
    try:
        namespace["kernel"](1)
    except ZeroDivisionError as exc:
        error = describe(exc, source)
    assert error.kind == "exception" and error.message.startswith("ZeroDivisionError")
    assert error.where == "`helper`, kernels.py, line 2" and error.code == "return v / 0"


# -- beginners' mistakes that Triton words for its own developers ---------------------------------
# Each kernel runs twice: through Triton's GPU front end (checker/interpreter/frontend.py, as every check does,
# and as a GPU compiles it) and in the interpreter alone. Both reject the kernel, in different words;
# the learner gets one sentence and their own line from either.

PRELUDE = "import triton\nimport triton.language as tl\n\n"


def _rejected(code: str, name: str, launch) -> list:
    """describe() of the error each way of running the kernel raises: [front end, interpreter]."""
    import linecache
    import types

    from checker.interpreter import compat

    from checker.interpreter import frontend
    from checker.source import from_text

    source = from_text(PRELUDE + code, f"{name}.py")
    linecache.cache[source.filename] = (len(source.text), None, source.text.splitlines(True), source.filename)
    module = types.ModuleType(name)
    module.__file__ = source.filename
    exec(compile(source.text, source.filename, "exec"), module.__dict__)
    compat.fix_interpreter()
    errors = []
    for front_end in (True, False):
        frontend.enable() if front_end else frontend.disable()
        try:
            launch(module.k)
        except Exception as exc:  # noqa: BLE001 - whatever Triton raises is what the learner gets
            errors.append(describe(exc, source))
        else:
            raise AssertionError(f"{name}: the kernel ran ({'front end' if front_end else 'interpreter'})")
        finally:
            frontend.disable()
    return errors


def _one_block(k):
    import torch
    k[(1,)](torch.randn(16), torch.zeros(16), 16, BLOCK=16)


def test_a_block_assigned_element_by_element_in_a_loop(tmp_path):
    code = """
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(BLOCK):
        acc[i] = 2.0
    tl.store(y_ptr + offs, acc, mask=offs < N)
"""
    compiled, interpreted = _rejected(code, "setitem", _one_block)
    # Triton: "__setitem__ is not supported in triton" / "'tensor' object does not support item assignment"
    for error in (compiled, interpreted):
        assert error.message.startswith(("the kernel does not compile: `acc[i]` writes one element",
                                         "`acc[i]` writes one element")), error.message
        assert "element by element" in error.message and "a loop over its elements" in error.message
        assert "tl.where(tl.arange(0, BLOCK) == i, value, acc)" in error.message
        assert error.where == "`k`, setitem.py, line 10" and error.code == "acc[i] = 2.0"
    assert "__setitem__" not in compiled.message and "item assignment" not in interpreted.message


def test_an_element_of_a_block_read_in_a_loop(tmp_path):
    code = """
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    total = 0.0
    for i in range(BLOCK):
        total += x[i]
    tl.store(y_ptr + offs, x + total, mask=offs < N)
"""
    compiled, interpreted = _rejected(code, "getitem", _one_block)
    # Triton: "Did you forget to add @triton.jit ? (`_semantic` argument ...)" / "'int' object is not iterable"
    for error in (compiled, interpreted):
        assert "`x[i]` reads one element of the block `x`" in error.message, error.message
        assert "tl.sum(tl.where(tl.arange(0, BLOCK) == i, x, 0), axis=0)" in error.message
        assert error.where == "`k`, getitem.py, line 11" and error.code == "total += x[i]"
    assert "@triton.jit" not in compiled.message and "iterable" not in interpreted.message


REDUCTION_ALONG_THE_WRONG_AXIS = """
@triton.jit
def k(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    row_sums = tl.sum(x, axis=0)
    tl.atomic_add(y_ptr + rows, row_sums)
"""


def _rows(k):
    import torch
    k[(1,)](torch.randn(8, 4), torch.zeros(8), 8, 4, BLOCK_M=8, BLOCK_N=4)


def test_a_sum_along_the_wrong_axis_names_the_shapes_the_failing_line_and_the_sum():
    compiled, interpreted = _rejected(REDUCTION_ALONG_THE_WRONG_AXIS, "axis", _rows)
    # Triton: "Cannot make_shape_compatible: incompatible dimensions at index 0: 8 and 4", at the atomic
    for error in (compiled, interpreted):
        assert "two blocks of different shapes meet on this line, 8 and 4 elements along dimension 0" \
            in error.message, error.message
        assert "A reduction along the wrong axis may be the cause: at `k`, axis.py, line 10, " \
               "`row_sums = tl.sum(x, axis=0)` reduces along axis 0" in error.message
        assert "axis=1 one per row" in error.message
        assert error.where == "`k`, axis.py, line 11" and error.code == "tl.atomic_add(y_ptr + rows, row_sums)"
        assert "make_shape_compatible" not in error.message
    assert compiled.kind == "compile" and interpreted.kind == "exception"


def test_a_shape_mismatch_without_a_reduction_asks_where_the_shapes_come_from():
    code = """
@triton.jit
def k(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    tl.store(y_ptr + rows, rows + cols)
"""
    for error in _rejected(code, "noreduce", _rows):
        assert "8 and 4 elements along dimension 0" in error.message, error.message
        assert "a reduction's axis, a [:, None] or [None, :] missing or misplaced" in error.message
        assert "may be the cause" not in error.message
        assert error.where == "`k`, noreduce.py, line 9" and error.code == "tl.store(y_ptr + rows, rows + cols)"


def test_integer_division_of_floats_says_use_a_slash():
    code = """
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    half = x // 2
    tl.store(y_ptr + offs, half, mask=offs < N)
"""
    compiled, interpreted = _rejected(code, "floordiv", _one_block)
    # Triton: "unexpected type fp32"
    for error in (compiled, interpreted):
        assert "`//` is integer division" in error.message and "on fp32 values" in error.message, error.message
        assert "Divide with `/`" in error.message and "unexpected type" not in error.message
        assert error.where == "`k`, floordiv.py, line 9" and error.code == "half = x // 2"


def test_a_store_racing_with_another_programs_atomic_reads_as_a_sentence():
    import torch
    import triton
    import triton.language as tl

    from checker.interpreter import compat

    from checker.interpreter import sanitizer
    from checker.interpreter.sanitizer import KernelFault

    @triton.jit
    def atomic_then_store(out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        if tl.program_id(0) == 1:
            tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32))
        else:
            tl.atomic_add(out_ptr + offs, tl.full([BLOCK], 1.0, tl.float32))

    compat.fix_interpreter()
    with sanitizer.sanitized():
        try:
            atomic_then_store[(2,)](torch.zeros(8), BLOCK=8)
        except KernelFault as fault:
            message = str(fault)
        else:
            raise AssertionError("no race reported")
    assert ("Program (1, 0, 0) stores to this element, but program (0, 0, 0) reads it or updates it with an "
            "atomic in the same launch.") in message, message


def _interpreted(code: str, name: str, launch):
    """describe() of the error the interpreter alone raises for a kernel a GPU compiles."""
    import linecache
    import types

    from checker.interpreter import compat
    from checker.source import from_text

    source = from_text(PRELUDE + code, f"{name}.py")
    linecache.cache[source.filename] = (len(source.text), None, source.text.splitlines(True), source.filename)
    module = types.ModuleType(name)
    module.__file__ = source.filename
    exec(compile(source.text, source.filename, "exec"), module.__dict__)
    compat.fix_interpreter()
    try:
        launch(module.k)
    except Exception as exc:  # noqa: BLE001
        return describe(exc, source)
    raise AssertionError(f"{name}: the kernel ran")


def test_libdevice_in_the_interpreter_is_named_with_what_runs_on_both():
    error = _interpreted("""
from triton.language.extra import libdevice

@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + offs, libdevice.tanh(x), mask=offs < N)
""", "libdev", _one_block)
    assert error.message.startswith("Triton's interpreter cannot run libdevice functions (`libdevice.tanh` here)")
    assert "runs on both" in error.message and "NoneType" not in error.message
    assert error.diagnosis.code == "error.interpreter_gap"


def test_an_int_without_to_is_named_with_what_runs_on_both():
    from checker.diagnosis.interpreter_gaps import interpreter_gap
    said = interpreter_gap("AttributeError(\"'int' object has no attribute 'to'\")", "start = row.to(tl.int64) * stride")
    assert "Python int" in said and "tl.cast(value, tl.int64)" in said


def test_a_name_never_assigned_is_said_alike_and_never_as_gpu_only():
    """The interpreter raises a NameError too: no "(the interpreter alone would run it)" here."""
    code = """
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + offz, x, mask=offs < N)
"""
    compiled, interpreted = _rejected(code, "typo", _one_block)
    for error in (compiled, interpreted):
        assert "`offz` is not defined: the kernel never assigns it" in error.message, error.message
        assert "interpreter alone" not in error.message.lower() and "for a GPU" not in error.message
        assert error.where == "`k`, typo.py, line 9"
