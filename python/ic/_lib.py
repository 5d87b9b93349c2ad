"""Loading libic and declaring its C API for ctypes.

Everything that touches ctypes prototypes lives here: the structs of ``ic.h`` and
``ic_dlpack.h``, the library search, the version check and the ``argtypes``/``restype``
of every function the binding calls. The rest of the package calls ``api.<function>``.

Library search order (the first library that loads and has the right major.minor wins;
the error lists every place tried and why it was refused):

1. ``IC_LIBRARY``: a path to libic (nothing else is tried when it is set).
2. Next to the package: the path ``cmake --install`` wrote into ``_install_paths.py``.
3. The build trees of the source tree, when the package is imported from
   ``<source>/python/ic``: ``build/``, then ``build-*/`` newest first (sanitizer builds
   are skipped: an ASan library cannot be loaded into an uninstrumented python).
4. The system loader: ``ctypes.util.find_library("ic")``, then ``libic.so.0``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, cast

#: The ic API version (major, minor) this binding is written for. The loaded library's
#: major.minor must match: minor versions may add API that the binding declares.
WRITTEN_FOR: Tuple[int, int] = (0, 1)

MAX_DIMS = 8  # IC_MAX_DIMS
DIM_INFER = -(2**63)  # IC_DIM_INFER (INT64_MIN)
INVALID_VALUE = -1  # IC_INVALID_VALUE
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

# DLPack device types (dlpack.h).
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13

Int64Array = Any  # a ctypes array of c_int64 (ctypes array types are built at run time)


# ---------------------------------------------------------------- structs of ic.h


class ICTensor(Structure):
    """``ic_tensor``: a tensor at the run boundary."""

    _fields_ = [
        ("data", c_void_p),
        ("dtype", c_int),
        ("ndim", c_int32),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
    ]


LOG_FN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)


class ICContextOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("device", c_int32),
        ("arch", c_char_p),
        ("log_fn", LOG_FN),
        ("log_user", c_void_p),
        ("log_level", c_int),
        ("flags", c_uint32),
        ("cache_dir", c_char_p),
        ("cache_max_bytes", c_uint64),
    ]


class ICCompileOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("mode", c_int),
        ("flags", c_uint32),
        ("backend", c_char_p),
        ("fusion_budget", c_int32),
    ]


class ICCacheStats(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("memory_hits", c_uint64),
        ("memory_misses", c_uint64),
        ("disk_hits", c_uint64),
        ("disk_misses", c_uint64),
        ("compiles", c_uint64),
        ("compile_ms", c_double),
        ("program_hits", c_uint64),
        ("program_misses", c_uint64),
        ("program_evictions", c_uint64),
    ]


class ICBufferInfo(Structure):
    _fields_ = [
        ("kind", c_int),
        ("index", c_int32),
        ("dtype", c_int),
        ("ndim", c_int32),
        ("dims_expr", c_int32 * MAX_DIMS),
        ("bytes_expr", c_int32),
        ("slot", c_int32),
        ("name", c_char_p),
    ]


BUFFER_INPUT, BUFFER_OUTPUT, BUFFER_TEMP = 0, 1, 2
COMPILE_STRICT, COMPILE_NO_CACHE, COMPILE_ALLOW_TF32 = 1, 2, 4
CONTEXT_COMPILE_ONLY, CONTEXT_NO_DISK_CACHE = 1, 2


# ---------------------------------------------------------------- structs of dlpack.h


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    pass


DL_DELETER = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", c_void_p),
    ("deleter", DL_DELETER),
]


# ---------------------------------------------------------------- prototypes

_P = POINTER
_VP = c_void_p
# name: (restype, argtypes). Handles (ic_context*, ic_graph*, ic_program*) are c_void_p.
# Strings ic returns for the caller to free (ic_graph_print, ic_program_dump) come back
# as c_void_p so that the pointer survives for ic_string_free.
_PROTOTYPES: dict[str, Tuple[Any, List[Any]]] = {
    "ic_version": (c_int, []),
    "ic_status_string": (c_char_p, [c_int]),
    "ic_last_error": (c_char_p, []),
    "ic_dtype_name": (c_char_p, [c_int]),
    "ic_dtype_size": (c_size_t, [c_int]),
    "ic_element_store": (c_int, [c_int, c_double, _VP]),
    "ic_element_load": (c_double, [c_int, _VP]),
    "ic_op_name": (c_char_p, [c_int]),
    "ic_op_arity": (c_int32, [c_int]),
    "ic_context_create": (c_int, [_P(ICContextOptions), _P(_VP)]),
    "ic_context_destroy": (None, [_VP]),
    "ic_context_arch": (c_char_p, [_VP]),
    "ic_context_has_device": (c_int, [_VP]),
    "ic_malloc": (c_int, [_VP, c_size_t, _P(_VP)]),
    "ic_free": (c_int, [_VP, _VP]),
    "ic_memcpy_htod": (c_int, [_VP, _VP, _VP, c_size_t]),
    "ic_memcpy_dtoh": (c_int, [_VP, _VP, _VP, c_size_t]),
    "ic_stream_synchronize": (c_int, [_VP, _VP]),
    "ic_graph_create": (c_int, [_P(_VP)]),
    "ic_graph_destroy": (None, [_VP]),
    "ic_graph_error": (c_int, [_VP, _P(c_char_p)]),
    "ic_graph_symbol": (c_int64, [_VP, c_char_p]),
    "ic_graph_input": (c_int32, [_VP, c_char_p, c_int, c_int32, _P(c_int64), c_int]),
    "ic_graph_constant": (c_int32, [_VP, c_double, c_int]),
    "ic_graph_op": (c_int32, [_VP, c_int, c_int32, _P(c_int32)]),
    "ic_graph_unary": (c_int32, [_VP, c_int, c_int32]),
    "ic_graph_binary": (c_int32, [_VP, c_int, c_int32, c_int32]),
    "ic_graph_where": (c_int32, [_VP, c_int32, c_int32, c_int32]),
    "ic_graph_cast": (c_int32, [_VP, c_int32, c_int]),
    "ic_graph_cast_saturate": (c_int32, [_VP, c_int32, c_int]),
    "ic_graph_bitcast": (c_int32, [_VP, c_int32, c_int]),
    "ic_graph_reshape": (c_int32, [_VP, c_int32, c_int32, _P(c_int64)]),
    "ic_graph_permute": (c_int32, [_VP, c_int32, c_int32, _P(c_int32)]),
    "ic_graph_expand": (c_int32, [_VP, c_int32, c_int32, _P(c_int64)]),
    "ic_graph_squeeze": (c_int32, [_VP, c_int32, c_int32]),
    "ic_graph_unsqueeze": (c_int32, [_VP, c_int32, c_int32]),
    "ic_graph_flatten": (c_int32, [_VP, c_int32, c_int32, c_int32]),
    "ic_graph_slice": (c_int32, [_VP, c_int32, c_int32, c_int64, c_int64, c_int64]),
    "ic_graph_concat": (c_int32, [_VP, c_int32, _P(c_int32), c_int32]),
    "ic_graph_pad": (c_int32, [_VP, c_int32, c_int32, _P(c_int64), c_double]),
    "ic_graph_output": (c_int, [_VP, c_char_p, c_int32]),
    "ic_graph_value_dtype": (c_int, [_VP, c_int32]),
    "ic_graph_value_ndim": (c_int32, [_VP, c_int32]),
    "ic_graph_value_dims": (c_int, [_VP, c_int32, _P(c_int64)]),
    "ic_graph_name_value": (c_int, [_VP, c_int32, c_char_p]),
    "ic_graph_parse": (c_int, [c_char_p, _P(_VP)]),
    "ic_graph_print": (c_int, [_VP, _P(_VP)]),
    "ic_string_free": (None, [_VP]),
    "ic_compile": (c_int, [_VP, _VP, _P(ICCompileOptions), _P(_VP)]),
    "ic_program_retain": (None, [_VP]),
    "ic_program_release": (None, [_VP]),
    "ic_program_input_count": (c_int32, [_VP]),
    "ic_program_output_count": (c_int32, [_VP]),
    "ic_program_input_index": (c_int32, [_VP, c_char_p]),
    "ic_program_output_index": (c_int32, [_VP, c_char_p]),
    "ic_program_kernel_count": (c_int32, [_VP]),
    "ic_program_kernel_source": (c_char_p, [_VP, c_int32]),
    "ic_program_kernel_ir": (c_char_p, [_VP, c_int32]),
    "ic_program_dump": (c_int, [_VP, _P(_VP)]),
    "ic_program_buffer_count": (c_int32, [_VP]),
    "ic_program_buffer": (c_int, [_VP, c_int32, _P(ICBufferInfo)]),
    "ic_cache_stats_get": (c_int, [_VP, _P(ICCacheStats)]),
    "ic_program_output_shape": (c_int, [_VP, c_int32, _P(ICTensor), _P(c_int32), _P(c_int64)]),
    "ic_program_run": (c_int, [_VP, _P(ICTensor), c_int32, _P(ICTensor), c_int32, _VP]),
    "ic_tensor_to_dlpack": (c_int, [_VP, _P(ICTensor), c_int, c_int, _P(_P(DLManagedTensor))]),
    "ic_tensor_from_dlpack_managed": (c_int, [_P(DLManagedTensor), _P(ICTensor)]),
}


# Functions that arrived within 0.1 (reductions): declared when the library has them, so
# that the binding still loads an earlier 0.1 library (calling one then raises
# UnsupportedError). New builder calls go here: a prototype and a function in _ops.py.
class InlineAsmDesc(Structure):
    """ic_inline_asm_desc (ic.h, "inline PTX")."""

    _fields_ = [
        ("struct_size", c_uint32),
        ("asm_text", c_char_p),
        ("constraints", c_char_p),
        ("output_dtypes", _P(c_int)),
        ("is_pure", c_int32),
        ("pack", c_int32),
    ]


_OPTIONAL: dict[str, Tuple[Any, List[Any]]] = {
    "ic_graph_inline_asm": (c_int, [_VP, _P(InlineAsmDesc), c_int32, _P(c_int32), c_int32, _P(c_int32)]),
    "ic_reduce_name": (c_char_p, [c_int]),
    "ic_graph_reduce": (c_int32, [_VP, c_int, c_int32, c_int32, _P(c_int32), c_int]),
    "ic_graph_mean_correction": (c_int32, [_VP, c_int32, c_int32, _P(c_int32), c_double, c_int]),
    "ic_graph_var": (c_int32, [_VP, c_int32, c_int32, _P(c_int32), c_double, c_int]),
    "ic_graph_std": (c_int32, [_VP, c_int32, c_int32, _P(c_int32), c_double, c_int]),
    "ic_graph_softmax": (c_int32, [_VP, c_int32, c_int32]),
    "ic_graph_log_softmax": (c_int32, [_VP, c_int32, c_int32]),
    "ic_graph_layer_norm": (c_int32, [_VP, c_int32, c_int32, c_int32, c_int32, c_double]),
    "ic_graph_rms_norm": (c_int32, [_VP, c_int32, c_int32, c_int32, c_double]),
    "ic_graph_matmul": (c_int32, [_VP, c_int32, c_int32]),
}


class LibraryNotFound(ImportError):
    """libic could not be loaded; the message lists every place tried."""


def _version_of(lib: ctypes.CDLL) -> Tuple[int, int, int]:
    fn = lib.ic_version
    fn.restype = c_int
    fn.argtypes = []
    v = int(fn())
    return v // 10000, v // 100 % 100, v % 100


def _sanitized_build(build_dir: Path) -> bool:
    """True when build_dir's CMakeCache.txt says IC_SANITIZE=ON (libic needs ASan first)."""
    try:
        text = (build_dir / "CMakeCache.txt").read_text(errors="replace")
    except OSError:
        return False
    return any(line.startswith("IC_SANITIZE:") and line.split("=", 1)[-1].strip().upper() in ("ON", "1", "TRUE", "YES")
               for line in text.splitlines())


