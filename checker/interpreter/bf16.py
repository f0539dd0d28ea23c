"""bfloat16 in Triton's interpreter, computed as a GPU computes it.

The interpreter keeps a bf16 tensor as its raw 16-bit patterns and does arithmetic on those
integers, so `x * 3.1 + x` on bf16 returns garbage. `enable()` changes how the interpreter holds
bf16: as float32 numbers that are exactly bf16 values, rounded to the nearest bf16 (ties to even)
every time an operation produces a bf16 result, the way a GPU rounds each bf16 instruction.
Memory keeps bf16's 16 bits: loads widen the patterns, stores narrow the values. Arithmetic after
`.to(tl.float32)` is plain fp32, as on a GPU.

A GPU fuses a bf16 multiply and the add that uses it into one fma, rounded once (Triton compiles
with fp fusion on): a bf16 product remembers its exact value, and an add or a subtract of it
rounds once, as that fma does. A bf16 block is summed in the order a GPU's reduction adds it
with 4 warps (`gpu_sum`). What we cannot copy: a kernel launched with other warps, a 2-D block
whose threads spread over both axes, or atomics from several programs add in another order,
within a bf16 rounding or two of ours.

One choke point does the rounding: every bf16 TensorHandle the interpreter makes. The other
patches are the places that handle bf16 as bits: memory, casts, bitcasts, |x|, atomics, sums.
"""
from __future__ import annotations

import numpy as np


def round_to_bf16(values: np.ndarray) -> np.ndarray:
    """float32 (or float64) values -> the nearest bf16 values (ties to even), as float32; NaN stays
    NaN. float64 goes through float32 rounded to odd, which keeps the one rounding exact."""
    values = np.asarray(values)
    if values.dtype == np.float64:
        values = _to_float32_odd(values)
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    rounded = np.where(nan, (bits | np.uint32(0x00400000)) & np.uint32(0xFFFF0000), rounded)
    return rounded.astype(np.uint32).view(np.float32).reshape(np.shape(values))


