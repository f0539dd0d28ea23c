"""Valid Triton that the interpreter mishandled, one test per quirk (checker/interpreter/compat.py): each
kernel runs and gives what an H100 gave for it (the expected values are computed here the way
the GPU computes them: C's truncating `//` and `%` on integers, for one)."""
from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from checker.interpreter import compat


@pytest.fixture(autouse=True, scope="module")
def fixed():
    compat.fix_interpreter()


@triton.jit
def mask_and_pid(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = (offs < N) & (pid == 0)
    tl.store(out_ptr + pid * BLOCK + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=offs < N)


@triton.jit
def mask_and_flag(x_ptr, out_ptr, N, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    first = tl.load(x_ptr)  # a float scalar loaded from memory, compared, and-ed with a block
    mask = (offs < N) & (x > 0) & (flag > 0) & (first > -100.0)
    tl.store(out_ptr + offs, tl.where(mask, x, -1.0), mask=offs < N)


@triton.jit
def where_and_atomic_with_scalar_conditions(x_ptr, out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N, other=0.0)
    tl.store(out_ptr + pid * BLOCK + offs, tl.where(pid == 0, x, 0.0), mask=offs < N)
    tl.atomic_add(out_ptr + 2 * BLOCK + offs, x, mask=(offs < N) & (pid == 1))


def test_a_block_mask_and_a_scalar_comparison():
    x = torch.randn(16)
    out = torch.full((32,), 7.0)
    mask_and_pid[(2,)](x, out, 13, BLOCK=16)
    torch.testing.assert_close(out[:13], x[:13])
    assert (out[16:29] == 0).all()  # program 1: every load masked off, other=0


def test_a_block_mask_and_a_float_flag():
    x = torch.randn(16)
    out = torch.zeros(16)
    mask_and_flag[(1,)](x, out, 13, 1.5, BLOCK=16)
    torch.testing.assert_close(out[:13], torch.where(x[:13] > 0, x[:13], -1.0))


def test_tl_where_and_atomics_with_scalar_conditions():
    x = torch.randn(16)
    out = torch.zeros(48)
    where_and_atomic_with_scalar_conditions[(2,)](x, out, 13, BLOCK=16)
    torch.testing.assert_close(out[:13], x[:13])
    assert (out[16:29] == 0).all()
    torch.testing.assert_close(out[32:45], x[:13])


@triton.jit
def bool_argument(x_ptr, out_ptr, N, flag, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=(offs < N) & flag, other=3.0), mask=offs < N)


def test_a_bool_argument():
    x = torch.randn(16)
    out = torch.zeros(16)
    bool_argument[(1,)](x, out, 13, True, BLOCK=16)
    torch.testing.assert_close(out[:13], x[:13])
    bool_argument[(1,)](x, out, 13, False, BLOCK=16)
    assert (out[:13] == 3.0).all()


@triton.jit
def integer_arithmetic(out_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = offs - 7
    q = v // 3 * 1000 + v % 3 * 100 + (pid - 1) // 2 * 10 + (pid - 1) % 2  # C's truncation, as on a GPU
    c = tl.cdiv(N + offs, 4)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.range(0, N, 4):
        acc += 1.0
    for j in tl.static_range(0, BLOCK, 8):
        acc += j
    tl.store(out_ptr + pid * 3 * BLOCK + offs, q.to(tl.float32))
    tl.store(out_ptr + pid * 3 * BLOCK + BLOCK + offs, c.to(tl.float32))
    tl.store(out_ptr + pid * 3 * BLOCK + 2 * BLOCK + offs, acc)


def test_integer_division_cdiv_and_ranges_inside_a_kernel():
    out = torch.zeros(96)
    integer_arithmetic[(2,)](out, 13, BLOCK=16)
    v = torch.arange(16) - 7
    for pid in range(2):
        q = torch.div(v, 3, rounding_mode="trunc") * 1000 + torch.fmod(v, 3) * 100 + int((pid - 1) / 2) * 10 \
            + int(torch.fmod(torch.tensor(pid - 1), 2))
        base = pid * 48
        assert out[base:base + 16].tolist() == q.float().tolist()
        assert out[base + 16:base + 32].tolist() == ((13 + torch.arange(16) + 3) // 4).float().tolist()
        assert out[base + 32:base + 48].tolist() == [4.0 + 8.0] * 16  # 4 steps of 4 up to 13, then 0 + 8


@triton.jit
def nested_sum(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + offs), axis=0))


def test_a_nested_call_leaves_triton_language_as_it_found_it():
    import triton.runtime.interpreter as interp
    before = {k: v for k, v in vars(tl.core).items()}
    out = torch.zeros(1)
    nested_sum[(1,)](torch.ones(8), out, BLOCK=8)  # tl.sum is a @triton.jit function called from a kernel
    assert out.item() == 8.0
    changed = [k for k, v in vars(tl.core).items() if before.get(k) is not v]
    assert changed == []
    assert compat.undo_leaked_patches()
    assert not any(getattr(getattr(v, "__code__", None), "co_filename", "") == interp.__file__
                   for v in vars(tl.core).values())


@triton.jit
def many_reductions(x_ptr, out_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    total = 0.0
    for _ in range(4):  # each tl.sum and tl.max is a @triton.jit function called from the kernel
        total += tl.sum(x, axis=0) + tl.max(x, axis=0)
    tl.store(out_ptr, total)


def test_a_launch_patches_triton_language_once(monkeypatch):
    """Re-patching the language at every nested call (inspect.getmembers over triton.language) was
    a third of p22's check in the interpreter: a launch patches tl and tl.core once, and the calls
    inside it find them patched."""
    import triton.runtime.interpreter as interp
    calls = []
    patch_lang = interp._patch_lang
    monkeypatch.setattr(interp, "_patch_lang", lambda fn: calls.append(fn) or patch_lang(fn))
    out = torch.zeros(1)
    many_reductions[(2,)](torch.ones(8), out, BLOCK=8)
    assert out.item() == 4 * (8.0 + 1.0)
    assert len(calls) == 1


@triton.jit
def float_to_int(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x.to(tl.int8).to(tl.int32) * 1000 + x.to(tl.int32))


def test_a_float_that_does_not_fit_saturates_as_on_a_gpu():
    x = torch.tensor([-211.5, 300.0, -3.7, 3.7, 127.9, float("nan"), 5e9, -5e9])
    out = torch.zeros(8, dtype=torch.int32)
    float_to_int[(1,)](x, out, BLOCK=8)
    i8 = [-128, 127, -3, 3, 127, 0, 127, -128]
    i32 = [-211, 300, -3, 3, 127, 0, 2**31 - 1, -2**31]
    assert out.tolist() == [(a * 1000 + b + 2**31) % 2**32 - 2**31 for a, b in zip(i8, i32)]


def test_two_modules_wrapping_one_method_wrap_it_once_each():
    """bf16 and compat both wrap the interpreter's cast_impl. Enabled again and again in one
    process (a warm worker's checks, a test run), each must find its wrapper under the other's:
    a chain that grew at every check reached Python's recursion limit after some hundreds."""
    from triton.runtime import interpreter

    from checker.interpreter import bf16

    from checker.interpreter import compat

    def depth(fn) -> int:
        """Wrappers above the interpreter's own cast_impl: each holds the one below in its closure."""
        n = 0
        while fn is not None:
            below = [c.cell_contents for c in (fn.__closure__ or ()) if getattr(c.cell_contents, "__name__", "") == "cast_impl"]
            fn, n = (below[0] if below else None), n + 1
        return n

    compat.fix_interpreter()
    bf16.enable()
    first = depth(interpreter.InterpreterBuilder.cast_impl)
    for _ in range(5):
        compat.fix_interpreter()
        bf16.enable()
    assert depth(interpreter.InterpreterBuilder.cast_impl) == first <= 3


@triton.jit
def rows_in_a_range_loop(x_ptr, out_ptr, M, N, stride, BLOCK: tl.constexpr):
    """p27's hint as a learner writes it: a range loop's variable used as the tensor a GPU makes it."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    for row in range(pid, M, tl.num_programs(0)):
        start = row.to(tl.int64) * stride
        x = tl.load(x_ptr + start + offs, mask=offs < N, other=0.0)
        tl.store(out_ptr + start + offs, x * 2, mask=offs < N)
    for first in tl.range(pid, M, 2, num_stages=2):  # p25's pipelined loop
        tl.store(out_ptr + M * stride + first, first.to(tl.float32))


def test_a_range_loop_variable_is_a_tensor_as_on_a_gpu():
    x = torch.randn(5, 8)
    out = torch.zeros(5 * 8 + 5)
    rows_in_a_range_loop[(2,)](x, out, 5, 7, 8, BLOCK=8)
    torch.testing.assert_close(out[:40].view(5, 8)[:, :7], x[:, :7] * 2)
    assert out[40:].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


@triton.jit
def loop_variable_types(out_ptr, BIG, BLOCK: tl.constexpr):
    for i in range(0, 1):
        tl.store(out_ptr, i.dtype.primitive_bitwidth)
    for j in range(0, BIG, BIG):
        tl.store(out_ptr + 1, j.dtype.primitive_bitwidth)
    for k in tl.static_range(0, BLOCK, BLOCK):  # unrolled: a constexpr on a GPU, an int here
        tl.store(out_ptr + 2, tl.full([], k, tl.int32) + 32)


def test_a_loop_variable_is_int64_where_a_bound_is():
    out = torch.zeros(3, dtype=torch.int32)
    loop_variable_types[(1,)](out, 2**40, BLOCK=4)
    assert out.tolist() == [32, 64, 32]


@triton.jit
def exchange(x_ptr, out_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_xchg(out_ptr + offs, tl.load(x_ptr + offs), mask=offs < 5)
    tl.store(old_ptr + offs, old)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_an_atomic_exchange_of_floats_swaps_them_as_on_a_gpu(dtype):
    x = torch.randn(8, dtype=dtype)
    out = torch.arange(8, dtype=dtype)
    old = torch.zeros(8, dtype=dtype)
    exchange[(1,)](x, out, old, BLOCK=8)
    assert out[:5].tolist() == x[:5].tolist() and out[5:].tolist() == [5.0, 6.0, 7.0]
    assert old[:5].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