def _candidates(package_dir: Path) -> List[Tuple[str, Optional[str]]]:
    """(where, path or None plus a reason) for each place to try, in order."""
    out: List[Tuple[str, Optional[str]]] = []
    try:
        # Written by cmake --install (python/CMakeLists.txt); absent in the source tree.
        paths = importlib.import_module(f"{__package__}._install_paths")
        out.append(("installed", str((package_dir / str(paths.LIBRARY)).resolve())))
    except ImportError:
        out.append(("installed", None))
    root = package_dir.parent.parent
    if (root / "CMakeLists.txt").is_file() and (root / "include" / "ic" / "ic.h").is_file():
        builds = [root / "build"]
        others = [p for p in root.glob("build-*") if p.is_dir()]
        others.sort(key=lambda p: (p / "libic.so.0").stat().st_mtime if (p / "libic.so.0").exists() else 0.0,
                    reverse=True)
        builds += others
        for b in builds:
            lib = b / "libic.so.0"
            if not lib.exists():
                continue
            if _sanitized_build(b):
                out.append((f"build tree {b}", f"!skipped {lib}: a sanitizer build (IC_SANITIZE=ON)"))
                continue
            out.append((f"build tree {b}", str(lib)))
    found = ctypes.util.find_library("ic")
    out.append(("system loader", found if found else "libic.so.0"))
    if found and found != "libic.so.0":
        out.append(("system loader", "libic.so.0"))
    return out


