"""Dtypes, layouts and host element conversion."""

from __future__ import annotations

import ctypes
import enum
import struct
from typing import Dict, Iterable, List, Optional, Union

from ._errors import check
from ._lib import api, text


class DType(enum.IntEnum):
    """``ic_dtype`` (the values are the C enum's). ``str(dtype)`` is its spelling."""

    BOOL = 1
    U8 = 2
    I8 = 3
    I16 = 4
    I32 = 5
    I64 = 6
    F16 = 7
    BF16 = 8
    F32 = 9
    F64 = 10
    F8E4M3 = 11
    F8E5M2 = 12
    U16 = 13
    U32 = 14
    U64 = 15
    #: For constants only: takes the dtype of the tensor it meets.
    AUTO = 100

    def __str__(self) -> str:
        return _NAMES[self]

    @property
    def itemsize(self) -> int:
        """Bytes per element (0 for AUTO)."""
        return _SIZES.get(self, 0)

    @property
    def is_floating(self) -> bool:
        return self in (DType.F16, DType.BF16, DType.F32, DType.F64, DType.F8E4M3, DType.F8E5M2)

    @property
    def is_integer(self) -> bool:
        return self in (DType.U8, DType.U16, DType.U32, DType.U64, DType.I8, DType.I16, DType.I32, DType.I64)

    @property
    def is_unsigned(self) -> bool:
        return self in (DType.U8, DType.U16, DType.U32, DType.U64)


_NAMES: Dict[DType, str] = {}
_SIZES: Dict[DType, int] = {}
_BY_NAME: Dict[str, DType] = {}
for _d in DType:
    if _d is DType.AUTO:
        _NAMES[_d] = "auto"
        continue
    _name = text(api.ic_dtype_name(int(_d)))
    if _name == "invalid":
        raise ImportError(f"ic: the loaded libic does not know dtype {_d.name} ({int(_d)})")
    _NAMES[_d] = _name
    _SIZES[_d] = int(api.ic_dtype_size(int(_d)))
    _BY_NAME[_name] = _d
_BY_NAME["auto"] = DType.AUTO
# Common spellings of other libraries, so that "float32" or "bfloat16" work too.
_BY_NAME.update({
    "float16": DType.F16, "half": DType.F16, "bfloat16": DType.BF16, "float32": DType.F32,
    "float": DType.F32, "float64": DType.F64, "double": DType.F64, "int8": DType.I8, "int16": DType.I16,
    "int32": DType.I32, "int64": DType.I64, "uint8": DType.U8, "uint16": DType.U16,
    "uint32": DType.U32, "uint64": DType.U64, "float8_e4m3fn": DType.F8E4M3,
    "float8_e5m2": DType.F8E5M2,
})

DTypeLike = Union[DType, str]


def to_dtype(d: DTypeLike, allow_auto: bool = False) -> DType:
    """A DType from a DType or its spelling ("f32", "bf16", "float32", ...)."""
    if isinstance(d, DType):
        r = d
    elif isinstance(d, str):
        found = _BY_NAME.get(d.lower())
        if found is None:
            raise ValueError(f"unknown dtype {d!r}; ic dtypes: {', '.join(_NAMES[x] for x in DType if x is not DType.AUTO)}")
        r = found
    else:
        # numpy / torch dtypes: their str() is "float32" / "torch.float32".
        name = str(d).rsplit(".", 1)[-1]
        found = _BY_NAME.get(name)
        if found is None:
            raise TypeError(f"expected an ic dtype (ic.f32, 'f32', ...), got {d!r}")
        r = found
    if r is DType.AUTO and not allow_auto:
        raise ValueError("DType.AUTO is for constants only")
    return r


class Layout(enum.IntEnum):
    """``ic_layout``: the layout an input is compiled for (strides arrive at run time)."""

    CONTIGUOUS = 0
    INNER_CONTIGUOUS = 1
    STRIDED = 2


LayoutLike = Union[Layout, str]


def to_layout(layout: LayoutLike) -> Layout:
    if isinstance(layout, Layout):
        return layout
    if isinstance(layout, str):
        try:
            return Layout[layout.upper()]
        except KeyError:
            pass
    raise ValueError(f"unknown layout {layout!r}: contiguous, inner_contiguous or strided")


# struct module formats of the dtypes Python's buffers and memoryviews can hold.
STRUCT_FORMATS: Dict[DType, str] = {
    DType.BOOL: "?", DType.U8: "B", DType.I8: "b", DType.I16: "h", DType.I32: "i", DType.I64: "q",
    DType.U16: "H", DType.U32: "I", DType.U64: "Q", DType.F16: "e", DType.F32: "f", DType.F64: "d",
}

# numpy dtype strings of the dtypes numpy has (bf16 and fp8 it has not).
NUMPY_DTYPES: Dict[DType, str] = {
    DType.BOOL: "bool", DType.U8: "uint8", DType.I8: "int8", DType.I16: "int16", DType.I32: "int32",
    DType.I64: "int64", DType.U16: "uint16", DType.U32: "uint32", DType.U64: "uint64", DType.F16: "float16", DType.F32: "float32", DType.F64: "float64",
}

