"""Errors from learner code become one short message at the learner's line (no GPU needed: the
compile errors are built the way Triton's compiler chains them)."""
from __future__ import annotations

import ast

from checker.errors import describe
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
