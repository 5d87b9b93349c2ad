"""The elementwise ops as module functions (``ic.exp(x)``, ``ic.maximum(a, b)``, ...),
the conversions, ``where`` and the views; ``gelu(input, approximate="none")`` as torch's
(gelu_erf, or gelu_tanh for "tanh").

The op functions are written out so that type checkers (mypy --strict) see them; at
import, ops of the loaded C op table that have no function here get a generated one
(untyped, listed in GENERATED) so that a newer library's ops appear at once.
tests/python/test_ops.py fails while GENERATED is not empty: write the new op out here
and in _methods.py. Numbers become constants of DType.AUTO (they take the dtype of the
tensor they meet). Dtype classes (ic.h): FLOAT = f16 bf16 f32 f64 f8e4m3 f8e5m2;
INT = u8 u16 u32 u64 i8 i16 i32 i64; NUM = FLOAT + INT; ANY = NUM + bool; BITS = INT + bool.
"""

from __future__ import annotations

from ctypes import byref, c_int, c_int32, sizeof
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from ._dtypes import DType, DTypeLike, to_dtype
from ._graph import CONVERSIONS, OP_ARITY, OP_CODES, Axes, Dim, Value, ValueLike, apply_op, graph_of, reduce_value
from ._lib import InlineAsmDesc, api
from ._methods import gelu_op

__all__ = [
    "neg",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "sigmoid",
    "relu",
    "gelu_tanh",
    "abs",
    "exp2",
    "expm1",
    "log2",
    "log10",
    "log1p",
    "rsqrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "silu",
    "softplus",
    "gelu_erf",
    "gelu",
    "floor",
    "ceil",
    "round",
    "trunc",
    "frac",
    "sign",
    "logical_not",
    "bitwise_not",
    "isnan",
    "isinf",
    "isfinite",
    "add",
    "sub",
    "mul",
    "div",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "copysign",
    "pow",
    "atan2",
    "hypot",
    "fmod",
    "remainder",
    "floor_divide",
    "trunc_divide",
    "logical_and",
    "logical_or",
    "logical_xor",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shift_left",
    "shift_right",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "clamp",
    "lerp",
    "fma",
    "where",
    "cast",
    "cast_saturate",
    "bitcast",
    "reduce",
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "argmax",
    "argmin",
    "any",
    "all",
    "var",
    "std",
    "softmax",
    "log_softmax",
    "layer_norm",
    "rms_norm",
    "matmul",
    "reshape",
    "permute",
    "transpose",
    "expand",
    "squeeze",
    "unsqueeze",
    "flatten",
    "slice",
    "pad",
    "concat",
    "inline_asm",
]

# ---------------------------------------------------------------- elementwise ops

def neg(x: Value) -> Value:
    """-x. Dtypes: NUM."""
    return apply_op("neg", x)


def exp(x: Value) -> Value:
    """e**x. Dtypes: FLOAT."""
    return apply_op("exp", x)


def log(x: Value) -> Value:
    """Natural logarithm. Dtypes: FLOAT."""
    return apply_op("log", x)


def sqrt(x: Value) -> Value:
    """Square root (IEEE-rounded). Dtypes: FLOAT."""
    return apply_op("sqrt", x)


def tanh(x: Value) -> Value:
    """Hyperbolic tangent. Dtypes: FLOAT."""
    return apply_op("tanh", x)


def sigmoid(x: Value) -> Value:
    """1 / (1 + exp(-x)). Dtypes: FLOAT."""
    return apply_op("sigmoid", x)


def relu(x: Value) -> Value:
    """x > 0 ? x : +0 (NaN stays NaN). Dtypes: NUM."""
    return apply_op("relu", x)


