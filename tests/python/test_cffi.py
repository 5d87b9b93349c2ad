"""ic_cdef.h with cffi (Debian python3-cffi): ffi.cdef(ic.cdef()), ffi.dlopen(libic),
then the C API directly: the version, a graph built and run on the ref backend."""

from __future__ import annotations

import importlib
import unittest
from typing import Any

import ic

cffi: Any
try:
    cffi = importlib.import_module("cffi")  # untyped for mypy: it may lack stubs
except ImportError:
    cffi = None


@unittest.skipIf(cffi is None, "cffi is not installed (Debian: python3-cffi)")
class CffiTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ffi = cffi.FFI()
        self.ffi.cdef(ic.cdef())
        self.lib = self.ffi.dlopen(ic.library_path())

    def test_version_and_constants(self) -> None:
        lib = self.lib
        self.assertEqual(lib.ic_version(), lib.IC_VERSION_NUMBER)
        self.assertEqual((lib.IC_VERSION_MAJOR, lib.IC_VERSION_MINOR), ic.version_info()[:2])
        self.assertEqual(lib.IC_MAX_DIMS, 8)
        self.assertEqual(lib.IC_DIM_INFER, -(2 ** 63))
        self.assertEqual(lib.IC_INVALID_VALUE, -1)
        self.assertEqual(self.ffi.string(lib.ic_op_name(lib.IC_OP_GELU_TANH)), b"gelu_tanh")
        self.assertEqual(lib.IC_F32, int(ic.f32))
        self.assertEqual(lib.IC_ERR_SHAPE_MISMATCH, int(ic.Status.SHAPE_MISMATCH))
        self.assertEqual(self.ffi.sizeof("ic_tensor"), 32)

    def test_graph_on_ref(self) -> None:
        ffi, lib = self.ffi, self.lib
        ctx = ffi.new("ic_context **")
        self.assertEqual(lib.ic_context_create(ffi.NULL, ctx), lib.IC_OK)
        g = ffi.new("ic_graph **")
        self.assertEqual(lib.ic_graph_create(g), lib.IC_OK)
        n = lib.ic_graph_symbol(g[0], b"n")
        dims = ffi.new("ic_dim[1]", [n])
        x = lib.ic_graph_input(g[0], b"x", lib.IC_F32, 1, dims, lib.IC_LAYOUT_CONTIGUOUS)
        y = lib.ic_graph_binary(g[0], lib.IC_OP_MUL, x, x)
        self.assertEqual(lib.ic_graph_output(g[0], b"y", lib.ic_graph_unary(g[0], lib.IC_OP_NEG, y)), lib.IC_OK)
        opts = ffi.new("ic_compile_options *")
        opts.struct_size = ffi.sizeof("ic_compile_options")
        backend = ffi.new("char[]", b"ref")
        opts.backend = backend
        prog = ffi.new("ic_program **")
        st = lib.ic_compile(ctx[0], g[0], opts, prog)
        self.assertEqual(st, lib.IC_OK, ffi.string(lib.ic_last_error()))
        lib.ic_graph_destroy(g[0])
        hx = ffi.new("float[4]", [1, 2, 3, -4])
        hy = ffi.new("float[4]")
        shape = ffi.new("int64_t[1]", [4])
        inp = ffi.new("ic_tensor[1]")
        inp[0].data, inp[0].dtype, inp[0].ndim, inp[0].shape = hx, lib.IC_F32, 1, shape
        out = ffi.new("ic_tensor[1]")
        out[0].data, out[0].dtype, out[0].ndim, out[0].shape = hy, lib.IC_F32, 1, shape
        self.assertEqual(lib.ic_program_run(prog[0], inp, 1, out, 1, ffi.NULL), lib.IC_OK)
        self.assertEqual(list(hy), [-1.0, -4.0, -9.0, -16.0])
        # A mismatch is reported, with ic's message.
        bad = ffi.new("int64_t[1]", [5])
        out[0].shape = bad
        self.assertEqual(lib.ic_program_run(prog[0], inp, 1, out, 1, ffi.NULL), lib.IC_ERR_SHAPE_MISMATCH)
        self.assertIn(b"dim 0 is 5", ffi.string(lib.ic_last_error()))
        lib.ic_program_release(prog[0])
        lib.ic_context_destroy(ctx[0])


if __name__ == "__main__":
    unittest.main()
