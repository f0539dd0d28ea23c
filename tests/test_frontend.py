"""The GPU front end on every interpreted launch (checker/interpreter/frontend.py): what no GPU compiles fails on
the CPU too, with a message that names the construct, the learner's line and what to write instead;
valid kernels, and anything that fails for reasons not the learner's, run as before."""
from __future__ import annotations

import linecache
import types

import pytest
import torch
import triton.language as tl  # noqa: F401 - the kernels' globals

from checker import registry

from checker.interpreter import compat

from checker.interpreter import frontend
from checker.diagnosis.faults import describe
from checker.run.session import run_check
from checker.source import from_text

PRELUDE = "import triton\nimport triton.language as tl\n\n"


@pytest.fixture(autouse=True)
def front_end():
    compat.fix_interpreter()
    frontend.enable()
    yield
    frontend.disable()


def load(code: str, name: str):
    """The kernels of `code` as the worker loads a learner's text: a module whose source
    inspect can read; returns (module, KernelSource)."""
    source = from_text(PRELUDE + code, f"{name}.py")
    linecache.cache[source.filename] = (len(source.text), None, source.text.splitlines(True), source.filename)
    module = types.ModuleType(name)
    module.__file__ = source.filename
    exec(compile(source.text, source.filename, "exec"), module.__dict__)
    return module, source


def launch(kernel, n: int = 20, block: int = 16):
    x, y = torch.randn(64), torch.zeros(64)
    kernel[(1,)](x, y, n, BLOCK=block)
    return x, y


def rejected(code: str, name: str, kernel: str = "k"):
    module, source = load(code, name)
    with pytest.raises(frontend.GpuCompileError) as info:
        launch(getattr(module, kernel))
    return describe(info.value, source)


BREAK = """
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    i = 0
    while True:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)
        i += 1
        if i >= 1:
            break
"""


def test_break_fails_as_a_compile_error_at_the_learners_line():
    error = rejected(BREAK, "brk")
    assert error.kind == "compile" and error.cause == "compile"
    assert "`break`" in error.message and "loop's condition" in error.message
    assert "the interpreter alone would run it" in error.message.lower()
    assert error.code == "break" and error.where.startswith("`k`, brk.py, line ")
    assert error.to_json()["cause"] == "compile"


def test_a_loop_on_a_condition_that_never_changes_is_named_with_what_to_write():
    error = rejected("""
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    while True:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)
""", "forever")
    assert "`while True:` tests a condition fixed when the kernel compiles" in error.message, error.message
    assert "range(...)" in error.message and "'constexpr' object" not in error.message
    assert error.code == "while True:"


def test_if_on_a_block_asks_for_tl_where():
    error = rejected("""
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    if x > 0:
        x = x * 2
    tl.store(y_ptr + offs, x, mask=offs < N)
""", "ifblock")
    assert "tl.where" in error.message and "scalar" in error.message
    assert error.code == "if x > 0:"


def test_a_break_inside_a_helper_points_at_the_helper():
    error = rejected("""
@triton.jit
def helper(x):
    while True:
        break
    return x

@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, helper(tl.load(x_ptr + offs, mask=offs < N)), mask=offs < N)
""", "helper_brk")
    assert "`break`" in error.message
    assert error.where.startswith("`helper`") and error.code == "break"


def test_a_scalar_that_becomes_a_block_in_a_loop_is_named_with_both_types():
    error = rejected("""
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = 0.0
    for s in range(0, N, BLOCK):
        acc += tl.load(x_ptr + s + offs, mask=s + offs < N, other=0.0)
    tl.store(y_ptr + offs, acc, mask=offs < N)
""", "scalar_acc")
    assert "`acc` changes type in the loop" in error.message
    assert "an fp32 scalar" in error.message and "a [16] block of fp32" in error.message
    assert "tl.zeros" in error.message


def test_globals_and_plain_functions_say_what_a_gpu_kernel_can_see():
    error = rejected("""
BLOCK_SIZE = 16

@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK_SIZE)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)
""", "glob")
    assert "`BLOCK_SIZE`" in error.message and "tl.constexpr" in error.message
    error = rejected("""
def double(x):
    return x * 2

@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, double(tl.load(x_ptr + offs, mask=offs < N)), mask=offs < N)
""", "plain")
    assert "plain Python function" in error.message and "@triton.jit" in error.message


