"""Compiling and running programs on the ref backend: results against Python references,
sizes (odd, zero, symbolic), broadcasting, strided inputs, out=, dtypes, DLPack
outputs, contexts, programs, and every kind of bad call."""

from __future__ import annotations

import array
import ctypes
import math
import os
import struct
import subprocess
import sys
import threading
import unittest
from typing import Any, Dict, List, Tuple

import ic
from support import HAVE_NUMPY, f32, flat, host, np, out_buffer, rng, round_to, shape_of, ulps


def gelu_graph(k: int = 64, layout: str = "contiguous") -> ic.Graph:
    g = ic.Graph()
    n = g.symbol("n")
    x = g.input("x", ic.f32, (n, k), layout=layout)
    w = g.input("w", ic.f32, (k,))
    b = g.input("b", ic.f32, (k,))
    g.output("y", ic.gelu_tanh(x * w + b))
    return g


def gelu_close(v: float, want: float, h: float) -> bool:
    """Within 4 ulp, or within the error that 4 ulp of tanh make after 1 + tanh cancels
    (0.5 h (1 + tanh(...)) for h < 0): ic.h's bound is on the transcendental."""
    return ulps(v, want, ic.f32) <= 4 or abs(v - want) <= 4 * 2.0 ** -24 * abs(0.5 * h)


def gelu_ref(x: float, w: float, b: float) -> float:
    h = f32(f32(x * w) + b)
    r = f32
    inner = r(r(0.7978845608028654) * r(h + r(r(0.044715) * r(r(h * h) * h))))
    return r(r(0.5 * h) * r(1.0 + r(math.tanh(inner))))


