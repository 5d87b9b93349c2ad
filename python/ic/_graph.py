"""Graphs, symbols and values: the builder.

A :class:`Graph` owns an ``ic_graph``; a :class:`Value` is a node handle plus its graph.
Every builder call checks its result at once: a failed call raises the :class:`ic.Error`
of its status with ic's message (the C graph keeps its first error, so a graph that
raised cannot be compiled; build a new one).

Adding a builder call that arrives in the C API later (``ic_graph_reduce``, inline asm)
takes a prototype (``api.declare`` or ``_lib._PROTOTYPES``) and a few lines calling
:meth:`Graph._build`, as :func:`ic.slice` or :func:`ic.pad` do.
"""

from __future__ import annotations

import numbers
import operator
import re
from ctypes import byref, c_char_p, c_int32, c_int64, c_void_p
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, NoReturn, Optional, Sequence, Tuple, Union

from ._dtypes import DType, DTypeLike, Layout, LayoutLike, to_dtype, to_layout
from ._errors import Status, check, last_error, make_error, raise_status
from ._lib import DIM_INFER, INT64_MAX, INT64_MIN, INVALID_VALUE, MAX_DIMS, api, take_string, text
from ._methods import OpMethods

if TYPE_CHECKING:
    from ._context import Context
    from ._runtime import Program

#: A Python number used where a value is expected becomes a constant of DType.AUTO.
Scalar = Union[int, float, bool]
ValueLike = Union["Value", int, float, bool]
#: A dimension: a constant size or a symbol.
Dim = Union[int, "Symbol"]
#: A dimension as the shape queries report it: None for an expression of symbols.
ShapeDim = Union[int, "Symbol", None]


def _encode(name: str, what: str) -> bytes:
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a str, got {type(name).__name__}")
    if "\0" in name:
        raise ValueError(f"{what} {name!r} contains a NUL character")
    return name.encode("utf-8")


class Symbol:
    """A named size symbol of a graph (``g.symbol("n")``): one program serves every n."""

    __slots__ = ("graph", "name", "dim")

    def __init__(self, graph: "Graph", name: str, dim: int) -> None:
        self.graph = graph
        self.name = name
        #: The ic_dim (negative) that stands for the symbol in C.
        self.dim = dim

    def __repr__(self) -> str:
        return f"Symbol({self.name!r})"

    def __str__(self) -> str:
        return self.name


