"""ic's own tensor objects.

:class:`Tensor` describes memory that someone else owns (a pointer, dtype, shape,
strides, device): raw device pointers, or host bytes reinterpreted as a dtype Python
buffers cannot spell (bf16, fp8). It exports ``__array_interface__`` (host) or
``__cuda_array_interface__`` (device), which keep the Tensor, hence its owner, alive.

:class:`Buffer` is memory ic allocated for an output nobody gave. ``__dlpack__`` hands
it to a consumer (torch.from_dlpack, numpy.from_dlpack, CuPy, JAX) without a copy:
the capsule carries ic's DLManagedTensor (ic_tensor_to_dlpack with owned=1), whose
deleter frees the memory the way ic allocated it, so the memory then belongs to the
consumer and the Buffer is empty. Until then the Buffer reads (``tolist``, ``tobytes``)
and frees its memory itself.

No Python code runs from a C callback here: a capsule has no destructor (a consumer may
drop it with an exception pending, where Python cannot run); the capsules a Buffer made
are checked later instead (:func:`sweep`): a consumed one is forgotten, one that nobody
consumed and nobody holds gives its memory back to its Buffer (or frees it).
"""

from __future__ import annotations

import ctypes
import math
import sys
import threading
import weakref
from ctypes import POINTER, byref, c_int64, c_void_p
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from ._dtypes import STRUCT_FORMATS, TYPESTR_OF, DType, DTypeLike, dtype_from_format, to_dtype, unpack
from ._errors import Status, check, last_error, raise_status
from ._lib import KDL_CPU, KDL_CUDA, DLManagedTensor, ICTensor, api, int64_array, libc_free
from ._pyapi import BufferView, capsule_is, capsule_new

if TYPE_CHECKING:
    from ._context import Context

Shape = Tuple[int, ...]


def contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    out: List[int] = []
    step = 1
    for s in reversed(shape):
        out.append(step)
        step *= int(s)
    return tuple(reversed(out))


def is_contiguous(shape: Sequence[int], strides: Optional[Sequence[int]]) -> bool:
    """Row-major without gaps; dims of size 1 may have any stride (as ic_program_run)."""
    if strides is None or math.prod(shape) == 0:
        return True
    step = 1
    for s, st in zip(reversed(shape), reversed(strides)):
        if s != 1 and st != step:
            return False
        step *= s
    return True


