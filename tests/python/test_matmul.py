"""matmul in the builder: ic.matmul, the @ operator and Value.matmul, torch.matmul's
shapes, the dtypes, the errors the C builder reports, the text format and the cffi
declaration; and programs run on the ref backend against Python references (ic.h
"matmul": f32 bit for bit the sequential fma, i8 exact, bf16 within the bound)."""

from __future__ import annotations

import itertools
import math
import struct
import unittest
from fractions import Fraction
from typing import Any, List, Sequence, Tuple

import ic
from support import HAVE_NUMPY, bits32, f32, flat, host, np, rng, round_to, shape_of


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


# ---------------------------------------------------------------- runs on the ref backend


def next_f32(x: float, up: bool) -> float:
    """The f32 after x towards +inf (up) or -inf (x a finite f32)."""
    if x == 0.0:
        tiny = float(struct.unpack("<f", struct.pack("<I", 1))[0])
        return tiny if up else -tiny
    b = bits32(x)
    b += 1 if (x > 0) == up else -1
    return float(struct.unpack("<f", struct.pack("<i", b))[0])


def round_f32(q: Fraction) -> float:
    """q rounded once to the nearest f32, ties to even (float(q) rounds to f64 first,
    and that second rounding could cross an f32 midpoint: the candidates around it are
    compared exactly)."""
    if q == 0:
        return 0.0  # exact zeros of a sum from +0 are +0
    best = f32(float(q))
    for c in (next_f32(best, False), next_f32(best, True)):
        d, e = abs(Fraction(c) - q), abs(Fraction(best) - q)
        if d < e or (d == e and bits32(c) % 2 == 0):
            best = c
    return best


def fma_dot_f32(a: Sequence[float], b: Sequence[float]) -> float:
    """ic.h's f32 matmul element: acc = fma(a[k], b[k], acc) in order from +0, each fma
    exact then rounded once (Fractions: exact on these small sizes)."""
    acc = 0.0
    for x, y in zip(a, b):
        acc = round_f32(Fraction(x) * Fraction(y) + Fraction(acc))
    return acc


def matmul_ref(av: Sequence[float], a_shape: Sequence[int], bv: Sequence[float], b_shape: Sequence[int],
               dot: Any) -> Tuple[List[Any], Tuple[int, ...]]:
    """torch.matmul's result (row-major values, shape) with each element dot(row, col)."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    a1, b1 = len(a_shape) == 1, len(b_shape) == 1
    ash = (1,) + a_shape if a1 else a_shape
    bsh = b_shape + (1,) if b1 else b_shape
    m, k = ash[-2:]
    n = bsh[-1]
    ab, bb = ash[:-2], bsh[:-2]
    nb = max(len(ab), len(bb))
    ab, bb = (1,) * (nb - len(ab)) + ab, (1,) * (nb - len(bb)) + bb
    batch = tuple(max(x, y) if min(x, y) != 0 else 0 for x, y in zip(ab, bb))

    def offset(idx: Tuple[int, ...], dims: Tuple[int, ...], tail: int) -> int:
        off = 0
        for i, d in zip(idx, dims):
            off = off * d + (i if d != 1 else 0)
        return off * tail

    out: List[Any] = []
    for idx in itertools.product(*(range(d) for d in batch)):
        ao, bo = offset(idx, ab, m * k), offset(idx, bb, k * n)
        for i in range(m):
            for j in range(n):
                out.append(dot([av[ao + i * k + t] for t in range(k)], [bv[bo + t * n + j] for t in range(k)]))
    shape = batch + (() if a1 else (m,)) + (() if b1 else (n,))
    return out, shape


def values(r: Any, dtype: ic.DType, count: int, lo: float = -2.0, hi: float = 2.0) -> List[float]:
    """count random values of dtype (floats rounded to it, so products are exact)."""
    if dtype.is_integer:
        return [float(r.randint(-128, 127)) for _ in range(count)]
    return [round_to(dtype, r.uniform(lo, hi)) for _ in range(count)]


def bound(dtype: ic.DType, a: Sequence[float], b: Sequence[float], tf32: bool = False) -> Tuple[float, float]:
    """(exact, allowed error) of one element: ic.h's bound against the exact sum."""
    exact = math.fsum(x * y for x, y in zip(a, b))  # products of 16-/24-bit mantissas are exact
    mag = math.fsum(abs(x * y) for x, y in zip(a, b))
    u = {ic.bf16: 2.0 ** -8, ic.f16: 2.0 ** -11, ic.f32: 2.0 ** -24}[dtype]
    err = u * abs(exact) + (math.ceil(len(a) / 16) + 16) * 2.0 ** -23 * mag + (2.0 ** -11 * mag if tf32 else 0.0)
    return exact, err


