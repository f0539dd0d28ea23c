"""The interpreter sanitizer: out-of-bounds accesses and data races become KernelFaults."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported (conftest does it too)

import inspect  # noqa: E402
import linecache  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.runtime import interpreter  # noqa: E402

from checker.interpreter import sanitizer  # noqa: E402
from checker.interpreter.sanitizer import KernelFault  # noqa: E402

BLOCK = 32


@pytest.fixture
def checked():
    with sanitizer.sanitized():
        yield


def line_of(fn, text: str) -> int:
    """Line number (in this file) of the first kernel line containing `text`."""
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@triton.jit
def copy_unmasked(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    tl.store(out_ptr + offsets, x)


@triton.jit
def copy_masked(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x, mask=mask)


@triton.jit
def store_unmasked(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    tl.store(out_ptr + offsets, x)


@triton.jit
def shift_left(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets - 1, mask=offsets < n_elements)
    tl.store(out_ptr + offsets, x, mask=offsets < n_elements)


@triton.jit
def histogram_unmasked(idx_ptr, counts_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bins = tl.load(idx_ptr + offsets)
    tl.atomic_add(counts_ptr + bins, 1.0)


@triton.jit
def accumulate_racy(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + offsets)
    acc = tl.load(out_ptr + offsets)
    tl.store(out_ptr + offsets, acc + x)


@triton.jit
def accumulate_atomic(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + offsets)
    tl.atomic_add(out_ptr + offsets, x)


@triton.jit
def all_store_first(out_ptr):
    tl.store(out_ptr, tl.program_id(0).to(tl.float32))


@triton.jit
def shift_in_place(x_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    nxt = tl.load(x_ptr + offsets + 1)
    tl.store(x_ptr + offsets, nxt)


@triton.jit
def rows_write_then_read(x_ptr, tmp_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * BLOCK + cols)
    tl.store(tmp_ptr + row * BLOCK + cols, x * 2)
    back = tl.load(tmp_ptr + row * BLOCK + cols)
    tl.store(out_ptr + row * BLOCK + cols, back + 1)


@triton.jit
def tile_copy(x_ptr, out_ptr, n_rows, n_cols, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              LOAD_COL_MASK: tl.constexpr, STORE_COL_MASK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    full = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    rows_only = (rows[:, None] < n_rows) & (cols[None, :] >= 0)
    if LOAD_COL_MASK:
        load_mask = full
    else:
        load_mask = rows_only
    if STORE_COL_MASK:
        store_mask = full
    else:
        store_mask = rows_only
    tile = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=load_mask)
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], tile, mask=store_mask)


@triton.jit
def _load_block(ptr, offsets):
    return tl.load(ptr + offsets)


@triton.jit
def copy_via_helper(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, _load_block(x_ptr, offsets))


@triton.jit
def accumulate_locked(x_ptr, out_ptr, lock_ptr, BLOCK: tl.constexpr):
    # the LayerNorm-backward tutorial's pattern: plain load/store of a shared buffer under a spin lock
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + offsets)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    acc = tl.load(out_ptr + offsets)
    tl.store(out_ptr + offsets, acc + x)
    tl.atomic_xchg(lock_ptr, 0)


# --- out of bounds ----------------------------------------------------------------------------


def test_oob_load_is_reported_with_everything_a_learner_needs(checked):
    x, out = torch.randn(100), torch.full((100,), -7.0)
    with pytest.raises(KernelFault) as info:
        copy_unmasked[(4,)](x, out, 100, BLOCK=BLOCK)
    fault = info.value
    assert fault.kind == "out_of_bounds"
    assert fault.tensor == "x_ptr"
    assert fault.program_id == (3, 0, 0)  # 3 * 32 + 31 > 99: only the last program overflows
    assert fault.filename == __file__ and fault.lineno == line_of(copy_unmasked, "tl.load")
    msg = str(fault)
    assert msg == fault.message
    assert "`x_ptr`" in msg and "(3, 0, 0)" in msg and f"line {fault.lineno}" in msg
    assert "x = tl.load(x_ptr + offsets)" in msg  # the source line itself
    assert "100, 101, 102" in msg and "[0, 100)" in msg
    assert "mask = offsets < n_elements" in msg and "mask=mask" in msg
    assert "Traceback" not in msg
    assert torch.all(out == -7.0), "a faulted launch must leave its arguments untouched"


def test_oob_store_leaves_the_neighbouring_tensor_alone(checked):
    # two arguments that are adjacent slices of one allocation: the overflow is real memory
    backing = torch.zeros(128)
    out, neighbour = backing[:100], backing[100:]
    neighbour.fill_(5.0)
    x = torch.randn(128)
    with pytest.raises(KernelFault) as info:
        store_unmasked[(4,)](x, out, 100, BLOCK=BLOCK)
    assert info.value.tensor == "out_ptr" and info.value.kind == "out_of_bounds"
    assert "tl.store(out_ptr + offsets, value, mask=mask)" in str(info.value)
    assert torch.all(neighbour == 5.0)
    assert torch.all(out == 0.0)


@triton.jit
def store_unmasked_pair(x_ptr, out_ptr, other_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n_elements, other=0.0)
    tl.store(out_ptr + offsets, x)
    tl.store(other_ptr + offsets, x, mask=offsets < 0)  # other_ptr is an argument, never written


def test_overflow_into_an_adjacent_argument_is_blamed_on_the_right_one(checked):
    backing = torch.zeros(128)
    out, other = backing[:100], backing[100:]
    other.fill_(5.0)
    x = torch.randn(128)
    with pytest.raises(KernelFault) as info:
        store_unmasked_pair[(4,)](x, out, other, 100, BLOCK=BLOCK)
    assert info.value.tensor == "out_ptr"  # the address is inside `other_ptr`, the pointer is from `out_ptr`
    assert torch.all(other == 5.0) and torch.all(out == 0.0)

    # the same launch without the sanitizer silently overwrites `other_ptr`
    sanitizer.disable()
    store_unmasked_pair[(4,)](x, out, other, 100, BLOCK=BLOCK)
    assert torch.all(other[:28] == 0.0)  # the masked-off loads' zeros landed in `other_ptr`


@triton.jit
def add_unmasked_x(x_ptr, y_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets)  # forgot the mask here only
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def test_oob_load_that_lands_in_another_argument_is_caught(checked):
    backing = torch.arange(200, dtype=torch.float32)
    x, y = backing[:100], backing[100:]  # x's overflow reads y's first elements
    out = torch.zeros(100)
    with pytest.raises(KernelFault) as info:
        add_unmasked_x[(4,)](x, y, out, 100, BLOCK=BLOCK)
    assert info.value.tensor == "x_ptr" and info.value.program_id == (3, 0, 0)
    assert "100, 101" in str(info.value) and "[0, 100)" in str(info.value)
    assert torch.all(out == 0.0) and torch.equal(backing, torch.arange(200, dtype=torch.float32))


def test_masked_lanes_past_the_end_are_fine(checked):
    x, out = torch.randn(100), torch.zeros(100)
    copy_masked[(4,)](x, out, 100, BLOCK=BLOCK)
    assert torch.equal(out, x)


def test_negative_offsets_are_caught(checked):
    x, out = torch.randn(64), torch.zeros(64)
    with pytest.raises(KernelFault) as info:
        shift_left[(2,)](x, out, 64, BLOCK=BLOCK)
    fault = info.value
    assert fault.kind == "out_of_bounds" and fault.tensor == "x_ptr" and fault.program_id == (0, 0, 0)
    assert "-1" in str(fault) and "before the start" in str(fault)
    assert "offsets >= 0" in str(fault)
    # the block starts at -1: an offset off by one, or a shift that is meant and needs a mask
    assert fault.candidates == ("address", "mask") and "If it is the mask" in str(fault)


def test_atomic_oob_is_caught(checked):
    idx = torch.tensor([0, 1, 2, 9] * 8, dtype=torch.int32)  # 9 is past the end of 8 bins
    counts = torch.zeros(8)
    with pytest.raises(KernelFault) as info:
        histogram_unmasked[(1,)](idx, counts, BLOCK=BLOCK)
    assert info.value.kind == "out_of_bounds" and info.value.tensor == "counts_ptr"
    assert "9" in str(info.value) and "[0, 8)" in str(info.value) and "tl.atomic_add" in str(info.value)
    assert torch.all(counts == 0.0)


def test_2d_tile_without_a_column_mask(checked):
    n_rows, n_cols = 10, 20
    x = torch.randn(n_rows, n_cols)
    out = torch.zeros(n_rows, n_cols)
    grid = (triton.cdiv(n_rows, 8), 1)
    tile_copy[grid](x, out, n_rows, n_cols, n_cols, BLOCK_M=8, BLOCK_N=32, LOAD_COL_MASK=True, STORE_COL_MASK=True)
    assert torch.equal(out, x)

    out.zero_()
    with pytest.raises(KernelFault) as info:
        tile_copy[grid](x, out, n_rows, n_cols, n_cols, BLOCK_M=8, BLOCK_N=32, LOAD_COL_MASK=False,
                        STORE_COL_MASK=True)
    fault = info.value
    # columns 20..31 of a row wrap into the next row; only past the last row do they leave `x`
    assert fault.kind == "out_of_bounds" and fault.tensor == "x_ptr" and fault.program_id == (1, 0, 0)
    assert "200, 201" in str(fault) and "[0, 200)" in str(fault) and "rows[:, None]" in str(fault)
    assert torch.all(out == 0.0)


def test_2d_tile_store_that_wraps_into_the_next_row_is_a_race(checked):
    n_rows, n_cols = 16, 20
    x, out = torch.randn(n_rows, n_cols), torch.zeros(n_rows + 1, n_cols)  # a spare row: no overflow
    with pytest.raises(KernelFault) as info:
        tile_copy[(2, 1)](x, out, n_rows, n_cols, n_cols, BLOCK_M=8, BLOCK_N=32, LOAD_COL_MASK=True,
                          STORE_COL_MASK=False)
    # program 0's row 7 spills into row 8, which program 1 owns
    fault = info.value
    assert fault.kind == "race" and fault.tensor == "out_ptr" and fault.program_id == (1, 0, 0)
    assert "index [8, 0]" in str(fault) and "(0, 0, 0)" in str(fault)


# --- races ------------------------------------------------------------------------------------


def test_plain_accumulation_across_programs_is_a_race(checked):
    x = torch.randn(8 * BLOCK)
    expected = x.view(8, BLOCK).sum(0)
    sanitizer.disable()
    out = torch.zeros(BLOCK)
    accumulate_racy[(8,)](x, out, BLOCK=BLOCK)
    assert torch.allclose(out, expected), "the plain interpreter gets this racy kernel right"

    sanitizer.enable()
    out = torch.zeros(BLOCK)
    sanitizer.expect_shared([out])  # the checker declares accumulated outputs: the fix is atomics
    with pytest.raises(KernelFault) as info:
        accumulate_racy[(8,)](x, out, BLOCK=BLOCK)
    sanitizer.expect_shared([])
    fault = info.value
    assert fault.kind == "race" and fault.tensor == "out_ptr"
    assert fault.program_id == (1, 0, 0) and fault.lineno == line_of(accumulate_racy, "acc = tl.load")
    msg = str(fault)
    assert "(0, 0, 0)" in msg and "(1, 0, 0)" in msg and "element 0" in msg
    assert "parallel" in msg and "one after another" in msg and "tl.atomic_add" in msg
    assert torch.all(out == 0.0)


def test_store_store_race(checked):
    out = torch.zeros(1)
    with pytest.raises(KernelFault) as info:
        all_store_first[(4,)](out)
    assert info.value.kind == "race" and info.value.program_id == (1, 0, 0)
    assert "(0, 0, 0)" in str(info.value) and "plain tl.store" in str(info.value)
    # an output not declared accumulated: two programs writing one element is an offsets bug
    assert "belongs to exactly one program" in str(info.value) and "atomic" not in str(info.value)


def test_the_same_race_on_an_accumulated_output_asks_for_atomics(checked):
    out = torch.zeros(1)
    sanitizer.expect_shared([out])
    try:
        with pytest.raises(KernelFault) as info:
            all_store_first[(4,)](out)
    finally:
        sanitizer.expect_shared([])
    assert "tl.atomic_add" in str(info.value) and "belongs to exactly one program" not in str(info.value)


def test_load_then_store_race(checked):
    x = torch.arange(2 * BLOCK + 1, dtype=torch.float32)
    with pytest.raises(KernelFault) as info:
        shift_in_place[(2,)](x, BLOCK=BLOCK)
    # program 0 read x[32]; program 1 then overwrites it
    assert info.value.kind == "race" and info.value.program_id == (1, 0, 0)
    assert "element 32" in str(info.value) and "(0, 0, 0)" in str(info.value)


def test_atomic_accumulation_is_not_a_race(checked):
    x = torch.randn(8 * BLOCK)
    out = torch.zeros(BLOCK)
    accumulate_atomic[(8,)](x, out, BLOCK=BLOCK)
    assert torch.allclose(out, x.view(8, BLOCK).sum(0))


def test_each_program_owning_its_row_is_not_a_race(checked):
    x = torch.randn(4, BLOCK)
    tmp, out = torch.zeros(4, BLOCK), torch.zeros(4, BLOCK)
    rows_write_then_read[(4,)](x, tmp, out, BLOCK=BLOCK)
    assert torch.equal(out, x * 2 + 1)


def test_updates_under_a_lock_are_not_a_race(checked):
    x = torch.randn(4 * BLOCK)
    out, lock = torch.zeros(BLOCK), torch.zeros(1, dtype=torch.int32)
    accumulate_locked[(4,)](x, out, lock, BLOCK=BLOCK)
    assert torch.allclose(out, x.view(4, BLOCK).sum(0))


# --- integration ------------------------------------------------------------------------------


def test_interpreter_works_after_a_fault_and_after_disable():
    names = ("create_load", "create_masked_store")
    originals = {name: getattr(interpreter.InterpreterBuilder, name) for name in names}
    launch = interpreter.GridExecutor.__call__
    x, out = torch.randn(100), torch.zeros(100)
    with sanitizer.sanitized():
        with pytest.raises(KernelFault):
            copy_unmasked[(4,)](x, out, 100, BLOCK=BLOCK)
        copy_masked[(4,)](x, out, 100, BLOCK=BLOCK)
        assert torch.equal(out, x)
    assert interpreter.GridExecutor.__call__ is launch
    assert all(getattr(interpreter.InterpreterBuilder, n) is f for n, f in originals.items())
    out.zero_()
    copy_masked[(4,)](x, out, 100, BLOCK=BLOCK)
    assert torch.equal(out, x)
    x, out = torch.randn(128), torch.zeros(128)  # the unchecked overflow below stays inside these
    copy_unmasked[(4,)](x[:100], out[:100], 100, BLOCK=BLOCK)  # unchecked again: no KernelFault
    assert torch.equal(out, x)
    sanitizer.enable()
    sanitizer.enable()  # idempotent
    sanitizer.disable()
    assert interpreter.GridExecutor.__call__ is launch


def test_fault_inside_a_helper_function_is_unwrapped(checked):
    x, out = torch.randn(100), torch.zeros(100)
    with pytest.raises(KernelFault) as info:  # not InterpreterError
        copy_via_helper[(4,)](x, out, BLOCK=BLOCK)
    assert info.value.lineno == line_of(_load_block, "tl.load")


def test_learner_files_and_describe_line_shape_the_message():
    filename = "<sanitizer test cell>"
    text = (
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "@triton.jit\n"
        "def learner_copy(x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
        "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets))\n"
    )
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"__name__": "learner_cell"}
    exec(compile(text, filename, "exec"), namespace)
    x, out = torch.randn(40), torch.zeros(64)
    describe = lambda f, n: f"cell 3, line {n}"  # noqa: E731
    with sanitizer.sanitized(learner_files=lambda f: f == filename, describe_line=describe):
        with pytest.raises(KernelFault) as info:
            namespace["learner_copy"][(2,)](x, out, BLOCK=BLOCK)
    fault = info.value
    assert (fault.filename, fault.lineno, fault.program_id) == (filename, 7, (1, 0, 0))
    assert "cell 3, line 7" in str(fault) and "tl.store(out_ptr + offsets, tl.load(x_ptr + offsets))" in str(fault)