class Graph:
    """An op graph under construction (``ic_graph``).

    >>> g = ic.Graph()
    >>> n = g.symbol("n")
    >>> x = g.input("x", ic.f32, (n, 4096))
    >>> g.output("y", ic.gelu_tanh(x * 2.0 + 1.0))
    >>> prog = g.compile(backend="ref")

    A graph belongs to one thread. ``close()`` (or the end of a ``with`` block) frees it;
    programs compiled from it do not need it.
    """

    _handle: Optional[int]

    def __init__(self) -> None:
        h = c_void_p()
        check(api.ic_graph_create(byref(h)), "ic_graph_create")
        self._adopt(h.value)

    def _adopt(self, handle: Optional[int]) -> None:
        self._handle = handle
        self._symbols: Dict[int, Symbol] = {}
        self._failed = False  # a builder call failed: the C graph holds an error
        self._inputs: List[str] = []
        self._outputs: List[str] = []
        self._destroy = api.ic_graph_destroy  # bound now: __del__ may run at interpreter exit

    # ------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Frees the C graph (idempotent). Values of a closed graph cannot be used."""
        h, self._handle = self._handle, None
        if h:
            self._destroy(h)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter teardown: nothing sensible left to do
            pass

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _h(self) -> int:
        h = self._handle
        if h is None:
            raise_status(Status.INVALID_ARGUMENT, "the graph is closed")
        return h

    # ------------------------------------------------------------ text format

    @classmethod
    def parse(cls, source: str) -> "Graph":
        """A graph from the text format (``ic_graph_parse``); errors name line and column."""
        h = c_void_p()
        st = api.ic_graph_parse(_encode(source, "graph text"), byref(h))
        if st:
            raise last_error(st)
        g = cls.__new__(cls)
        g._adopt(h.value)
        # Symbols by name, so that shape queries can name them (the same name gives the
        # same symbol, so asking again does not add any).
        for m in re.finditer(r"^[ \t]*symbol[ \t]+([A-Za-z_][A-Za-z0-9_.]*)", source, re.M):
            g.symbol(m.group(1))
        for m in re.finditer(r"^[ \t]*input[ \t]+([A-Za-z_][A-Za-z0-9_.]*)", source, re.M):
            g._inputs.append(m.group(1))
        for m in re.finditer(r"^[ \t]*output[ \t]+([A-Za-z_][A-Za-z0-9_.%]*)", source, re.M):
            g._outputs.append(m.group(1))
        return g

    def __str__(self) -> str:
        """The graph in the text format (``ic_graph_print``)."""
        p = c_void_p()
        check(api.ic_graph_print(self._h(), byref(p)), "ic_graph_print")
        return take_string(p.value)

    def __repr__(self) -> str:
        if self._handle is None:
            return "<ic.Graph (closed)>"
        return f"<ic.Graph inputs={self._inputs} outputs={self._outputs}>"

    # ------------------------------------------------------------ errors

    @property
    def error(self) -> Optional[str]:
        """The first error a builder call recorded (``ic_graph_error``), or None."""
        msg = c_char_p()
        st = api.ic_graph_error(self._h(), byref(msg))
        if not st:
            return None
        return text(msg.value) or Status(st).description

    def _builder_error(self) -> NoReturn:
        # ic_last_error() holds this call's reason; ic_graph_error() the graph's first.
        reason = text(api.ic_last_error())
        msg = c_char_p()
        st = api.ic_graph_error(self._h(), byref(msg))
        first = text(msg.value)
        if not reason:
            reason = first
        elif self._failed and first and first != reason:
            reason += f" (the graph also holds an earlier error: {first})"
        self._failed = True
        raise make_error(st or int(Status.INVALID_GRAPH), reason)

    def _value(self, handle: int) -> "Value":
        """Wraps a builder call's result (raising its error on IC_INVALID_VALUE)."""
        if handle == INVALID_VALUE:
            self._builder_error()
        return Value(self, handle)

    def _build(self, fn: Any, *args: Any) -> "Value":
        """Calls the C builder function fn(graph, *args) and wraps its result."""
        return self._value(int(fn(self._h(), *args)))

    # ------------------------------------------------------------ builder

    def symbol(self, name: str) -> Symbol:
        """The size symbol ``name`` (the same name gives the same symbol)."""
        d = int(api.ic_graph_symbol(self._h(), _encode(name, "symbol name")))
        if d == 0:
            self._builder_error()
        s = self._symbols.get(d)
        if s is None:
            s = self._symbols[d] = Symbol(self, name, d)
        return s

    def _dims(self, shape: Sequence[Dim], what: str, infer: bool = False) -> List[int]:
        """C dims of a shape: sizes >= 0 and symbols; -1 is IC_DIM_INFER where infer."""
        if isinstance(shape, (int, Symbol)):
            shape = (shape,)
        dims = []
        for d in shape:
            if isinstance(d, Symbol):
                if d.graph is not self:
                    raise ValueError(f"{what}: symbol {d.name!r} belongs to another graph")
                dims.append(d.dim)
            elif isinstance(d, numbers.Integral) and not isinstance(d, bool):
                v = int(d)
                if v == -1 and infer:
                    dims.append(DIM_INFER)
                elif v < 0:
                    raise ValueError(f"{what}: negative size {v}" + (" (-1 infers one dim)" if infer else ""))
                else:
                    dims.append(v)
            else:
                raise TypeError(f"{what}: dims are ints or ic.Symbol, got {type(d).__name__}")
        if len(dims) > MAX_DIMS:
            raise ValueError(f"{what}: {len(dims)} dims, ic takes at most {MAX_DIMS}")
        return dims

    def input(self, name: str, dtype: DTypeLike, shape: Sequence[Dim] = (),
              layout: LayoutLike = Layout.CONTIGUOUS) -> "Value":
        """A named program input of dtype and shape (sizes and symbols). ``layout`` is the
        one it is compiled for: contiguous (default), inner_contiguous or strided."""
        dims = self._dims(shape, f"input {name!r}")
        arr = (c_int64 * max(len(dims), 1))(*dims)
        v = self._build(api.ic_graph_input, _encode(name, "input name"), int(to_dtype(dtype)), len(dims), arr,
                        int(to_layout(layout)))
        self._inputs.append(name)
        return v

    def constant(self, value: Scalar, dtype: Optional[DTypeLike] = None) -> "Value":
        """A scalar constant; without dtype (DType.AUTO) it takes the dtype of the tensor it
        meets (f32 if none)."""
        if not isinstance(value, numbers.Real):
            raise TypeError(f"constant: expected a number, got {type(value).__name__}")
        d = DType.AUTO if dtype is None else to_dtype(dtype, allow_auto=True)
        return self._build(api.ic_graph_constant, float(value), int(d))

    def output(self, name: str, value: "Value") -> None:
        """Marks value as the program output ``name``."""
        h = self._handle_of(value, f"output {name!r}")
        # The C call records the output and returns the graph's error when it holds one:
        # name that error here rather than the thread's last message.
        held = self._failed or api.ic_graph_error(self._h(), None) != 0
        st = api.ic_graph_output(self._h(), _encode(name, "output name"), h)
        if held:
            self._failed = True
            raise make_error(int(Status.INVALID_GRAPH), f"output {name!r}: the graph holds an error: {self.error}")
        if st:
            self._builder_error()
        self._outputs.append(name)

    def name_value(self, value: "Value", name: str) -> "Value":
        """Names value in the text format (``ic_graph_name_value``); returns it."""
        h = self._handle_of(value, "name_value")
        if api.ic_graph_name_value(self._h(), h, _encode(name, "value name")):
            self._builder_error()
        return value

    @property
    def inputs(self) -> List[str]:
        """Input names, in order of declaration."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[str]:
        """Output names, in order of declaration."""
        return list(self._outputs)

    def _handle_of(self, v: ValueLike, what: str) -> int:
        """A value's node in this graph; a Python number becomes an AUTO constant."""
        if isinstance(v, Value):
            if v.graph is not self:
                raise ValueError(f"{what}: the value belongs to another graph")
            return v.handle
        if isinstance(v, numbers.Real):
            return self.constant(v).handle
        raise TypeError(f"{what}: expected an ic.Value or a number, got {type(v).__name__}")

    # ------------------------------------------------------------ compile

    def compile(self, mode: str = "fused", backend: str = "cuda", *, strict: bool = False, cache: bool = True,
                context: Optional["Context"] = None, fusion_budget: int = 0,
                allow_tf32: bool = False) -> "Program":
        """Compiles the graph on ``context`` (default: :func:`ic.default_context`).

        mode: "fused" (fuse pointwise chains) or "eager" (one kernel per op, bitwise the same
        results). backend: "cuda" (device pointers) or "ref" (the host interpreter, host
        pointers, no GPU needed). strict: a fusion that fails to compile is an error rather
        than an eager fallback. cache: False bypasses the program and kernel caches.
        fusion_budget: the most ops a fused kernel holds (0: ic's default, -1: no limit).
        allow_tf32: f32 matmuls may run on tensor cores in TF32 (inputs rounded to 10
        mantissa bits; ic.h "matmul"); without it an f32 matmul is exact f32 FMA.
        """
        from ._runtime import compile_graph

        return compile_graph(self, mode=mode, backend=backend, strict=strict, cache=cache, context=context,
                             fusion_budget=fusion_budget, allow_tf32=allow_tf32)


