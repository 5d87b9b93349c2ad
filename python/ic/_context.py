"""Contexts: the target, the caches, logging; :func:`default_context`."""

from __future__ import annotations

import dataclasses
import enum
import logging
import os
import threading
import weakref
from ctypes import byref, c_void_p, sizeof
from typing import TYPE_CHECKING, Any, Callable, Optional, Union

from ._errors import Status, check, raise_status
from ._lib import (
    CONTEXT_COMPILE_ONLY,
    CONTEXT_NO_DISK_CACHE,
    LOG_FN,
    ICCacheStats,
    ICContextOptions,
    api,
    text,
)

if TYPE_CHECKING:
    from ._runtime import Program


class LogLevel(enum.IntEnum):
    """``ic_log_level``."""

    OFF = 0
    ERROR = 1
    WARN = 2
    INFO = 3
    DEBUG = 4


LogLevelLike = Union[LogLevel, int, str]
#: A log callback: called with the level and the message, on the thread that logs.
LogCallback = Callable[[LogLevel, str], None]

_PY_LEVELS = {LogLevel.ERROR: logging.ERROR, LogLevel.WARN: logging.WARNING, LogLevel.INFO: logging.INFO,
              LogLevel.DEBUG: logging.DEBUG}


def _to_log_level(level: LogLevelLike) -> LogLevel:
    if isinstance(level, str):
        names = {"off": 0, "error": 1, "warn": 2, "warning": 2, "info": 3, "debug": 4}
        if level.lower() not in names:
            raise ValueError(f"unknown log level {level!r}: off, error, warn, info or debug")
        return LogLevel(names[level.lower()])
    return LogLevel(int(level))


@dataclasses.dataclass(frozen=True)
class CacheStats:
    """``ic_cache_stats``: kernel and program cache counters of a context."""

    memory_hits: int
    memory_misses: int
    disk_hits: int
    disk_misses: int
    compiles: int
    compile_ms: float
    program_hits: int
    program_misses: int
    program_evictions: int