def gelu_tanh(x: Value) -> Value:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))). Dtypes: FLOAT."""
    return apply_op("gelu_tanh", x)


def abs(x: Value) -> Value:
    """|x|: clears the sign bit; integers wrap (abs(MIN) = MIN). Dtypes: NUM."""
    return apply_op("abs", x)


def exp2(x: Value) -> Value:
    """2**x. Dtypes: FLOAT."""
    return apply_op("exp2", x)


def expm1(x: Value) -> Value:
    """exp(x) - 1, accurate near 0. Dtypes: FLOAT."""
    return apply_op("expm1", x)


def log2(x: Value) -> Value:
    """Base-2 logarithm. Dtypes: FLOAT."""
    return apply_op("log2", x)


def log10(x: Value) -> Value:
    """Base-10 logarithm. Dtypes: FLOAT."""
    return apply_op("log10", x)


def log1p(x: Value) -> Value:
    """log(1 + x), accurate near 0. Dtypes: FLOAT."""
    return apply_op("log1p", x)


def rsqrt(x: Value) -> Value:
    """1 / sqrt(x), each step IEEE-rounded. Dtypes: FLOAT."""
    return apply_op("rsqrt", x)


def reciprocal(x: Value) -> Value:
    """1 / x, IEEE-rounded. Dtypes: FLOAT."""
    return apply_op("reciprocal", x)


def sin(x: Value) -> Value:
    """Sine. Dtypes: FLOAT."""
    return apply_op("sin", x)


def cos(x: Value) -> Value:
    """Cosine. Dtypes: FLOAT."""
    return apply_op("cos", x)


def tan(x: Value) -> Value:
    """Tangent. Dtypes: FLOAT."""
    return apply_op("tan", x)


def asin(x: Value) -> Value:
    """Arc sine. Dtypes: FLOAT."""
    return apply_op("asin", x)


def acos(x: Value) -> Value:
    """Arc cosine. Dtypes: FLOAT."""
    return apply_op("acos", x)


def atan(x: Value) -> Value:
    """Arc tangent. Dtypes: FLOAT."""
    return apply_op("atan", x)


def sinh(x: Value) -> Value:
    """Hyperbolic sine. Dtypes: FLOAT."""
    return apply_op("sinh", x)


def cosh(x: Value) -> Value:
    """Hyperbolic cosine. Dtypes: FLOAT."""
    return apply_op("cosh", x)


def asinh(x: Value) -> Value:
    """Inverse hyperbolic sine. Dtypes: FLOAT."""
    return apply_op("asinh", x)


def acosh(x: Value) -> Value:
    """Inverse hyperbolic cosine. Dtypes: FLOAT."""
    return apply_op("acosh", x)


def atanh(x: Value) -> Value:
    """Inverse hyperbolic tangent. Dtypes: FLOAT."""
    return apply_op("atanh", x)


def erf(x: Value) -> Value:
    """Error function. Dtypes: FLOAT."""
    return apply_op("erf", x)


def erfc(x: Value) -> Value:
    """Complementary error function. Dtypes: FLOAT."""
    return apply_op("erfc", x)


def silu(x: Value) -> Value:
    """x / (1 + exp(-x)). Dtypes: FLOAT."""
    return apply_op("silu", x)


def softplus(x: Value) -> Value:
    """x > 20 ? x : log1p(exp(x)). Dtypes: FLOAT."""
    return apply_op("softplus", x)


def gelu_erf(x: Value) -> Value:
    """0.5 x (1 + erf(x / sqrt(2))). Dtypes: FLOAT."""
    return apply_op("gelu_erf", x)


def gelu(input: Value, approximate: str = "none") -> Value:
    """GELU with torch.nn.functional.gelu's signature: approximate="none" (default) is
    the exact form 0.5 x (1 + erf(x / sqrt(2))) (the op gelu_erf), "tanh" the tanh
    approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))) (the op gelu_tanh);
    any other string raises ValueError. Also ``x.gelu(approximate)``. Dtypes: FLOAT."""
    return apply_op(gelu_op(approximate), input)


def floor(x: Value) -> Value:
    """Rounds down (exact). Dtypes: FLOAT."""
    return apply_op("floor", x)


def ceil(x: Value) -> Value:
    """Rounds up (exact). Dtypes: FLOAT."""
    return apply_op("ceil", x)


def round(x: Value) -> Value:
    """Rounds half to even (exact). Dtypes: FLOAT."""
    return apply_op("round", x)


def trunc(x: Value) -> Value:
    """Rounds toward zero (exact). Dtypes: FLOAT."""
    return apply_op("trunc", x)


def frac(x: Value) -> Value:
    """x - trunc(x) (exact). Dtypes: FLOAT."""
    return apply_op("frac", x)


def sign(x: Value) -> Value:
    """1, -1, or x itself for +-0 (NaN gives NaN; integers 1, -1, 0). Dtypes: NUM."""
    return apply_op("sign", x)


def logical_not(x: Value) -> Value:
    """x == 0, as bool. Dtypes: ANY."""
    return apply_op("logical_not", x)


def bitwise_not(x: Value) -> Value:
    """~x (bool: not x). Dtypes: BITS."""
    return apply_op("bitwise_not", x)


def isnan(x: Value) -> Value:
    """x is NaN (bool). Dtypes: NUM."""
    return apply_op("isnan", x)


def isinf(x: Value) -> Value:
    """x is +-inf (bool). Dtypes: NUM."""
    return apply_op("isinf", x)


def isfinite(x: Value) -> Value:
    """x is neither inf nor NaN (bool). Dtypes: NUM."""
    return apply_op("isfinite", x)


def add(a: ValueLike, b: ValueLike) -> Value:
    """a + b. Dtypes: NUM."""
    return apply_op("add", a, b)


def sub(a: ValueLike, b: ValueLike) -> Value:
    """a - b. Dtypes: NUM."""
    return apply_op("sub", a, b)


def mul(a: ValueLike, b: ValueLike) -> Value:
    """a * b. Dtypes: NUM."""
    return apply_op("mul", a, b)


def div(a: ValueLike, b: ValueLike) -> Value:
    """a / b, true division (floating dtypes only). Dtypes: FLOAT."""
    return apply_op("div", a, b)


def maximum(a: ValueLike, b: ValueLike) -> Value:
    """The larger; NaN-propagating, maximum(-0, +0) = +0. Dtypes: NUM."""
    return apply_op("maximum", a, b)


def minimum(a: ValueLike, b: ValueLike) -> Value:
    """The smaller; NaN-propagating, minimum(-0, +0) = -0. Dtypes: NUM."""
    return apply_op("minimum", a, b)


def fmax(a: ValueLike, b: ValueLike) -> Value:
    """The larger, NaN-ignoring (a NaN operand gives the other). Dtypes: NUM."""
    return apply_op("fmax", a, b)


def fmin(a: ValueLike, b: ValueLike) -> Value:
    """The smaller, NaN-ignoring. Dtypes: NUM."""
    return apply_op("fmin", a, b)


def copysign(a: ValueLike, b: ValueLike) -> Value:
    """|a| with b's sign bit. Dtypes: FLOAT."""
    return apply_op("copysign", a, b)


