"""Shared helpers of the Python tests: host tensors in both flavours (numpy when it is
importable, array.array / memoryview / bytearray always), float rounding and ulp
distances, a seeded random source.

Every test that runs a program runs it on the ref backend (host pointers, no GPU).
The suite runs twice under ctest: with numpy (python_unittest) and with numpy blocked
(python_unittest_no_numpy), so both output paths are exercised.
"""

from __future__ import annotations

import array
import math
import random
import struct
from typing import Any, List, Optional, Sequence, Tuple

import ic

np: Any
try:
    import numpy

    np = numpy
except ImportError:
    np = None

HAVE_NUMPY = np is not None


def rng(seed: int = 1234) -> random.Random:
    return random.Random(seed)


def f32(x: float) -> float:
    """x rounded to the nearest f32 (overflow gives inf, as a cast)."""
    try:
        return float(struct.unpack("<f", struct.pack("<f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def f16(x: float) -> float:
    try:
        return float(struct.unpack("<e", struct.pack("<e", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def bits32(x: float) -> int:
    return int(struct.unpack("<i", struct.pack("<f", x))[0])


def bits64(x: float) -> int:
    return int(struct.unpack("<q", struct.pack("<d", x))[0])


def ulps(a: float, b: float, dtype: ic.DType) -> float:
    """Distance in units in the last place of dtype (0 for equal values, NaN == NaN)."""
    if math.isnan(a) and math.isnan(b):
        return 0
    if math.isnan(a) or math.isnan(b):
        return math.inf
    if a == b:
        return 0
    if math.isinf(a) or math.isinf(b):
        return math.inf
    bits = bits32 if dtype is ic.f32 else bits64

    def ordered(x: float) -> int:
        v = bits(x)
        return v if v >= 0 else (-(2 ** 31) if dtype is ic.f32 else -(2 ** 63)) - v

    return abs(ordered(a) - ordered(b))


def round_to(dtype: ic.DType, x: float) -> float:
    if dtype is ic.f32:
        return f32(x)
    if dtype is ic.f16:
        return f16(x)
    if dtype is ic.f64:
        return x
    return ic.element_load(dtype, ic.element_store(dtype, x))


def flat(x: Any) -> List[Any]:
    """The elements of an output (numpy array, ic.Buffer, memoryview) row-major."""
    if HAVE_NUMPY and isinstance(x, np.ndarray):
        return [v.item() if hasattr(v, "item") else v for v in x.reshape(-1).tolist()] \
            if x.dtype != np.bool_ else [bool(v) for v in x.reshape(-1).tolist()]
    if isinstance(x, ic.Tensor):
        out = x.tolist()
    elif isinstance(x, memoryview):
        out = x.tolist()
    elif isinstance(x, array.array):
        out = x.tolist()
    else:
        raise TypeError(f"flat: {type(x).__name__}")
    if not isinstance(out, list):  # a 0-d tensor's one element
        return [out]
    while out and isinstance(out[0], list):
        out = [v for row in out for v in row]
    return list(out)


def shape_of(x: Any) -> Tuple[int, ...]:
    if HAVE_NUMPY and isinstance(x, np.ndarray):
        return tuple(x.shape)
    if isinstance(x, ic.Tensor):
        return x.shape
    if isinstance(x, memoryview):
        return tuple(x.shape or ())
    raise TypeError(type(x).__name__)


_ARRAY_CODES = {ic.f32: "f", ic.f64: "d", ic.i32: "i", ic.i64: "q", ic.u8: "B", ic.i8: "b", ic.i16: "h",
                ic.u16: "H", ic.u32: "I", ic.u64: "Q"}


def host(values: Sequence[float], dtype: ic.DType, shape: Optional[Sequence[int]] = None, *,
         use_numpy: Optional[bool] = None) -> Any:
    """A host tensor of values: a numpy array (use_numpy, default: when numpy is there),
    else an array.array viewed through a memoryview of shape (bool and f16: ic.Tensor
    over packed bytes, which array.array cannot hold; bf16 and fp8 always so)."""
    shp = tuple(shape) if shape is not None else (len(values),)
    if math.prod(shp) != len(values):
        raise ValueError(f"{len(values)} values for shape {shp}")
    if use_numpy is None:
        use_numpy = HAVE_NUMPY
    if use_numpy and np is not None and dtype in NUMPY_NAMES:
        return np.array(values, dtype=NUMPY_NAMES[dtype]).reshape(shp)
    code = _ARRAY_CODES.get(dtype)
    if code is not None and 0 in shp and len(shp) != 1:
        # memoryview cannot cast to a shape with a 0: ic's own host tensor over no bytes
        return ic.Tensor.from_buffer(bytearray(0), dtype, shp)
    if code is not None:
        a = array.array(code, [int(v) for v in values] if dtype.is_integer else values)
        mv = memoryview(a)
        return mv.cast("B").cast(code, shp) if len(shp) != 1 else mv
    if dtype is ic.bool_:
        mv = memoryview(bytearray(bytes(1 if v else 0 for v in values)))
        return mv.cast("?", shp)
    return ic.Tensor.from_buffer(ic.pack(dtype, values), dtype, shp)


NUMPY_NAMES = {ic.bool_: "bool", ic.u8: "uint8", ic.i8: "int8", ic.i16: "int16", ic.i32: "int32", ic.i64: "int64",
               ic.u16: "uint16", ic.u32: "uint32", ic.u64: "uint64", ic.f16: "float16", ic.f32: "float32",
               ic.f64: "float64"}


def out_buffer(dtype: ic.DType, shape: Sequence[int], fill: float = 0.0) -> Any:
    """A writable host tensor for out= (numpy when there, else memoryview/ic.Tensor)."""
    n = math.prod(shape)
    return host([fill] * n, dtype, shape)
