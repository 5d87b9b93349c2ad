"""matmul in the builder: ic.matmul, the @ operator and Value.matmul, torch.matmul's
shapes, the dtypes, the errors the C builder reports, the text format and the cffi
declaration."""

from __future__ import annotations

import unittest
from typing import Any, List, Sequence, Tuple

import ic


def build(a_shape: Sequence[int], b_shape: Sequence[int], dtype: ic.DTypeLike = ic.f32) -> Tuple[ic.Graph, ic.Value]:
    g = ic.Graph()
    a = g.input("a", dtype, tuple(a_shape))
    b = g.input("b", dtype, tuple(b_shape))
    return g, a @ b


class MatmulShapeTest(unittest.TestCase):
    def test_torch_shapes(self) -> None:
        cases: List[Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]] = [
            ((5,), (5,), ()),
            ((5,), (5, 7), (7,)),
            ((4, 5), (5,), (4,)),
            ((4, 5), (5, 7), (4, 7)),
            ((3, 4, 5), (3, 5, 7), (3, 4, 7)),
            ((3, 4, 5), (5, 7), (3, 4, 7)),
            ((4, 5), (3, 5, 7), (3, 4, 7)),
            ((2, 1, 4, 5), (3, 5, 7), (2, 3, 4, 7)),
            ((5,), (2, 3, 5, 7), (2, 3, 7)),
            ((2, 3, 4, 5), (5,), (2, 3, 4)),
            ((4, 0), (0, 7), (4, 7)),
            ((0, 4, 5), (1, 5, 7), (0, 4, 7)),
        ]
        for a, b, want in cases:
            with self.subTest(a=a, b=b):
                _, r = build(a, b)
                self.assertEqual(r.shape, want)
                self.assertEqual(r.dtype, ic.f32)

    def test_spellings_agree(self) -> None:
        g = ic.Graph()
        a = g.input("a", ic.f16, (4, 5))
        b = g.input("b", ic.f16, (5, 7))
        for r in (a @ b, ic.matmul(a, b), a.matmul(b), b.__rmatmul__(a)):
            self.assertEqual(r.shape, (4, 7))
            self.assertEqual(r.dtype, ic.f16)
        self.assertEqual(str(g).count("= matmul(a, b)"), 4)

    def test_symbols(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        k = g.symbol("k")
        x = g.input("x", ic.bf16, (n, 1, 2, k))
        w = g.input("w", ic.bf16, (3, k, 64))
        y = x @ w
        self.assertEqual(y.shape, (n, 3, 2, 64))  # a size 1 broadcasts against 3
        self.assertIs(y.shape[0], n)
        with self.assertRaisesRegex(ic.InvalidGraphError,
                                    r"matmul: a bf16\[n, 1, 2, k\] and b bf16\[n, 64\]: K differs \(k vs n\)"):
            x @ g.input("v", ic.bf16, (n, 64))

    def test_dtypes(self) -> None:
        for dt, want in ((ic.bf16, ic.bf16), (ic.f16, ic.f16), (ic.f32, ic.f32), (ic.f64, ic.f64), (ic.i8, ic.i32)):
            with self.subTest(dtype=str(dt)):
                _, r = build((2, 3), (3, 4), dt)
                self.assertEqual(r.dtype, want)
        for dt in (ic.i32, ic.u8, ic.bool_, ic.f8e4m3, ic.i64):
            with self.subTest(dtype=str(dt)):
                with self.assertRaises(ic.UnsupportedError) as cm:
                    build((2, 3), (3, 4), dt)
                self.assertEqual(str(cm.exception),
                                 f"matmul: dtype {dt} is not supported (takes f16, bf16, f32, f64, i8)")
                self.assertEqual(cm.exception.status, ic.Status.UNSUPPORTED)


class MatmulErrorTest(unittest.TestCase):
    def test_shape_errors_name_both_operands(self) -> None:
        with self.assertRaises(ic.InvalidGraphError) as cm:
            build((4, 5), (6, 7))
        self.assertEqual(str(cm.exception), "matmul: a f32[4, 5] and b f32[6, 7]: K differs (5 vs 6)")
        self.assertEqual(cm.exception.status, ic.Status.INVALID_GRAPH)
        with self.assertRaisesRegex(ic.InvalidGraphError, r"batch dims do not broadcast \(result dim 0: 2 vs 3\)"):
            build((2, 4, 5), (3, 5, 7))
        g = ic.Graph()
        x = g.input("x", ic.f32, (4,))
        s = g.input("s", ic.f32, ())
        with self.assertRaisesRegex(ic.InvalidGraphError, "b is 0-dim"):
            x @ s

    def test_dtype_mismatch(self) -> None:
        g = ic.Graph()
        a = g.input("a", ic.f16, (4, 5))
        b = g.input("b", ic.bf16, (5, 7))
        with self.assertRaises(ic.DTypeMismatchError) as cm:
            a @ b
        self.assertEqual(str(cm.exception), "dtype mismatch: f16 vs bf16: matmul: operand dtypes differ (cast one of them)")
        # the first error sticks: the graph refuses outputs and compiles
        with self.assertRaisesRegex(ic.InvalidGraphError, "holds an error"):
            g.output("y", a @ b.cast(ic.f16))
        with self.assertRaises(ic.InvalidGraphError):
            g.compile(backend="ref")

    def test_python_operands(self) -> None:
        g = ic.Graph()
        a = g.input("a", ic.f32, (4, 4))
        nodes = str(g)
        bad: List[Any] = [2, 2.5, None, [1.0, 2.0]]
        for o in bad:
            with self.subTest(operand=repr(o)):
                with self.assertRaises(TypeError):
                    a @ o
                with self.assertRaises(TypeError):
                    o @ a
                with self.assertRaises(TypeError):
                    ic.matmul(a, o)
        self.assertEqual(str(g), nodes)  # nothing was added
        self.assertIsNone(g.error)
        h = ic.Graph()
        with self.assertRaisesRegex(ValueError, "different graphs"):
            a @ h.input("b", ic.f32, (4, 4))


class MatmulTextTest(unittest.TestCase):
    def test_round_trip(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.bf16, (n, 4, 8))
        w = g.input("w", ic.bf16, (16, 8))
        y = (x @ w.transpose()).named("y")
        g.output("y", y)
        g.output("z", (g.input("v", ic.bf16, (4,)) @ y).cast(ic.f32))
        text = str(g)
        self.assertIn("y = matmul(x, %2)\n", text)
        self.assertEqual(str(ic.Graph.parse(text)), text)

    def test_parse(self) -> None:
        g = ic.Graph.parse("input a : i8[4, 5]\ninput b : i8[5]\ny = matmul(a, b)\noutput y\n")
        self.assertEqual(g.outputs, ["y"])
        with self.assertRaisesRegex(ic.InvalidGraphError, r"line 3, column 5: matmul takes 2 arguments"):
            ic.Graph.parse("input a : f32[4, 5]\ninput b : f32[5]\ny = matmul(a)\n")
        with self.assertRaisesRegex(ic.InvalidGraphError, r"line 3, column 1: matmul: a f32\[4, 5\] and b f32\[6\]"):
            ic.Graph.parse("input a : f32[4, 5]\ninput b : f32[6]\ny = matmul(a, b)\n")

    def test_cdef_declares_matmul(self) -> None:
        try:
            text = ic.cdef()
        except FileNotFoundError:
            self.skipTest("ic_cdef.h is not built")
        self.assertIn("ic_value ic_graph_matmul(ic_graph *graph, ic_value a, ic_value b);", text)
        self.assertIn("IC_COMPILE_ALLOW_TF32", text)


if __name__ == "__main__":
    unittest.main()