def _to_float32_odd(values: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounded toward zero, its last bit set when that was inexact: rounding
    this to bf16 gives what rounding the float64 would (float32 keeps more than 2 extra bits)."""
    with np.errstate(over="ignore"):  # beyond float32's range is beyond bf16's: inf either way
        f32 = values.astype(np.float32)
    away = np.abs(f32.astype(np.float64)) > np.abs(values)
    f32 = np.where(away & np.isfinite(values), np.nextafter(f32, np.float32(0)), f32).astype(np.float32)
    inexact = (f32.astype(np.float64) != values) & np.isfinite(values)
    bits = f32.view(np.uint32) | np.where(inexact, np.uint32(1), np.uint32(0))
    return bits.astype(np.uint32).view(np.float32).reshape(values.shape)


def from_bits(bits: np.ndarray) -> np.ndarray:
    """bf16 bit patterns (uint16) -> their values as float32."""
    return (np.asarray(bits).astype(np.uint32) << np.uint32(16)).view(np.float32)


def to_bits(values: np.ndarray) -> np.ndarray:
    """float32 values, already bf16 values -> their bf16 bit patterns (uint16)."""
    return (np.ascontiguousarray(values, dtype=np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def enable() -> None:
    """Switch the interpreter to bf16 values (idempotent; for the interpreter only). Each patch
    is checked on its own: one taken out by someone else's restore (the sanitizer puts back the
    memory methods it found) is put back, so memory never sees float32 where bf16 bits belong."""
    import triton.language as tl
    from triton.runtime import interpreter as interp
    for patch in (_hold_values, _round_every_handle, _memory, _casts, _fused_multiply_add, _atomics, _sums):
        patch(interp, tl)


def _install(owner, name: str, make) -> None:
    """owner.name = make(current value), unless ours is already there."""
    from checker.interpreter.compat import wraps_with
    current = getattr(owner, name)
    if wraps_with(current, "checker_bf16"):
        return
    new = make(current)
    new.checker_bf16 = True
    new.__wrapped__ = current
    setattr(owner, name, new)


def _is_bf16(dtype) -> bool:
    import triton.language as tl
    return getattr(dtype, "scalar", dtype) == tl.bfloat16


def _hold_values(interp, tl) -> None:
    """numpy dtype of a bf16 tensor: float32 (its values), not uint16 (its bits)."""
    def make(original):
        def get_np_dtype(tt_dtype):
            if _is_bf16(tt_dtype) and not isinstance(tt_dtype, tl.pointer_type):
                return np.dtype(np.float32)
            return original(tt_dtype)
        return get_np_dtype

    _install(interp, "_get_np_dtype", make)


def _round_every_handle(interp, tl) -> None:
    """Each bf16 value the interpreter makes is rounded to bf16 once, where it is made."""
    def make(original):
        def post_init(self):
            if _is_bf16(self.dtype) and not isinstance(self.dtype, tl.pointer_type):
                data = np.asarray(self.data)
                if data.dtype == np.uint16:  # bits from a path we did not teach: read them as bits
                    self.data = from_bits(data)
                elif data.dtype.kind == "f":
                    self.data = round_to_bf16(data.astype(np.float32, copy=False))
                else:
                    self.data = data  # booleans (a comparison labelled with its operands' type), integers
                return
            original(self)
        return post_init

    _install(interp.TensorHandle, "__post_init__", make)


def _memory(interp, tl) -> None:
    """Memory holds bf16 bits: widen on load, narrow on store."""
    # the trailing arguments (cache and eviction policies, volatility) differ between versions
    def load(original):
        def create_masked_load(self, ptrs, mask, other, *policies, **named):
            dtype_tt = ptrs.get_element_ty()
            if not _is_bf16(dtype_tt):
                return original(self, ptrs, mask, other, *policies, **named)
            other_bits = np.zeros_like(ptrs.data, dtype=np.uint16) if other is None else \
                np.broadcast_to(to_bits(other.data), ptrs.data.shape).copy()
            bits = interp._interpreter.load(ptrs.data, mask.data, other_bits, np.dtype(np.uint16))
            return interp.TensorHandle(from_bits(bits), dtype_tt)
        return create_masked_load

    def store(original):
        def create_masked_store(self, ptrs, value, mask, *policies, **named):
            if not _is_bf16(ptrs.get_element_ty()):
                return original(self, ptrs, value, mask, *policies, **named)
            bits = to_bits(round_to_bf16(np.asarray(value.data, dtype=np.float32)))
            return interp._interpreter.store(ptrs.data, np.broadcast_to(bits, ptrs.data.shape).copy(), mask.data)
        return create_masked_store

    _install(interp.InterpreterBuilder, "create_masked_load", load)
    _install(interp.InterpreterBuilder, "create_masked_store", store)


def _casts(interp, tl) -> None:
    """Casts from and to bf16 on values: widening is exact, narrowing rounds (in the handle)."""
    def cast(original):
        # create_fp_ext, create_fp_trunc, create_si_to_fp, create_fp_to_si ... all call cast_impl
        def cast_impl(self, src, dst_type):
            if not (_is_bf16(src.dtype) or _is_bf16(dst_type)):
                return original(self, src, dst_type)
            data = np.asarray(src.data)
            if _is_bf16(dst_type):
                return interp.TensorHandle(data.astype(np.float32), dst_type.scalar)
            dst = dst_type.scalar
            if dst.is_int() and dst.primitive_bitwidth > 1:  # saturated, as a GPU converts
                from checker.interpreter.compat import float_to_int
                return interp.TensorHandle(float_to_int(data, interp._get_np_dtype(dst_type)), dst)
            return interp.TensorHandle(data.astype(interp._get_np_dtype(dst_type)), dst)
        return cast_impl

    def fp_to_fp(original):
        def create_fp_to_fp(self, src, dst_type, rounding_mode):
            if not (_is_bf16(src.dtype) or _is_bf16(dst_type)):
                return original(self, src, dst_type, rounding_mode)
            if _is_bf16(dst_type) and rounding_mode is not None and "RTZ" in str(rounding_mode).upper():
                values = np.asarray(src.data, dtype=np.float32)  # toward zero: drop the low 16 bits
                chopped = (values.view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)
                return interp.TensorHandle(np.where(np.isnan(values), values, chopped), dst_type.scalar)
            return self.cast_impl(src, dst_type)
        return create_fp_to_fp

    def bitcast(original):
        def create_bitcast(self, src, dst_type):
            if _is_bf16(src.dtype):
                return interp.TensorHandle(to_bits(src.data).view(interp._get_np_dtype(dst_type)), dst_type.scalar)
            if _is_bf16(dst_type):
                return interp.TensorHandle(from_bits(np.asarray(src.data).view(np.uint16)), dst_type.scalar)
            return original(self, src, dst_type)
        return create_bitcast

    def fabs(original):
        def create_fabs(self, arg):  # |x| clears the sign bit of the bits; on values it is np.abs
            if _is_bf16(arg.dtype):
                return interp.TensorHandle(np.abs(arg.data), arg.dtype.scalar)
            return original(self, arg)
        return create_fabs

    builder = interp.InterpreterBuilder
    if not hasattr(builder, "get_bf16"):  # Triton 3.6 makes no bf16 constants (x * 3.1 on bf16)
        builder.get_bf16 = lambda self, value: interp.TensorHandle(np.array([value], dtype=np.float32), tl.bfloat16)
    _install(builder, "cast_impl", cast)
    _install(builder, "create_fp_to_fp", fp_to_fp)
    _install(builder, "create_bitcast", bitcast)
    _install(builder, "create_fabs", fabs)


_EXACT = "checker_bf16_exact"  # TensorHandle.attr key: a bf16 product before its rounding


def _fused_multiply_add(interp, tl) -> None:
    """a * b + c in bf16 rounds once on a GPU (an fma): keep each bf16 product's exact value
    (a float32 holds the product of two bf16 numbers exactly) for the add or subtract that uses it."""
    def exact(handle) -> np.ndarray:
        attr = getattr(handle, "attr", None) or {}
        return attr.get(_EXACT, handle.data)

    def mul(original):
        def create_fmul(self, lhs, rhs):
            result = original(self, lhs, rhs)
            if _is_bf16(result.dtype) and isinstance(getattr(result, "attr", None), dict):
                result.attr[_EXACT] = np.multiply(np.asarray(lhs.data, np.float32), np.asarray(rhs.data, np.float32))
            return result
        return create_fmul

    def add_or_sub(op):
        def make(original):
            def create(self, lhs, rhs):
                fused = _is_bf16(lhs.dtype) and (_EXACT in (getattr(lhs, "attr", None) or {}) or
                                                 _EXACT in (getattr(rhs, "attr", None) or {}))
                if not fused:
                    return original(self, lhs, rhs)
                value = op(np.asarray(exact(lhs), np.float64), np.asarray(exact(rhs), np.float64))
                return interp.TensorHandle(round_to_bf16(value), lhs.dtype.scalar)
            return create
        return make

    builder = interp.InterpreterBuilder
    _install(builder, "create_fmul", mul)
    _install(builder, "create_fadd", add_or_sub(np.add))
    _install(builder, "create_fsub", add_or_sub(np.subtract))


def _atomics(interp, tl) -> None:
    """Atomics on bf16 memory, one element after another: the interpreter runs one program at a
    time, so read, combine, round and write back is what the hardware's atomic does."""
    ops = {"FADD": np.add, "MAX": np.maximum, "MIN": np.minimum, "XCHG": lambda old, new: new}

    def read(addr: int) -> float:
        bits = interp._interpreter.load(np.array([addr], dtype=np.uint64), np.array([True]),
                                        np.zeros(1, dtype=np.uint16), np.dtype(np.uint16))
        return from_bits(bits)[0]

    def write(addr: int, value: float) -> None:
        bits = to_bits(round_to_bf16(np.array([value], dtype=np.float32)))
        interp._interpreter.store(np.array([addr], dtype=np.uint64), bits, np.array([True]))

    def rmw(original):
        def create_atomic_rmw(self, rmwOp, ptr, val, mask, *rest, **named):
            if not _is_bf16(ptr.get_element_ty()):
                return original(self, rmwOp, ptr, val, mask, *rest, **named)
            name = getattr(rmwOp, "name", str(rmwOp)).split(".")[-1]
            if name not in ops:
                raise NotImplementedError(f"atomic {name.lower()} on bfloat16 memory")
            addrs, values, masks = np.broadcast_arrays(ptr.data, np.asarray(val.data, np.float32), mask.data)
            old = np.zeros(addrs.shape, dtype=np.float32)
            for i in np.ndindex(addrs.shape):
                if masks[i]:
                    old[i] = read(int(addrs[i]))
                    write(int(addrs[i]), ops[name](old[i], values[i]))
            return interp.TensorHandle(old, val.dtype.scalar)
        return create_atomic_rmw

    def cas(original):
        def create_atomic_cas(self, ptr, cmp, val, *rest, **named):
            if not _is_bf16(ptr.get_element_ty()):
                return original(self, ptr, cmp, val, *rest, **named)
            addrs, cmps, values = np.broadcast_arrays(ptr.data, np.asarray(cmp.data, np.float32),
                                                      np.asarray(val.data, np.float32))
            old = np.zeros(addrs.shape, dtype=np.float32)
            for i in np.ndindex(addrs.shape):
                old[i] = read(int(addrs[i]))
                if old[i] == cmps[i]:
                    write(int(addrs[i]), values[i])
            return interp.TensorHandle(old, cmp.dtype.scalar)
        return create_atomic_cas

    _install(interp.InterpreterBuilder, "create_atomic_rmw", rmw)
    _install(interp.InterpreterBuilder, "create_atomic_cas", cas)


