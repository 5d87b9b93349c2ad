"""ic statuses as Python exceptions.

Every failing C call becomes an :class:`Error` (or the subclass of its status) whose
``status`` is the :class:`Status` and whose message is ic's detailed message
(``ic_last_error()``, or ``ic_graph_error()`` for a builder call).
"""

from __future__ import annotations

import enum
from typing import Dict, NoReturn, Optional, Type

from ._lib import api, text


class Status(enum.IntEnum):
    """``ic_status`` (the values are the C enum's, part of the ABI)."""

    OK = 0
    INVALID_ARGUMENT = 1
    INVALID_GRAPH = 2
    OUT_OF_MEMORY = 3
    NO_DEVICE = 4
    NO_NVRTC = 5
    COMPILE = 6
    CUDA = 7
    UNSUPPORTED = 8
    SHAPE_MISMATCH = 9
    INTERNAL = 10

    @property
    def description(self) -> str:
        """ic_status_string(): "invalid argument", ..."""
        return text(api.ic_status_string(int(self)))


class Error(Exception):
    """An ic call failed. ``status`` says how; ``str(error)`` is ic's message."""

    status: Status = Status.INTERNAL

    def __init__(self, message: str, status: Optional[Status] = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidArgumentError(Error, ValueError):
    status = Status.INVALID_ARGUMENT


class InvalidGraphError(Error, ValueError):
    status = Status.INVALID_GRAPH


class OutOfMemoryError(Error, MemoryError):
    status = Status.OUT_OF_MEMORY


class NoDeviceError(Error):
    status = Status.NO_DEVICE


class NoNvrtcError(Error):
    status = Status.NO_NVRTC


class CompileError(Error):
    status = Status.COMPILE


class CudaError(Error):
    status = Status.CUDA


class UnsupportedError(Error):
    status = Status.UNSUPPORTED


class ShapeMismatchError(Error, ValueError):
    status = Status.SHAPE_MISMATCH


class InternalError(Error):
    status = Status.INTERNAL


_BY_STATUS: Dict[int, Type[Error]] = {
    cls.status: cls
    for cls in (InvalidArgumentError, InvalidGraphError, OutOfMemoryError, NoDeviceError, NoNvrtcError,
                CompileError, CudaError, UnsupportedError, ShapeMismatchError, InternalError)
}


def make_error(status: int, message: str) -> Error:
    """The exception for a status (an unknown status gives a plain Error)."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        return Error(f"{message} (status {status})", Status.INTERNAL)
    return cls(message)


def last_error(status: int, context: str = "") -> Error:
    """The exception for a failed call, with ic_last_error()'s message."""
    message = text(api.ic_last_error())
    if not message:
        try:
            message = Status(status).description
        except ValueError:
            message = f"status {status}"
    return make_error(status, f"{context}: {message}" if context else message)


def check(status: int, context: str = "") -> None:
    """Raises last_error(status) unless status is IC_OK."""
    if status:
        raise last_error(status, context)


def raise_status(status: Status, message: str) -> NoReturn:
    """Raises the exception of a status with a message of the binding's own."""
    raise make_error(int(status), message)
