"""Compiled programs and the run path.

Inputs: PyTorch tensors (read directly: data_ptr/shape/stride/dtype, no DLPack round
trip), CuPy arrays and other ``__cuda_array_interface__`` objects, ``__dlpack__``
objects (JAX, ...), numpy arrays, buffer-protocol objects (array.array, memoryview,
bytes, bytearray) and ic's own Tensor/Buffer. Device memory runs on the cuda backend,
host memory on ref; a mismatch is refused before anything runs (ic cannot tell device
pointers from host pointers).

Outputs, unless ``out=`` gives them: objects of the inputs' kind (torch tensors allocated
with torch.empty on the inputs' device, CuPy arrays, numpy arrays where numpy has the
dtype), else ic-owned :class:`ic.Buffer` objects. One output comes back as the object,
several as a tuple in the program's output order (``prog.outputs``).

Mismatches raise before anything runs: an input or ``out=`` tensor whose shape, strides
or layout do not fit the program raises :class:`ic.ShapeMismatchError`; one of another
dtype than compiled (of any kind: torch, CuPy, numpy, DLPack, buffers, ic.Tensor) raises
its subclass :class:`ic.DTypeMismatchError`, whose message leads with ``"dtype
mismatch: GIVEN vs COMPILED: "``.

The stream: ``stream=`` (an int CUstream, or an object with ``.cuda_stream`` or ``.ptr``),
else PyTorch's current stream for torch inputs, CuPy's for CuPy inputs, else the legacy
default stream.

Dispatch cost: per program and input signature (dtypes, shapes, strides, device) the
ic_tensor arrays, output shapes and output allocators are built once and cached; a call
with a known signature sets the data pointers, allocates the outputs and calls
ic_program_run. torch out= tensors whose signature the general path accepted for an input
signature are remembered with it, so later calls with tensors of that signature skip the
checks here (ic_program_run still checks shapes, layouts and aliasing).
"""

from __future__ import annotations

import ctypes
import sys
import threading
from collections import abc
from ctypes import POINTER, byref, c_int32, c_int64, c_void_p, sizeof
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._context import Context, default_context
from ._dtypes import NUMPY_DTYPES, DType, dtype_from_format, dtype_from_typestr
from ._errors import Status, check, last_error, make_error, raise_status
from ._lib import (
    BUFFER_INPUT,
    BUFFER_OUTPUT,
    COMPILE_ALLOW_TF32,
    COMPILE_NO_CACHE,
    COMPILE_STRICT,
    KDL_CPU,
    KDL_CUDA,
    KDL_CUDA_HOST,
    KDL_CUDA_MANAGED,
    MAX_DIMS,
    DLManagedTensor,
    ICBufferInfo,
    ICCompileOptions,
    ICTensor,
    api,
    libc_free,
    take_string,
    text,
)
from ._pyapi import BufferView, capsule_consume, capsule_pointer
from ._tensor import Buffer, Tensor, contiguous_strides, is_contiguous

if TYPE_CHECKING:
    from ._graph import Graph

# Input kinds, in the order that decides the outputs' kind when inputs mix.
K_TORCH, K_CUPY, K_NUMPY, K_IC, K_CAI, K_DLPACK, K_BUFFER = range(7)
_KIND_NAMES = ["torch", "cupy", "numpy", "ic", "__cuda_array_interface__", "DLPack", "buffer"]

# The signature cache of a program keeps at most this many signatures (a symbol that
# changes every call must not grow it without bound).
_MAX_SIGNATURES = 256


def compile_graph(graph: "Graph", *, mode: str, backend: str, strict: bool, cache: bool,
                  context: Optional[Context], fusion_budget: int = 0, allow_tf32: bool = False) -> "Program":
    if mode not in ("fused", "eager"):
        raise ValueError(f"mode must be 'fused' or 'eager', not {mode!r}")
    if backend not in ("cuda", "ref"):
        raise ValueError(f"backend must be 'cuda' or 'ref', not {backend!r}")
    ctx = context if context is not None else default_context()
    opts = ICCompileOptions()
    opts.struct_size = sizeof(ICCompileOptions)
    opts.mode = 0 if mode == "fused" else 1
    opts.flags = ((COMPILE_STRICT if strict else 0) | (0 if cache else COMPILE_NO_CACHE) |
                  (COMPILE_ALLOW_TF32 if allow_tf32 else 0))
    opts.backend = backend.encode()
    opts.fusion_budget = fusion_budget
    out = c_void_p()
    st = api.ic_compile(ctx.handle, graph._h(), byref(opts), byref(out))
    if st:
        raise last_error(st)
    return Program(ctx, out.value or 0, mode, backend)