def pow(a: ValueLike, b: ValueLike) -> Value:
    """a ** b. Dtypes: FLOAT."""
    return apply_op("pow", a, b)


def atan2(a: ValueLike, b: ValueLike) -> Value:
    """Arc tangent of a / b, in the quadrant of (b, a). Dtypes: FLOAT."""
    return apply_op("atan2", a, b)


def hypot(a: ValueLike, b: ValueLike) -> Value:
    """sqrt(a**2 + b**2) without overflow. Dtypes: FLOAT."""
    return apply_op("hypot", a, b)


def fmod(a: ValueLike, b: ValueLike) -> Value:
    """C fmod: the remainder with a's sign (integers: a - b * trunc(a / b)). Dtypes: NUM."""
    return apply_op("fmod", a, b)


def remainder(a: ValueLike, b: ValueLike) -> Value:
    """Python's a % b: the remainder with b's sign. Dtypes: NUM."""
    return apply_op("remainder", a, b)


def floor_divide(a: ValueLike, b: ValueLike) -> Value:
    """floor(a / b) (Python's a // b). Dtypes: NUM."""
    return apply_op("floor_divide", a, b)


def trunc_divide(a: ValueLike, b: ValueLike) -> Value:
    """trunc(a / b) (C's integer division). Dtypes: NUM."""
    return apply_op("trunc_divide", a, b)


def logical_and(a: ValueLike, b: ValueLike) -> Value:
    """a != 0 and b != 0 (bool). Dtypes: ANY."""
    return apply_op("logical_and", a, b)


def logical_or(a: ValueLike, b: ValueLike) -> Value:
    """a != 0 or b != 0 (bool). Dtypes: ANY."""
    return apply_op("logical_or", a, b)


def logical_xor(a: ValueLike, b: ValueLike) -> Value:
    """(a != 0) != (b != 0) (bool). Dtypes: ANY."""
    return apply_op("logical_xor", a, b)


def bitwise_and(a: ValueLike, b: ValueLike) -> Value:
    """a & b (integers and bool). Dtypes: BITS."""
    return apply_op("bitwise_and", a, b)


def bitwise_or(a: ValueLike, b: ValueLike) -> Value:
    """a | b (integers and bool). Dtypes: BITS."""
    return apply_op("bitwise_or", a, b)