def graph_of(args: Sequence[Any], what: str) -> Graph:
    """The graph of the Values among args (all must share it)."""
    g: Optional[Graph] = None
    for a in args:
        if isinstance(a, Value):
            if g is None:
                g = a.graph
            elif a.graph is not g:
                raise ValueError(f"{what}: the values belong to different graphs")
    if g is None:
        raise TypeError(f"{what}: needs at least one ic.Value (numbers alone have no graph)")
    return g


# Op codes by name, read from the C op table at import: names are the interface, so a
# library that renumbers or adds ops needs no change here.
OP_CODES: Dict[str, int] = {}
OP_ARITY: Dict[str, int] = {}
_code = 0
while True:
    _name = text(api.ic_op_name(_code))
    if _name == "invalid":
        break
    OP_CODES[_name] = _code
    OP_ARITY[_name] = int(api.ic_op_arity(_code))
    _code += 1
del _code, _name

# Ops that name a target dtype: ic_graph_op refuses them; they have calls of their own.
CONVERSIONS = ("cast", "cast_saturate", "bitcast")


def apply_op(name: str, *args: ValueLike) -> "Value":
    """The elementwise op ``name`` of the C op table on args (numbers become constants)."""
    code = OP_CODES.get(name)
    if code is None:
        raise_status(Status.UNSUPPORTED, f"op {name!r} is not in the loaded libic ({api.path})")
    arity = OP_ARITY[name]
    if len(args) != arity:
        raise TypeError(f"{name} takes {arity} operand{'s' if arity != 1 else ''}, got {len(args)}")
    g = graph_of(args, name)
    h = [g._handle_of(a, name) for a in args]
    if arity == 1:
        return g._build(api.ic_graph_unary, code, h[0])
    if arity == 2:
        return g._build(api.ic_graph_binary, code, h[0], h[1])
    return g._build(api.ic_graph_op, code, arity, (c_int32 * arity)(*h))