def stream_handle(stream: Any) -> Optional[int]:
    """A CUstream from an int, None (the legacy default), or an object with
    ``.cuda_stream`` (PyTorch) or ``.ptr`` (CuPy)."""
    if stream is None:
        return None
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream or None
    for attr in ("cuda_stream", "ptr", "handle"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h or None
    raise TypeError(f"stream must be an int CUstream or have .cuda_stream or .ptr, got {type(stream).__name__}")


# ---------------------------------------------------------------- frameworks (lazy)

_torch: Any = None  # the torch module, once an input was a torch tensor
_torch_tensor: Any = None  # torch.Tensor exactly (the fast path's type test)
_torch_dtypes: Dict[Any, DType] = {}
_torch_of: Dict[DType, Any] = {}
_torch_raw_stream: Optional[Callable[[int], int]] = None
_numpy: Any = None
_numpy_tried = False
_kinds: Dict[type, int] = {}


def _init_torch(torch: Any) -> None:
    global _torch, _torch_tensor, _torch_raw_stream
    names = {"bool": DType.BOOL, "uint8": DType.U8, "int8": DType.I8, "int16": DType.I16, "int32": DType.I32,
             "int64": DType.I64, "uint16": DType.U16, "uint32": DType.U32, "uint64": DType.U64,
             "float16": DType.F16, "bfloat16": DType.BF16, "float32": DType.F32,
             "float64": DType.F64, "float8_e4m3fn": DType.F8E4M3, "float8_e5m2": DType.F8E5M2}
    for name, d in names.items():
        t = getattr(torch, name, None)
        if t is not None:
            _torch_dtypes[t] = d
            _torch_of[d] = t
    # The current stream's handle: torch._C._cuda_getCurrentRawStream is what Inductor's
    # generated code calls (a fraction of torch.cuda.current_stream()'s cost).
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw is not None:
        _torch_raw_stream = raw
    else:
        _torch_raw_stream = lambda dev: int(torch.cuda.current_stream(dev).cuda_stream)
    _torch_tensor = torch.Tensor
    _torch = torch


def _numpy_module() -> Any:
    """numpy when it can be imported (outputs for host buffer inputs), else None."""
    global _numpy, _numpy_tried
    if not _numpy_tried:
        _numpy_tried = True
        try:
            import numpy

            _numpy = numpy
        except ImportError:
            _numpy = None
    return _numpy


def _classify(obj: Any) -> int:
    t = type(obj)
    k = _kinds.get(t)
    if k is not None:
        return k
    torch = sys.modules.get("torch")
    cupy = sys.modules.get("cupy")
    numpy = sys.modules.get("numpy")
    if torch is not None and isinstance(obj, torch.Tensor):
        if _torch is None:
            _init_torch(torch)
        k = K_TORCH
    elif cupy is not None and isinstance(obj, cupy.ndarray):
        k = K_CUPY
    elif numpy is not None and isinstance(obj, numpy.ndarray):
        k = K_NUMPY
    elif isinstance(obj, Tensor):
        k = K_IC
    elif hasattr(t, "__cuda_array_interface__"):
        k = K_CAI
    elif hasattr(t, "__dlpack__") and hasattr(t, "__dlpack_device__"):
        k = K_DLPACK
    else:
        try:
            memoryview(obj).release()
        except TypeError:
            return -1
        k = K_BUFFER
    _kinds[t] = k
    return k


class _In:
    """One described input (or out= tensor): what the ic_tensor needs, plus what must
    live until the run returned."""

    __slots__ = ("kind", "ptr", "dtype", "shape", "strides", "device", "key", "keep", "release")

    def __init__(self, kind: int, ptr: int, dtype: DType, shape: Tuple[int, ...], strides: Optional[Tuple[int, ...]],
                 device: Any, key: Any, keep: Any = None, release: Optional[Callable[[], None]] = None) -> None:
        self.kind = kind
        self.ptr = ptr
        self.dtype = dtype
        self.shape = shape
        self.strides = strides
        self.device = device  # ("cpu" | "cuda", ordinal) plus the framework's device object
        self.key = key
        self.keep = keep
        self.release = release


def _elements(byte_strides: Optional[Sequence[int]], itemsize: int, what: str) -> Optional[Tuple[int, ...]]:
    if byte_strides is None:
        return None
    out = []
    for s in byte_strides:
        if s % itemsize:
            raise ValueError(f"{what}: stride of {s} bytes is not a multiple of the element size {itemsize}")
        out.append(s // itemsize)
    return tuple(out)


class _Entry:
    """What a known input signature needs: ic_tensor arrays with shapes and strides
    filled in (data pointers are set per call) and the output allocators."""

    __slots__ = ("in_arr", "in_structs", "out_arr", "out_structs", "out_shapes", "out_make", "torch_outs", "lock",
                 "keep", "device", "fast", "out_sigs", "stream_int", "stream_arg")
    in_arr: Any  # ctypes array of ICTensor, one per input
    in_structs: List[Any]  # its elements (ctypes views: setting .data writes the array)
    out_arr: Any
    out_structs: List[Any]
    out_shapes: List[Tuple[int, ...]]
    out_make: List[Optional[Callable[[], Any]]]  # allocators (None: ic allocates)
    torch_outs: List[Tuple[Tuple[int, ...], Any, Any]]  # (shape, torch dtype, device)
    device: int  # the torch CUDA device index, -1 for host
    fast: bool  # torch inputs, and torch has every output dtype: Program.__call__'s fast path
    # Signatures of torch out= tensors (per output: dtype, shape, strides, device) that the
    # general path checked for this input signature: the fast path takes them unchecked.
    out_sigs: Dict[Any, None]
    stream_int: Optional[int]  # the last stream, and its ctypes argument (None: default)
    stream_arg: Optional[c_void_p]

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.keep: List[Any] = []
        self.out_sigs = {}
        self.stream_int = None
        self.stream_arg = None

    def stream(self, st: Optional[int]) -> Optional[c_void_p]:
        """The ctypes argument of stream st (cached: most calls run on one stream)."""
        if st != self.stream_int:
            self.stream_arg = c_void_p(st) if st else None
            self.stream_int = st
        return self.stream_arg


class Program:
    """A compiled program (``ic_program``). Call it with the inputs, by position or by
    name: ``prog(x, w)``, ``prog(x=x, w=w)``; ``out=`` (a sequence, or a dict by output
    name) gives output tensors to write into; ``stream=`` a CUDA stream.

    ``prog.run(inputs, out=..., stream=...)`` takes the inputs as a sequence or mapping
    (for input names that clash with ``out`` or ``stream``). A program is immutable and
    may run on several threads at once. ``close()`` releases it (also at garbage
    collection; the context's ``close()`` releases its programs).
    """

    def __init__(self, ctx: Context, handle: int, mode: str, backend: str) -> None:
        self._handle: Optional[int] = handle
        self._hv = c_void_p(handle)
        self._release_fn = api.ic_program_release
        self.context = ctx
        self.mode = mode
        self.backend = backend
        self._host = backend == "ref"
        self._run = api.program_run_unchecked
        self._nin = int(api.ic_program_input_count(self._hv))
        self._nout = int(api.ic_program_output_count(self._hv))
        ins: List[Tuple[str, DType, int]] = [("", DType.F32, 0)] * self._nin
        outs: List[Tuple[str, DType, int]] = [("", DType.F32, 0)] * self._nout
        info = ICBufferInfo()
        for b in range(int(api.ic_program_buffer_count(self._hv))):
            check(api.ic_program_buffer(self._hv, b, byref(info)), "ic_program_buffer")
            if info.kind == BUFFER_INPUT:
                ins[info.index] = (text(info.name), DType(info.dtype), int(info.ndim))
            elif info.kind == BUFFER_OUTPUT:
                outs[info.index] = (text(info.name), DType(info.dtype), int(info.ndim))
        self._inputs = ins
        self._outputs = outs
        self._in_index = {n: i for i, (n, _, _) in enumerate(ins)}
        # The names error messages give each tensor (built once, not on every call).
        self._in_what = [f"input {n!r}" for n, _, _ in ins]
        self._out_what = [f"out {n!r}" for n, _, _ in outs]
        self._out_index = {n: i for i, (n, _, _) in enumerate(outs)}
        self._sigs: Dict[Any, _Entry] = {}
        ctx._programs.add(self)

    # ------------------------------------------------------------ lifetime

    def _release(self) -> None:
        h, self._handle = self._handle, None
        self._sigs = {}
        if h:
            self._release_fn(h)

    def close(self) -> None:
        """Releases the program (idempotent); it cannot run afterwards."""
        self._release()

    def __del__(self) -> None:
        try:
            self._release()
        except Exception:
            pass

    def __enter__(self) -> "Program":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _h(self) -> int:
        h = self._handle
        if h is None:
            raise_status(Status.INVALID_ARGUMENT,
                         "the program was released" + (" (its context is closed)" if self.context.closed else ""))
        return h

    # ------------------------------------------------------------ inspection

    @property
    def inputs(self) -> List[str]:
        """Input names, in positional order."""
        return [n for n, _, _ in self._inputs]

    @property
    def outputs(self) -> List[str]:
        """Output names, in the order calls return them."""
        return [n for n, _, _ in self._outputs]

    @property
    def input_dtypes(self) -> List[DType]:
        return [d for _, d, _ in self._inputs]

    @property
    def output_dtypes(self) -> List[DType]:
        return [d for _, d, _ in self._outputs]

    @property
    def kernel_count(self) -> int:
        return int(api.ic_program_kernel_count(self._h()))

    @property
    def kernel_sources(self) -> List[str]:
        """The generated source of each kernel (CUDA C on cuda; ref has none: "")."""
        h = self._h()
        return [text(api.ic_program_kernel_source(h, i)) for i in range(int(api.ic_program_kernel_count(h)))]

    @property
    def kernel_irs(self) -> List[str]:
        """The kernel IR of each kernel, as text."""
        h = self._h()
        return [text(api.ic_program_kernel_ir(h, i)) for i in range(int(api.ic_program_kernel_count(h)))]

    def dump(self) -> str:
        """The whole program as text (``ic_program_dump``): buffers, steps, kernels."""
        p = c_void_p()
        check(api.ic_program_dump(self._h(), byref(p)), "ic_program_dump")
        return take_string(p.value)

    def __repr__(self) -> str:
        state = "" if self._handle else " (released)"
        return (f"<ic.Program {self.backend} {self.mode} inputs={self.inputs} outputs={self.outputs}{state}>")

    # ------------------------------------------------------------ calls

    def __call__(self, *args: Any, out: Any = None, stream: Any = None, **kwargs: Any) -> Any:
        if kwargs or len(args) != self._nin:
            args = tuple(self._bind(args, kwargs))
        # The PyTorch fast path: plain torch.Tensors of a known signature, with no out= or
        # with out= tensors (one, or a list or tuple) of a signature that _call checked for
        # it before. It reads each tensor's signature (dtype, shape, strides, device), sets
        # the data pointers and runs; ic_program_run itself still checks shapes, layouts
        # and aliasing. Everything else (and a first call) takes _call, which checks
        # everything and fills the caches.
        # The device object, not get_device(): a meta tensor's -1 would pass for a CPU one.
        # (Loops, not comprehensions: a comprehension is a function call in Python 3.11.)
        T = _torch_tensor
        if T is not None and args:
            e: Optional[_Entry] = None
            if len(args) == 1:
                a = args[0]
                if type(a) is T:
                    e = self._sigs.get(((a.dtype, a.shape, a.stride(), a.device),))
            else:
                sig = []
                for a in args:
                    if type(a) is not T:
                        break
                    sig.append((a.dtype, a.shape, a.stride(), a.device))
                else:
                    e = self._sigs.get(tuple(sig))
            if e is not None:
                outs: Any = None
                if out is None:
                    go = e.fast
                elif type(out) is T:
                    outs = (out,)
                    go = ((out.dtype, out.shape, out.stride(), out.device),) in e.out_sigs
                elif type(out) is tuple or type(out) is list:
                    outs = out
                    sig = []
                    for o in out:
                        if type(o) is not T:
                            break
                        sig.append((o.dtype, o.shape, o.stride(), o.device))
                    go = len(sig) == len(out) and tuple(sig) in e.out_sigs
                else:
                    go = False
                if go and e.lock.acquire(False):
                    try:
                        # One tensor, the common case, without a loop (a zip costs more
                        # than the assignment).
                        if len(args) == 1:
                            e.in_structs[0].data = args[0].data_ptr()
                        else:
                            for s, a in zip(e.in_structs, args):
                                s.data = a.data_ptr()
                        if outs is None:
                            # new_empty on an input of the outputs' device: contiguous, and
                            # half torch.empty's cost with a device argument (3.1 against
                            # 6.6 us on an H100 host, bench/python_dispatch.py --breakdown)
                            empty = args[0].new_empty
                            if self._nout == 1:
                                shape, tdt, _ = e.torch_outs[0]
                                outs = (empty(shape, dtype=tdt),)
                            else:
                                outs = [empty(shape, dtype=tdt) for shape, tdt, _ in e.torch_outs]
                        if len(outs) == 1:
                            e.out_structs[0].data = outs[0].data_ptr()
                        else:
                            for s, o in zip(e.out_structs, outs):
                                s.data = o.data_ptr()
                        if stream is None:
                            st = _torch_raw_stream(e.device) if e.device >= 0 else None  # type: ignore[misc]
                        else:
                            st = stream_handle(stream)  # checked on ref too, as _call does
                            if self._host:
                                st = None
                        if st != e.stream_int:
                            e.stream_arg = c_void_p(st) if st else None
                            e.stream_int = st
                        rc = self._run(self._hv, e.in_arr, self._nin, e.out_arr, self._nout, e.stream_arg)
                    finally:
                        e.lock.release()
                    if rc:
                        raise last_error(rc, "ic_program_run")
                    return outs[0] if len(outs) == 1 else tuple(outs)
        return self._call(args, out, stream)

    def run(self, inputs: Union[Sequence[Any], Mapping[str, Any]], *, out: Any = None, stream: Any = None) -> Any:
        """As calling the program, with the inputs as one sequence or mapping."""
        if isinstance(inputs, abc.Mapping):
            return self._call(tuple(self._bind((), dict(inputs))), out, stream)
        return self._call(tuple(self._bind(tuple(inputs), {})), out, stream)

    def _bind(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> List[Any]:
        """Inputs in positional order from positional and named arguments."""
        names = self.inputs
        if len(args) > self._nin:
            raise TypeError(f"the program takes {self._nin} input{'s' if self._nin != 1 else ''} "
                            f"({', '.join(names)}), got {len(args)} positional")
        bound: List[Any] = list(args) + [_MISSING] * (self._nin - len(args))
        for name, v in kwargs.items():
            i = self._in_index.get(name)
            if i is None:
                raise TypeError(f"unexpected input {name!r}: the program's inputs are {', '.join(names) or 'none'}")
            if bound[i] is not _MISSING:
                raise TypeError(f"input {name!r} given twice (by position and by name)")
            bound[i] = v
        missing = [names[i] for i, v in enumerate(bound) if v is _MISSING]
        if missing:
            raise TypeError(f"missing input{'s' if len(missing) > 1 else ''} {', '.join(repr(m) for m in missing)}")
        return bound

    # ------------------------------------------------------------ the general path

    def _describe(self, i: int, a: Any, kind: int, stream: Optional[int], writable: bool, what: str) -> _In:
        """ptr, dtype, shape and strides of one tensor, checked against the backend."""
        if kind == K_TORCH:
            dt = _torch_dtypes.get(a.dtype)
            if dt is None:
                raise TypeError(f"{what}: torch dtype {a.dtype} has no ic equivalent")
            dev = a.device
            where = ("cpu", 0) if dev.type == "cpu" else ("cuda", dev.index or 0) if dev.type == "cuda" else (dev.type, 0)
            # Other devices (meta: no memory) are refused below; their data_ptr() may raise.
            ptr = a.data_ptr() if where[0] in ("cpu", "cuda") else 0
            d = _In(kind, ptr, dt, tuple(a.shape), tuple(a.stride()), (where, dev), (a.dtype, a.shape, a.stride(), dev))
        elif kind in (K_CUPY, K_CAI):
            cai = a.__cuda_array_interface__
            dt = dtype_from_typestr(cai["typestr"])
            if dt is None:
                raise TypeError(f"{what}: typestr {cai['typestr']!r} has no ic dtype")
            shape = tuple(int(s) for s in cai["shape"])
            strides = _elements(cai.get("strides"), dt.itemsize, what)
            dev_id = int(getattr(getattr(a, "device", None), "id", self.context.device))
            d = _In(kind, int(cai["data"][0] or 0), dt, shape, strides, (("cuda", dev_id), dev_id), None)
            # CAI v3: the producer's work on its stream must finish before ours reads (1 is
            # the legacy default stream, which our run on it, stream None, follows anyway).
            src = cai.get("stream")
            if isinstance(src, int) and src not in (0, stream) and not (src == 1 and stream is None) \
                    and not self._host:
                check(api.ic_stream_synchronize(self.context.handle, None if src == 1 else src),
                      "ic_stream_synchronize")
        elif kind == K_NUMPY:
            ai = a.__array_interface__
            dt = dtype_from_typestr(ai["typestr"])
            if dt is None:
                raise TypeError(f"{what}: numpy dtype {a.dtype} has no ic equivalent")
            if writable and ai["data"][1]:
                raise ValueError(f"{what}: the numpy array is read-only")
            d = _In(kind, int(ai["data"][0] or 0), dt, tuple(ai["shape"]), _elements(ai["strides"], dt.itemsize, what),
                    (("cpu", 0), None), None)
        elif kind == K_IC:
            t: Tensor = a
            if writable and t.readonly:
                raise ValueError(f"{what}: the ic.Tensor is read-only (over a read-only buffer)")
            d = _In(kind, t.data_ptr(), t.dtype, t.shape, t.strides, ((t.device, t.device_id), None), None, keep=t)
        elif kind == K_DLPACK:
            dev_type, dev_id = a.__dlpack_device__()
            if dev_type == KDL_CPU:
                cap = a.__dlpack__()
            else:
                cap = a.__dlpack__(stream=stream if stream else 1)
            p = capsule_pointer(cap, b"dltensor")
            m = ctypes.cast(p, POINTER(DLManagedTensor))
            t2 = ICTensor()
            check(api.ic_tensor_from_dlpack_managed(m, byref(t2)), f"{what}")
            capsule_consume(cap)  # ours now: the deleter runs after the call

            def done(_m: Any = m) -> None:
                deleter = _m.contents.deleter
                if deleter:
                    deleter(_m)

            n = int(t2.ndim)
            shape = tuple(t2.shape[k] for k in range(n))
            strides = tuple(t2.strides[k] for k in range(n)) if t2.strides else None
            where = ("cpu", 0) if dev_type == KDL_CPU else ("cuda", int(dev_id)) if dev_type in (
                KDL_CUDA, KDL_CUDA_HOST, KDL_CUDA_MANAGED) else (f"DLPack device {dev_type}", 0)
            d = _In(kind, int(t2.data or 0), DType(t2.dtype), shape, strides, (where, None), None, keep=cap,
                    release=done)
        else:  # K_BUFFER
            try:
                view = BufferView(a, writable)
            except BufferError as e:
                raise ValueError(f"{what}: {e}") from None
            if view.suboffsets:
                view.release()
                raise ValueError(f"{what}: buffers with suboffsets (PIL-style) are not supported")
            dt = dtype_from_format(view.format, view.itemsize)
            if dt is None:
                view.release()
                raise TypeError(f"{what}: buffer format {view.format!r} has no ic dtype; "
                                f"ic.Tensor.from_buffer(obj, dtype) reinterprets its bytes (bf16, fp8, ...)")
            strides = _elements(view.byte_strides, view.itemsize, what)
            d = _In(kind, view.ptr, dt, view.shape, strides, (("cpu", 0), None), None, keep=view, release=view.release)
        want = "cpu" if self._host else "cuda"
        if d.device[0][0] != want:
            if d.release is not None:
                d.release()
            here = "host memory" if d.device[0][0] == "cpu" else f"{d.device[0][0]} memory"
            raise ValueError(f"{what} is {here} ({_KIND_NAMES[kind]}), but the program runs on {self.backend} "
                             f"({'host' if self._host else 'device'} pointers): "
                             f"{'compile with backend=cuda' if self._host else 'compile with backend=ref'} or move it")
        if not self._host and d.device[0][1] != self.context.device:
            if d.release is not None:
                d.release()
            raise ValueError(f"{what} is on cuda:{d.device[0][1]}, the program's context on cuda:{self.context.device}")
        return d

    def _call(self, args: Sequence[Any], out: Any, stream: Any) -> Any:
        self._h()
        kinds = [_classify(a) for a in args]
        for i, k in enumerate(kinds):
            if k < 0:
                raise TypeError(f"input {self._inputs[i][0]!r}: expected a tensor (torch, CuPy, numpy, DLPack, "
                                f"__cuda_array_interface__, a buffer such as array.array, or ic.Tensor), "
                                f"got {type(args[i]).__name__}")
        kind = min(kinds) if kinds else K_IC
        st = self._stream_for(kind, args, kinds, stream)
        descs: List[_In] = []
        releases: List[Callable[[], None]] = []
        try:
            for i, a in enumerate(args):
                d = self._describe(i, a, kinds[i], st, False, self._in_what[i])
                descs.append(d)
                if d.release is not None:
                    releases.append(d.release)
            key: Any = tuple([d.key if d.key is not None else (d.kind, d.dtype, d.shape, d.strides, d.device[0])
                              for d in descs])
            e = self._sigs.get(key)
            if e is not None and e.lock.acquire(False):
                for s, d in zip(e.in_structs, descs):
                    s.data = d.ptr or None
            else:
                # A new signature (or its entry is busy on another thread: a private copy).
                cache = e is None
                e = self._entry(descs, kind)
                e.lock.acquire()
                if cache:
                    if len(self._sigs) >= _MAX_SIGNATURES:
                        self._sigs.clear()
                    self._sigs[key] = e
            try:
                results = self._outputs_for(e, kind, out, releases)
                if out is not None and kind == K_TORCH:
                    self._note_out_signature(e, out)
                rc = self._run(self._hv, e.in_arr, self._nin, e.out_arr, self._nout, e.stream(st))
                if rc:
                    raise last_error(rc, "ic_program_run")
                allocated = [e.out_structs[o].data or 0 if r is None else 0 for o, r in enumerate(results)]
            finally:
                for s in e.out_structs:
                    s.data = None
                e.lock.release()
        finally:
            for release in releases:
                release()
        return self._finish(results, allocated, e.out_shapes, st)

    def _note_out_signature(self, e: _Entry, out: Any) -> None:
        """Remembers out= torch tensors that _outputs_for accepted, in the forms the fast
        path reads (one tensor, or a list or tuple of all outputs): a later call with
        tensors of the same signatures (dtype, shape, strides, device) takes the fast
        path, whose outcome of every check here would be the same."""
        T = _torch_tensor
        if type(out) is T and self._nout == 1:
            outs: Any = (out,)
        elif (type(out) is tuple or type(out) is list) and len(out) == self._nout and \
                all(type(o) is T for o in out):
            outs = out
        else:
            return
        if len(e.out_sigs) >= _MAX_SIGNATURES:
            e.out_sigs.clear()
        e.out_sigs[tuple([(o.dtype, o.shape, o.stride(), o.device) for o in outs])] = None

    def _finish(self, results: List[Any], allocated: List[int], shapes: List[Tuple[int, ...]],
                st: Optional[int]) -> Any:
        """Wraps the outputs ic allocated as Buffers; one output alone, several as a tuple."""
        device = "cpu" if self._host else "cuda"
        for o, r in enumerate(results):
            if r is not None:
                continue
            try:
                results[o] = Buffer._adopt(self.context, allocated[o], self._outputs[o][1], shapes[o], device, st)
            except BaseException:
                for p in allocated[o + 1:]:  # the later ones have no owner yet
                    if p and self._host:
                        libc_free()(p)
                    elif p:
                        api.ic_free(self.context.handle, p)
                raise
        return results[0] if len(results) == 1 else tuple(results)

    def _stream_for(self, kind: int, args: Sequence[Any], kinds: List[int], stream: Any) -> Optional[int]:
        if stream is not None:
            h = stream_handle(stream)  # checked on ref too, which runs on the host, streamless
            return None if self._host else h
        if self._host:
            return None
        if kind == K_TORCH:
            a = args[kinds.index(K_TORCH)]
            if a.device.type == "cuda" and _torch_raw_stream is not None:
                return int(_torch_raw_stream(a.device.index or 0)) or None
        if kind == K_CUPY:
            cupy = sys.modules.get("cupy")
            if cupy is not None:
                return int(cupy.cuda.get_current_stream().ptr) or None
        return None

    def _entry(self, descs: List[_In], kind: int) -> _Entry:
        """Builds the cache entry of a new signature (output shapes computed by ic: a
        shape, dtype or layout mismatch raises here, before anything runs)."""
        e = _Entry()
        n = self._nin
        e.in_arr = (ICTensor * max(n, 1))()
        e.in_structs = [e.in_arr[i] for i in range(n)]
        for s, d in zip(e.in_structs, descs):
            if len(d.shape) > MAX_DIMS:
                raise ValueError(f"input with {len(d.shape)} dims: ic takes at most {MAX_DIMS}")
            shp = (c_int64 * max(len(d.shape), 1))(*d.shape)
            e.keep.append(shp)
            s.data = d.ptr or None
            s.dtype = int(d.dtype)
            s.ndim = len(d.shape)
            s.shape = ctypes.cast(shp, POINTER(c_int64))
            if d.strides is not None:
                strd = (c_int64 * max(len(d.strides), 1))(*d.strides)
                e.keep.append(strd)
                s.strides = ctypes.cast(strd, POINTER(c_int64))
        m = self._nout
        e.out_arr = (ICTensor * max(m, 1))()
        e.out_structs = [e.out_arr[i] for i in range(m)]
        e.out_shapes = []
        ndim = c_int32()
        for o in range(m):
            shape = (c_int64 * MAX_DIMS)()
            st = api.ic_program_output_shape(self._hv, o, e.in_arr, byref(ndim), shape)
            if st:
                raise last_error(st)
            dims = tuple(int(x) for x in shape[:ndim.value])
            e.out_shapes.append(dims)
            shp = (c_int64 * max(len(dims), 1))(*dims)
            e.keep.append(shp)
            s = e.out_structs[o]
            s.dtype = int(self._outputs[o][1])
            s.ndim = len(dims)
            s.shape = ctypes.cast(shp, POINTER(c_int64))
        # How each output is allocated when out= does not give it.
        e.device = -1
        e.torch_outs = []
        e.fast = False
        e.out_make = []
        first = descs[[d.kind for d in descs].index(kind)] if descs else None
        for o in range(m):
            dt = self._outputs[o][1]
            e.out_make.append(self._maker(kind, first, dt, e.out_shapes[o]))
        if kind == K_TORCH and first is not None:
            dev = first.device[1]
            e.device = dev.index if dev.type == "cuda" else -1
            if dev.type == "cuda" and dev.index is None:
                e.device = 0
            e.torch_outs = [(e.out_shapes[o], _torch_of.get(self._outputs[o][1]), dev) for o in range(m)]
            # An output dtype this torch lacks (fp8 in an old torch) becomes an ic.Buffer:
            # the general path's business.
            e.fast = all(tdt is not None for _, tdt, _ in e.torch_outs)
        return e

    def _maker(self, kind: int, first: Optional[_In], dt: DType, shape: Tuple[int, ...]) -> Optional[Callable[[], Any]]:
        """A function allocating one output of the inputs' kind, or None (ic allocates)."""
        if kind == K_TORCH and first is not None:
            tdt = _torch_of.get(dt)
            if tdt is not None:
                dev = first.device[1]
                return lambda: _torch.empty(shape, dtype=tdt, device=dev)
        if kind == K_CUPY and first is not None and dt in NUMPY_DTYPES:
            cupy = sys.modules["cupy"]
            dev_id = first.device[1]
            name = NUMPY_DTYPES[dt]

            def cupy_empty() -> Any:
                with cupy.cuda.Device(dev_id):
                    return cupy.empty(shape, dtype=name)

            return cupy_empty
        if kind in (K_NUMPY, K_BUFFER) and self._host and dt in NUMPY_DTYPES:
            np = _numpy_module()
            if np is not None:
                name = NUMPY_DTYPES[dt]
                return lambda: np.empty(shape, dtype=name)
        return None

    def _outputs_for(self, e: _Entry, kind: int, out: Any, releases: List[Callable[[], None]]) -> List[Any]:
        """The output objects: out= ones (checked), allocated ones, None where ic allocates.
        Sets the data pointers of e.out_structs; what must be released after the run goes
        to releases."""
        given: List[Any] = [None] * self._nout
        if out is not None:
            if isinstance(out, abc.Mapping):  # (typing.Mapping's isinstance costs 3x)
                for name, t in out.items():
                    o = self._out_index.get(name)
                    if o is None:
                        raise TypeError(f"out: unknown output {name!r}; the program's outputs are "
                                        f"{', '.join(self.outputs)}")
                    given[o] = t
            elif self._nout == 1 and not isinstance(out, (list, tuple)):
                given[0] = out
            else:
                seq = list(out)
                if len(seq) != self._nout:
                    raise TypeError(f"out: {len(seq)} tensors for {self._nout} outputs ({', '.join(self.outputs)})")
                given = seq
        results: List[Any] = []
        for o in range(self._nout):
            s = e.out_structs[o]
            t = given[o]
            if t is None:
                make = e.out_make[o]
                if make is None:
                    s.data = None
                    results.append(None)
                    continue
                t = make()
                p = t.data_ptr() if kind == K_TORCH else _data_pointer(t)
                s.data = p or None
                results.append(t)
                continue
            name, dt, _ = self._outputs[o]
            k = _classify(t)
            if k < 0:
                raise TypeError(f"out {name!r}: expected a tensor, got {type(t).__name__}")
            d = self._describe(o, t, k, None, True, self._out_what[o])
            if d.release is not None:
                releases.append(d.release)  # held until the run returned
            want = e.out_shapes[o]
            if d.dtype != dt or d.shape != want:
                # A dtype mismatch leads with the dtypes as ic.h's do (DTypeMismatchError).
                lead = f"dtype mismatch: {d.dtype} vs {dt}: " if d.dtype != dt else ""
                raise make_error(int(Status.SHAPE_MISMATCH),
                                 f"{lead}out {name!r}: got {d.dtype}{list(d.shape)}, the program makes {dt}{list(want)}")
            if not is_contiguous(d.shape, d.strides):
                raise make_error(int(Status.SHAPE_MISMATCH), f"out {name!r}: outputs must be contiguous "
                                 f"(strides {list(d.strides or ())}, contiguous {list(contiguous_strides(want))})")
            s.data = d.ptr or None
            results.append(t)
        return results


def _data_pointer(t: Any) -> int:
    """The data pointer of an array this module allocated (numpy, CuPy)."""
    iface = getattr(t, "__cuda_array_interface__", None) or getattr(t, "__array_interface__", None)
    if iface is None:
        raise TypeError(f"cannot find the data pointer of {type(t).__name__}")
    return int(iface["data"][0] or 0)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()