def bitwise_xor(a: ValueLike, b: ValueLike) -> Value:
    """a ^ b (integers and bool). Dtypes: BITS."""
    return apply_op("bitwise_xor", a, b)


def shift_left(a: ValueLike, b: ValueLike) -> Value:
    """a << b; b < 0 or >= the width gives 0. Dtypes: INT."""
    return apply_op("shift_left", a, b)


def shift_right(a: ValueLike, b: ValueLike) -> Value:
    """a >> b (arithmetic for signed dtypes); b < 0 or >= the width gives 0 (-1 for negative a). Dtypes: INT."""
    return apply_op("shift_right", a, b)


def eq(a: ValueLike, b: ValueLike) -> Value:
    """a == b (bool). Dtypes: ANY."""
    return apply_op("eq", a, b)


def ne(a: ValueLike, b: ValueLike) -> Value:
    """a != b (bool; true for NaN). Dtypes: ANY."""
    return apply_op("ne", a, b)


def lt(a: ValueLike, b: ValueLike) -> Value:
    """a < b (bool). Dtypes: NUM."""
    return apply_op("lt", a, b)


def le(a: ValueLike, b: ValueLike) -> Value:
    """a <= b (bool). Dtypes: NUM."""
    return apply_op("le", a, b)


def gt(a: ValueLike, b: ValueLike) -> Value:
    """a > b (bool). Dtypes: NUM."""
    return apply_op("gt", a, b)


def ge(a: ValueLike, b: ValueLike) -> Value:
    """a >= b (bool). Dtypes: NUM."""
    return apply_op("ge", a, b)


def clamp(x: ValueLike, lo: ValueLike, hi: ValueLike) -> Value:
    """minimum(maximum(x, lo), hi), NaN-propagating. Dtypes: NUM."""
    return apply_op("clamp", x, lo, hi)


def lerp(a: ValueLike, b: ValueLike, w: ValueLike) -> Value:
    """a + w (b - a) (computed from the nearer end, each step IEEE-rounded). Dtypes: FLOAT."""
    return apply_op("lerp", a, b, w)


def fma(a: ValueLike, b: ValueLike, c: ValueLike) -> Value:
    """a * b + c with one rounding. Dtypes: FLOAT."""
    return apply_op("fma", a, b, c)



# ---------------------------------------------------------------- where, conversions


def where(cond: ValueLike, a: ValueLike, b: ValueLike) -> Value:
    """cond ? a : b, elementwise (cond bool; a and b of one dtype; numpy broadcasting)."""
    return apply_op("where", cond, a, b)


def cast(x: Value, dtype: DTypeLike) -> Value:
    """Conversion to dtype (PyTorch's semantics: floats to integers truncate and
    saturate, NaN gives 0; integers wrap; every conversion rounds once)."""
    return _value(x, "cast").cast(dtype)


def cast_saturate(x: Value, dtype: DTypeLike) -> Value:
    """As cast, but out-of-range values clamp to dtype's finite range (PTX .satfinite)."""
    return _value(x, "cast_saturate").cast_saturate(dtype)


def bitcast(x: Value, dtype: DTypeLike) -> Value:
    """The bits of x reinterpreted as dtype (the same width; not bool)."""
    return _value(x, "bitcast").bitcast(dtype)


# ---------------------------------------------------------------- reductions
# Over axes: an int, several, or None (every dim); keepdim keeps them with size 1. These
# names shadow Python's sum, max, min, any and all inside this module and in `from ic
# import *`, as numpy's do.


def reduce(x: Value, op: str, axes: Axes = None, keepdim: bool = False) -> Value:
    """The reduction op ("sum", "mean", "prod", "max", "min", "argmax", "argmin", "any",
    "all": ic_reduce_name) of x over axes."""
    return reduce_value(op, _value(x, "reduce"), axes, keepdim)