class RunTest(unittest.TestCase):
    def setUp(self) -> None:
        self.r = rng(42)

    def rand(self, n: int, lo: float = -3.0, hi: float = 3.0) -> List[float]:
        return [f32(self.r.uniform(lo, hi)) for _ in range(n)]

    def check_gelu(self, prog: ic.Program, rows: int, k: int = 64) -> None:
        xs, ws, bs = self.rand(rows * k), self.rand(k), self.rand(k)
        y = prog(host(xs, ic.f32, (rows, k)), host(ws, ic.f32), host(bs, ic.f32))
        self.assertEqual(shape_of(y), (rows, k))
        got = flat(y)
        for i, v in enumerate(got):
            want = gelu_ref(xs[i], ws[i % k], bs[i % k])
            h = f32(f32(xs[i] * ws[i % k]) + bs[i % k])
            self.assertTrue(gelu_close(v, want, h), f"element {i}: {v} vs {want}")

    def test_gelu_fused_and_eager_odd_and_zero_sizes(self) -> None:
        g = gelu_graph()
        for mode in ("fused", "eager"):
            prog = g.compile(backend="ref", mode=mode)
            self.assertEqual(prog.mode, mode)
            for rows in (1, 7, 33, 0):
                with self.subTest(mode=mode, rows=rows):
                    self.check_gelu(prog, rows)
        self.assertLess(g.compile(backend="ref").kernel_count, g.compile(backend="ref", mode="eager").kernel_count)

    def test_fusion_budget(self) -> None:
        # gelu_tanh(x * w + b) is 3 ops: a budget of 1 makes a kernel of each, -1 and the
        # default keep one kernel; the split gives the same results
        g = gelu_graph()
        self.assertEqual(g.compile(backend="ref").kernel_count, 1)
        self.assertEqual(g.compile(backend="ref", fusion_budget=-1).kernel_count, 1)
        split = g.compile(backend="ref", fusion_budget=1)
        self.assertEqual(split.kernel_count, 3)
        self.check_gelu(split, 7)
        with self.assertRaises(ic.Error):
            g.compile(backend="ref", fusion_budget=-2)

    def test_outputs_follow_the_inputs_kind(self) -> None:
        prog = gelu_graph(4).compile(backend="ref")
        xs = [1.0] * 8
        y = prog(host(xs, ic.f32, (2, 4)), host([1.0] * 4, ic.f32), host([0.0] * 4, ic.f32))
        if HAVE_NUMPY:
            self.assertIsInstance(y, np.ndarray)
            self.assertEqual(y.dtype, np.float32)
        else:
            self.assertIsInstance(y, ic.Buffer)
        # Plain buffers (no numpy view) behave alike: numpy arrays when numpy is there.
        mv = memoryview(array.array("f", xs)).cast("B").cast("f", (2, 4))
        y2 = prog(mv, array.array("f", [1.0] * 4), array.array("f", [0.0] * 4))
        self.assertIsInstance(y2, np.ndarray if HAVE_NUMPY else ic.Buffer)
        self.assertEqual(flat(y2), flat(y))
        # ic.Tensor inputs give ic.Buffer outputs (mixed with numpy: numpy arrays).
        t = ic.Tensor.from_buffer(ic.pack(ic.f32, xs), ic.f32, (2, 4))
        ones = ic.Tensor.from_buffer(ic.pack(ic.f32, [1.0] * 4), ic.f32)
        zeros = ic.Tensor.from_buffer(ic.pack(ic.f32, [0.0] * 4), ic.f32)
        y3 = prog(t, ones, zeros)
        self.assertIsInstance(y3, ic.Buffer)
        self.assertEqual(y3.tolist(), [flat(y)[:4], flat(y)[4:]])

    def test_broadcast_outer_add(self) -> None:
        a_, b_, k = 3, 5, 4
        g = ic.Graph()
        a = g.input("a", ic.f32, (a_, 1, k))
        b = g.input("b", ic.f32, (1, b_, k))
        g.output("y", a + b)
        xa, xb = self.rand(a_ * k), self.rand(b_ * k)
        for mode in ("fused", "eager"):
            y = g.compile(backend="ref", mode=mode)(host(xa, ic.f32, (a_, 1, k)), host(xb, ic.f32, (1, b_, k)))
            self.assertEqual(shape_of(y), (a_, b_, k))
            want = [f32(xa[i * k + m] + xb[j * k + m]) for i in range(a_) for j in range(b_) for m in range(k)]
            self.assertEqual(flat(y), want)

    def test_symbolic_sizes_and_the_signature_cache(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        m = g.symbol("m")
        x = g.input("x", ic.f32, (n, m))
        v = g.input("v", ic.f32, (m,))
        g.output("y", x * v)
        g.output("z", (x[:, :1] + 1.0))
        prog = g.compile(backend="ref")
        for rows, cols in [(2, 3), (5, 1), (0, 4), (3, 0), (2, 3)]:
            xs, vs = self.rand(rows * cols), self.rand(cols)
            y, z = prog(host(xs, ic.f32, (rows, cols)), host(vs, ic.f32))
            self.assertEqual(shape_of(y), (rows, cols))
            self.assertEqual(shape_of(z), (rows, min(cols, 1)))
            self.assertEqual(flat(y), [f32(xs[i] * vs[i % cols]) for i in range(rows * cols)])
        self.assertEqual(len(prog._sigs), 4)  # (2, 3) came back: a cache hit

    def test_mismatches_raise_before_running(self) -> None:
        prog = gelu_graph(4).compile(backend="ref")
        out = out_buffer(ic.f32, (2, 4), fill=7.0)
        w, b = host([1.0] * 4, ic.f32), host([0.0] * 4, ic.f32)
        cases = [
            ((host([1.0] * 8, ic.f32, (2, 4)), host([1.0] * 5, ic.f32), b), "dim 0 is 5, expected 4"),
            ((host([1.0] * 8, ic.f32, (8,)), w, b), "1 dims, compiled for f32 with 2"),
            ((host([1.0] * 8, ic.f64, (2, 4)), w, b), "got f64"),
            ((host([1, 2, 3, 4], ic.i32, (1, 4)), w, b), "got i32"),
        ]
        for args, text in cases:
            with self.subTest(text=text):
                with self.assertRaisesRegex(ic.ShapeMismatchError, text) as cm:
                    prog(*args, out=out)
                self.assertEqual(cm.exception.status, ic.Status.SHAPE_MISMATCH)
                self.assertEqual(flat(out), [7.0] * 8)  # nothing ran
        # A symbol bound by one input and contradicted by another.
        g = ic.Graph()
        n = g.symbol("n")
        a = g.input("a", ic.f32, (n,))
        c = g.input("c", ic.f32, (n,))
        g.output("y", a + c)
        with self.assertRaisesRegex(ic.ShapeMismatchError, "symbol"):
            g.compile(backend="ref")(host([1.0, 2.0], ic.f32), host([1.0, 2.0, 3.0], ic.f32))

    def test_strided_inputs(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (3, 4), layout="strided")
        g.output("y", x * 2.0)
        prog = g.compile(backend="ref")
        base = self.rand(3 * 8)
        # A view of every other column of a [3, 8] buffer, as an ic.Tensor of strides.
        buf = ic.pack(ic.f32, base)
        cbuf = (ctypes.c_char * len(buf)).from_buffer(buf)
        t = ic.Tensor(ctypes.addressof(cbuf), ic.f32, (3, 4), (8, 2), device="cpu", owner=cbuf)
        want = [f32(2 * base[r * 8 + 2 * c]) for r in range(3) for c in range(4)]
        self.assertEqual(flat(prog(t)), want)
        # A memoryview slice with a step (1-D) into a strided 1-D program.
        g1 = ic.Graph()
        x1 = g1.input("x", ic.f32, (5,), layout="strided")
        g1.output("y", x1 + 1.0)
        mv = memoryview(array.array("f", base[:10]))[::2]
        self.assertEqual(flat(g1.compile(backend="ref")(mv)), [f32(v + 1.0) for v in base[:10:2]])
        if HAVE_NUMPY:
            a = np.array(base, dtype=np.float32).reshape(3, 8)
            self.assertEqual(flat(prog(a[:, ::2])), want)
            self.assertEqual(flat(prog(a.T.T[:, 1::2])), [f32(2 * base[r * 8 + 2 * c + 1]) for r in range(3)
                                                          for c in range(4)])
            # Negative strides are refused by ic, clearly.
            with self.assertRaisesRegex(ic.ShapeMismatchError, "negative stride"):
                prog(a[::-1, ::2])
        # A contiguous input given a strided view: its layout is refused.
        gc = ic.Graph()
        xc = gc.input("x", ic.f32, (5,))
        gc.output("y", xc + 1.0)
        with self.assertRaisesRegex(ic.ShapeMismatchError, "contiguous layout"):
            gc.compile(backend="ref")(mv)

    def test_out(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (2, 3))
        g.output("y", x + 1.0)
        g.output("z", (x * 2.0).cast(ic.f64))
        prog = g.compile(backend="ref")
        xs = self.rand(6)
        xin = host(xs, ic.f32, (2, 3))
        oy, oz = out_buffer(ic.f32, (2, 3)), out_buffer(ic.f64, (2, 3))
        res = prog(xin, out=(oy, oz))
        self.assertIs(res[0], oy)
        self.assertIs(res[1], oz)
        self.assertEqual(flat(oy), [f32(v + 1) for v in xs])
        self.assertEqual(flat(oz), [f32(v * 2) for v in xs])
        oz2 = out_buffer(ic.f64, (2, 3))
        y, z = prog(xin, out={"z": oz2})  # y allocated, z given
        self.assertIs(z, oz2)
        self.assertEqual(flat(y), flat(oy))
        self.assertEqual(flat(oz2), flat(oz))
        single = ic.Graph()
        s = single.input("x", ic.f32, (3,))
        single.output("y", s * 3.0)
        o = out_buffer(ic.f32, (3,))
        self.assertIs(single.compile(backend="ref")(host([1.0, 2.0, 3.0], ic.f32), out=o), o)
        self.assertEqual(flat(o), [3.0, 6.0, 9.0])
        # Wrong out= tensors.
        with self.assertRaisesRegex(ic.ShapeMismatchError, r"out 'y': got f32\[3, 2\], the program makes f32\[2, 3\]"):
            prog(xin, out={"y": out_buffer(ic.f32, (3, 2))})
        with self.assertRaisesRegex(ic.ShapeMismatchError, "got f32"):
            prog(xin, out={"z": out_buffer(ic.f32, (2, 3))})
        with self.assertRaisesRegex(TypeError, "unknown output 'w'"):
            prog(xin, out={"w": oy})
        with self.assertRaisesRegex(TypeError, "1 tensors for 2 outputs"):
            prog(xin, out=[oy])
        with self.assertRaisesRegex(TypeError, "out 'y': expected a tensor"):
            prog(xin, out={"y": 3})
        with self.assertRaisesRegex(ValueError, "read-only|not writable"):
            prog(xin, out={"y": bytes(24)})
        ro = memoryview(array.array("f", [0.0] * 6)).toreadonly().cast("B").cast("f", (2, 3))
        with self.assertRaisesRegex(ValueError, "read-only|not writable"):
            prog(xin, out={"y": ro})
        ro_t = ic.Tensor.from_buffer(bytes(24), ic.f32, (2, 3))
        self.assertTrue(ro_t.readonly)
        with self.assertRaisesRegex(ValueError, "read-only"):
            prog(xin, out={"y": ro_t})
        # A non-contiguous out= tensor.
        wide = ic.pack(ic.f32, [0.0] * 12)
        cw = (ctypes.c_char * len(wide)).from_buffer(wide)
        strided = ic.Tensor(ctypes.addressof(cw), ic.f32, (2, 3), (6, 2), device="cpu", owner=cw)
        with self.assertRaisesRegex(ic.ShapeMismatchError, "contiguous"):
            prog(xin, out={"y": strided})
        # An output must not overlap an input.
        with self.assertRaises(ic.Error):
            prog(xin, out={"y": xin})

    def test_dtypes(self) -> None:
        cases: List[Tuple[ic.DType, List[Any]]] = [
            (ic.f32, [1.5, -2.25, 3.0]),
            (ic.f64, [1.0 / 3.0, -1e300, 2.5]),
            (ic.f16, [1.5, -2.0, 65504.0]),
            (ic.bf16, [1.0, -3.5, 1e30]),
            (ic.i32, [1, -2, 2 ** 31 - 1]),
            (ic.i64, [2 ** 53 + 1, -(2 ** 62), 7]),
            (ic.u8, [0, 200, 255]),
            (ic.i8, [-128, 5, 127]),
            (ic.i16, [-300, 5, 32767]),
            (ic.u16, [0, 40000, 65535]),
            (ic.u32, [1, 3000000000, 2 ** 32 - 1]),
            (ic.u64, [2 ** 63 + 5, 7, 2 ** 64 - 1]),
        ]
        for dtype, vals in cases:
            for use_numpy in ([False, True] if HAVE_NUMPY else [False]):
                with self.subTest(dtype=str(dtype), numpy=use_numpy):
                    g = ic.Graph()
                    x = g.input("x", dtype, (3,))
                    g.output("y", x + x)  # wraps / rounds in the dtype
                    g.output("same", x)
                    y, same = g.compile(backend="ref")(host(vals, dtype, use_numpy=use_numpy))
                    got = flat(y)
                    if dtype.is_integer:
                        bits = 8 * dtype.itemsize
                        lo = 0 if dtype.is_unsigned else -(2 ** (bits - 1))
                        want: List[Any] = [(2 * v - lo) % 2 ** bits + lo for v in vals]
                        self.assertEqual([int(v) for v in got], want)
                        self.assertEqual([int(v) for v in flat(same)], vals)
                    else:
                        stored = [round_to(dtype, v) for v in vals]
                        self.assertEqual(flat(same), stored)
                        self.assertEqual(got, [round_to(dtype, 2 * v) for v in stored])
        # bool
        g = ic.Graph()
        b = g.input("b", ic.bool_, (4,))
        g.output("y", ~b)
        g.output("n", b.cast(ic.i32))
        y, n = g.compile(backend="ref")(host([True, False, True, True], ic.bool_))
        self.assertEqual([bool(v) for v in flat(y)], [False, True, False, False])
        self.assertEqual([int(v) for v in flat(n)], [1, 0, 1, 1])

    def test_unsigned_dtypes(self) -> None:
        # u16, u32, u64: unsigned division, comparison and logical shifts on the ref backend,
        # values past the signed range included; the other libraries' spellings.
        for name, d in (("uint16", ic.u16), ("uint32", ic.u32), ("uint64", ic.u64), ("u64", ic.u64)):
            self.assertEqual(ic.dtype_size(name), d.itemsize)
        self.assertTrue(ic.u32.is_integer and ic.u32.is_unsigned and not ic.i32.is_unsigned)
        self.assertEqual([str(d) for d in (ic.u16, ic.u32, ic.u64)], ["u16", "u32", "u64"])
        for dtype in (ic.u16, ic.u32, ic.u64):
            bits = 8 * dtype.itemsize
            top = 2 ** bits - 1
            a_vals = [top, top // 2 + 1, 3, 0, 40000, top - 1]
            b_vals = [7, 2, top, 1, 0, bits - 1]
            for use_numpy in ([False, True] if HAVE_NUMPY else [False]):
                with self.subTest(dtype=str(dtype), numpy=use_numpy):
                    g = ic.Graph()
                    a = g.input("a", dtype, (6,))
                    b = g.input("b", dtype, (6,))
                    g.output("q", a // b)
                    g.output("lt", a < b)
                    g.output("sr", a >> b)
                    g.output("neg", -a)
                    q, lt, sr, neg = g.compile(backend="ref")(host(a_vals, dtype, use_numpy=use_numpy),
                                                              host(b_vals, dtype, use_numpy=use_numpy))
                    self.assertEqual([int(v) for v in flat(q)], [x // y if y else 0 for x, y in zip(a_vals, b_vals)])
                    self.assertEqual([bool(v) for v in flat(lt)], [x < y for x, y in zip(a_vals, b_vals)])
                    self.assertEqual([int(v) for v in flat(sr)],
                                     [x >> y if y < bits else 0 for x, y in zip(a_vals, b_vals)])
                    self.assertEqual([int(v) for v in flat(neg)], [(-x) % 2 ** bits for x in a_vals])

    def test_low_precision_floats_in_buffers(self) -> None:
        # f16 through struct 'e' bytes; bf16 and fp8 through ic.pack / ic.unpack.
        g = ic.Graph()
        h = g.input("h", ic.f16, (3,))
        bb = g.input("b", ic.bf16, (3,))
        g.output("h2", h * 2.0)
        g.output("b2", (bb * 2.0))
        g.output("q", bb.cast(ic.f8e4m3))
        prog = g.compile(backend="ref")
        hv = [1.5, 3.0, 60000.0]
        hb = ic.Tensor.from_buffer(bytearray(struct.pack("<3e", *hv)), ic.f16)
        bv = [1.0, 300.0, -2.5]
        bt = ic.Tensor.from_buffer(ic.pack(ic.bf16, bv), ic.bf16, (3,))
        h2, b2, q = prog(hb, bt)
        self.assertIsInstance(h2, ic.Buffer)
        self.assertEqual(h2.tolist(), [3.0, 6.0, math.inf])  # f16 overflows to inf
        self.assertEqual(b2.tolist(), [2.0, 600.0, -5.0])
        qv = q.tolist()
        self.assertEqual(qv[0], 1.0)
        self.assertEqual(qv[2], -2.5)
        self.assertEqual(qv[1], 288.0)  # 300 rounds to the nearest e4m3 value
        self.assertEqual(ic.unpack(ic.bf16, b2.tobytes()), [2.0, 600.0, -5.0])
        # out= into packed storage.
        ob = ic.Tensor.from_buffer(bytearray(6), ic.bf16, (3,))
        prog.run({"h": hb, "b": bt}, out={"b2": ob})
        self.assertEqual(ob.tolist(), [2.0, 600.0, -5.0])

    def test_pack_unpack_and_elements(self) -> None:
        self.assertEqual(ic.element_store(ic.bf16, 1.0), b"\x80\x3f")
        self.assertEqual(ic.element_load(ic.bf16, b"\x80\x3f"), 1.0)
        self.assertTrue(math.isnan(ic.element_load(ic.f8e4m3, ic.element_store(ic.f8e4m3, 1e6))))
        self.assertEqual(ic.unpack(ic.f8e5m2, ic.pack(ic.f8e5m2, [1e6]))[0], math.inf)
        self.assertEqual(ic.unpack(ic.i64, ic.pack(ic.i64, [2 ** 62 + 1])), [2 ** 62 + 1])  # exact
        self.assertEqual(ic.unpack(ic.u8, ic.pack(ic.u8, [300.0, -5.0])), [255, 0])  # saturates
        self.assertEqual(ic.unpack(ic.u64, ic.pack(ic.u64, [2 ** 64 - 1, 2 ** 63 + 1])), [2 ** 64 - 1, 2 ** 63 + 1])
        self.assertEqual(ic.unpack(ic.u32, ic.pack(ic.u32, [-1.0, 1e10, 3e9])), [0, 2 ** 32 - 1, 3000000000])
        self.assertEqual(ic.unpack(ic.u16, ic.pack(ic.u16, [70000, -1])), [65535, 0])  # ints out of range too
        self.assertEqual(ic.element_store(ic.u64, 1e30), b"\xff" * 8)
        self.assertEqual(ic.unpack(ic.f32, ic.pack(ic.f32, [1e40])), [math.inf])
        with self.assertRaises(ValueError):
            ic.unpack(ic.f32, b"abc")
        with self.assertRaises(ValueError):
            ic.element_load(ic.f64, b"1234")

    def test_tensor_array_interface(self) -> None:
        t = ic.Tensor.from_buffer(ic.pack(ic.f32, [1, 2, 3, 4, 5, 6]), ic.f32, (2, 3))
        self.assertEqual(t.__array_interface__["typestr"], "<f4")
        self.assertEqual(t.__array_interface__["shape"], (2, 3))
        self.assertFalse(hasattr(t, "__cuda_array_interface__"))
        if HAVE_NUMPY:
            a = np.asarray(t)  # no copy: numpy keeps t alive
            self.assertEqual(a.tolist(), [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        d = ic.Tensor(0x1000, ic.bf16, (4, 4), (8, 1), device="cuda")
        self.assertEqual(d.__cuda_array_interface__["strides"], (16, 2))
        self.assertFalse(hasattr(d, "__array_interface__"))
        self.assertFalse(d.is_contiguous())
        with self.assertRaises(ic.UnsupportedError):
            ic.Tensor(0x1000, ic.f32, (2,), device="cuda").tobytes()

    def test_tensor_from_buffer_checks(self) -> None:
        with self.assertRaisesRegex(ValueError, "takes 16 bytes, the buffer has 12"):
            ic.Tensor.from_buffer(bytearray(12), ic.f32, (2, 2))
        with self.assertRaisesRegex(ValueError, "whole number"):
            ic.Tensor.from_buffer(bytearray(6), ic.f32)
        t = ic.Tensor.from_buffer(array.array("d", [1.0, 2.0]))
        self.assertEqual((t.dtype, t.shape, t.tolist()), (ic.f64, (2,), [1.0, 2.0]))
        with self.assertRaises(TypeError):
            ic.Tensor.from_buffer(3)
        with self.assertRaisesRegex(ValueError, "device"):
            ic.Tensor(0, ic.f32, (1,), device="tpu")

    def test_dlpack_outputs(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (2, 2))
        g.output("y", x * 10.0)
        prog = g.compile(backend="ref")
        t = ic.Tensor.from_buffer(ic.pack(ic.f32, [1, 2, 3, 4]), ic.f32, (2, 2))
        y = prog(t)
        self.assertIsInstance(y, ic.Buffer)
        self.assertEqual(y.__dlpack_device__(), (1, 0))
        if HAVE_NUMPY and hasattr(np, "from_dlpack"):
            a = np.from_dlpack(y)
            self.assertEqual(a.tolist(), [[10.0, 20.0], [30.0, 40.0]])
            self.assertTrue(y.exported)
            with self.assertRaisesRegex(ic.Error, "handed its memory"):
                y.tolist()
            del y
            self.assertEqual(a.sum(), 100.0)  # the memory is numpy's now
        # A capsule consumed by hand, as a C consumer would: rename it, call the deleter.
        y2 = prog(t)
        cap = y2.__dlpack__()
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        from ic._lib import DLManagedTensor
        m = ctypes.cast(get(cap, b"dltensor"), ctypes.POINTER(DLManagedTensor))
        self.assertEqual(m.contents.dl_tensor.ndim, 2)
        self.assertEqual(m.contents.dl_tensor.dtype.bits, 32)
        data = m.contents.dl_tensor.data
        self.assertEqual(ic.unpack(ic.f32, ctypes.string_at(data, 16)), [10.0, 20.0, 30.0, 40.0])
        from ic._pyapi import capsule_consume
        capsule_consume(cap)
        del cap
        self.assertTrue(y2.exported)
        m.contents.deleter(m)  # the consumer is done: ic frees the memory
        # A capsule nobody consumed gives the memory back to its buffer.
        y3 = prog(t)
        cap3 = y3.__dlpack__()
        with self.assertRaises(BufferError):
            y3.__dlpack__(dl_device=(2, 0))
        del cap3
        self.assertFalse(y3.exported)
        self.assertEqual(y3.tolist(), [[10.0, 20.0], [30.0, 40.0]])
        y3.free()
        y3.free()
        with self.assertRaisesRegex(ic.Error, "freed"):
            y3.tobytes()
        # A failing consumer (bf16 is not numpy's) leaves the buffer usable.
        gb = ic.Graph()
        xb = gb.input("x", ic.f32, (2,))
        gb.output("y", xb.cast(ic.bf16))
        yb = gb.compile(backend="ref")(ic.Tensor.from_buffer(ic.pack(ic.f32, [1.5, 2.5]), ic.f32))
        if HAVE_NUMPY and hasattr(np, "from_dlpack"):
            with self.assertRaises(Exception):
                np.from_dlpack(yb)
        self.assertEqual(yb.tolist(), [1.5, 2.5])

    def test_ic_buffer_zero_size(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.f32, (n,))
        g.output("y", x + 1.0)
        y = g.compile(backend="ref")(ic.Tensor.from_buffer(bytearray(0), ic.f32))
        self.assertEqual((y.shape, y.tolist(), y.tobytes()), ((0,), [], b""))

    def test_bad_calls(self) -> None:
        prog = gelu_graph(4).compile(backend="ref")
        x, w, b = host([1.0] * 8, ic.f32, (2, 4)), host([1.0] * 4, ic.f32), host([0.0] * 4, ic.f32)
        self.assertEqual(shape_of(prog(x=x, w=w, b=b)), (2, 4))
        self.assertEqual(shape_of(prog(x, w, b=b)), (2, 4))
        self.assertEqual(shape_of(prog.run({"x": x, "w": w, "b": b})), (2, 4))
        self.assertEqual(shape_of(prog.run([x, w, b])), (2, 4))
        with self.assertRaisesRegex(TypeError, "missing input 'b'"):
            prog(x, w)
        with self.assertRaisesRegex(TypeError, "missing inputs 'w', 'b'"):
            prog(x=x)
        with self.assertRaisesRegex(TypeError, "unexpected input 'z'"):
            prog(x, w, b, z=x)
        with self.assertRaisesRegex(TypeError, "takes 3 inputs"):
            prog(x, w, b, x)
        with self.assertRaisesRegex(TypeError, "given twice"):
            prog(x, w, b, x=x)
        for garbage in ("text", 3, None, [1.0, 2.0], object()):
            with self.subTest(garbage=repr(garbage)):
                with self.assertRaisesRegex(TypeError, "input 'x': expected a tensor"):
                    prog(garbage, w, b)
        with self.assertRaisesRegex(TypeError, "has no ic dtype"):
            prog(memoryview(bytearray(64)).cast("N", (2, 4)), w, b)  # size_t: no ic dtype
        with self.assertRaisesRegex(ValueError, "device memory|cuda memory"):
            prog(ic.Tensor(0x1000, ic.f32, (2, 4), device="cuda"), w, b)
        with self.assertRaisesRegex(TypeError, "stream"):
            prog(x, w, b, stream="default")
        if HAVE_NUMPY:
            with self.assertRaisesRegex(TypeError, "no ic equivalent|no ic dtype"):
                prog(np.zeros((2, 4), dtype=np.complex64), w, b)
            with self.assertRaisesRegex(TypeError, "no ic equivalent|no ic dtype"):
                prog(np.zeros((2, 4), dtype="datetime64[s]"), w, b)

    def test_program_inspection(self) -> None:
        g = gelu_graph(8)
        prog = g.compile(backend="ref", mode="eager")
        self.assertEqual(prog.inputs, ["x", "w", "b"])
        self.assertEqual(prog.outputs, ["y"])
        self.assertEqual(prog.input_dtypes, [ic.f32] * 3)
        self.assertEqual(prog.output_dtypes, [ic.f32])
        self.assertEqual(prog.backend, "ref")
        self.assertGreaterEqual(prog.kernel_count, 3)
        self.assertEqual(len(prog.kernel_irs), prog.kernel_count)
        self.assertTrue(all(prog.kernel_irs))
        self.assertEqual(len(prog.kernel_sources), prog.kernel_count)
        dump = prog.dump()
        self.assertIn("gelu_tanh", dump)
        self.assertIn("ref", repr(prog))
        prog.close()
        prog.close()
        with self.assertRaisesRegex(ic.Error, "released"):
            prog.dump()
        with self.assertRaisesRegex(ic.Error, "released"):
            prog(host([1.0] * 8, ic.f32, (1, 8)), host([1.0] * 8, ic.f32), host([1.0] * 8, ic.f32))
        with g.compile(backend="ref") as p2:
            self.assertEqual(p2.outputs, ["y"])

    def test_compile_options(self) -> None:
        g = gelu_graph()
        with self.assertRaisesRegex(ValueError, "mode"):
            g.compile(mode="lazy")
        with self.assertRaisesRegex(ValueError, "backend"):
            g.compile(backend="tpu")
        p = g.compile(backend="ref", strict=True, cache=False)
        self.check_gelu(p, 3)

    def test_cuda_without_gpu(self) -> None:
        ctx = ic.Context(disk_cache=False)
        if ctx.has_device:
            self.skipTest("a GPU is present: tests/python/test_gpu_torch.py runs cuda")
        with self.assertRaises((ic.NoDeviceError, ic.NoNvrtcError)):
            gelu_graph().compile(context=ctx)
        # Compile-only for an explicit arch: CUDA C comes out, running is refused.
        try:
            co = ic.Context(arch="sm_90a", compile_only=True, disk_cache=False)
            prog = gelu_graph().compile(context=co)
        except ic.NoNvrtcError:
            self.skipTest("no libnvrtc")
        self.assertTrue(any("extern \"C\"" in s for s in prog.kernel_sources))
        self.assertEqual(co.arch, "sm_90a")
        self.assertFalse(co.has_device)
        t = ic.Tensor(0x1000, ic.f32, (2, 64), device="cuda")
        v = ic.Tensor(0x2000, ic.f32, (64,), device="cuda")
        with self.assertRaises(ic.NoDeviceError):
            prog(t, v, v)
        with self.assertRaisesRegex(ValueError, "host memory"):
            prog(host([1.0] * 128, ic.f32, (2, 64)), v, v)

    def test_threads_share_a_program(self) -> None:
        prog = gelu_graph(16).compile(backend="ref")
        errors: List[BaseException] = []

        def work(seed: int) -> None:
            try:
                r = rng(seed)
                for _ in range(20):
                    xs = [f32(r.uniform(-2, 2)) for _ in range(3 * 16)]
                    ws, bs = [1.0] * 16, [0.0] * 16
                    y = prog(host(xs, ic.f32, (3, 16)), host(ws, ic.f32), host(bs, ic.f32))
                    for i, v in enumerate(flat(y)):
                        assert gelu_close(v, gelu_ref(xs[i], 1.0, 0.0), xs[i]), (seed, i)
            except BaseException as e:  # noqa: B902 - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class ContextTest(unittest.TestCase):
    def test_close(self) -> None:
        ctx = ic.Context(disk_cache=False)
        prog = gelu_graph().compile(backend="ref", context=ctx)
        self.assertIs(prog.context, ctx)
        ctx.close()
        ctx.close()  # double close
        self.assertTrue(ctx.closed)
        with self.assertRaisesRegex(ic.Error, "context is closed"):
            prog(host([1.0] * 64, ic.f32, (1, 64)), host([1.0] * 64, ic.f32), host([1.0] * 64, ic.f32))
        with self.assertRaisesRegex(ic.Error, "context is closed"):
            gelu_graph().compile(backend="ref", context=ctx)
        with self.assertRaisesRegex(ic.Error, "closed"):
            ctx.cache_stats()
        self.assertIn("closed", repr(ctx))
        with ic.Context(disk_cache=False) as c2:
            p2 = gelu_graph().compile(backend="ref", context=c2)
        self.assertTrue(c2.closed)
        with self.assertRaises(ic.Error):
            p2.dump()

    def test_buffers_outlive_a_closed_context(self) -> None:
        ctx = ic.Context(disk_cache=False)
        g = ic.Graph()
        x = g.input("x", ic.f32, (2,))
        g.output("y", x + 1.0)
        y = g.compile(backend="ref", context=ctx)(ic.Tensor.from_buffer(ic.pack(ic.f32, [1, 2]), ic.f32))
        ctx.close()
        self.assertEqual(y.tolist(), [2.0, 3.0])

    def test_default_context(self) -> None:
        d = ic.default_context()
        self.assertIs(ic.default_context(), d)
        prog = gelu_graph().compile(backend="ref")
        self.assertIs(prog.context, d)

    def test_cache_stats(self) -> None:
        ctx = ic.Context(disk_cache=False)
        gelu_graph().compile(backend="ref", context=ctx)
        gelu_graph().compile(backend="ref", context=ctx)  # rebuilt from scratch: a hit
        s = ctx.cache_stats()
        self.assertIsInstance(s, ic.CacheStats)
        self.assertEqual(s.program_misses, 1)
        self.assertEqual(s.program_hits, 1)
        self.assertEqual(s.disk_hits, 0)
        ctx.close()

    def test_log_callback_and_logging(self) -> None:
        messages: List[Tuple[ic.LogLevel, str]] = []
        ctx = ic.Context(log_level="debug", log=lambda level, msg: messages.append((level, msg)), disk_cache=False)
        gelu_graph().compile(backend="ref", context=ctx)
        self.assertTrue(messages, "no log message at debug level")
        self.assertTrue(all(isinstance(lv, ic.LogLevel) and isinstance(m, str) for lv, m in messages))
        ctx.close()
        with self.assertLogs("ic", level="DEBUG") as cm:
            c2 = ic.Context(log_level=ic.LogLevel.DEBUG, log="logging", disk_cache=False)
            gelu_graph().compile(backend="ref", context=c2)
            c2.close()
        self.assertTrue(cm.output)
        with self.assertRaisesRegex(ValueError, "log level"):
            ic.Context(log_level="loud")
        with self.assertRaisesRegex(ValueError, "log must be"):
            ic.Context(log="syslog")

    def test_bad_context_options(self) -> None:
        with self.assertRaises(ic.InvalidArgumentError):
            ic.Context(arch="sm_9x")
        with self.assertRaises(ic.UnsupportedError):
            ic.Context(arch="sm_70", compile_only=True)

    def test_cache_dir(self) -> None:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            ctx = ic.Context(cache_dir=d, cache_max_bytes=1 << 20)
            gelu_graph().compile(backend="ref", context=ctx)
            ctx.close()


class LibraryTest(unittest.TestCase):
    def test_versions_and_paths(self) -> None:
        self.assertRegex(ic.version(), r"^\d+\.\d+\.\d+$")
        self.assertEqual(ic.version_info()[:2], (0, 1))
        self.assertTrue(os.path.exists(ic.library_path()))
        self.assertEqual(ic.__version__.split(".")[:2], ic.version().split(".")[:2])

    def test_cdef(self) -> None:
        text = ic.cdef()
        self.assertIn("ic_program_run", text)
        self.assertIn("IC_OP_GELU_TANH", text)
        self.assertIn("IC_MAX_DIMS = 8", text)
        self.assertFalse([line for line in text.splitlines() if line.lstrip().startswith("#")])
        self.assertNotIn("IC_API", text)
        self.assertNotIn("__attribute__", text)

    def run_import(self, env: Dict[str, str]) -> "subprocess.CompletedProcess[str]":
        full = dict(os.environ)
        full.update(env)
        return subprocess.run([sys.executable, "-c", "import ic; print(ic.library_path())"], env=full,
                              capture_output=True, text=True)

    def test_ic_library_errors(self) -> None:
        r = self.run_import({"IC_LIBRARY": "/nonexistent/libic.so"})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("IC_LIBRARY", r.stderr)
        self.assertIn("/nonexistent/libic.so", r.stderr)
        libc = ctypes.util.find_library("m") or "libm.so.6"
        r = self.run_import({"IC_LIBRARY": libc})
        self.assertIn("not libic", r.stderr)

    def test_sanitizer_builds_are_skipped(self) -> None:
        import tempfile
        from pathlib import Path

        from ic._lib import _sanitized_build

        with tempfile.TemporaryDirectory() as d:
            self.assertFalse(_sanitized_build(Path(d)))
            (Path(d) / "CMakeCache.txt").write_text("IC_WERROR:BOOL=ON\nIC_SANITIZE:BOOL=ON\n")
            self.assertTrue(_sanitized_build(Path(d)))

    def test_functions_a_library_lacks(self) -> None:
        from ic._lib import api

        self.assertTrue(api.has("ic_program_run"))
        self.assertFalse(api.has("ic_graph_teleport"))
        with self.assertRaisesRegex(ic.UnsupportedError, "ic_graph_teleport: the loaded libic"):
            api.ic_graph_teleport(None)

    def test_lookup_order(self) -> None:
        # Without IC_LIBRARY, from the source tree: the build trees inside it (build/,
        # build-*/) that hold a libic, then the system loader; the message of a failure
        # would list every place. Only the mechanics here. The build that runs this test
        # may be anywhere (cmake -S ic -B ic-build): it is found through IC_LIBRARY, so
        # the source tree may have no build tree at all.
        from ic._lib import _candidates
        from pathlib import Path

        pkg = Path(ic.__file__).resolve().parent
        where = [w for w, _ in _candidates(pkg)]
        self.assertEqual(where[0], "installed")
        self.assertEqual(where[-1], "system loader")
        root = pkg.parent.parent
        trees: set[str] = set()
        if (root / "CMakeLists.txt").is_file() and (root / "include" / "ic" / "ic.h").is_file():
            trees = {f"build tree {b}" for b in [root / "build", *root.glob("build-*")]
                     if b.is_dir() and (b / "libic.so.0").exists()}
        listed = [w for w in where if w.startswith("build tree")]
        self.assertEqual(set(listed), trees)
        if f"build tree {root / 'build'}" in listed:
            self.assertEqual(listed[0], f"build tree {root / 'build'}")  # build/ first


if __name__ == "__main__":
    unittest.main()