def load_library(package_dir: Path) -> Tuple[ctypes.CDLL, str]:
    """Finds and loads libic (see the module docstring); returns it and its path."""
    tried: List[str] = []

    def attempt(where: str, path: str) -> Optional[ctypes.CDLL]:
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"  {where}: {path}: {e}")
            return None
        try:
            major, minor, patch = _version_of(lib)
        except AttributeError:
            tried.append(f"  {where}: {path}: not libic (no ic_version)")
            return None
        if (major, minor) != WRITTEN_FOR:
            tried.append(f"  {where}: {path}: libic {major}.{minor}.{patch}, this binding is written for "
                         f"{WRITTEN_FOR[0]}.{WRITTEN_FOR[1]}")
            return None
        return lib

    env = os.environ.get("IC_LIBRARY")
    if env:
        lib = attempt("IC_LIBRARY", env)
        if lib is not None:
            return lib, env
        raise LibraryNotFound("ic: cannot load the library IC_LIBRARY names:\n" + "\n".join(tried))
    tried.append("  IC_LIBRARY: not set")
    for where, path in _candidates(package_dir):
        if path is None:
            tried.append(f"  {where}: no _install_paths.py (not an installed package)")
            continue
        if path.startswith("!"):
            tried.append(f"  {where}: {path[1:]}")
            continue
        lib = attempt(where, path)
        if lib is not None:
            return lib, path
    raise LibraryNotFound(
        "ic: cannot find libic. Tried, in order:\n" + "\n".join(tried) +
        "\nSet IC_LIBRARY to the path of libic.so, install ic (cmake --install), or build it (cmake --build).")