# Reductions by name (ic_reduce_name), when the library has them.
REDUCE_CODES: Dict[str, int] = {}
if api.has("ic_reduce_name"):
    _code = 0
    while True:
        _name = text(api.ic_reduce_name(_code))
        if _name == "invalid":
            break
        REDUCE_CODES[_name] = _code
        _code += 1
    del _code, _name

#: Axes of a reduction: one dim, several, or None for every dim.
Axes = Union[int, Sequence[int], None]


def axes_arg(axes: Axes, what: str) -> Tuple[int, Any]:
    """(naxes, int32 array or None) for ic_graph_reduce and friends."""
    if axes is None:
        return 0, None
    dims = [operator.index(a) for a in axes] if isinstance(axes, Sequence) else [operator.index(axes)]
    if not dims:
        raise ValueError(f"{what}: no axes (ic reduces every dim for that: say axes=None)")
    return len(dims), (c_int32 * len(dims))(*dims)


def reduce_value(op: str, x: "Value", axes: Axes, keepdim: bool) -> "Value":
    """The reduction op of the C table (sum, mean, prod, max, min, argmax, argmin, any,
    all) of x over axes."""
    code = REDUCE_CODES.get(op)
    if code is None:
        raise_status(Status.UNSUPPORTED, f"reduction {op!r} is not in the loaded libic ({api.path})")
    n, arr = axes_arg(axes, op)
    return x.graph._build(api.ic_graph_reduce, code, x.handle, n, arr, int(bool(keepdim)))


def matmul_values(a: "Value", b: "Value") -> "Value":
    """ic_graph_matmul(a, b) of two Values of one graph."""
    g = graph_of((a, b), "matmul")
    return g._build(api.ic_graph_matmul, a.handle, b.handle)


def _clamp64(v: int) -> int:
    return INT64_MIN if v < INT64_MIN else INT64_MAX if v > INT64_MAX else v