def _nest(flat: List[Any], shape: Shape) -> Any:
    if not shape:
        return flat[0] if flat else None
    if len(shape) == 1:
        return flat
    step = math.prod(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


class Tensor:
    """Memory ic can run on, owned by someone else.

    ``Tensor(ptr, dtype, shape, strides=None, device="cuda", device_id=0, owner=None)``
    wraps a raw pointer (strides in elements; None is contiguous); ``owner`` is kept
    alive with it. ``Tensor.from_buffer(obj, dtype, shape)`` views a host buffer's bytes.
    """

    __slots__ = ("ptr", "dtype", "shape", "strides", "device", "device_id", "readonly", "_owner", "_view",
                 "__weakref__")

    def __init__(self, ptr: int, dtype: DTypeLike, shape: Sequence[int], strides: Optional[Sequence[int]] = None,
                 *, device: str = "cuda", device_id: int = 0, owner: object = None) -> None:
        if device not in ("cuda", "cpu"):
            raise ValueError(f"device must be 'cuda' or 'cpu', not {device!r}")
        self.ptr = int(ptr or 0)
        self.dtype = to_dtype(dtype)
        self.shape: Shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"negative size in shape {self.shape}")
        self.strides: Optional[Shape] = None if strides is None else tuple(int(s) for s in strides)
        if self.strides is not None and len(self.strides) != len(self.shape):
            raise ValueError(f"{len(self.strides)} strides for {len(self.shape)} dims")
        self.device = device
        self.device_id = int(device_id)
        self.readonly = False  # True over a read-only buffer: not an output
        self._owner = owner
        self._view: Optional[BufferView] = None

    @classmethod
    def from_buffer(cls, obj: object, dtype: Optional[DTypeLike] = None,
                    shape: Optional[Sequence[int]] = None) -> "Tensor":
        """A host tensor over a C-contiguous buffer's bytes (array.array, bytearray,
        memoryview, numpy, ...): dtype (default: the buffer's own) and shape (default: all
        its elements in one dim) reinterpret them, e.g. bf16 values stored in a bytearray
        (``ic.pack(ic.bf16, xs)``). The buffer stays exported (a bytearray cannot be
        resized) while the Tensor lives. Writable buffers can also receive outputs."""
        try:
            view = BufferView(obj, writable=True)
        except (BufferError, TypeError):
            view = BufferView(obj, writable=False)
        try:
            own = dtype_from_format(view.format, view.itemsize)
            d = to_dtype(dtype) if dtype is not None else own
            if d is None:
                raise TypeError(f"buffer format {view.format!r} has no ic dtype: name one (dtype=...)")
            bs = view.byte_strides
            if bs is not None and not is_contiguous(view.shape, [s // max(view.itemsize, 1) for s in bs]):
                raise ValueError("from_buffer takes a C-contiguous buffer")
            nbytes = view.itemsize * math.prod(view.shape)
            if shape is None:
                if nbytes % d.itemsize:
                    raise ValueError(f"{nbytes} bytes is not a whole number of {d} elements")
                shp: Shape = (nbytes // d.itemsize,)
            else:
                shp = tuple(int(s) for s in shape)
                if math.prod(shp) * d.itemsize != nbytes:
                    raise ValueError(f"shape {list(shp)} of {d} takes {math.prod(shp) * d.itemsize} bytes, "
                                     f"the buffer has {nbytes}")
            t = cls(view.ptr, d, shp, None, device="cpu", owner=obj)
            t._view = view
            t.readonly = bool(view.view.readonly)
            return t
        except BaseException:
            view.release()
            raise

    # ------------------------------------------------------------ properties

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def data_ptr(self) -> int:
        """The address of element 0 (a device pointer on cuda)."""
        return self.ptr

    def is_contiguous(self) -> bool:
        return is_contiguous(self.shape, self.strides)

    def __repr__(self) -> str:
        dims = ", ".join(str(s) for s in self.shape)
        return f"<ic.{type(self).__name__} {self.dtype}[{dims}] on {self.device}>"

    # ------------------------------------------------------------ host access

    def tobytes(self) -> bytes:
        """The elements in row-major order (contiguous tensors; a device copy for an
        ic-owned device Buffer, once the stream that wrote it finished)."""
        if not self.is_contiguous():
            raise ValueError("tobytes: the tensor is not contiguous")
        n = self.nbytes
        ptr = self.data_ptr()
        if n == 0:
            return b""
        if self.device == "cpu":
            return ctypes.string_at(ptr, n)
        return self._device_bytes(ptr, n)

    def _device_bytes(self, ptr: int, n: int) -> bytes:
        raise_status(Status.UNSUPPORTED, "tobytes: copying device memory ic does not own: use its owner's copy")

    def tolist(self) -> Any:
        """The elements as nested lists of Python numbers: floats (bf16 and fp8
        included), ints, bools."""
        flat = unpack(self.dtype, self.tobytes())
        if self.dtype in STRUCT_FORMATS and self.dtype.is_integer:
            flat = [int(v) for v in flat]
        return _nest(flat, self.shape)

    # ------------------------------------------------------------ array interfaces

    def _interface(self) -> Dict[str, Any]:
        strides = None
        if self.strides is not None and not self.is_contiguous():
            strides = tuple(s * self.dtype.itemsize for s in self.strides)
        return {"shape": self.shape, "typestr": TYPESTR_OF[self.dtype], "data": (self.data_ptr(), False),
                "strides": strides, "version": 3}

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        if self.device != "cpu":
            raise AttributeError("__array_interface__: a device tensor (see __cuda_array_interface__)")
        return self._interface()

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        if self.device != "cuda":
            raise AttributeError("__cuda_array_interface__: a host tensor (see __array_interface__)")
        d = self._interface()
        d["stream"] = None
        return d


class Buffer(Tensor):
    """Memory ic allocated for an output: host memory (ref backend) or device memory
    (cuda backend, on the context's device).

    ``__dlpack__`` hands the memory to the consumer without a copy (once: the Buffer is
    empty afterwards, unless the consumer did not take the capsule). ``free()`` frees it
    at once; otherwise it goes with the Buffer. A device Buffer keeps its context alive.
    """

    __slots__ = ("_managed", "_ctx", "_stream", "_synced", "_counted", "_export")

    def __init__(self, ctx: "Context", ptr: int, dtype: DType, shape: Sequence[int], device: str,
                 stream: Optional[int] = None) -> None:
        super().__init__(ptr, dtype, shape, None, device=device, device_id=ctx.device if device == "cuda" else 0)
        self._ctx: Optional[Context] = ctx if device == "cuda" else None
        self._stream = stream or 0
        self._synced = device == "cpu"
        self._counted = False
        self._export: Optional[_Export] = None
        self._managed: Any = None
        # ic's DLManagedTensor (owned=1) holds the memory: its deleter frees it the way ic
        # allocated it (free() on the host, ic_free on the device).
        t = ICTensor()
        t.data = ptr or None
        t.dtype = int(dtype)
        t.ndim = len(self.shape)
        shp = int64_array(list(self.shape))
        t.shape = ctypes.cast(shp, POINTER(c_int64))
        m = POINTER(DLManagedTensor)()
        st = api.ic_tensor_to_dlpack(ctx.handle, byref(t), KDL_CPU if device == "cpu" else KDL_CUDA, 1, byref(m))
        if st:
            err = last_error(st, "ic_tensor_to_dlpack")
            if ptr and device == "cpu":
                libc_free()(ptr)
            elif ptr:
                api.ic_free(ctx.handle, ptr)
            raise err
        self._managed = m
        if self._ctx is not None:
            self._ctx._buffer_added()
            self._counted = True

    @classmethod
    def _adopt(cls, ctx: "Context", ptr: int, dtype: DType, shape: Sequence[int], device: str,
               stream: Optional[int]) -> "Buffer":
        return cls(ctx, ptr, dtype, shape, device, stream)

    @property
    def exported(self) -> bool:
        """True once __dlpack__ handed the memory to a consumer."""
        self._check_export()
        return self._managed is None and self._export is not None

    def _check_export(self) -> None:
        if self._export is not None:
            sweep(self._export)

    def data_ptr(self) -> int:
        self._check_export()
        if self._managed is None:
            raise_status(Status.INVALID_ARGUMENT, "the buffer is empty: " + (
                "__dlpack__ handed its memory to a consumer" if self._export is not None else "it was freed"))
        return self.ptr

    def _ready(self, stream: Optional[int]) -> None:
        """Waits for the run that wrote the buffer (asynchronous on its stream) unless the
        consumer's stream is that very stream."""
        if self._synced or (stream is not None and stream == self._stream and stream not in (0, 1, 2)):
            return
        ctx = self._ctx
        assert ctx is not None
        check(api.ic_stream_synchronize(ctx.handle, self._stream or None), "ic_stream_synchronize")
        self._synced = True

    def _device_bytes(self, ptr: int, n: int) -> bytes:
        self._ready(None)
        assert self._ctx is not None
        out = ctypes.create_string_buffer(n)
        check(api.ic_memcpy_dtoh(self._ctx.handle, out, ptr, n), "ic_memcpy_dtoh")
        return out.raw

    # Views through the array interfaces would dangle once __dlpack__ gives the memory
    # away: a Buffer exports through DLPack only.
    @property
    def __array_interface__(self) -> Dict[str, Any]:
        raise AttributeError("ic.Buffer exports through __dlpack__ (numpy.from_dlpack)")

    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]:
        raise AttributeError("ic.Buffer exports through __dlpack__")

    def __dlpack_device__(self) -> Tuple[int, int]:
        return (KDL_CPU, 0) if self.device == "cpu" else (KDL_CUDA, self.device_id)

    def __dlpack__(self, stream: Optional[int] = None, *, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None, copy: Optional[bool] = None) -> object:
        """A 'dltensor' capsule (DLPack 0.x, which every consumer takes) that hands the
        memory over: the consumer frees it through ic's deleter. stream: the consumer's
        CUDA stream (the buffer's stream is waited for unless it is that one; -1: no
        wait)."""
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"__dlpack__: the buffer is on {self.__dlpack_device__()}, not {tuple(dl_device)}")
        if copy:
            raise BufferError("__dlpack__: ic.Buffer exports without copies (copy=True)")
        if _exports:
            sweep()
        self.data_ptr()  # raises when empty
        if self.device == "cuda" and stream != -1:
            self._ready(stream)
        m = self._managed
        address = ctypes.cast(m, c_void_p).value or 0
        cap = capsule_new(address)
        with _lock:
            self._export = _Export(cap, m, self)
            _exports.append(self._export)
            self._managed = None
        if self._ctx is not None:
            # The consumer frees device memory with ic_free on this context, whenever it
            # likes: the C context must never be destroyed under it.
            self._ctx._pin()
        return cap

    def free(self) -> None:
        """Frees the memory now (idempotent; a no-op once __dlpack__ gave it away)."""
        self._check_export()
        m, self._managed = self._managed, None
        if m is not None:
            m.contents.deleter(m)
        if self._counted:
            self._counted = False
            assert self._ctx is not None
            self._ctx._buffer_freed()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass


class _Export:
    """A capsule a Buffer made, watched until a consumer takes it (or nobody will)."""

    __slots__ = ("capsule", "managed", "buffer")

    def __init__(self, capsule: object, managed: Any, buffer: Buffer) -> None:
        self.capsule: Optional[object] = capsule
        self.managed = managed
        self.buffer = weakref.ref(buffer)


_exports: List[_Export] = []
_lock = threading.Lock()


def sweep(only: Optional[_Export] = None) -> None:
    """Settles exported capsules (all, or only one): a consumed capsule (renamed
    'used_dltensor') is the consumer's; one nobody consumed and nobody but us holds
    gives its memory back to its Buffer, or frees it when the Buffer is gone."""
    with _lock:
        items = [only] if only is not None else list(_exports)
        settled: List[Tuple[_Export, bool]] = []
        for e in items:
            if e.capsule is None:
                continue
            if not capsule_is(e.capsule, b"dltensor"):
                settled.append((e, False))
            # References: e.capsule and getrefcount's argument. More: someone holds it.
            elif sys.getrefcount(e.capsule) <= 2:
                settled.append((e, True))
        for e, abandoned in settled:
            e.capsule = None
            if e in _exports:
                _exports.remove(e)
    for e, abandoned in settled:
        if not abandoned:
            continue  # the consumer's now (buf._export stays: the Buffer says so)
        buf = e.buffer()
        if buf is not None and buf._export is e and buf._managed is None:
            buf._export = None
            buf._managed = e.managed  # nobody took it: the Buffer owns its memory again
        else:
            e.managed.contents.deleter(e.managed)