VALID = """
@triton.jit
def helper(x, s):
    return x * s

@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = (offs < N) & (pid == 0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(2):
        acc += helper(x, i)
    for j in range(0, tl.cdiv(N, BLOCK)):
        acc += tl.where(x > 0, 1.0, 0.0)
    r = tl.arange(0, 8)
    m = tl.dot(tl.zeros([8, 8], dtype=tl.float32), tl.zeros([8, 8], dtype=tl.float32))
    tl.store(y_ptr + offs, acc + tl.sum(x, axis=0) + tl.sum(tl.sum(m, axis=1), axis=0), mask=offs < N)
"""


def test_valid_kernels_run_and_each_specialization_is_lowered_once(monkeypatch):
    module, _ = load(VALID, "valid")
    calls = []
    lower = frontend._lower
    monkeypatch.setattr(frontend, "_lower", lambda *a: calls.append(1) or lower(*a))
    x, y = launch(module.k)  # tl.dot of 8x8 blocks too: the cases choose block sizes, not the learner
    torch.testing.assert_close(y[:16], x[:16] + 2.0 * (x[:16] > 0) + x[:16].sum())
    launch(module.k)
    assert len(calls) == 1
    launch(module.k, n=32)  # N divisible by 16: another hint, the same types: still cached
    assert len(calls) == 1
    launch(module.k, block=32)  # another constexpr: lowered again
    assert len(calls) == 2


def test_what_fails_for_reasons_not_the_learners_degrades_silently(monkeypatch):
    from triton.compiler import ASTSource
    monkeypatch.setattr(frontend, "_cache", {})  # the other tests lowered BREAK already
    module, _ = load(BREAK, "internal")

    def broken(*args, **kwargs):
        raise RuntimeError("an internal error of the compiler")
    monkeypatch.setattr(ASTSource, "make_ir", broken)
    launch(module.k)  # runs in the interpreter as before
    monkeypatch.setattr(frontend, "_cache", {})
    monkeypatch.setattr(frontend, "_prepare", lambda *a: (_ for _ in ()).throw(AttributeError("no such API")))
    module, _ = load(BREAK, "missing_api")
    launch(module.k)


def test_a_stub_helper_is_left_to_the_interpreter_to_report():
    module, _ = load("""
@triton.jit
def helper(x):
    raise NotImplementedError("write helper")

@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, helper(tl.load(x_ptr + offs, mask=offs < N)), mask=offs < N)
""", "stub")
    with pytest.raises(Exception) as info:
        launch(module.k)
    assert not isinstance(info.value, frontend.GpuCompileError)
    assert "write helper" in repr(info.value) or "write helper" in repr(info.value.__cause__)


def test_patches_the_interpreter_left_in_tl_core_are_taken_out():
    import triton.runtime.interpreter as interp
    original = tl.core.static_print
    patch_lang = getattr(interp._patch_lang, "__wrapped__", interp._patch_lang)  # Triton's own, not ours
    scope = patch_lang(types.SimpleNamespace(__globals__={"core": tl.core}))  # as a nested call leaves it
    try:
        assert tl.core.static_print is print
        assert compat.undo_leaked_patches()
        assert tl.core.static_print is original
    finally:
        scope.restore()
        tl.core.static_print = original


def test_the_report_of_a_check_names_the_rejection():
    puzzle = registry.get("p11")
    text = puzzle.solution.read_text(encoding="utf-8").replace(
        "    m = tl.max(x, axis=0)\n", "    m = tl.max(x, axis=0)\n    if x > m:\n        m = m + 0.0\n", 1)
    lines: list[str] = []
    report = run_check(puzzle, ["forward"], from_text(text, "kernels.py"), backend="interpreter", in_process=True,
                       only_documented=True, write=lines.append)
    out = "\n".join(lines)
    assert not report.passed
    assert "does not compile for a GPU" in out and "tl.where" in out and "if x > m:" in out
    errors = [r["error"] for r in report.results if r.get("status") == "error"]
    assert errors and errors[0]["kind"] == "compile" and errors[0]["cause"] == "compile"


def test_a_for_over_a_tuple_says_what_a_kernel_loop_runs_over():
    """Triton 3.9's code generator fails with "'Tuple' object has no attribute 'func'": raw, that
    says nothing to a learner whose Python is right."""
    module, source = load("""
@triton.jit
def k(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    half = tl.arange(0, BLOCK // 2)
    for offs in (half, half + BLOCK // 2):
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)
""", "tuplefor")
    try:
        launch(module.k)
    except frontend.GpuCompileError as exc:
        error = describe(exc, source)
    else:
        pytest.skip("this Triton compiles a for over a tuple")
    assert "`for` over a tuple or a list" in error.message and "tl.static_range" in error.message
    assert error.code == "for offs in (half, half + BLOCK // 2):"