class MatmulRunTest(unittest.TestCase):
    """Programs with a matmul, compiled for and run on the ref backend."""

    def run_matmul(self, dtype: ic.DType, a_shape: Sequence[int], b_shape: Sequence[int], seed: int = 7,
                   mode: str = "fused", allow_tf32: bool = False) -> Tuple[List[float], List[float], Any]:
        g = ic.Graph()
        y = g.input("a", dtype, tuple(a_shape)) @ g.input("b", dtype, tuple(b_shape))
        g.output("y", y)
        r = rng(seed)
        av = values(r, dtype, math.prod(a_shape))
        bv = values(r, dtype, math.prod(b_shape))
        out = g.compile(backend="ref", mode=mode, allow_tf32=allow_tf32)(host(av, dtype, a_shape),
                                                                         host(bv, dtype, b_shape))
        self.assertEqual(shape_of(out), y.shape)
        return av, bv, out

    def check_f32_bits(self, a_shape: Sequence[int], b_shape: Sequence[int], mode: str = "fused") -> None:
        av, bv, out = self.run_matmul(ic.f32, a_shape, b_shape, mode=mode)
        want, shape = matmul_ref(av, a_shape, bv, b_shape, fma_dot_f32)
        self.assertEqual(shape_of(out), shape)
        got = flat(out)
        self.assertEqual(len(got), len(want))
        for i, (x, w) in enumerate(zip(got, want)):
            self.assertEqual(bits32(x), bits32(w), f"element {i}: {x!r} vs {w!r}")

    def test_f32_2d_sequential_fma(self) -> None:
        # K = 37 and 64 sum enough terms of both signs that f32 rounds on the way
        for a_shape, b_shape in (((8, 37), (37, 5)), ((3, 64), (64, 7)), ((1, 1), (1, 1)), ((4, 0), (0, 3))):
            for mode in ("fused", "eager"):
                with self.subTest(a=a_shape, b=b_shape, mode=mode):
                    self.check_f32_bits(a_shape, b_shape, mode)

    @unittest.skipUnless(HAVE_NUMPY, "numpy is not installed")
    def test_f32_numpy(self) -> None:
        # numpy operands in, a numpy array out; numpy's matmul sums in its own order, so it
        # is only close, and the bits are the sequential fma's
        av, bv, out = self.run_matmul(ic.f32, (6, 20), (20, 9))
        self.assertIsInstance(out, np.ndarray)
        a = np.array(av, dtype="float32").reshape(6, 20)
        b = np.array(bv, dtype="float32").reshape(20, 9)
        self.assertTrue(np.allclose(out, a @ b, rtol=1e-5, atol=1e-5))
        want, _ = matmul_ref(av, (6, 20), bv, (20, 9), fma_dot_f32)
        self.assertEqual(out.reshape(-1).view("uint32").tolist(),
                         np.array(want, dtype="float32").view("uint32").tolist())

    def test_f32_batched_broadcast(self) -> None:
        for a_shape, b_shape in (((2, 1, 3, 5), (4, 5, 6)), ((3, 4, 9), (9, 2)), ((4, 9), (2, 9, 3)),
                                 ((1, 3, 4), (2, 4, 5))):
            with self.subTest(a=a_shape, b=b_shape):
                self.check_f32_bits(a_shape, b_shape)

    def test_f32_1d_forms(self) -> None:
        for a_shape, b_shape in (((13,), (13,)), ((13,), (13, 4)), ((5, 13), (13,)), ((6,), (2, 6, 3)),
                                 ((2, 3, 6), (6,)), ((0,), (0,))):
            with self.subTest(a=a_shape, b=b_shape):
                self.check_f32_bits(a_shape, b_shape)

    def test_i8_exact(self) -> None:
        # K = 64 of extreme values: sums past i16, all in i32
        for a_shape, b_shape in (((5, 64), (64, 3)), ((2, 3, 17), (17,)), ((17,), (17,))):
            with self.subTest(a=a_shape, b=b_shape):
                av, bv, out = self.run_matmul(ic.i8, a_shape, b_shape, seed=3)
                want, shape = matmul_ref(av, a_shape, bv, b_shape, lambda a, b: int(sum(x * y for x, y in zip(a, b))))
                self.assertEqual(shape_of(out), shape)
                self.assertEqual([int(v) for v in flat(out)], want)
        g = ic.Graph()
        g.output("y", g.input("a", ic.i8, (1, 64)) @ g.input("b", ic.i8, (64, 1)))
        y = g.compile(backend="ref")(host([-128.0] * 64, ic.i8, (1, 64)), host([-128.0] * 64, ic.i8, (64, 1)))
        self.assertEqual(flat(y), [64 * 128 * 128])

    def test_bf16_within_bound(self) -> None:
        for a_shape, b_shape in (((4, 40), (40, 6)), ((2, 3, 16), (16, 5)), ((33,), (33,))):
            for mode in ("fused", "eager"):
                with self.subTest(a=a_shape, b=b_shape, mode=mode):
                    av, bv, out = self.run_matmul(ic.bf16, a_shape, b_shape, seed=11, mode=mode)
                    pairs, shape = matmul_ref(av, a_shape, bv, b_shape, lambda a, b: (a, b))
                    self.assertEqual(shape_of(out), shape)
                    for i, (x, (ra, cb)) in enumerate(zip(flat(out), pairs)):
                        exact, err = bound(ic.bf16, ra, cb)
                        self.assertEqual(x, round_to(ic.bf16, x))
                        self.assertLessEqual(abs(x - exact), err, f"element {i}: {x} vs {exact}")

    def test_fused_epilogue_bias_relu(self) -> None:
        g = ic.Graph()
        a = g.input("a", ic.f32, (6, 24))
        w = g.input("w", ic.f32, (24, 10))
        bias = g.input("bias", ic.f32, (10,))
        g.output("y", ic.relu(a @ w + bias))
        fused = g.compile(backend="ref")
        eager = g.compile(backend="ref", mode="eager")
        self.assertEqual(fused.kernel_count, 1)  # the epilogue runs in the matmul's kernel
        self.assertGreater(eager.kernel_count, 1)
        r = rng(5)
        av, wv, bv = values(r, ic.f32, 6 * 24), values(r, ic.f32, 24 * 10), values(r, ic.f32, 10)
        ins = (host(av, ic.f32, (6, 24)), host(wv, ic.f32, (24, 10)), host(bv, ic.f32, (10,)))
        mm, _ = matmul_ref(av, (6, 24), wv, (24, 10), fma_dot_f32)
        want = [max(f32(c + bv[i % 10]), 0.0) for i, c in enumerate(mm)]
        self.assertGreater(want.count(0.0), 0)  # relu cut something
        for prog in (fused, eager):
            got = flat(prog(*ins))
            self.assertEqual([bits32(v) for v in got], [bits32(v) for v in want])

    def test_allow_tf32(self) -> None:
        # the flag is accepted on every dtype; f32 results stay within the TF32 bound
        for dt in (ic.f32, ic.bf16, ic.i8):
            with self.subTest(dtype=str(dt)):
                av, bv, out = self.run_matmul(dt, (5, 24), (24, 3), seed=9, allow_tf32=True)
                if dt is ic.f32:
                    pairs, _ = matmul_ref(av, (5, 24), bv, (24, 3), lambda a, b: (a, b))
                    for x, (ra, cb) in zip(flat(out), pairs):
                        exact, err = bound(ic.f32, ra, cb, tf32=True)
                        self.assertLessEqual(abs(x - exact), err)


if __name__ == "__main__":
    unittest.main()
