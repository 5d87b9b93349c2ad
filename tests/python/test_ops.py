"""Every op of the C op table has a written-out Python function and method, and each one
computes what ic.h says, on the ref backend, fused and eager, against Python references
(the math module) on random inputs."""

from __future__ import annotations

import inspect
import math
import unittest
from fractions import Fraction
from typing import Any, Callable, Dict, List, Tuple

import ic
import ic._ops
from support import HAVE_NUMPY, flat, host, np, rng, round_to, ulps

# Ops whose Python reference is exact or correctly rounded: compared bit for bit.
EXACT = {"neg", "abs", "sqrt", "relu", "floor", "ceil", "round", "trunc", "frac", "sign", "reciprocal", "add", "sub",
         "mul", "div", "maximum", "minimum", "fmax", "fmin", "copysign", "fmod", "floor_divide", "trunc_divide",
         "clamp", "fma"}


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# The gelus are formulas whose f32 evaluation cancels for negative x (1 + tanh(...)
# near 0): their references round every step to the dtype, as ic computes them.
def _gelu_tanh(x: float, r: Callable[[float], float]) -> float:
    inner = r(r(0.7978845608028654) * r(x + r(r(0.044715) * r(r(x * x) * x))))
    return r(r(0.5 * x) * r(1.0 + r(math.tanh(inner))))


def _gelu_erf(x: float, r: Callable[[float], float]) -> float:
    return r(r(0.5 * x) * r(1.0 + r(math.erf(r(x * r(0.70710678118654752))))))


def _round_half_even(x: float) -> float:
    return float(round(x))


def _sign(x: float) -> float:
    return 1.0 if x > 0 else -1.0 if x < 0 else x


# name: (reference on doubles, low, high)
UNARY: Dict[str, Tuple[Callable[[float], float], float, float]] = {
    "neg": (lambda x: -x, -10, 10),
    "exp": (math.exp, -10, 10),
    "log": (math.log, 0.01, 100),
    "sqrt": (math.sqrt, 0, 100),
    "tanh": (math.tanh, -5, 5),
    "sigmoid": (_sigmoid, -10, 10),
    "relu": (lambda x: x if x > 0 else 0.0, -10, 10),
    "gelu_tanh": (lambda x: 0.0, -5, 5),  # STEPWISE
    "abs": (abs, -10, 10),
    "exp2": (lambda x: math.pow(2.0, x), -10, 10),
    "expm1": (math.expm1, -1, 1),
    "log2": (math.log2, 0.01, 100),
    "log10": (math.log10, 0.01, 100),
    "log1p": (math.log1p, -0.5, 10),
    "rsqrt": (lambda x: 1.0 / math.sqrt(x), 0.01, 100),
    "reciprocal": (lambda x: 1.0 / x, 0.1, 10),
    "sin": (math.sin, -1.5, 1.5),
    "cos": (math.cos, -1.5, 1.5),
    "tan": (math.tan, -1.2, 1.2),
    "asin": (math.asin, -0.99, 0.99),
    "acos": (math.acos, -0.99, 0.99),
    "atan": (math.atan, -10, 10),
    "sinh": (math.sinh, -5, 5),
    "cosh": (math.cosh, -5, 5),
    "asinh": (math.asinh, -10, 10),
    "acosh": (math.acosh, 1.01, 10),
    "atanh": (math.atanh, -0.99, 0.99),
    "erf": (math.erf, -3, 3),
    "erfc": (math.erfc, -3, 3),
    "silu": (lambda x: x / (1.0 + math.exp(-x)), -10, 10),
    "softplus": (lambda x: x if x > 20 else math.log1p(math.exp(x)), -10, 30),
    "gelu_erf": (lambda x: 0.0, -5, 5),  # STEPWISE
    "floor": (math.floor, -10, 10),
    "ceil": (math.ceil, -10, 10),
    "round": (_round_half_even, -10, 10),
    "trunc": (math.trunc, -10, 10),
    "frac": (lambda x: x - math.trunc(x), -10, 10),
    "sign": (_sign, -10, 10),
}


