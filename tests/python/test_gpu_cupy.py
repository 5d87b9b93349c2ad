"""CuPy arrays in and out (__cuda_array_interface__), on CuPy's current stream. Skipped
without CuPy or a GPU."""

from __future__ import annotations

import importlib
import unittest
from typing import Any

import ic

cupy: Any
try:
    cupy = importlib.import_module("cupy")  # untyped for mypy: it may lack stubs

    HAVE_GPU = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:  # ImportError, or CuPy without a driver
    cupy = None
    HAVE_GPU = False


@unittest.skipUnless(HAVE_GPU, "needs CuPy with a CUDA GPU")
class CupyTest(unittest.TestCase):
    def test_arrays_in_and_out(self) -> None:
        ctx = ic.Context(device=cupy.cuda.Device().id)
        g = ic.Graph()
        n = g.symbol("n")
        a = g.input("a", ic.f32, (n, 64), layout="strided")
        b = g.input("b", ic.f32, (64,))
        g.output("y", a * b + 1.0)
        prog = g.compile(strict=True, context=ctx)
        x = cupy.random.standard_normal((300, 128), dtype=cupy.float32)[:, ::2]
        w = cupy.random.standard_normal(64, dtype=cupy.float32)
        s = cupy.cuda.Stream()
        with s:
            y = prog(x, w)
            z = y * 1
        s.synchronize()
        self.assertIsInstance(y, cupy.ndarray)
        self.assertEqual(y.shape, (300, 64))
        self.assertTrue(bool(cupy.all(z == x * w + 1.0)))
        out = cupy.empty((300, 64), dtype=cupy.float32)
        self.assertIs(prog(x, w, out=out), out)
        cupy.cuda.Device().synchronize()
        self.assertTrue(bool(cupy.all(out == y)))
        ctx.close()


if __name__ == "__main__":
    unittest.main()
