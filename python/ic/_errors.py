"""ic statuses as Python exceptions.

Every failing C call becomes an :class:`Error` (or the subclass of its status) whose
``status`` is the :class:`Status` and whose message is ic's detailed message
(``ic_last_error()``, or ``ic_graph_error()`` for a builder call).

The classes are exported as ``ic.Error``, ``ic.ShapeMismatchError``, ...: their
``__module__`` is ``"ic"``, so tracebacks and reprs name them so, and they pickle by
that name (with their status).

Dtype mismatches: ic.h's messages for two dtypes that must agree and do not (the
operands of an op, where's condition and bool, the values of a concat, a tensor given to
``ic_program_run`` and the dtype the program was compiled for) begin with
``"dtype mismatch: A vs B: "`` (after the ``"line L, column C: "`` of a parse error),
whatever their status (the builder's ``IC_ERR_INVALID_GRAPH``, the run's
``IC_ERR_SHAPE_MISMATCH``). Those raise :class:`DTypeMismatchError`, as do the binding's
own checks of ``out=`` tensors.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Dict, NoReturn, Optional, Tuple, Type

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

    def __reduce__(self) -> Tuple[Any, ...]:
        # Pickles with the status (which a subclass's instance may hold apart from its class's).
        return (type(self), (self.message, self.status), self.__dict__ or None)


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
    """A tensor does not match what the program was compiled for (shape, dtype, layout)."""

    status = Status.SHAPE_MISMATCH


class DTypeMismatchError(ShapeMismatchError, InvalidGraphError):
    """Two dtypes that must agree do not. ``str(error)`` begins ``"dtype mismatch: A vs
    B: "`` (after any context the binding puts first, such as ``"ic_program_run: "``):
    an op's operands in their order, where's condition and bool, a concat's value and
    value 0, or a tensor given to a run and the dtype the program was compiled for.

    Raised by the graph builder (``status`` is ``Status.INVALID_GRAPH``) and by a run
    (an input or ``out=`` tensor of another dtype than compiled, whether numpy, torch,
    CuPy, DLPack, a buffer or an ic.Tensor; ``status`` is ``Status.SHAPE_MISMATCH``).
    It is a :class:`ShapeMismatchError` and an :class:`InvalidGraphError` (and a
    ValueError), so the handlers written for either catch it as before. A dtype an op
    does not take at all (``ic.exp`` of an i32) is an InvalidGraphError, not this.
    """

    status = Status.SHAPE_MISMATCH


class InternalError(Error):
    status = Status.INTERNAL


#: ic.h's documented form of a dtype mismatch: the message begins "dtype mismatch: A vs B: "
#: (a parse error's begins "line L, column C: dtype mismatch: A vs B: ").
_DTYPE_MISMATCH = re.compile(r"(?:line \d+, column \d+: )?dtype mismatch: \S+ vs \S+: ")

_BY_STATUS: Dict[int, Type[Error]] = {
    cls.status: cls
    for cls in (InvalidArgumentError, InvalidGraphError, OutOfMemoryError, NoDeviceError, NoNvrtcError,
                CompileError, CudaError, UnsupportedError, ShapeMismatchError, InternalError)
}

#: The exception classes ic exports (ic.Error, ...).
EXPORTED: Tuple[Type[Error], ...] = (Error, InvalidArgumentError, InvalidGraphError, OutOfMemoryError, NoDeviceError,
                                     NoNvrtcError, CompileError, CudaError, UnsupportedError, ShapeMismatchError,
                                     DTypeMismatchError, InternalError)
for _cls in EXPORTED:
    _cls.__module__ = "ic"


def make_error(status: int, message: str, context: str = "") -> Error:
    """The exception for a status (an unknown status gives a plain Error); a dtype
    mismatch (message prefix, see the module doc) gives DTypeMismatchError. context, when
    given, is put before the message ("ic_program_run: ...")."""
    full = f"{context}: {message}" if context else message
    cls = _BY_STATUS.get(status)
    if cls is None:
        return Error(f"{full} (status {status})", Status.INTERNAL)
    if status in (Status.INVALID_GRAPH, Status.SHAPE_MISMATCH) and _DTYPE_MISMATCH.match(message):
        return DTypeMismatchError(full, Status(status))
    return cls(full)


def last_error(status: int, context: str = "") -> Error:
    """The exception for a failed call, with ic_last_error()'s message."""
    message = text(api.ic_last_error())
    if not message:
        try:
            message = Status(status).description
        except ValueError:
            message = f"status {status}"
    return make_error(status, message, context)


def check(status: int, context: str = "") -> None:
    """Raises last_error(status) unless status is IC_OK."""
    if status:
        raise last_error(status, context)


def raise_status(status: Status, message: str) -> NoReturn:
    """Raises the exception of a status with a message of the binding's own."""
    raise make_error(int(status), message)