STEPWISE: Dict[str, Callable[[float, Callable[[float], float]], float]] = {
    "gelu_tanh": _gelu_tanh,
    "gelu_erf": _gelu_erf,
}


def _fma(a: float, b: float, c: float) -> float:
    return float(Fraction(a) * Fraction(b) + Fraction(c))


def _copysign(a: float, b: float) -> float:
    return math.copysign(a, b)


# name: (reference, low, high, b away from zero)
BINARY: Dict[str, Tuple[Callable[[float, float], float], float, float, bool]] = {
    "add": (lambda a, b: a + b, -10, 10, False),
    "sub": (lambda a, b: a - b, -10, 10, False),
    "mul": (lambda a, b: a * b, -10, 10, False),
    "div": (lambda a, b: a / b, -10, 10, True),
    "maximum": (max, -10, 10, False),
    "minimum": (min, -10, 10, False),
    "fmax": (max, -10, 10, False),
    "fmin": (min, -10, 10, False),
    "copysign": (_copysign, -10, 10, False),
    "pow": (math.pow, 0.1, 4, False),
    "atan2": (math.atan2, -10, 10, True),
    "hypot": (math.hypot, -10, 10, False),
    "fmod": (math.fmod, -10, 10, True),
    "floor_divide": (lambda a, b: float(math.floor(a / b)), -10, 10, True),
    "trunc_divide": (lambda a, b: float(math.trunc(a / b)), -10, 10, True),
}

# Ops that build bool values or work on integers and bool: tested with exact references.
INT_BINARY: Dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": max,
    "minimum": min,
    "fmax": max,
    "fmin": min,
    "fmod": lambda a, b: 0 if b == 0 else int(math.fmod(a, b)),
    "remainder": lambda a, b: 0 if b == 0 else a % b,
    "floor_divide": lambda a, b: 0 if b == 0 else a // b,
    "trunc_divide": lambda a, b: 0 if b == 0 else int(a / b) if abs(a) < 2 ** 52 else -(-a // b),
    "bitwise_and": lambda a, b: a & b,
    "bitwise_or": lambda a, b: a | b,
    "bitwise_xor": lambda a, b: a ^ b,
    "shift_left": lambda a, b: a << b if 0 <= b < 32 else 0,
    "shift_right": lambda a, b: a >> b if 0 <= b < 32 else (-1 if a < 0 else 0),
    "logical_and": lambda a, b: int(bool(a) and bool(b)),
    "logical_or": lambda a, b: int(bool(a) or bool(b)),
    "logical_xor": lambda a, b: int(bool(a) != bool(b)),
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "lt": lambda a, b: int(a < b),
    "le": lambda a, b: int(a <= b),
    "gt": lambda a, b: int(a > b),
    "ge": lambda a, b: int(a >= b),
}
INT_UNARY: Dict[str, Callable[[int], int]] = {
    "neg": lambda a: -a,
    "abs": abs,
    "relu": lambda a: max(a, 0),
    "sign": lambda a: (a > 0) - (a < 0),
    "bitwise_not": lambda a: ~a,
    "logical_not": lambda a: int(a == 0),
    "isnan": lambda a: 0,
    "isinf": lambda a: 0,
    "isfinite": lambda a: 1,
}


def _gelu_ref(x: float, approximate: str) -> float:
    """torch.nn.functional.gelu's definition, in double precision."""
    if approximate == "tanh":
        return 0.5 * x * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


