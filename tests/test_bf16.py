"""bf16 in the interpreter, computed as a GPU does (checker/interpreter/bf16.py). The expected values marked
H100 are the bits an H100 (Triton 3.6) returned for the same kernels and the same inputs."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl

from checker.interpreter import bf16

from checker.interpreter import compat
from checker.puzzle.declare import case

BF = torch.bfloat16


@pytest.fixture(autouse=True, scope="module")
def emulated():
    compat.fix_interpreter()
    bf16.enable()


def inputs():
    """The inputs the H100 run drew: one generator, in this order."""
    gen = torch.Generator().manual_seed(1234)

    def rn(*shape, mean=0.0):
        return mean + torch.randn(*shape, generator=gen)
    x = rn(1000).to(BF)
    rn(600)
    sums = rn(8, 1000, mean=3.0).to(BF)
    sums32 = rn(8, 1000, mean=3.0)
    running = rn(4, 4096, mean=1.0).to(BF)
    return x, sums, sums32, running


@triton.jit
def axpy(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    tl.store(y_ptr + offs, x * 3.1 + x, mask=offs < N)


@triton.jit
def block_sum(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0).to(tl.bfloat16)
    tl.store(y_ptr + row, tl.sum(x, axis=0))


@triton.jit
def running_sum(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.bfloat16)
    for start in range(0, N, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * N + offs, mask=offs < N, other=0.0)
    tl.store(y_ptr + row * BLOCK + tl.arange(0, BLOCK), acc)


def test_rounding_to_nearest_even():
    values = torch.randn(10_000) * torch.logspace(-30, 30, 10_000)
    expected = values.to(BF).float().numpy()
    assert (bf16.round_to_bf16(values.numpy()) == expected).all()
    special = bf16.round_to_bf16(np.array([np.inf, -np.inf, np.nan, 3.4e38], np.float32))
    assert special[0] == np.inf and special[1] == -np.inf and np.isnan(special[2]) and special[3] == np.inf


def test_multiply_add_rounds_once_as_the_gpus_fma():
    x = inputs()[0]
    y = torch.empty(1000, dtype=BF)
    axpy[(8,)](x, y, 1000, BLOCK=128)
    h100 = [-0.45703125, -2.03125, 0.66796875, -3.609375, 0.220703125, 2.734375, -0.244140625, -1.9140625,
            -0.87890625, 3.609375, -3.109375, -1.5078125, -1.3984375, -5.71875, 1.3125, -4.1875, 3.28125,
            -0.376953125, -2.875, -6.5625, 1.1796875, 2.0, -1.578125, -2.90625]
    assert y[:24].float().tolist() == h100
    c = float(torch.tensor(3.1).to(BF))
    fma = (x.double() * c + x.double()).to(BF)  # one rounding of the exact value
    assert torch.equal(y, fma)


def test_a_bf16_block_sum_adds_in_the_gpus_order():
    _, sums, sums32, _ = inputs()
    y = torch.empty(8)
    block_sum[(8,)](sums, y, 1000, BLOCK=1024)
    assert y.tolist() == [2976.0, 3024.0, 3040.0, 2912.0, 3008.0, 3040.0, 3008.0, 3072.0]  # H100
    block_sum[(8,)](sums32, y, 1000, BLOCK=1024)  # fp32 inputs cast to bf16 in the kernel
    assert y.tolist() == [3056.0, 2992.0, 2976.0, 3024.0, 2976.0, 2976.0, 2992.0, 2992.0]  # H100


def test_a_bf16_running_sum_rounds_at_every_step():
    running = inputs()[3]
    y = torch.empty(4 * 256, dtype=BF)
    running_sum[(4,)](running, y, 4096, BLOCK=256)
    assert y[:8].float().tolist() == [18.75, 22.5, 16.375, 20.25, 15.5625, 17.0, 12.5625, 15.4375]  # H100
    acc = torch.zeros(256, dtype=BF)
    for chunk in running[0].reshape(16, 256):
        acc = acc + chunk  # torch rounds each bf16 add to nearest even too
    assert torch.equal(y[:256], acc)


@triton.jit
def stores(x_ptr, y_ptr, z_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < N)
    tl.store(y_ptr + offs, x * 1.0001 + 0.3, mask=offs < N)  # fp32 math, rounded on the way to bf16
    tl.store(z_ptr + offs, x.to(tl.bfloat16, fp_downcast_rounding="rtz"), mask=offs < N)


def test_stores_and_casts_round_as_asked():
    x = torch.randn(100) * 10
    y, z = torch.empty(100, dtype=BF), torch.empty(100, dtype=BF)
    stores[(1,)](x, y, z, 100, BLOCK=128)
    assert torch.equal(y, (x * 1.0001 + 0.3).to(BF))
    chopped = (x.view(torch.int32) & -65536).view(torch.float32)
    assert torch.equal(z.float(), chopped)


@triton.jit
def dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b))


def test_dot_multiplies_bf16_exactly_and_accumulates_in_fp32():
    a, b = torch.randn(16, 16).to(BF), torch.randn(16, 16).to(BF)
    c = torch.empty(16, 16)
    dot[(1,)](a, b, c, BLOCK=16)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-6, atol=1e-6)


@triton.jit
def atomics(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * N + offs, mask=offs < N, other=0.0)
    tl.atomic_add(y_ptr + offs, x, mask=offs < N)


def test_atomics_on_bf16_memory():
    x = torch.randn(4, 20).to(BF)
    y = torch.zeros(20, dtype=BF)
    atomics[(4,)](x, y, 20, BLOCK=32)
    expected = torch.zeros(20, dtype=BF)
    for row in x:  # the interpreter runs program 0, then 1, ...: each add rounded to bf16
        expected = expected + row
    assert torch.equal(y, expected)


def test_small_bf16_cases_may_run_on_the_cpu():
    assert case(M=4, dtype="bfloat16").gpu_only
    assert not case(M=4, dtype="bfloat16", gpu_only=False).gpu_only
    assert not case(M=4).gpu_only and case(M=4, gpu_only=True).gpu_only
