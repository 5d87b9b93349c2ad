"""The op methods of ic.Value (``x.exp()``, ``x.maximum(y)``, ...).

Written out (not generated at import) so that type checkers see every method. Each one
is the module function of the same name (``ic.exp(x)``) with self as its first operand;
tests/python/test_ops.py checks that every op of the loaded C op table has both.
``gelu(approximate="none"|"tanh")`` is no op of the table: it picks gelu_erf or gelu_tanh,
as torch.nn.functional.gelu does.
Dtype classes (ic.h): FLOAT = f16 bf16 f32 f64 f8e4m3 f8e5m2; INT = u8 u16 u32 u64 i8 i16 i32 i64;
NUM = FLOAT + INT; ANY = NUM + bool; BITS = INT + bool.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._graph import Value, ValueLike


def gelu_op(approximate: str) -> str:
    """The op of ``gelu(x, approximate)``: "gelu_erf" for "none", "gelu_tanh" for "tanh"
    (torch.nn.functional.gelu's strings); ValueError for any other string."""
    if not isinstance(approximate, str):
        raise TypeError(f"gelu: approximate must be a str ('none' or 'tanh'), got {type(approximate).__name__}")
    if approximate == "none":
        return "gelu_erf"
    if approximate == "tanh":
        return "gelu_tanh"
    raise ValueError(f"gelu: approximate argument must be either 'none' or 'tanh', got {approximate!r}")


class OpMethods:
    """Mixin of ic.Value: one method per elementwise op of the C op table."""

    __slots__ = ()

    def _op(self, name: str, *others: "ValueLike") -> "Value":
        raise NotImplementedError  # ic.Value implements it

    def neg(self) -> "Value":
        """-x. Dtypes: NUM."""
        return self._op("neg")

    def exp(self) -> "Value":
        """e**x. Dtypes: FLOAT."""
        return self._op("exp")

    def log(self) -> "Value":
        """Natural logarithm. Dtypes: FLOAT."""
        return self._op("log")

    def sqrt(self) -> "Value":
        """Square root (IEEE-rounded). Dtypes: FLOAT."""
        return self._op("sqrt")

    def tanh(self) -> "Value":
        """Hyperbolic tangent. Dtypes: FLOAT."""
        return self._op("tanh")

    def sigmoid(self) -> "Value":
        """1 / (1 + exp(-x)). Dtypes: FLOAT."""
        return self._op("sigmoid")

    def relu(self) -> "Value":
        """x > 0 ? x : +0 (NaN stays NaN). Dtypes: NUM."""
        return self._op("relu")

    def gelu_tanh(self) -> "Value":
        """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3))). Dtypes: FLOAT."""
        return self._op("gelu_tanh")

    def abs(self) -> "Value":
        """|x|: clears the sign bit; integers wrap (abs(MIN) = MIN). Dtypes: NUM."""
        return self._op("abs")

    def exp2(self) -> "Value":
        """2**x. Dtypes: FLOAT."""
        return self._op("exp2")

    def expm1(self) -> "Value":
        """exp(x) - 1, accurate near 0. Dtypes: FLOAT."""
        return self._op("expm1")

    def log2(self) -> "Value":
        """Base-2 logarithm. Dtypes: FLOAT."""
        return self._op("log2")

    def log10(self) -> "Value":
        """Base-10 logarithm. Dtypes: FLOAT."""
        return self._op("log10")

    def log1p(self) -> "Value":
        """log(1 + x), accurate near 0. Dtypes: FLOAT."""
        return self._op("log1p")

    def rsqrt(self) -> "Value":
        """1 / sqrt(x), each step IEEE-rounded. Dtypes: FLOAT."""
        return self._op("rsqrt")

    def reciprocal(self) -> "Value":
        """1 / x, IEEE-rounded. Dtypes: FLOAT."""
        return self._op("reciprocal")

    def sin(self) -> "Value":
        """Sine. Dtypes: FLOAT."""
        return self._op("sin")

    def cos(self) -> "Value":
        """Cosine. Dtypes: FLOAT."""
        return self._op("cos")

    def tan(self) -> "Value":
        """Tangent. Dtypes: FLOAT."""
        return self._op("tan")

    def asin(self) -> "Value":
        """Arc sine. Dtypes: FLOAT."""
        return self._op("asin")

    def acos(self) -> "Value":
        """Arc cosine. Dtypes: FLOAT."""
        return self._op("acos")

    def atan(self) -> "Value":
        """Arc tangent. Dtypes: FLOAT."""
        return self._op("atan")

    def sinh(self) -> "Value":
        """Hyperbolic sine. Dtypes: FLOAT."""
        return self._op("sinh")

    def cosh(self) -> "Value":
        """Hyperbolic cosine. Dtypes: FLOAT."""
        return self._op("cosh")

    def asinh(self) -> "Value":
        """Inverse hyperbolic sine. Dtypes: FLOAT."""
        return self._op("asinh")

    def acosh(self) -> "Value":
        """Inverse hyperbolic cosine. Dtypes: FLOAT."""
        return self._op("acosh")

    def atanh(self) -> "Value":
        """Inverse hyperbolic tangent. Dtypes: FLOAT."""
        return self._op("atanh")

    def erf(self) -> "Value":
        """Error function. Dtypes: FLOAT."""
        return self._op("erf")

    def erfc(self) -> "Value":
        """Complementary error function. Dtypes: FLOAT."""
        return self._op("erfc")

    def silu(self) -> "Value":
        """x / (1 + exp(-x)). Dtypes: FLOAT."""
        return self._op("silu")

    def softplus(self) -> "Value":
        """x > 20 ? x : log1p(exp(x)). Dtypes: FLOAT."""
        return self._op("softplus")

    def gelu_erf(self) -> "Value":
        """0.5 x (1 + erf(x / sqrt(2))). Dtypes: FLOAT."""
        return self._op("gelu_erf")

    def gelu(self, approximate: str = "none") -> "Value":
        """GELU as torch.nn.functional.gelu: approximate="none" is gelu_erf (the exact
        form), "tanh" is gelu_tanh; any other string raises ValueError. Dtypes: FLOAT."""
        return self._op(gelu_op(approximate))

    def floor(self) -> "Value":
        """Rounds down (exact). Dtypes: FLOAT."""
        return self._op("floor")

    def ceil(self) -> "Value":
        """Rounds up (exact). Dtypes: FLOAT."""
        return self._op("ceil")

    def round(self) -> "Value":
        """Rounds half to even (exact). Dtypes: FLOAT."""
        return self._op("round")

    def trunc(self) -> "Value":
        """Rounds toward zero (exact). Dtypes: FLOAT."""
        return self._op("trunc")

    def frac(self) -> "Value":
        """x - trunc(x) (exact). Dtypes: FLOAT."""
        return self._op("frac")

    def sign(self) -> "Value":
        """1, -1, or x itself for +-0 (NaN gives NaN; integers 1, -1, 0). Dtypes: NUM."""
        return self._op("sign")

    def logical_not(self) -> "Value":
        """x == 0, as bool. Dtypes: ANY."""
        return self._op("logical_not")

    def bitwise_not(self) -> "Value":
        """~x (bool: not x). Dtypes: BITS."""
        return self._op("bitwise_not")

    def isnan(self) -> "Value":
        """x is NaN (bool). Dtypes: NUM."""
        return self._op("isnan")

    def isinf(self) -> "Value":
        """x is +-inf (bool). Dtypes: NUM."""
        return self._op("isinf")

    def isfinite(self) -> "Value":
        """x is neither inf nor NaN (bool). Dtypes: NUM."""
        return self._op("isfinite")

    def add(self, other: "ValueLike") -> "Value":
        """a + b. Dtypes: NUM."""
        return self._op("add", other)

    def sub(self, other: "ValueLike") -> "Value":
        """a - b. Dtypes: NUM."""
        return self._op("sub", other)

    def mul(self, other: "ValueLike") -> "Value":
        """a * b. Dtypes: NUM."""
        return self._op("mul", other)

    def div(self, other: "ValueLike") -> "Value":
        """a / b, true division (floating dtypes only). Dtypes: FLOAT."""
        return self._op("div", other)

    def maximum(self, other: "ValueLike") -> "Value":
        """The larger; NaN-propagating, maximum(-0, +0) = +0. Dtypes: NUM."""
        return self._op("maximum", other)

    def minimum(self, other: "ValueLike") -> "Value":
        """The smaller; NaN-propagating, minimum(-0, +0) = -0. Dtypes: NUM."""
        return self._op("minimum", other)

    def fmax(self, other: "ValueLike") -> "Value":
        """The larger, NaN-ignoring (a NaN operand gives the other). Dtypes: NUM."""
        return self._op("fmax", other)

    def fmin(self, other: "ValueLike") -> "Value":
        """The smaller, NaN-ignoring. Dtypes: NUM."""
        return self._op("fmin", other)

    def copysign(self, other: "ValueLike") -> "Value":
        """|a| with b's sign bit. Dtypes: FLOAT."""
        return self._op("copysign", other)

    def pow(self, other: "ValueLike") -> "Value":
        """a ** b. Dtypes: FLOAT."""
        return self._op("pow", other)

    def atan2(self, other: "ValueLike") -> "Value":
        """Arc tangent of a / b, in the quadrant of (b, a). Dtypes: FLOAT."""
        return self._op("atan2", other)

    def hypot(self, other: "ValueLike") -> "Value":
        """sqrt(a**2 + b**2) without overflow. Dtypes: FLOAT."""
        return self._op("hypot", other)

    def fmod(self, other: "ValueLike") -> "Value":
        """C fmod: the remainder with a's sign (integers: a - b * trunc(a / b)). Dtypes: NUM."""
        return self._op("fmod", other)

    def remainder(self, other: "ValueLike") -> "Value":
        """Python's a % b: the remainder with b's sign. Dtypes: NUM."""
        return self._op("remainder", other)

    def floor_divide(self, other: "ValueLike") -> "Value":
        """floor(a / b) (Python's a // b). Dtypes: NUM."""
        return self._op("floor_divide", other)

    def trunc_divide(self, other: "ValueLike") -> "Value":
        """trunc(a / b) (C's integer division). Dtypes: NUM."""
        return self._op("trunc_divide", other)

    def logical_and(self, other: "ValueLike") -> "Value":
        """a != 0 and b != 0 (bool). Dtypes: ANY."""
        return self._op("logical_and", other)

    def logical_or(self, other: "ValueLike") -> "Value":
        """a != 0 or b != 0 (bool). Dtypes: ANY."""
        return self._op("logical_or", other)

    def logical_xor(self, other: "ValueLike") -> "Value":
        """(a != 0) != (b != 0) (bool). Dtypes: ANY."""
        return self._op("logical_xor", other)

    def bitwise_and(self, other: "ValueLike") -> "Value":
        """a & b (integers and bool). Dtypes: BITS."""
        return self._op("bitwise_and", other)

    def bitwise_or(self, other: "ValueLike") -> "Value":
        """a | b (integers and bool). Dtypes: BITS."""
        return self._op("bitwise_or", other)

    def bitwise_xor(self, other: "ValueLike") -> "Value":
        """a ^ b (integers and bool). Dtypes: BITS."""
        return self._op("bitwise_xor", other)

    def shift_left(self, other: "ValueLike") -> "Value":
        """a << b; b < 0 or >= the width gives 0. Dtypes: INT."""
        return self._op("shift_left", other)

    def shift_right(self, other: "ValueLike") -> "Value":
        """a >> b (arithmetic for signed dtypes); b < 0 or >= the width gives 0 (-1 for negative a). Dtypes: INT."""
        return self._op("shift_right", other)

    def eq(self, other: "ValueLike") -> "Value":
        """a == b (bool). Dtypes: ANY."""
        return self._op("eq", other)

    def ne(self, other: "ValueLike") -> "Value":
        """a != b (bool; true for NaN). Dtypes: ANY."""
        return self._op("ne", other)

    def lt(self, other: "ValueLike") -> "Value":
        """a < b (bool). Dtypes: NUM."""
        return self._op("lt", other)

    def le(self, other: "ValueLike") -> "Value":
        """a <= b (bool). Dtypes: NUM."""
        return self._op("le", other)

    def gt(self, other: "ValueLike") -> "Value":
        """a > b (bool). Dtypes: NUM."""
        return self._op("gt", other)

    def ge(self, other: "ValueLike") -> "Value":
        """a >= b (bool). Dtypes: NUM."""
        return self._op("ge", other)

    def clamp(self, lo: "ValueLike", hi: "ValueLike") -> "Value":
        """minimum(maximum(x, lo), hi), NaN-propagating. Dtypes: NUM."""
        return self._op("clamp", lo, hi)

    def lerp(self, b: "ValueLike", w: "ValueLike") -> "Value":
        """a + w (b - a) (computed from the nearer end, each step IEEE-rounded). Dtypes: FLOAT."""
        return self._op("lerp", b, w)

    def fma(self, b: "ValueLike", c: "ValueLike") -> "Value":
        """a * b + c with one rounding. Dtypes: FLOAT."""
        return self._op("fma", b, c)