class GeluTest(unittest.TestCase):
    """ic.gelu(input, approximate='none') with torch's signature and strings, against the
    formulas evaluated in double precision (and numpy's tanh where numpy is there)."""

    def test_signature_is_torchs(self) -> None:
        self.assertIn("gelu", ic.__all__)
        params = inspect.signature(ic.gelu).parameters
        self.assertEqual(list(params), ["input", "approximate"])
        self.assertEqual(params["approximate"].default, "none")
        m = inspect.signature(ic.Value.gelu).parameters
        self.assertEqual(list(m), ["self", "approximate"])
        self.assertEqual(m["approximate"].default, "none")
        self.assertTrue(ic.gelu.__doc__ and "tanh" in ic.gelu.__doc__)
        self.assertNotIn("gelu", ic.op_names())  # a choice between two ops, not an op of its own

    def test_values(self) -> None:
        r = rng(17)
        xs = [r.uniform(-6, 6) for _ in range(61)] + [0.0, -0.0, 1e-8, -1e-8, 30.0, -30.0, 3.0, -3.0]
        for dtype, tol in ((ic.f32, 2e-6), (ic.f64, 1e-13)):
            vals = [round_to(dtype, v) for v in xs]
            for mode in ("fused", "eager"):
                g = ic.Graph()
                x = g.input("x", dtype, (len(vals),))
                g.output("default", ic.gelu(x))
                g.output("none", ic.gelu(x, approximate="none"))
                g.output("tanh", ic.gelu(x, approximate="tanh"))
                g.output("method", x.gelu())
                g.output("method_tanh", x.gelu("tanh"))
                g.output("erf_op", ic.gelu_erf(x))
                g.output("tanh_op", ic.gelu_tanh(x))
                text = str(g)
                self.assertIn("gelu_erf(x)", text)
                self.assertIn("gelu_tanh(x)", text)
                prog = g.compile(backend="ref", mode=mode)
                outs = {k: flat(v) for k, v in zip(prog.outputs, prog(host(vals, dtype)))}
                with self.subTest(dtype=str(dtype), mode=mode):
                    # The same ops as the named ones, bit for bit.
                    for k in ("default", "none", "method"):
                        self.assertEqual(outs[k], outs["erf_op"], k)
                    for k in ("tanh", "method_tanh"):
                        self.assertEqual(outs[k], outs["tanh_op"], k)
                    for approximate, key in (("none", "none"), ("tanh", "tanh")):
                        for v, y in zip(vals, outs[key]):
                            want = _gelu_ref(v, approximate)
                            self.assertLessEqual(abs(y - want), tol * max(1.0, abs(want)),
                                                 f"gelu({v!r}, approximate={approximate!r}) = {y!r}, want {want!r}")
                    self.assertEqual(outs["none"][-4:-2], [30.0, 0.0])  # gelu(30) = 30, gelu(-30) = -0
                    if HAVE_NUMPY:
                        a = np.array(vals, dtype="float64")
                        ref = 0.5 * a * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (a + 0.044715 * a ** 3)))
                        err = np.abs(np.array(outs["tanh"], dtype="float64") - ref)
                        self.assertTrue(bool(np.all(err <= tol * np.maximum(1.0, np.abs(ref)))), err.max())

    def test_bad_approximate(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (3,))
        for bad in ("foo", "Tanh", "erf", "", "none "):
            with self.subTest(approximate=bad):
                with self.assertRaisesRegex(ValueError, "approximate argument must be either 'none' or 'tanh'"):
                    ic.gelu(x, approximate=bad)
                with self.assertRaisesRegex(ValueError, "approximate"):
                    x.gelu(bad)
        with self.assertRaisesRegex(TypeError, "approximate must be a str"):
            ic.gelu(x, approximate=None)  # type: ignore[arg-type]
        self.assertIsNone(g.error)  # refused before anything reached the graph
        with self.assertRaisesRegex(ic.InvalidGraphError, "gelu_erf: dtype i32 not accepted"):
            ic.gelu(g.input("i", ic.i32, (3,)))
        with self.assertRaisesRegex(TypeError, "ic.Value"):
            ic.gelu(1.0)  # type: ignore[arg-type]


def _wrap32(v: int) -> int:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