class Api:
    """The C functions with their prototypes set (attributes named as in ic.h)."""

    def __init__(self, lib: ctypes.CDLL, path: str) -> None:
        self.lib = lib
        self.path = path
        missing = []
        for name, (restype, argtypes) in _PROTOTYPES.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                missing.append(name)
                continue
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        if missing:
            raise LibraryNotFound(f"ic: {path} lacks {', '.join(missing)}: not a libic of version "
                                  f"{WRITTEN_FOR[0]}.{WRITTEN_FOR[1]}")
        for name, (restype, argtypes) in _OPTIONAL.items():
            self.declare(name, restype, argtypes)
        # ic_program_run once more without argtypes, for the run path: ctypes' conversion
        # of its six arguments through argtypes costs 0.7 to 1 us a call. Callers pass the
        # C types themselves: c_void_p handle and stream (or None), ICTensor arrays, int
        # counts (passed as C int).
        run_unchecked = lib["ic_program_run"]
        run_unchecked.restype = c_int
        self.program_run_unchecked: Callable[..., int] = run_unchecked
        major, minor, patch = _version_of(lib)
        self.version = (major, minor, patch)

    def has(self, name: str) -> bool:
        """True when the loaded library has the function (see _OPTIONAL)."""
        return name in self.__dict__

    def declare(self, name: str, restype: Any, argtypes: List[Any]) -> Optional[Callable[..., Any]]:
        """Declares a function that newer libraries have (None when this one lacks it):
        the hook for API that arrives later (ic_graph_reduce, ...)."""
        fn = getattr(self.lib, name, None)
        if fn is None:
            return None
        fn.restype = restype
        fn.argtypes = argtypes
        setattr(self, name, fn)
        return cast(Callable[..., Any], fn)

    # The functions are set in __init__; type checkers see them through this. A function
    # the library lacks (an _OPTIONAL one) is an UnsupportedError when called.
    def __getattr__(self, name: str) -> Any:
        if not name.startswith("ic_"):
            raise AttributeError(name)
        path = self.path

        def missing(*args: Any) -> Any:
            from ._errors import Status, raise_status

            raise_status(Status.UNSUPPORTED, f"{name}: the loaded libic ({path}) does not have it; "
                         f"it needs a newer ic {WRITTEN_FOR[0]}.{WRITTEN_FOR[1]}")

        return missing


api = Api(*load_library(Path(__file__).resolve().parent))


def text(p: Optional[bytes]) -> str:
    """A C string ic returned (NULL is '')."""
    return p.decode("utf-8", "replace") if p else ""


def take_string(p: Optional[int]) -> str:
    """A malloc'd string ic returned: decoded, then released with ic_string_free."""
    if not p:
        return ""
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        api.ic_string_free(p)


def int64_array(values: "List[int] | Tuple[int, ...]") -> Int64Array:
    """A ctypes int64 array holding values."""
    return (c_int64 * max(len(values), 1))(*values)


def libc_free() -> Callable[[int], None]:
    """libc's free(), for memory the ref backend malloc'd when nothing else owns it."""
    libc = ctypes.CDLL(None)
    fn = libc.free
    fn.restype = None
    fn.argtypes = [c_void_p]
    return fn