def sum(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """The sum over axes (floats: x's dtype; integers and bool: i64)."""
    return _value(x, "sum").sum(axes, keepdim)


def mean(x: Value, axes: Axes = None, keepdim: bool = False, correction: float = 0.0) -> Value:
    """sum / max(N - correction, 0) over axes (floating dtypes)."""
    return _value(x, "mean").mean(axes, keepdim, correction)


def prod(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """The product over axes (floats: x's dtype; integers and bool: i64)."""
    return _value(x, "prod").prod(axes, keepdim)


def max(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """The largest element over axes (NaN-propagating; ic.maximum is elementwise)."""
    return _value(x, "max").max(axes, keepdim)


def min(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """The smallest element over axes (NaN-propagating; ic.minimum is elementwise)."""
    return _value(x, "min").min(axes, keepdim)


def argmax(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """The i64 index (row-major over axes) of the first largest element."""
    return _value(x, "argmax").argmax(axes, keepdim)


def argmin(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """The i64 index (row-major over axes) of the first smallest element."""
    return _value(x, "argmin").argmin(axes, keepdim)


def any(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """Some element != 0 over axes (bool)."""
    return _value(x, "any").any(axes, keepdim)


def all(x: Value, axes: Axes = None, keepdim: bool = False) -> Value:
    """Every element != 0 over axes (bool)."""
    return _value(x, "all").all(axes, keepdim)


def var(x: Value, axes: Axes = None, correction: float = 1.0, keepdim: bool = False) -> Value:
    """The variance over axes (two passes, as PyTorch; correction 1 is Bessel's)."""
    return _value(x, "var").var(axes, correction, keepdim)


def std(x: Value, axes: Axes = None, correction: float = 1.0, keepdim: bool = False) -> Value:
    """The standard deviation over axes: sqrt(var)."""
    return _value(x, "std").std(axes, correction, keepdim)


def softmax(x: Value, axis: int = -1) -> Value:
    """exp(x - max) / sum(exp(x - max)) along axis (one kernel when fused)."""
    return _value(x, "softmax").softmax(axis)


def log_softmax(x: Value, axis: int = -1) -> Value:
    """(x - max) - log(sum(exp(x - max))) along axis."""
    return _value(x, "log_softmax").log_softmax(axis)


def layer_norm(x: Value, nlast: int = 1, weight: Optional[Value] = None, bias: Optional[Value] = None,
               eps: float = 1e-5) -> Value:
    """(x - mean) * rsqrt(var + eps) over the last nlast dims (biased var), times weight
    and plus bias when given (the normalized shape, broadcast)."""
    v = _value(x, "layer_norm")
    w = -1 if weight is None else v.graph._handle_of(weight, "layer_norm weight")
    b = -1 if bias is None else v.graph._handle_of(bias, "layer_norm bias")
    return v.graph._build(api.ic_graph_layer_norm, v.handle, int(nlast), w, b, float(eps))


def rms_norm(x: Value, nlast: int = 1, weight: Optional[Value] = None, eps: float = 1e-6) -> Value:
    """x * rsqrt(mean(x * x) + eps) over the last nlast dims, times weight when given."""
    v = _value(x, "rms_norm")
    w = -1 if weight is None else v.graph._handle_of(weight, "rms_norm weight")
    return v.graph._build(api.ic_graph_rms_norm, v.handle, int(nlast), w, float(eps))


# ---------------------------------------------------------------- matmul


def matmul(a: Value, b: Value) -> Value:
    """torch.matmul(a, b), also ``a @ b`` (ic.h, "matmul"): [K] x [K] is the 0-dim dot
    product, [M, K] x [K, N] gives [M, N], a 1-D operand is a row (a) or a column (b)
    whose dim leaves the result, and the dims before the last two broadcast. a and b
    have one dtype: bf16, f16, f32 or f64 (the result's), or i8 (an i32 result)."""
    return _value(a, "matmul").matmul(_value(b, "matmul"))


# ---------------------------------------------------------------- views


def reshape(x: Value, shape: Sequence[Dim]) -> Value:
    """x with a new shape (sizes and symbols; one -1 infers a dim)."""
    return _value(x, "reshape").reshape(tuple(shape))


def permute(x: Value, dims: Sequence[int]) -> Value:
    """Dim i of the result is dim dims[i] of x."""
    return _value(x, "permute").permute(tuple(dims))


def transpose(x: Value, dim0: int = -2, dim1: int = -1) -> Value:
    """x with two dims swapped."""
    return _value(x, "transpose").transpose(dim0, dim1)


def expand(x: Value, shape: Sequence[Dim]) -> Value:
    """x broadcast to shape (size-1 dims and new leading dims; -1 keeps a dim)."""
    return _value(x, "expand").expand(tuple(shape))


def squeeze(x: Value, dim: int) -> Value:
    """x without dim (of constant size 1)."""
    return _value(x, "squeeze").squeeze(dim)


def unsqueeze(x: Value, dim: int) -> Value:
    """x with a new dim of size 1 at dim."""
    return _value(x, "unsqueeze").unsqueeze(dim)


def flatten(x: Value, start: int = 0, end: int = -1) -> Value:
    """x with dims start..end (inclusive) merged into one."""
    return _value(x, "flatten").flatten(start, end)


def slice(x: Value, dim: int, start: Optional[int] = None, stop: Optional[int] = None,
          step: Optional[int] = None) -> Value:
    """x[start:stop:step] along dim, with Python's rules (see ic.Value.slice)."""
    return _value(x, "slice").slice(dim, start, stop, step)


def pad(x: Value, pads: Sequence[int], value: float = 0.0) -> Value:
    """Constant padding as PyTorch's F.pad: (before, after) pairs, last dim first;
    negative amounts crop."""
    return _value(x, "pad").pad(pads, value)


def concat(values: Sequence[Value], dim: int = 0) -> Value:
    """values joined along dim (equal dtypes and ranks, all other dims equal)."""
    vals = list(values)
    if not vals:
        raise ValueError("concat: needs at least one value")
    for v in vals:
        _value(v, "concat")
    g = graph_of(vals, "concat")
    handles = (c_int32 * len(vals))(*[v.handle for v in vals])
    return g._build(api.ic_graph_concat, len(vals), handles, int(dim))


def inline_asm(asm: str, constraints: str, inputs: Sequence[Value],
               dtypes: Union[DTypeLike, Sequence[DTypeLike]], *, pack: int = 1,
               is_pure: bool = True) -> Union[Value, Tuple[Value, ...]]:
    """User PTX run elementwise over the broadcast inputs, as Triton's
    inline_asm_elementwise (ic.h, "inline PTX"): $0.. name the outputs' registers, then
    the inputs'; constraints list one letter a register ("=r,r"); pack groups elements
    along the last dim. One Value for a single dtype, a tuple for a list of them."""
    if isinstance(dtypes, (str, DType)):
        single, dts = True, [to_dtype(dtypes)]
    else:
        single, dts = False, [to_dtype(d) for d in dtypes]
    ins = list(inputs)
    for v in ins:
        _value(v, "inline_asm")
    g = graph_of(ins, "inline_asm")
    fn = api.ic_graph_inline_asm
    if fn is None:
        raise NotImplementedError("inline_asm: the loaded libic has no ic_graph_inline_asm")
    out_dt = (c_int * (len(dts) or 1))(*[int(d) for d in dts])
    desc = InlineAsmDesc(sizeof(InlineAsmDesc), asm.encode(), constraints.encode(), out_dt, int(bool(is_pure)),
                         int(pack))
    handles = (c_int32 * (len(ins) or 1))(*[v.handle for v in ins])
    outs = (c_int32 * (len(dts) or 1))()
    if int(fn(g._h(), byref(desc), len(ins), handles, len(dts), outs)) != 0:
        g._builder_error()
    values = tuple(Value(g, int(outs[k])) for k in range(len(dts)))
    return values[0] if single else values


def _value(x: Any, what: str) -> Value:
    if not isinstance(x, Value):
        raise TypeError(f"{what}: expected an ic.Value, got {type(x).__name__}")
    return x


# ---------------------------------------------------------------- ops the table adds

#: Ops of the loaded library that have no written-out function here (see the module doc).
GENERATED: List[str] = []


def _generated(name: str, arity: int) -> Callable[..., Value]:
    def op(*args: ValueLike) -> Value:
        return apply_op(name, *args)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"The op {name!r} of the C op table ({arity} operand{'s' if arity != 1 else ''})."
    return op


def _add_generated() -> None:
    g = globals()
    for name, arity in OP_ARITY.items():
        if name in CONVERSIONS or callable(g.get(name)) and getattr(g[name], "__module__", "") == __name__:
            continue
        if name in g and not callable(g[name]):
            continue
        g[name] = _generated(name, arity)
        GENERATED.append(name)
        __all__.append(name)
        if not hasattr(Value, name):
            fn = g[name]
            setattr(Value, name, lambda self, *o, _fn=fn: _fn(self, *o))


_add_generated()

#: The op functions of this module, by op name (those of the C table).
OPS = {name: globals()[name] for name in OP_CODES if name in globals()}