class Value(OpMethods):
    """A node of a graph. Arithmetic builds new nodes:

    ``+ - * / // % **`` (add, sub, mul, div, floor_divide, remainder, pow), ``@``
    (matmul, torch.matmul's shapes), unary ``-`` and
    ``abs()``, ``& | ^ ~ << >>`` (bitwise on integers and bool), and the comparisons
    ``< <= > >= == !=``, which are elementwise and give bool values, as in numpy and
    PyTorch (``eq``/``ne`` methods too). So a Value has no truth value (``if v:`` raises)
    and hashes by identity. Python numbers become constants of DType.AUTO.

    Indexing slices: ``x[1:, ::2]``, ``x[..., -1]`` (an int drops the dim), ``x[None]``
    (a new dim of size 1).
    """

    __slots__ = ("graph", "handle", "__weakref__")
    # numpy scalars defer to Value's reflected operators instead of broadcasting over it.
    __array_ufunc__ = None

    def __init__(self, graph: Graph, handle: int) -> None:
        self.graph = graph
        self.handle = handle

    # ------------------------------------------------------------ queries

    @property
    def dtype(self) -> DType:
        return DType(int(api.ic_graph_value_dtype(self.graph._h(), self.handle)))

    @property
    def ndim(self) -> int:
        return int(api.ic_graph_value_ndim(self.graph._h(), self.handle))

    @property
    def shape(self) -> Tuple[ShapeDim, ...]:
        """Sizes (int), symbols (Symbol) and None for expressions of symbols."""
        g = self.graph
        n = self.ndim
        dims = (c_int64 * MAX_DIMS)()
        check(api.ic_graph_value_dims(g._h(), self.handle, dims), "ic_graph_value_dims")
        out: List[ShapeDim] = []
        for d in dims[:n]:
            if d >= 0:
                out.append(int(d))
            elif d == DIM_INFER:
                out.append(None)
            else:
                s = g._symbols.get(d)
                out.append(s if s is not None else Symbol(g, f"?{-d}", d))
        return tuple(out)

    def __repr__(self) -> str:
        if self.graph.closed:
            return f"<ic.Value %{self.handle} of a closed graph>"
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"<ic.Value %{self.handle}: {self.dtype}[{dims}]>"

    def named(self, name: str) -> "Value":
        """Names the value in the printed text; returns self."""
        return self.graph.name_value(self, name)

    def _op(self, name: str, *others: ValueLike) -> "Value":
        return apply_op(name, self, *others)

    # ------------------------------------------------------------ Python protocol

    def __bool__(self) -> NoReturn:
        raise TypeError("an ic.Value has no truth value: comparisons build bool values "
                        "(use ic.where to select)")

    def __iter__(self) -> Iterator["Value"]:
        raise TypeError("an ic.Value is not iterable")

    __hash__ = object.__hash__

    # ------------------------------------------------------------ arithmetic

    def __add__(self, o: ValueLike) -> "Value":
        return apply_op("add", self, o)

    def __radd__(self, o: ValueLike) -> "Value":
        return apply_op("add", o, self)

    def __sub__(self, o: ValueLike) -> "Value":
        return apply_op("sub", self, o)

    def __rsub__(self, o: ValueLike) -> "Value":
        return apply_op("sub", o, self)

    def __mul__(self, o: ValueLike) -> "Value":
        return apply_op("mul", self, o)

    def __rmul__(self, o: ValueLike) -> "Value":
        return apply_op("mul", o, self)

    def __truediv__(self, o: ValueLike) -> "Value":
        return apply_op("div", self, o)

    def __rtruediv__(self, o: ValueLike) -> "Value":
        return apply_op("div", o, self)

    def __floordiv__(self, o: ValueLike) -> "Value":
        return apply_op("floor_divide", self, o)

    def __rfloordiv__(self, o: ValueLike) -> "Value":
        return apply_op("floor_divide", o, self)

    def __mod__(self, o: ValueLike) -> "Value":
        return apply_op("remainder", self, o)

    def __rmod__(self, o: ValueLike) -> "Value":
        return apply_op("remainder", o, self)

    def __pow__(self, o: ValueLike) -> "Value":
        return apply_op("pow", self, o)

    def __rpow__(self, o: ValueLike) -> "Value":
        return apply_op("pow", o, self)

    # Only Values: anything else is Python's TypeError for @, as torch's (a scalar scales
    # with *).
    def __matmul__(self, o: "Value") -> "Value":
        if not isinstance(o, Value):
            return NotImplemented
        return matmul_values(self, o)

    def __rmatmul__(self, o: "Value") -> "Value":
        if not isinstance(o, Value):
            return NotImplemented
        return matmul_values(o, self)

    def matmul(self, o: "Value") -> "Value":
        """torch.matmul(self, o) (ic.h, "matmul"): 1-D, 2-D and batched operands of one
        dtype (bf16, f16, f32, f64; i8 gives i32)."""
        return matmul_values(self, o)

    def __neg__(self) -> "Value":
        return apply_op("neg", self)

    def __pos__(self) -> "Value":
        return self

    def __abs__(self) -> "Value":
        return apply_op("abs", self)

    def __invert__(self) -> "Value":
        return apply_op("bitwise_not", self)

    def __and__(self, o: ValueLike) -> "Value":
        return apply_op("bitwise_and", self, o)

    def __rand__(self, o: ValueLike) -> "Value":
        return apply_op("bitwise_and", o, self)

    def __or__(self, o: ValueLike) -> "Value":
        return apply_op("bitwise_or", self, o)

    def __ror__(self, o: ValueLike) -> "Value":
        return apply_op("bitwise_or", o, self)

    def __xor__(self, o: ValueLike) -> "Value":
        return apply_op("bitwise_xor", self, o)

    def __rxor__(self, o: ValueLike) -> "Value":
        return apply_op("bitwise_xor", o, self)

    def __lshift__(self, o: ValueLike) -> "Value":
        return apply_op("shift_left", self, o)

    def __rlshift__(self, o: ValueLike) -> "Value":
        return apply_op("shift_left", o, self)

    def __rshift__(self, o: ValueLike) -> "Value":
        return apply_op("shift_right", self, o)

    def __rrshift__(self, o: ValueLike) -> "Value":
        return apply_op("shift_right", o, self)

    def __lt__(self, o: ValueLike) -> "Value":
        return apply_op("lt", self, o)

    def __le__(self, o: ValueLike) -> "Value":
        return apply_op("le", self, o)

    def __gt__(self, o: ValueLike) -> "Value":
        return apply_op("gt", self, o)

    def __ge__(self, o: ValueLike) -> "Value":
        return apply_op("ge", self, o)

    # Elementwise, as numpy's and PyTorch's (object's identity == would silently give a
    # Python bool where a graph condition is meant).
    def __eq__(self, o: ValueLike) -> "Value":  # type: ignore[override]
        return apply_op("eq", self, o)

    def __ne__(self, o: ValueLike) -> "Value":  # type: ignore[override]
        return apply_op("ne", self, o)

    # ------------------------------------------------------------ conversions

    def cast(self, dtype: DTypeLike) -> "Value":
        """Conversion to dtype (PyTorch's semantics; see ic.h)."""
        return self.graph._build(api.ic_graph_cast, self.handle, int(to_dtype(dtype)))

    def cast_saturate(self, dtype: DTypeLike) -> "Value":
        """Conversion to dtype, out-of-range values clamped to its finite range."""
        return self.graph._build(api.ic_graph_cast_saturate, self.handle, int(to_dtype(dtype)))

    def bitcast(self, dtype: DTypeLike) -> "Value":
        """The bits reinterpreted as dtype (same width, not bool)."""
        return self.graph._build(api.ic_graph_bitcast, self.handle, int(to_dtype(dtype)))

    # ------------------------------------------------------------ reductions
    # Over axes (an int, several, or None: every dim); keepdim keeps them with size 1.
    # ic.h gives the result dtypes and the one summation order of every backend.

    def sum(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """The sum (floats: the dtype; integers and bool: i64)."""
        return reduce_value("sum", self, axes, keepdim)

    def mean(self, axes: "Axes" = None, keepdim: bool = False, correction: float = 0.0) -> "Value":
        """sum / max(N - correction, 0) (floating dtypes)."""
        if correction:
            n, arr = axes_arg(axes, "mean")
            return self.graph._build(api.ic_graph_mean_correction, self.handle, n, arr, float(correction),
                                     int(bool(keepdim)))
        return reduce_value("mean", self, axes, keepdim)

    def prod(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """The product (floats: the dtype; integers and bool: i64)."""
        return reduce_value("prod", self, axes, keepdim)

    def max(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """The largest element (NaN-propagating)."""
        return reduce_value("max", self, axes, keepdim)

    def min(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """The smallest element (NaN-propagating)."""
        return reduce_value("min", self, axes, keepdim)

    def argmax(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """The i64 index (row-major over axes) of the first largest element."""
        return reduce_value("argmax", self, axes, keepdim)

    def argmin(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """The i64 index (row-major over axes) of the first smallest element."""
        return reduce_value("argmin", self, axes, keepdim)

    def any(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """Some element != 0 (bool)."""
        return reduce_value("any", self, axes, keepdim)

    def all(self, axes: "Axes" = None, keepdim: bool = False) -> "Value":
        """Every element != 0 (bool)."""
        return reduce_value("all", self, axes, keepdim)

    def var(self, axes: "Axes" = None, correction: float = 1.0, keepdim: bool = False) -> "Value":
        """The variance (two passes, as PyTorch; correction 1 is Bessel's)."""
        n, arr = axes_arg(axes, "var")
        return self.graph._build(api.ic_graph_var, self.handle, n, arr, float(correction), int(bool(keepdim)))

    def std(self, axes: "Axes" = None, correction: float = 1.0, keepdim: bool = False) -> "Value":
        """sqrt(var)."""
        n, arr = axes_arg(axes, "std")
        return self.graph._build(api.ic_graph_std, self.handle, n, arr, float(correction), int(bool(keepdim)))

    def softmax(self, axis: int = -1) -> "Value":
        """exp(x - max) / sum(exp(x - max)) along axis."""
        return self.graph._build(api.ic_graph_softmax, self.handle, operator.index(axis))

    def log_softmax(self, axis: int = -1) -> "Value":
        """(x - max) - log(sum(exp(x - max))) along axis."""
        return self.graph._build(api.ic_graph_log_softmax, self.handle, operator.index(axis))

    # ------------------------------------------------------------ views

    def reshape(self, *shape: Union[Dim, Sequence[Dim]]) -> "Value":
        """Same elements, new shape (sizes and symbols; one -1 infers a dim)."""
        dims = self.graph._dims(_shape_args(shape), "reshape", infer=True)
        return self.graph._build(api.ic_graph_reshape, self.handle, len(dims), (c_int64 * max(len(dims), 1))(*dims))

    def permute(self, *dims: Union[int, Sequence[int]]) -> "Value":
        """Dim i of the result is dim dims[i] of self (negative dims count from the end)."""
        perm = [operator.index(d) for d in _shape_args(dims)]
        return self.graph._build(api.ic_graph_permute, self.handle, len(perm), (c_int32 * max(len(perm), 1))(*perm))

    def transpose(self, dim0: int = -2, dim1: int = -1) -> "Value":
        """Swaps two dims (a permute)."""
        n = self.ndim
        perm = list(range(n))
        a, b = _norm_dim(dim0, n, "transpose"), _norm_dim(dim1, n, "transpose")
        perm[a], perm[b] = perm[b], perm[a]
        return self.permute(perm)

    def expand(self, *shape: Union[Dim, Sequence[Dim]]) -> "Value":
        """Broadcasts size-1 dims (and new leading dims) to shape; -1 keeps a dim as is."""
        target = list(_shape_args(shape))
        cur = self.shape
        off = len(target) - len(cur)
        for i, d in enumerate(target):
            if isinstance(d, int) and not isinstance(d, bool) and d == -1:
                if i < off:
                    raise ValueError("expand: -1 (keep) on a new leading dim")
                kept = cur[i - off]
                if kept is None:
                    raise ValueError(f"expand: dim {i - off} is an expression of symbols; name its size")
                target[i] = kept
        dims = self.graph._dims(target, "expand")
        return self.graph._build(api.ic_graph_expand, self.handle, len(dims), (c_int64 * max(len(dims), 1))(*dims))

    def squeeze(self, dim: int) -> "Value":
        """Drops dim (of constant size 1)."""
        return self.graph._build(api.ic_graph_squeeze, self.handle, operator.index(dim))

    def unsqueeze(self, dim: int) -> "Value":
        """Inserts a dim of size 1 at dim (its place in the result)."""
        return self.graph._build(api.ic_graph_unsqueeze, self.handle, operator.index(dim))

    def flatten(self, start: int = 0, end: int = -1) -> "Value":
        """Merges dims start..end (inclusive) into one."""
        return self.graph._build(api.ic_graph_flatten, self.handle, operator.index(start), operator.index(end))

    def slice(self, dim: int, start: Optional[int] = None, stop: Optional[int] = None,
              step: Optional[int] = None) -> "Value":
        """``self[..., start:stop:step]`` along dim, as Python slices (negative values
        count from the end, None is an open end, negative steps walk backwards)."""
        st = 1 if step is None else operator.index(step)
        if st == 0:
            raise ValueError("slice step cannot be zero")
        if st > 0:
            lo = 0 if start is None else operator.index(start)
            hi = INT64_MAX if stop is None else operator.index(stop)
        else:
            lo = INT64_MAX if start is None else operator.index(start)
            hi = INT64_MIN if stop is None else operator.index(stop)
        return self.graph._build(api.ic_graph_slice, self.handle, operator.index(dim), _clamp64(lo), _clamp64(hi),
                                 _clamp64(st))

    def pad(self, pads: Sequence[int], value: float = 0.0) -> "Value":
        """Constant padding as PyTorch's F.pad: (before, after) pairs, last dim first."""
        amounts = [operator.index(p) for p in pads]
        if len(amounts) % 2:
            raise ValueError(f"pad: {len(amounts)} amounts; they come in (before, after) pairs")
        arr = (c_int64 * max(len(amounts), 1))(*amounts)
        return self.graph._build(api.ic_graph_pad, self.handle, len(amounts) // 2, arr, float(value))

    def __getitem__(self, key: Any) -> "Value":
        keys = key if isinstance(key, tuple) else (key,)
        n = self.ndim
        ellipses = sum(1 for k in keys if k is Ellipsis)
        if ellipses > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        used = sum(1 for k in keys if k is not None and k is not Ellipsis)
        if used > n:
            raise IndexError(f"too many indices: the value has {n} dims, the index {used}")
        full: List[Any] = []
        for k in keys:
            if k is Ellipsis:
                full.extend([slice(None)] * (n - used))
            else:
                full.append(k)
        if not ellipses:
            full.extend([slice(None)] * (n - used))
        r: Value = self
        d = 0  # the dim of r that the next key indexes
        for k in full:
            if k is None:
                r = r.unsqueeze(d)
                d += 1
            elif isinstance(k, slice):
                if not (k.start is None and k.stop is None and k.step in (None, 1)):
                    r = r.slice(d, k.start, k.stop, k.step)
                d += 1
            elif isinstance(k, numbers.Integral) and not isinstance(k, bool):
                i = int(k)
                size = r.shape[d]
                if not isinstance(size, int):
                    raise IndexError(f"integer index on dim {d}, of symbolic size {size}: "
                                     f"slice it ({i}:{i + 1}) and keep the dim")
                if not -size <= i < size:
                    raise IndexError(f"index {i} is out of range for dim {d} of size {size}")
                i = i + size if i < 0 else i
                r = r.slice(d, i, i + 1, 1).squeeze(d)
            else:
                raise TypeError(f"ic values take ints, slices, None and ... as indexes, not {type(k).__name__}")
        return r


def _shape_args(args: Sequence[Any]) -> Sequence[Any]:
    """f(a, b, c) and f((a, b, c)) alike."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return args


def _norm_dim(d: int, n: int, what: str) -> int:
    i = operator.index(d)
    if not -n <= i < n:
        raise IndexError(f"{what}: dim {i} out of range for {n} dims")
    return i + n if i < 0 else i