class OpTableTest(unittest.TestCase):
    def test_every_c_op_has_a_written_out_function(self) -> None:
        names = ic.op_names()
        self.assertIn("add", names)
        self.assertEqual(ic._ops.GENERATED, [],
                         "ops of the C table without a written-out function in python/ic/_ops.py "
                         "and a method in python/ic/_methods.py")
        for name in names:
            with self.subTest(op=name):
                fn = getattr(ic, name, None)
                self.assertTrue(callable(fn), f"ic.{name} missing")
                self.assertEqual(getattr(fn, "__module__", None), "ic._ops", f"ic.{name} is not the op function")
                self.assertIn(name, ic.__all__)
                self.assertTrue(fn.__doc__)

    def test_every_op_with_operands_has_a_method(self) -> None:
        skip = {"where", "cast", "cast_saturate", "bitcast"}  # module functions / methods of their own
        for name in ic.op_names():
            if name in skip:
                continue
            with self.subTest(op=name):
                m = getattr(ic.Value, name, None)
                assert m is not None and callable(m), f"ic.Value.{name} missing"
                fn = getattr(ic, name)
                nparams = len(inspect.signature(fn).parameters)
                self.assertEqual(len(inspect.signature(m).parameters), nparams, name)

    def test_arity_matches_the_table(self) -> None:
        from ic._graph import OP_ARITY

        for name, arity in OP_ARITY.items():
            if name in ("cast", "cast_saturate", "bitcast"):
                continue
            with self.subTest(op=name):
                self.assertEqual(len(inspect.signature(getattr(ic, name)).parameters), arity)

    def test_generated_functions_for_unknown_ops(self) -> None:
        # What a newer library's op gets until it is written out: a working function.
        fn = ic._ops._generated("add", 2)
        g = ic.Graph()
        x = g.input("x", ic.f32, (2,))
        v = fn(x, x)
        self.assertEqual(v.dtype, ic.f32)
        self.assertEqual(fn.__name__, "add")
        g.output("y", v)
        self.assertIn("add(x, x)", str(g))

    def test_wrong_operand_count(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (2,))
        with self.assertRaisesRegex(TypeError, "add takes 2 operands, got 1"):
            ic._graph.apply_op("add", x)
        with self.assertRaisesRegex(ic.UnsupportedError, "not in the loaded libic"):
            ic._graph.apply_op("no_such_op", x)
        with self.assertRaisesRegex(TypeError, "at least one ic.Value"):
            ic.add(1.0, 2.0)


def _run_unary(dtype: ic.DType, mode: str, n: int) -> Dict[str, Tuple[List[float], List[float]]]:
    """One program with every unary float op (one input each): inputs and outputs."""
    r = rng(11)
    g = ic.Graph()
    size = g.symbol("n")
    inputs: Dict[str, List[float]] = {}
    for name, (_, lo, hi) in UNARY.items():
        x = g.input(f"x_{name}", dtype, (size,))
        g.output(name, getattr(ic, name)(x))
        inputs[name] = [round_to(dtype, r.uniform(lo, hi)) for _ in range(n)]
    prog = g.compile(backend="ref", mode=mode)
    outs = prog(**{f"x_{k}": host(v, dtype) for k, v in inputs.items()})
    return {name: (inputs[name], flat(o)) for name, o in zip(prog.outputs, outs)}