THREADS = 128  # 4 warps of 32 lanes: Triton's default num_warps


def gpu_sum(values: np.ndarray, axis: int) -> np.ndarray:
    """The sum along `axis` in the order a GPU's reduction adds, each step rounded to bf16.

    Element i of a block sits in thread i % 128 (a block of fewer than 128 elements uses as many
    threads); each thread adds its own elements in order, then the threads combine in a
    butterfly: lanes 16, 8, 4, 2, 1 apart within a warp, then warps 2 and 1 apart. On an H100
    this gave the GPU's bits exactly for 1-D sums of 1024 bf16 values."""
    x = np.moveaxis(np.asarray(values, dtype=np.float32), axis, 0)
    size = x.shape[0]
    if size == 0:
        return np.zeros(x.shape[1:], dtype=np.float32)
    threads = 1 << (min(size, THREADS).bit_length() - 1)  # a power of two, as block sizes are
    if size % threads:
        pad = threads - size % threads
        x = np.concatenate([x, np.zeros((pad,) + x.shape[1:], dtype=np.float32)])
    per_thread = x.reshape((x.shape[0] // threads, threads) + x.shape[1:])
    acc = per_thread[0]
    for step in per_thread[1:]:
        acc = round_to_bf16(acc + step)
    lanes = min(threads, 32)
    for distance in [d for d in (16, 8, 4, 2, 1) if d < lanes] + [32 * d for d in (2, 1) if 32 * d < threads]:
        partner = np.arange(threads) ^ distance
        acc = round_to_bf16(acc + acc[partner])
    return acc[0]


def running_sum(values: np.ndarray, axis: int) -> np.ndarray:
    """The running sum along `axis`, each step rounded to bf16."""
    x = np.moveaxis(np.asarray(values, dtype=np.float32), axis, 0)
    out = np.empty_like(x)
    acc = np.zeros(x.shape[1:], dtype=np.float32)
    for i in range(x.shape[0]):
        acc = round_to_bf16(acc + x[i])
        out[i] = acc
    return np.moveaxis(out, 0, axis)


def _sums(interp, tl) -> None:
    """tl.sum and tl.cumsum of a bf16 block keep bf16 (Triton 3.9 does not widen float sums):
    round at every step, not once at the end as numpy's float32 sum would."""
    def reduce_sum(original):
        def sum(self, input):
            if not _is_bf16(input.dtype):
                return original(self, input)
            data = input.handle.data
            axis = 0 if self.axis is None else self.axis
            result = gpu_sum(data.reshape(-1) if self.axis is None else data, axis)
            if self.keep_dims:
                result = np.expand_dims(result, axis) if self.axis is not None else result.reshape((1,) * data.ndim)
            return self.to_tensor(result, input.dtype)
        return sum

    def scan_sum(original):
        def cumsum(self, input):
            if not _is_bf16(input.dtype):
                return original(self, input)
            # a reverse scan arrives flipped (ScanOps.apply_impl)
            return [self.to_tensor(running_sum(input.handle.data, self.axis), dtype=input.dtype)]
        return cumsum

    _install(interp.ReduceOps, "sum", reduce_sum)
    _install(interp.ScanOps, "cumsum", scan_sum)
