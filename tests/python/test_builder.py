"""The builder: graphs, symbols, values, operators, views, indexing, the text format and
the errors the C builder reports."""

from __future__ import annotations

import math
import unittest
from typing import Any, Callable, List, Tuple

import ic
from support import flat, host, shape_of


class GraphTest(unittest.TestCase):
    def test_shapes_and_symbols(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        self.assertIs(g.symbol("n"), n)  # the same name gives the same symbol
        self.assertEqual(n.name, "n")
        self.assertLess(n.dim, 0)
        x = g.input("x", ic.f32, (n, 4096))
        w = g.input("w", "bf16", [4096])
        self.assertEqual(x.dtype, ic.f32)
        self.assertEqual(w.dtype, ic.bf16)
        self.assertEqual(x.ndim, 2)
        self.assertEqual(x.shape, (n, 4096))
        self.assertIs(x.shape[0], n)
        y = x[1:]  # size max(n - 1, 0): an expression, reported as None
        self.assertEqual(y.shape, (None, 4096))
        s = g.input("s", ic.i32, ())
        self.assertEqual(s.shape, ())
        self.assertEqual(g.inputs, ["x", "w", "s"])
        self.assertIn("f32[n, 4096]", repr(x))

    def test_constants(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f16, (3,))
        c = g.constant(0.5)
        self.assertEqual((x * c).dtype, ic.f16)  # AUTO takes the tensor's dtype
        t = g.constant(2, ic.i64)
        self.assertEqual(t.dtype, ic.i64)
        self.assertEqual(t.shape, ())
        with self.assertRaises(TypeError):
            g.constant("1")  # type: ignore[arg-type]
        self.assertEqual((x + 1).dtype, ic.f16)
        self.assertEqual((2 * x).dtype, ic.f16)

    def test_dtype_spellings(self) -> None:
        g = ic.Graph()
        spellings: List[Tuple[ic.DTypeLike, ic.DType]] = [("f32", ic.f32), ("float32", ic.f32), ("bfloat16", ic.bf16), ("bool", ic.bool_),
                               ("f8e4m3", ic.f8e4m3), (ic.DType.I16, ic.i16)]
        for spelling, want in spellings:
            self.assertEqual(g.input(f"in_{want}_{len(g.inputs)}", spelling, (1,)).dtype, want)
        with self.assertRaisesRegex(ValueError, "unknown dtype 'float31'"):
            g.input("bad", "float31", (1,))
        with self.assertRaisesRegex(ValueError, "constants only"):
            g.input("auto", ic.DType.AUTO, (1,))
        self.assertEqual(str(ic.bf16), "bf16")
        self.assertEqual(ic.dtype_size(ic.f64), 8)
        self.assertEqual(ic.f8e5m2.itemsize, 1)

    def test_operators_build_the_ops(self) -> None:
        g = ic.Graph()
        a = g.input("a", ic.f32, (3,))
        b = g.input("b", ic.f32, (3,))
        cases = {
            "add": a + b, "sub": a - b, "mul": a * b, "div": a / b, "floor_divide": a // b, "remainder": a % b,
            "pow": a ** b, "neg": -a, "abs": abs(a), "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
            "eq": a == b, "ne": a != b,
        }
        for i, (op, v) in enumerate(cases.items()):
            v.named(f"v{i}_{op}")
            g.output(f"o{i}", v)
        text = str(g)
        for i, op in enumerate(cases):
            self.assertIn(f"v{i}_{op} = {op}(", text)
        self.assertIs(+a, a)
        self.assertEqual((a < b).dtype, ic.bool_)
        self.assertEqual(a.eq(b).dtype, ic.bool_)
        self.assertEqual(a.maximum(b).dtype, ic.f32)
        self.assertEqual(a.exp().dtype, ic.f32)

    def test_values_have_no_truth_value(self) -> None:
        g = ic.Graph()
        a = g.input("a", ic.f32, (3,))
        with self.assertRaisesRegex(TypeError, "no truth value"):
            bool(a == 0)
        with self.assertRaisesRegex(TypeError, "not iterable"):
            list(a)
        self.assertEqual(len({a, a}), 1)  # hashable by identity
        self.assertIn(a, {a: 1})

    def test_builder_errors_carry_the_c_message(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (3,))
        i = g.input("i", ic.i32, (3,))
        with self.assertRaises(ic.InvalidGraphError) as cm:
            x + i
        self.assertEqual(cm.exception.status, ic.Status.INVALID_GRAPH)
        self.assertTrue(str(cm.exception).startswith("dtype mismatch: f32 vs i32: add: operand dtypes differ"))
        self.assertIsInstance(cm.exception, ic.Error)
        self.assertIsInstance(cm.exception, ValueError)
        # The graph keeps its first error: later failures say so, outputs are refused.
        with self.assertRaisesRegex(ic.InvalidGraphError, "squeeze.*earlier error: dtype mismatch: f32 vs i32: add"):
            x.squeeze(0)
        self.assertIn("add: operand dtypes differ", g.error or "")
        with self.assertRaisesRegex(ic.InvalidGraphError, "holds an error"):
            g.output("y", x * 2)
        with self.assertRaises(ic.InvalidGraphError):
            g.compile(backend="ref")

    def test_more_builder_errors(self) -> None:
        cases: List[Tuple[Callable[[ic.Graph, ic.Value], object], str]] = [
            (lambda g, x: ic.exp(g.input("k", ic.i32, (3,))), "exp: dtype i32 not accepted"),
            (lambda g, x: x.reshape(5), "reshape"),
            (lambda g, x: x + g.input("z", ic.f32, (4,)), "do not broadcast"),
            (lambda g, x: g.input("x", ic.f32, (3,)), "x"),  # duplicate input name
            (lambda g, x: ic.where(x, x, x), "where"),
            (lambda g, x: x.bitcast(ic.i16), "bitcast"),
            (lambda g, x: x.permute(0, 0), "permute"),
            (lambda g, x: x.slice(0, 0, 2, 0), "step cannot be zero"),
        ]
        for build, text in cases:
            g = ic.Graph()
            x = g.input("x", ic.f32, (3,))
            with self.subTest(text=text):
                with self.assertRaisesRegex((ic.Error, ValueError), text):
                    build(g, x)

    def test_python_type_errors(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (3,))
        with self.assertRaises(TypeError):
            x + "a"  # type: ignore[operator]
        with self.assertRaises(TypeError):
            g.input("y", ic.f32, ("n",))  # type: ignore[arg-type]
        with self.assertRaisesRegex(ValueError, "negative size"):
            g.input("y", ic.f32, (-2,))
        with self.assertRaisesRegex(ValueError, "at most 8"):
            g.input("y", ic.f32, (1,) * 9)
        with self.assertRaises(TypeError):
            g.input(3, ic.f32, (1,))  # type: ignore[arg-type]
        with self.assertRaisesRegex(ValueError, "NUL"):
            g.input("a\0b", ic.f32, (1,))
        with self.assertRaisesRegex(ValueError, "unknown layout"):
            g.input("y", ic.f32, (1,), layout="diagonal")
        other = ic.Graph()
        z = other.input("z", ic.f32, (3,))
        with self.assertRaisesRegex(ValueError, "different graphs"):
            x + z
        with self.assertRaisesRegex(ValueError, "another graph"):
            g.output("w", z)
        with self.assertRaisesRegex(ValueError, "another graph"):
            g.input("w", ic.f32, (other.symbol("n"),))

    def test_closed_graph(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (3,))
        g.close()
        g.close()  # idempotent
        self.assertTrue(g.closed)
        with self.assertRaisesRegex(ic.Error, "closed"):
            x + 1
        with self.assertRaisesRegex(ic.Error, "closed"):
            str(g)
        with ic.Graph() as g2:
            g2.input("x", ic.f32, (1,))
        self.assertTrue(g2.closed)

    def test_print_rejects_non_text_names(self) -> None:
        g = ic.Graph()
        x = g.input("has space", ic.f32, (2,))
        g.output("y", x + 1)
        with self.assertRaises(ic.UnsupportedError):
            str(g)


class TextFormatTest(unittest.TestCase):
    SOURCE = """# y = gelu_tanh(x * w + b)
symbol n
input x : f32[n, 64]
input w : f32[64]
input b : f32[64]
xw = mul(x, w)
h = add(xw, b)
y = gelu_tanh(h)
output y
"""

    def test_round_trip(self) -> None:
        g = ic.Graph.parse(self.SOURCE)
        text = str(g)
        again = str(ic.Graph.parse(text))
        self.assertEqual(text, again)
        self.assertIn("gelu_tanh", text)
        self.assertEqual(g.inputs, ["x", "w", "b"])
        self.assertEqual(g.outputs, ["y"])
        prog = g.compile(backend="ref")
        self.assertEqual(prog.inputs, ["x", "w", "b"])
        self.assertEqual(prog.outputs, ["y"])

    def test_builder_graph_round_trips(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.f32, (n, 8), layout="strided")
        y = ic.concat([x[:, ::2], x[:, 1::2]], dim=1).pad([1, 2], 0.5).named("padded")
        g.output("y", ic.cast(y, ic.bf16))
        text = str(g)
        self.assertIn("strided", text)
        self.assertIn("padded = pad(", text)
        self.assertEqual(str(ic.Graph.parse(text)), text)

    def test_parse_errors_name_line_and_column(self) -> None:
        with self.assertRaisesRegex(ic.InvalidGraphError, "line 3, column 5: unknown op 'mull'"):
            ic.Graph.parse("symbol n\ninput x : f32[n]\ny = mull(x, x)\noutput y\n")
        with self.assertRaises(ic.InvalidGraphError):
            ic.Graph.parse("input x : f33[3]")

    def test_parsed_symbols_are_named(self) -> None:
        g = ic.Graph.parse(self.SOURCE)
        self.assertEqual(g.symbol("n").name, "n")


def _indexer(key: Tuple[Any, ...]) -> Callable[[ic.Value], ic.Value]:
    return lambda x: x[key]


class InlineAsmTest(unittest.TestCase):
    def test_outputs_text_and_errors(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.f32, (n, 8))
        q = ic.inline_asm("cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;", "=h,f,f", [x], ic.f8e4m3, pack=2)
        self.assertIsInstance(q, ic.Value)
        pair = ic.inline_asm("mov.b32 $0, $2;\ncvt.rzi.s32.f32 $1, $2;", "=f,=r,f", [x], [ic.f32, "i32"],
                             is_pure=False)
        self.assertIsInstance(pair, tuple)
        a, b = pair
        self.assertEqual((a.dtype, b.dtype), (ic.f32, ic.i32))
        g.output("q", q)  # type: ignore[arg-type]
        g.output("b", b)
        text = str(g)
        self.assertIn('inline_asm("cvt.rn.satfinite.e4m3x2.f32 $0, $2, $1;", "=h,f,f", [x], [f8e4m3], pack=2)', text)
        self.assertIn("[f32, i32], pack=1, impure)", text)
        self.assertEqual(str(ic.Graph.parse(text)), text)
        with self.assertRaises(ic.InvalidGraphError) as cm:
            ic.inline_asm("mov.b32 $0, $1;", "=r", [x], ic.f32)
        self.assertIn("input 0 needs more", str(cm.exception))
        with self.assertRaises(ic.InvalidGraphError):
            ic.inline_asm("mov.b32 $0, $1;", "=r,r", [x], ic.f32, pack=3)
        # the ref backend cannot run PTX
        g2 = ic.Graph()
        y = g2.input("y", ic.f32, (4,))
        g2.output("z", ic.inline_asm("mov.b32 $0, $1;", "=r,r", [y], ic.f32))  # type: ignore[arg-type]
        with self.assertRaises(ic.UnsupportedError) as ce:
            g2.compile(backend="ref")
        self.assertIn("cannot run PTX", str(ce.exception))


class ViewTest(unittest.TestCase):
    """Views and indexing, checked by running them on ref against Python slicing."""

    def run1(self, build: Callable[[ic.Value], ic.Value], shape: Tuple[int, ...]) -> Tuple[List[Any], Tuple[int, ...]]:
        g = ic.Graph()
        x = g.input("x", ic.f32, shape)
        y = build(x)
        g.output("y", y)
        n = math.prod(shape)
        vals = [float(i) for i in range(n)]
        out = g.compile(backend="ref")(host(vals, ic.f32, shape))
        return flat(out), shape_of(out)

    def test_indexing(self) -> None:
        rows, cols = 5, 7
        data = [[float(r * cols + c) for c in range(cols)] for r in range(rows)]
        cases: List[Tuple[Tuple[Any, ...], List[Any]]] = [
            ((slice(1, None),), [row for row in data[1:]]),
            ((slice(None, None, 2), slice(1, 6, 2)), [row[1:6:2] for row in data[::2]]),
            ((slice(None, None, -1),), data[::-1]),
            ((Ellipsis, slice(-3, None)), [row[-3:] for row in data]),
            ((slice(-2, -5, -1), slice(None, None, -3)), [row[::-3] for row in data[-2:-5:-1]]),
            ((2,), data[2]),
            ((-1, slice(None, 3)), data[-1][:3]),
            ((slice(4, 1),), []),
            ((slice(None), -7), [row[-7] for row in data]),
        ]
        for key, want in cases:
            with self.subTest(key=key):
                got, shape = self.run1(_indexer(key), (rows, cols))
                flat_want = [v for row in want for v in row] if want and isinstance(want[0], list) else want
                self.assertEqual(got, flat_want)
        got, shape = self.run1(lambda x: x[None, 1, ..., None], (rows, cols))
        self.assertEqual(shape, (1, cols, 1))
        self.assertEqual(got, data[1])

    def test_index_errors(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.f32, (3, 4))
        s = g.input("s", ic.f32, (n,))
        with self.assertRaisesRegex(IndexError, "out of range"):
            x[3]
        with self.assertRaisesRegex(IndexError, "out of range"):
            x[:, -5]
        with self.assertRaisesRegex(IndexError, "too many"):
            x[0, 0, 0]
        with self.assertRaisesRegex(IndexError, "single ellipsis"):
            x[..., ...]
        with self.assertRaisesRegex(IndexError, "symbolic size"):
            s[0]
        with self.assertRaisesRegex(TypeError, "indexes"):
            x["a"]
        with self.assertRaisesRegex(TypeError, "indexes"):
            x[[0, 1]]
        self.assertIsNone(g.error)  # none of these reached the C graph

    def test_views(self) -> None:
        shape = (2, 3, 4)
        vals = [float(i) for i in range(24)]

        def at(i: int, j: int, k: int) -> float:
            return vals[(i * 3 + j) * 4 + k]

        got, s = self.run1(lambda x: x.reshape(6, -1), shape)
        self.assertEqual((got, s), (vals, (6, 4)))
        got, s = self.run1(lambda x: ic.reshape(x, (4, 6)), shape)
        self.assertEqual((got, s), (vals, (4, 6)))
        got, s = self.run1(lambda x: x.permute(2, 0, 1), shape)
        self.assertEqual(s, (4, 2, 3))
        self.assertEqual(got, [at(i, j, k) for k in range(4) for i in range(2) for j in range(3)])
        got, s = self.run1(lambda x: x.transpose(0, 2), shape)
        self.assertEqual(got, [at(i, j, k) for k in range(4) for j in range(3) for i in range(2)])
        got, s = self.run1(lambda x: x.flatten(1), shape)
        self.assertEqual((got, s), (vals, (2, 12)))
        got, s = self.run1(lambda x: x.unsqueeze(1).squeeze(1), shape)
        self.assertEqual((got, s), (vals, shape))
        got, s = self.run1(lambda x: x[:1].expand(3, -1, 3, 4), shape)
        self.assertEqual(s, (3, 1, 3, 4))
        self.assertEqual(got, vals[:12] * 3)
        got, s = self.run1(lambda x: ic.concat([x, x * 2], dim=-1), shape)
        self.assertEqual(s, (2, 3, 8))
        self.assertEqual(got[:8], vals[:4] + [2 * v for v in vals[:4]])
        got, s = self.run1(lambda x: x.pad([1, 0], -1.0), shape)
        self.assertEqual(s, (2, 3, 5))
        self.assertEqual(got[:5], [-1.0] + vals[:4])
        got, s = self.run1(lambda x: ic.pad(x, [0, 0, -1, -1]), shape)  # crops dim 1
        self.assertEqual(s, (2, 1, 4))
        self.assertEqual(got[:4], vals[4:8])
        got, s = self.run1(lambda x: ic.slice(x, 2, 1, None, 2), shape)
        self.assertEqual(s, (2, 3, 2))
        with self.assertRaisesRegex(ValueError, "pairs"):
            self.run1(lambda x: x.pad([1]), shape)
        with self.assertRaisesRegex(ValueError, "at least one"):
            ic.concat([])

    def test_casts(self) -> None:
        got, _ = self.run1(lambda x: (x * 100.0).cast(ic.i8).cast(ic.f32), (4,))
        self.assertEqual(got, [0.0, 100.0, 127.0, 127.0])  # floats to ints saturate
        got, _ = self.run1(lambda x: ic.cast_saturate(x * 1000.0, ic.f8e4m3).cast(ic.f32), (2,))
        self.assertEqual(got, [0.0, 448.0])
        got, _ = self.run1(lambda x: ic.bitcast(ic.bitcast(x, ic.i32), ic.f32), (3,))
        self.assertEqual(got, [0.0, 1.0, 2.0])


if __name__ == "__main__":
    unittest.main()