class FloatOpsTest(unittest.TestCase):
    def check_unary(self, dtype: ic.DType, mode: str) -> None:
        results = _run_unary(dtype, mode, 37)
        for name, (xs, ys) in results.items():
            ref = UNARY[name][0]
            tol = 0 if name in EXACT else 4
            with self.subTest(op=name, dtype=str(dtype), mode=mode):
                for x, y in zip(xs, ys):
                    if name in STEPWISE:
                        want = STEPWISE[name](x, lambda v: round_to(dtype, v))
                    else:
                        want = round_to(dtype, float(ref(x)))
                    self.assertLessEqual(ulps(y, want, dtype), tol, f"{name}({x!r}) = {y!r}, want {want!r}")

    def test_unary_f32_fused(self) -> None:
        self.check_unary(ic.f32, "fused")

    def test_unary_f32_eager(self) -> None:
        self.check_unary(ic.f32, "eager")

    def test_unary_f64_fused(self) -> None:
        self.check_unary(ic.f64, "fused")

    def test_unary_f64_eager(self) -> None:
        self.check_unary(ic.f64, "eager")

    def check_binary(self, dtype: ic.DType, mode: str) -> None:
        r = rng(5)
        n = 29
        g = ic.Graph()
        data: Dict[str, Tuple[List[float], List[float]]] = {}
        for name, (_, lo, hi, nonzero) in BINARY.items():
            a = g.input(f"a_{name}", dtype, (n,))
            b = g.input(f"b_{name}", dtype, (n,))
            g.output(name, getattr(ic, name)(a, b))
            xa = [round_to(dtype, r.uniform(lo, hi)) for _ in range(n)]
            xb = [round_to(dtype, r.uniform(lo, hi)) for _ in range(n)]
            if nonzero:
                xb = [v if abs(v) > 0.5 else 1.5 for v in xb]
            data[name] = (xa, xb)
        # remainder: Python's a % b, each step IEEE-rounded (a - b * floor(a / b))
        a = g.input("a_remainder", dtype, (n,))
        b = g.input("b_remainder", dtype, (n,))
        g.output("remainder", a % b)
        data["remainder"] = ([round_to(dtype, r.uniform(-10, 10)) for _ in range(n)],
                             [round_to(dtype, r.choice([-1, 1]) * r.uniform(0.5, 10)) for _ in range(n)])
        prog = g.compile(backend="ref", mode=mode)
        feeds: Dict[str, Any] = {}
        for name, (xa, xb) in data.items():
            feeds[f"a_{name}"] = host(xa, dtype)
            feeds[f"b_{name}"] = host(xb, dtype)
        outs = dict(zip(prog.outputs, prog(**feeds)))
        for name, (xa, xb) in data.items():
            ys = flat(outs[name])
            tol = 0 if name in EXACT else 4
            with self.subTest(op=name, dtype=str(dtype), mode=mode):
                for x1, x2, y in zip(xa, xb, ys):
                    if name == "remainder":
                        q = round_to(dtype, math.floor(round_to(dtype, x1 / x2)))
                        want = round_to(dtype, x1 - round_to(dtype, x2 * q))
                    else:
                        want = round_to(dtype, float(BINARY[name][0](x1, x2)))
                    self.assertLessEqual(ulps(y, want, dtype), tol, f"{name}({x1!r}, {x2!r}) = {y!r}, want {want!r}")

    def test_binary_f32_fused(self) -> None:
        self.check_binary(ic.f32, "fused")

    def test_binary_f32_eager(self) -> None:
        self.check_binary(ic.f32, "eager")

    def test_binary_f64(self) -> None:
        self.check_binary(ic.f64, "fused")

    def test_ternary(self) -> None:
        r = rng(9)
        n = 31
        for dtype in (ic.f32, ic.f64):
            g = ic.Graph()
            a, b, c = (g.input(k, dtype, (n,)) for k in "abc")
            cond = g.input("cond", ic.bool_, (n,))
            g.output("fma", ic.fma(a, b, c))
            g.output("clamp", ic.clamp(a, -1.0, 2.0))
            g.output("lerp", ic.lerp(a, b, c))
            g.output("where", ic.where(cond, a, b))
            prog = g.compile(backend="ref")
            xa = [round_to(dtype, r.uniform(-4, 4)) for _ in range(n)]
            xb = [round_to(dtype, r.uniform(-4, 4)) for _ in range(n)]
            xc = [round_to(dtype, r.uniform(0, 1)) for _ in range(n)]
            xs = [r.random() < 0.5 for _ in range(n)]
            outs = dict(zip(prog.outputs, prog(host(xa, dtype), host(xb, dtype), host(xc, dtype),
                                               host(xs, ic.bool_))))
            for i in range(n):
                with self.subTest(dtype=str(dtype), i=i):
                    self.assertEqual(flat(outs["fma"])[i], round_to(dtype, _fma(xa[i], xb[i], xc[i])))
                    self.assertEqual(flat(outs["clamp"])[i], min(max(xa[i], -1.0), 2.0))
                    self.assertEqual(flat(outs["where"])[i], xa[i] if xs[i] else xb[i])
                    w = xc[i]
                    if w < 0.5:
                        want = round_to(dtype, xa[i] + round_to(dtype, w * round_to(dtype, xb[i] - xa[i])))
                    else:
                        want = round_to(dtype, xb[i] - round_to(dtype, round_to(dtype, xb[i] - xa[i]) * (1 - w)))
                    self.assertLessEqual(ulps(flat(outs["lerp"])[i], want, dtype), 1)

    def test_special_values(self) -> None:
        vals = [0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -2.5]
        g = ic.Graph()
        x = g.input("x", ic.f32, (len(vals),))
        g.output("isnan", ic.isnan(x))
        g.output("isinf", ic.isinf(x))
        g.output("isfinite", ic.isfinite(x))
        g.output("not", ic.logical_not(x))
        g.output("relu", x.relu())
        g.output("maximum", ic.maximum(x, 0.0))
        g.output("fmax", ic.fmax(x, 0.0))
        prog = g.compile(backend="ref")
        outs = dict(zip(prog.outputs, prog(host(vals, ic.f32))))
        self.assertEqual(flat(outs["isnan"]), [math.isnan(v) for v in vals])
        self.assertEqual(flat(outs["isinf"]), [math.isinf(v) for v in vals])
        self.assertEqual(flat(outs["isfinite"]), [math.isfinite(v) for v in vals])
        self.assertEqual(flat(outs["not"]), [v == 0 for v in vals])
        relu = flat(outs["relu"])
        self.assertTrue(math.isnan(relu[4]))
        self.assertEqual(math.copysign(1, relu[1]), 1.0)  # relu(-0) = +0
        self.assertTrue(math.isnan(flat(outs["maximum"])[4]))  # NaN-propagating
        self.assertEqual(flat(outs["fmax"])[4], 0.0)  # NaN-ignoring