class Context:
    """An ic context (``ic_context``): a GPU or a compile-only target, the kernel and
    program caches, logging.

    arch: the CUDA target ("sm_90a"; None: IC_ARCH, else the GPU's own). device: the
    CUDA device ordinal. compile_only: never touch the driver (compile for arch; the ref
    backend runs). log_level: "error", "warn", "info", "debug" (None: IC_LOG). log: where
    messages go: None (stderr, as the C library), "logging" (the ``logging`` logger "ic")
    or a callable(level, message). cache_dir: the disk kernel cache (None: IC_CACHE_DIR
    or ~/.cache/ic); disk_cache=False keeps kernels in memory only; cache_max_bytes caps
    the disk cache (0: IC_CACHE_MAX_BYTES or 1 GiB).

    A context serves any number of threads. ``close()`` (or a ``with`` block) releases
    the programs compiled on it (they cannot run afterwards) and the C context, once the
    ic-owned device buffers that still need it are gone. Programs keep their context
    alive, so dropping every reference is enough too.
    """

    def __init__(self, arch: Optional[str] = None, *, device: int = 0, compile_only: bool = False,
                 log_level: Optional[LogLevelLike] = None, log: Union[None, str, LogCallback] = None,
                 cache_dir: Union[None, str, "os.PathLike[str]"] = None, disk_cache: bool = True,
                 cache_max_bytes: int = 0) -> None:
        self._handle: Optional[int] = None
        self._closing = False
        self._programs: "weakref.WeakSet[Program]" = weakref.WeakSet()
        self._buffers = 0  # live ic-owned device buffers (their deleters call ic_free)
        self._pinned = False  # a device buffer went to a DLPack consumer: never destroy
        self._lock = threading.Lock()
        self._destroy = api.ic_context_destroy  # bound now: __del__ may run at exit
        self._log_cb: Any = None
        opts = ICContextOptions()
        opts.struct_size = sizeof(ICContextOptions)
        opts.device = int(device)
        self._arch = arch.encode() if arch is not None else None
        opts.arch = self._arch
        if log is not None:
            self._log_cb = _log_function(log)
            opts.log_fn = self._log_cb
        opts.log_level = int(_to_log_level(log_level)) if log_level is not None else 0
        opts.flags = (CONTEXT_COMPILE_ONLY if compile_only else 0) | (0 if disk_cache else CONTEXT_NO_DISK_CACHE)
        self._cache_dir = os.fsencode(cache_dir) if cache_dir is not None else None
        opts.cache_dir = self._cache_dir
        opts.cache_max_bytes = int(cache_max_bytes)
        h = c_void_p()
        check(api.ic_context_create(byref(opts), byref(h)), "ic_context_create")
        self._handle = h.value
        self.device = int(device)

    @property
    def handle(self) -> int:
        """The ic_context* (raises when the context is closed)."""
        h = self._handle
        if h is None or self._closing:
            raise_status(Status.INVALID_ARGUMENT, "the ic context is closed")
        return h

    @property
    def closed(self) -> bool:
        return self._closing or self._handle is None

    @property
    def arch(self) -> str:
        """The CUDA target ("sm_90a"); "" for a context without GPU and arch (ref only)."""
        return text(api.ic_context_arch(self.handle))

    @property
    def has_device(self) -> bool:
        """True when programs can run on cuda (False in compile-only mode)."""
        return bool(api.ic_context_has_device(self.handle))

    def cache_stats(self) -> CacheStats:
        """The kernel and program cache counters."""
        s = ICCacheStats()
        s.struct_size = sizeof(ICCacheStats)
        check(api.ic_cache_stats_get(self.handle, byref(s)), "ic_cache_stats_get")
        return CacheStats(int(s.memory_hits), int(s.memory_misses), int(s.disk_hits), int(s.disk_misses),
                          int(s.compiles), float(s.compile_ms), int(s.program_hits), int(s.program_misses),
                          int(s.program_evictions))

    def synchronize(self, stream: Any = None) -> None:
        """Waits for the work on a CUDA stream (None: the legacy default stream)."""
        from ._runtime import stream_handle

        check(api.ic_stream_synchronize(self.handle, stream_handle(stream)), "ic_stream_synchronize")

    # ------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Releases the programs compiled on this context and the C context (idempotent).
        ic-owned device buffers stay valid: the C context goes with the last of them (and
        stays for good once one went to a DLPack consumer, which frees it with ic_free
        whenever it likes)."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            programs = list(self._programs)
        for p in programs:
            p._release()
        self._maybe_destroy()

    def _maybe_destroy(self) -> None:
        with self._lock:
            h = self._handle
            if h is None or not self._closing or self._buffers or self._pinned:
                return
            self._handle = None
        self._destroy(h)

    def _buffer_added(self) -> None:
        with self._lock:
            self._buffers += 1

    def _pin(self) -> None:
        self._pinned = True

    def _buffer_freed(self) -> None:
        with self._lock:
            self._buffers -= 1
        self._maybe_destroy()

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._closing = True
            if self._handle is not None and not self._buffers and not self._pinned:
                h, self._handle = self._handle, None
                self._destroy(h)
        except Exception:
            pass

    def __repr__(self) -> str:
        if self.closed:
            return "<ic.Context (closed)>"
        return f"<ic.Context arch={self.arch!r} has_device={self.has_device}>"


def _log_function(log: Union[str, LogCallback]) -> Any:
    """The ic_log_fn for log="logging" or a callable; the caller keeps it alive."""
    if log == "logging":
        logger = logging.getLogger("ic")

        def to_logging(level: LogLevel, message: str) -> None:
            logger.log(_PY_LEVELS.get(level, logging.INFO), "%s", message)

        target: LogCallback = to_logging
    elif callable(log):
        target = log
    else:
        raise ValueError(f"log must be None, 'logging' or a callable(level, message), not {log!r}")

    def callback(user: Optional[int], level: int, message: Optional[bytes]) -> None:
        try:
            lv = LogLevel(level)
        except ValueError:
            lv = LogLevel.INFO
        target(lv, message.decode("utf-8", "replace") if message else "")

    return LOG_FN(callback)


_default: Optional[Context] = None
_default_lock = threading.Lock()


def default_context() -> Context:
    """The context ``Graph.compile`` uses when given none: created on first use with
    the defaults (the environment's IC_ARCH, IC_LOG, IC_CACHE_DIR apply)."""
    global _default
    ctx = _default
    if ctx is not None and not ctx.closed:
        return ctx
    with _default_lock:
        if _default is None or _default.closed:
            _default = Context()
        return _default
