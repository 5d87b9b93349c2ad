"""The few CPython C-API calls the binding makes through ctypes.pythonapi: the buffer
protocol (pointers into array.array, memoryview, bytearray, numpy, ...) and PyCapsules
(DLPack). Pure ctypes: no compiled extension."""

from __future__ import annotations

import ctypes
from ctypes import POINTER, Structure, c_char_p, c_int, c_ssize_t, c_void_p, py_object
from typing import Any, List, Optional, Tuple

_py = ctypes.pythonapi

PyBUF_WRITABLE = 0x0001
PyBUF_FORMAT = 0x0004
PyBUF_ND = 0x0008
PyBUF_STRIDES = 0x0010 | PyBUF_ND
PyBUF_RECORDS_RO = PyBUF_STRIDES | PyBUF_FORMAT
PyBUF_RECORDS = PyBUF_RECORDS_RO | PyBUF_WRITABLE


class PyBuffer(Structure):
    """``Py_buffer`` (its layout is part of CPython's stable ABI since 3.11)."""

    _fields_ = [
        ("buf", c_void_p),
        ("obj", c_void_p),
        ("len", c_ssize_t),
        ("itemsize", c_ssize_t),
        ("readonly", c_int),
        ("ndim", c_int),
        ("format", c_char_p),
        ("shape", POINTER(c_ssize_t)),
        ("strides", POINTER(c_ssize_t)),
        ("suboffsets", POINTER(c_ssize_t)),
        ("internal", c_void_p),
    ]


_get_buffer = _py.PyObject_GetBuffer
_get_buffer.argtypes = [py_object, POINTER(PyBuffer), c_int]
_get_buffer.restype = c_int
_release_buffer = _py.PyBuffer_Release
_release_buffer.argtypes = [POINTER(PyBuffer)]
_release_buffer.restype = None


class BufferView:
    """A buffer-protocol export held until release(): pointer, format, shape and
    strides (bytes) of any exporter, strided ones included."""

    __slots__ = ("view", "held")

    def __init__(self, obj: object, writable: bool) -> None:
        self.view = PyBuffer()
        # Raises the exporter's BufferError / TypeError (ctypes.pythonapi checks it).
        _get_buffer(obj, ctypes.byref(self.view), PyBUF_RECORDS if writable else PyBUF_RECORDS_RO)
        self.held = True

    @property
    def ptr(self) -> int:
        return self.view.buf or 0

    @property
    def format(self) -> str:
        f = self.view.format
        return str(f.decode("ascii", "replace")) if f else "B"

    @property
    def itemsize(self) -> int:
        return int(self.view.itemsize)

    @property
    def shape(self) -> Tuple[int, ...]:
        v = self.view
        if v.ndim == 0:
            return ()
        return tuple(v.shape[i] for i in range(v.ndim))

    @property
    def byte_strides(self) -> Optional[Tuple[int, ...]]:
        v = self.view
        if v.ndim == 0 or not v.strides:
            return None
        return tuple(v.strides[i] for i in range(v.ndim))

    @property
    def suboffsets(self) -> bool:
        return bool(self.view.suboffsets)

    def release(self) -> None:
        if self.held:
            self.held = False
            _release_buffer(ctypes.byref(self.view))

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:
            pass


# ---------------------------------------------------------------- capsules
#
# Capsules are made without a destructor: a Python destructor would run whenever a
# consumer drops the capsule, possibly with the consumer's exception pending (numpy
# refusing a dtype, an exception unwinding a frame), where no Python code can run safely.
# The producer keeps the capsules it made instead and checks them later (_tensor.sweep).

_capsule_new = _py.PyCapsule_New
_capsule_new.restype = py_object
_capsule_new.argtypes = [c_void_p, c_void_p, c_void_p]
_capsule_get_pointer = _py.PyCapsule_GetPointer
_capsule_get_pointer.restype = c_void_p
_capsule_get_pointer.argtypes = [py_object, c_char_p]
_capsule_set_name = _py.PyCapsule_SetName
_capsule_set_name.restype = c_int
_capsule_set_name.argtypes = [py_object, c_void_p]  # a static name's address
_capsule_is_valid = _py.PyCapsule_IsValid
_capsule_is_valid.restype = c_int
_capsule_is_valid.argtypes = [py_object, c_char_p]

# Capsule names must outlive every capsule: static strings that are never freed.
_NAMES: List[Any] = []


def _static_name(name: bytes) -> Any:
    buf = ctypes.create_string_buffer(name)
    _NAMES.append(buf)
    return buf


DLTENSOR = _static_name(b"dltensor")
USED_DLTENSOR = _static_name(b"used_dltensor")


def capsule_new(pointer: int) -> object:
    """A 'dltensor' PyCapsule of pointer, without destructor (see above)."""
    return _capsule_new(pointer, ctypes.addressof(DLTENSOR), None)


def capsule_pointer(capsule: object, name: bytes) -> int:
    """PyCapsule_GetPointer (raises ValueError for a capsule of another name)."""
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"__dlpack__ returned {type(capsule).__name__}, not a PyCapsule")
    return int(_capsule_get_pointer(capsule, name) or 0)


def capsule_is(capsule: object, name: bytes) -> bool:
    """True while the capsule is named name (a consumer renames 'dltensor' capsules)."""
    return bool(_capsule_is_valid(capsule, name))


def capsule_consume(capsule: object) -> None:
    """Renames a dltensor capsule 'used_dltensor': the consumer now owns the tensor."""
    _capsule_set_name(capsule, ctypes.addressof(USED_DLTENSOR))