class IntOpsTest(unittest.TestCase):
    def test_i32(self) -> None:
        r = rng(3)
        n = 41
        xa = [r.randint(-1000, 1000) for _ in range(n - 3)] + [-(2 ** 31), 2 ** 31 - 1, 7]
        xb = [r.randint(-40, 40) for _ in range(n - 3)] + [-1, 1, 0]
        for mode in ("fused", "eager"):
            g = ic.Graph()
            a = g.input("a", ic.i32, (n,))
            b = g.input("b", ic.i32, (n,))
            for name in INT_BINARY:
                g.output(name, getattr(ic, name)(a, b))
            for name in INT_UNARY:
                g.output("u_" + name, getattr(ic, name)(a))
            prog = g.compile(backend="ref", mode=mode)
            outs = dict(zip(prog.outputs, prog(host(xa, ic.i32), host(xb, ic.i32))))
            for name, ref in INT_BINARY.items():
                got = [int(v) for v in flat(outs[name])]
                with self.subTest(op=name, mode=mode):
                    for x1, x2, y in zip(xa, xb, got):
                        if name in ("shift_left", "shift_right") and not 0 <= x2 < 32:
                            want = 0 if name == "shift_left" else (-1 if x1 < 0 else 0)
                        elif x1 == -(2 ** 31) and x2 == -1 and name in ("floor_divide", "trunc_divide"):
                            want = -(2 ** 31)  # MIN / -1 wraps
                        elif x1 == -(2 ** 31) and x2 == -1 and name in ("fmod", "remainder"):
                            want = 0
                        else:
                            want = ref(x1, x2)
                        want = _wrap32(want) if name not in ("logical_and", "logical_or", "logical_xor", "eq", "ne",
                                                             "lt", "le", "gt", "ge") else want
                        self.assertEqual(y, want, f"{name}({x1}, {x2})")
            for name, uref in INT_UNARY.items():
                got = [int(v) for v in flat(outs["u_" + name])]
                with self.subTest(op=name, mode=mode):
                    self.assertEqual(got, [_wrap32(uref(x)) if name not in ("logical_not", "isnan", "isinf",
                                                                            "isfinite") else uref(x) for x in xa])

    def test_operators_on_ints_and_bools(self) -> None:
        g = ic.Graph()
        a = g.input("a", ic.i64, (4,))
        b = g.input("b", ic.i64, (4,))
        p = g.input("p", ic.bool_, (4,))
        q = g.input("q", ic.bool_, (4,))
        g.output("and", a & b)
        g.output("or", a | b)
        g.output("xor", a ^ b)
        g.output("inv", ~a)
        g.output("shl", a << 2)
        g.output("shr", a >> 1)
        g.output("floordiv", a // b)
        g.output("mod", a % b)
        g.output("band", p & q)
        g.output("bnot", ~p)
        g.output("rsub", 10 - a)
        prog = g.compile(backend="ref")
        xa, xb = [5, -7, 12, 2 ** 40], [3, 2, -5, 7]
        xp, xq = [True, True, False, False], [True, False, True, False]
        outs = dict(zip(prog.outputs, prog(host(xa, ic.i64), host(xb, ic.i64), host(xp, ic.bool_),
                                           host(xq, ic.bool_))))
        ints = {k: [int(v) for v in flat(o)] for k, o in outs.items()}
        self.assertEqual(ints["and"], [x & y for x, y in zip(xa, xb)])
        self.assertEqual(ints["or"], [x | y for x, y in zip(xa, xb)])
        self.assertEqual(ints["xor"], [x ^ y for x, y in zip(xa, xb)])
        self.assertEqual(ints["inv"], [~x for x in xa])
        self.assertEqual(ints["shl"], [x << 2 for x in xa])
        self.assertEqual(ints["shr"], [x >> 1 for x in xa])
        self.assertEqual(ints["floordiv"], [x // y for x, y in zip(xa, xb)])
        self.assertEqual(ints["mod"], [x % y for x, y in zip(xa, xb)])
        self.assertEqual(ints["rsub"], [10 - x for x in xa])
        self.assertEqual([bool(v) for v in flat(outs["band"])], [x and y for x, y in zip(xp, xq)])
        self.assertEqual([bool(v) for v in flat(outs["bnot"])], [not x for x in xp])
        with self.assertRaisesRegex(ic.InvalidGraphError, "div"):
            ic.Graph().input("i", ic.i32, (2,)) / 2


if __name__ == "__main__":
    unittest.main()


class ReductionTest(unittest.TestCase):
    """The reductions of ic.h (sum, mean, prod, max, min, argmax, argmin, any, all) and
    their decompositions (var, std, softmax, log_softmax, layer_norm, rms_norm)."""

    def setUp(self) -> None:
        if not ic._graph.REDUCE_CODES:
            self.skipTest("the loaded libic has no reductions")

    def test_every_c_reduction_has_a_function_and_method(self) -> None:
        for name in ic._graph.REDUCE_CODES:
            with self.subTest(reduction=name):
                self.assertTrue(callable(getattr(ic, name, None)), f"ic.{name} missing")
                self.assertIn(name, ic.__all__)
                self.assertTrue(callable(getattr(ic.Value, name, None)), f"ic.Value.{name} missing")

    def rows_of(self, dtype: ic.DType) -> List[List[float]]:
        r = rng(21)
        rows = [[round_to(dtype, r.uniform(-2, 2)) for _ in range(13)] for _ in range(5)]
        rows[1][3] = rows[1][7] = 5.0  # a tie: argmax takes the first
        rows[2] = [0.0] * 13
        return rows

    def test_reductions_over_rows(self) -> None:
        for mode in ("fused", "eager"):
            for dtype in (ic.f32, ic.f64):
                rows = self.rows_of(dtype)
                g = ic.Graph()
                n = g.symbol("n")
                x = g.input("x", dtype, (n, 13))
                outs = {
                    "sum": ic.sum(x, 1), "mean": x.mean(-1), "prod": ic.prod(x, 1), "max": ic.max(x, 1),
                    "min": x.min(1), "argmax": ic.argmax(x, 1), "argmin": x.argmin(1), "any": ic.any(x, 1),
                    "all": x.all(1), "var": ic.var(x, 1), "std": x.std(1, correction=0),
                    "mean1": ic.mean(x, 1, correction=1), "total": ic.reduce(x, "sum"),
                    "keep": ic.sum(x, 1, keepdim=True),
                }
                for k, v in outs.items():
                    g.output(k, v)
                self.assertEqual(outs["argmax"].dtype, ic.i64)
                self.assertEqual(outs["keep"].shape, (n, 1))
                self.assertEqual(outs["total"].shape, ())
                prog = g.compile(backend="ref", mode=mode)
                res = dict(zip(prog.outputs, prog(host([v for row in rows for v in row], dtype, (5, 13)))))
                for k in outs:
                    got = flat(res[k])
                    for i, row in enumerate(rows):
                        m = math.fsum(row) / len(row)
                        var1 = math.fsum((v - m) ** 2 for v in row)
                        want: Any = {
                            "sum": math.fsum(row), "mean": m, "prod": math.prod(row), "max": max(row),
                            "min": min(row), "argmax": row.index(max(row)), "argmin": row.index(min(row)),
                            "any": any(v != 0 for v in row), "all": all(v != 0 for v in row),
                            "var": var1 / 12, "std": math.sqrt(var1 / 13), "mean1": math.fsum(row) / 12,
                            "total": math.fsum(v for rr in rows for v in rr), "keep": math.fsum(row),
                        }[k]
                        if k == "total" and i > 0:
                            break
                        with self.subTest(op=k, row=i, dtype=str(dtype), mode=mode):
                            if isinstance(want, (bool, int)) and k not in ("sum", "total", "keep"):
                                self.assertEqual(got[i], want)
                            else:
                                self.assertAlmostEqual(got[i], want, delta=1e-5 * max(1.0, abs(want)))

    def test_integer_sum_is_i64(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.i32, (3,))
        s = ic.sum(x)
        self.assertEqual(s.dtype, ic.i64)
        g.output("s", s)
        self.assertEqual(flat(g.compile(backend="ref")(host([2 ** 31 - 1, 2 ** 31 - 1, 5], ic.i32))),
                         [2 ** 32 + 3])

    def test_softmax_and_norms(self) -> None:
        rows = self.rows_of(ic.f32)
        g = ic.Graph()
        x = g.input("x", ic.f32, (5, 13))
        w = g.input("w", ic.f32, (13,))
        b = g.input("b", ic.f32, (13,))
        g.output("softmax", ic.softmax(x))
        g.output("log_softmax", x.log_softmax(1))
        g.output("layer_norm", ic.layer_norm(x, 1, w, b, eps=1e-5))
        g.output("rms_norm", ic.rms_norm(x, weight=w))
        g.output("plain_ln", ic.layer_norm(x))
        prog = g.compile(backend="ref")
        ws = [round_to(ic.f32, 0.5 + 0.1 * i) for i in range(13)]
        bs = [round_to(ic.f32, -0.2 * i) for i in range(13)]
        res = dict(zip(prog.outputs, prog(host([v for row in rows for v in row], ic.f32, (5, 13)), host(ws, ic.f32),
                                          host(bs, ic.f32))))
        for i, row in enumerate(rows):
            mx = max(row)
            e = [math.exp(v - mx) for v in row]
            se = math.fsum(e)
            m = math.fsum(row) / 13
            var = math.fsum((v - m) ** 2 for v in row) / 13
            ms = math.fsum(v * v for v in row) / 13
            want = {
                "softmax": [v / se for v in e],
                "log_softmax": [v - mx - math.log(se) for v in row],
                "layer_norm": [(v - m) / math.sqrt(var + 1e-5) * ws[j] + bs[j] for j, v in enumerate(row)],
                "rms_norm": [v / math.sqrt(ms + 1e-6) * ws[j] for j, v in enumerate(row)],
                "plain_ln": [(v - m) / math.sqrt(var + 1e-5) for v in row],
            }
            for k, vals in want.items():
                got = flat(res[k])[i * 13:(i + 1) * 13]
                with self.subTest(op=k, row=i):
                    for a, bb in zip(got, vals):
                        self.assertAlmostEqual(a, bb, delta=2e-5 * max(1.0, abs(bb)))

    def test_reduction_errors(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (3, 4))
        with self.assertRaisesRegex(ValueError, "axes=None"):
            ic.sum(x, ())
        with self.assertRaisesRegex(ic.UnsupportedError, "not in the loaded libic"):
            ic.reduce(x, "median")
        self.assertIsNone(g.error)
        with self.assertRaises(ic.InvalidGraphError):
            ic.sum(x, 5)
        i = ic.Graph().input("i", ic.i32, (3,))
        with self.assertRaisesRegex(ic.InvalidGraphError, "mean"):
            ic.mean(i)