# Array-interface typestrs (numpy __array_interface__, __cuda_array_interface__), little endian.
_TYPESTRS: Dict[str, DType] = {
    "b1": DType.BOOL, "u1": DType.U8, "i1": DType.I8, "i2": DType.I16, "i4": DType.I32, "i8": DType.I64,
    "u2": DType.U16, "u4": DType.U32, "u8": DType.U64,
    "f2": DType.F16, "f4": DType.F32, "f8": DType.F64,
}
TYPESTR_OF: Dict[DType, str] = {d: ("|" if k[1] == "1" else "<") + k for k, d in _TYPESTRS.items()}
TYPESTR_OF[DType.BF16] = "<V2"  # no typestr for these: raw 2- and 1-byte elements
TYPESTR_OF[DType.F8E4M3] = "|V1"
TYPESTR_OF[DType.F8E5M2] = "|V1"


def dtype_from_typestr(typestr: str) -> Optional[DType]:
    """The DType of an array-interface typestr ('<f4'), None when ic has none."""
    if len(typestr) != 3 or typestr[0] == ">":
        return None
    return _TYPESTRS.get(typestr[1:])


def dtype_from_format(fmt: str, itemsize: int) -> Optional[DType]:
    """The DType of a buffer-protocol format ('f', '<f', '=e', ...), None when ic has none.
    The C integer codes (i, l, q) go by their item size."""
    if fmt and fmt[0] in "@=<":
        fmt = fmt[1:]
    if len(fmt) != 1:
        return None
    if fmt in "ilq":
        return {4: DType.I32, 8: DType.I64}.get(itemsize)
    if fmt in "ILQ":
        return {4: DType.U32, 8: DType.U64}.get(itemsize)
    return _FORMATS.get(fmt)


_FORMATS: Dict[str, DType] = {"?": DType.BOOL, "B": DType.U8, "c": DType.U8, "b": DType.I8, "h": DType.I16,
                              "H": DType.U16,
                              "e": DType.F16, "f": DType.F32, "d": DType.F64}


def dtype_size(dtype: DTypeLike) -> int:
    """Bytes per element of a dtype."""
    return to_dtype(dtype).itemsize


def element_store(dtype: DTypeLike, value: float) -> bytes:
    """``value`` in dtype's storage (ic_element_store: rounds once to nearest even, as a cast
    from f64; fp8 e4m3 overflows to NaN; integers truncate and saturate)."""
    d = to_dtype(dtype)
    buf = (ctypes.c_char * 8)()
    check(api.ic_element_store(int(d), float(value), buf), "element_store")
    return buf.raw[: d.itemsize]


def element_load(dtype: DTypeLike, data: bytes) -> float:
    """One element of dtype's storage read back as a float (ic_element_load)."""
    d = to_dtype(dtype)
    if len(data) < d.itemsize:
        raise ValueError(f"element_load: {d} needs {d.itemsize} bytes, got {len(data)}")
    buf = ctypes.create_string_buffer(bytes(data[: d.itemsize]), 8)
    return float(api.ic_element_load(int(d), buf))


def pack(dtype: DTypeLike, values: Iterable[float]) -> bytearray:
    """Host storage of values in dtype, element after element (bf16 and fp8 included):
    ``ic.Tensor.from_buffer(ic.pack(ic.bf16, xs), ic.bf16)`` makes a ref-backend input."""
    d = to_dtype(dtype)
    raw = list(values)
    if d.is_integer and all(type(v) is int for v in raw):
        # Python ints pack exactly (i64 beyond 2^53 too) while they fit the width.
        bits = 8 * d.itemsize
        lo, hi = (0, 2**bits - 1) if d.is_unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if all(lo <= v <= hi for v in raw):
            return bytearray(struct.pack(f"<{len(raw)}{STRUCT_FORMATS[d]}", *raw))
    vals = [float(v) for v in raw]
    if d in (DType.F32, DType.F64):
        # struct rounds to nearest even as ic does; it refuses f32 overflow, ic gives inf.
        try:
            return bytearray(struct.pack(f"<{len(vals)}{STRUCT_FORMATS[d]}", *vals))
        except OverflowError:
            pass
    return _pack_via_store(d, vals)


def _pack_via_store(d: DType, vals: List[float]) -> bytearray:
    n = d.itemsize
    out = bytearray(n * len(vals))
    buf = (ctypes.c_char * 8)()
    store = api.ic_element_store
    for i, v in enumerate(vals):
        check(store(int(d), float(v), buf), "pack")
        out[i * n:(i + 1) * n] = buf.raw[:n]
    return out


def unpack(dtype: DTypeLike, data: Union[bytes, bytearray, memoryview]) -> List[float]:
    """The elements of dtype's host storage as floats (ints for integer dtypes, bools for
    bool), the inverse of :func:`pack`."""
    d = to_dtype(dtype)
    raw = bytes(data)
    n = d.itemsize
    if len(raw) % n:
        raise ValueError(f"unpack: {len(raw)} bytes is not a whole number of {d} elements")
    fmt = STRUCT_FORMATS.get(d)
    if fmt is not None:
        return list(struct.unpack(f"<{len(raw) // n}{fmt}", raw))
    load = api.ic_element_load
    cbuf = ctypes.create_string_buffer(8)
    out: List[float] = []
    for i in range(0, len(raw), n):
        ctypes.memmove(cbuf, raw[i:i + n], n)
        out.append(float(load(int(d), cbuf)))
    return out
