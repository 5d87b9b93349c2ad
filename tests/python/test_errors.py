"""The exception classes: exported under the module ``ic`` (reprs, tracebacks, pickling),
and DTypeMismatchError, which every dtype mismatch raises (graph building, parsing, a
run's inputs of every kind and out= tensors), leading with the two dtypes."""

from __future__ import annotations

import array
import pickle
import traceback
import unittest
from typing import Any, Callable, List, Tuple, Type

import ic
from support import HAVE_NUMPY, flat, host, np, out_buffer


def exported_exceptions() -> List[Type[BaseException]]:
    return [obj for name in ic.__all__ for obj in [getattr(ic, name)]
            if isinstance(obj, type) and issubclass(obj, BaseException)]


class ExceptionModuleTest(unittest.TestCase):
    def test_every_exported_exception_lives_in_ic(self) -> None:
        classes = exported_exceptions()
        self.assertIn(ic.ShapeMismatchError, classes)
        self.assertIn(ic.DTypeMismatchError, classes)
        self.assertEqual(len(classes), 12)  # Error and one class per status, DTypeMismatchError
        for cls in classes:
            with self.subTest(cls=cls.__qualname__):
                self.assertEqual(cls.__module__, "ic")
                self.assertIs(getattr(ic, cls.__qualname__), cls)
                self.assertEqual(repr(cls), f"<class 'ic.{cls.__qualname__}'>")
                self.assertEqual(str(cls), f"<class 'ic.{cls.__qualname__}'>")
                self.assertIs(pickle.loads(pickle.dumps(cls)), cls)

    def test_tracebacks_name_ic(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (3,))
        with self.assertRaises(ic.InvalidGraphError) as cm:
            x.squeeze(0)
        line = traceback.format_exception_only(type(cm.exception), cm.exception)[-1]
        self.assertTrue(line.startswith("ic.InvalidGraphError: squeeze"), line)
        g2 = ic.Graph()
        y = g2.input("y", ic.f32, (2,))
        g2.output("z", -y)
        with self.assertRaises(ic.ShapeMismatchError) as cm2:
            g2.compile(backend="ref")(host([1.0, 2.0, 3.0], ic.f32))
        line = traceback.format_exception_only(type(cm2.exception), cm2.exception)[-1]
        self.assertTrue(line.startswith("ic.ShapeMismatchError: input 0 'y': dim 0 is 3"), line)
        self.assertTrue(repr(cm2.exception).startswith("ShapeMismatchError(\"input 0 'y'"), repr(cm2.exception))

    def test_pickling_keeps_class_message_and_status(self) -> None:
        errors: List[ic.Error] = [
            ic.ShapeMismatchError("input 0 'x': dim 0 is 3, expected 2"),
            ic.InvalidArgumentError("bad"),
            ic.Error("plain", ic.Status.CUDA),
            ic.DTypeMismatchError("dtype mismatch: f32 vs f16: add: operand dtypes differ", ic.Status.INVALID_GRAPH),
        ]
        for e in errors:
            with self.subTest(cls=type(e).__name__):
                back = pickle.loads(pickle.dumps(e))
                self.assertIs(type(back), type(e))
                self.assertEqual(str(back), str(e))
                self.assertEqual(back.status, e.status)
                self.assertIn(f"ic\n{type(e).__name__}".encode(), pickle.dumps(e, protocol=0))
        self.assertEqual(pickle.loads(pickle.dumps(errors[3])).status, ic.Status.INVALID_GRAPH)


def _mismatched(fn: Callable[[], Any]) -> ic.DTypeMismatchError:
    try:
        fn()
    except ic.DTypeMismatchError as e:
        return e
    raise AssertionError("no DTypeMismatchError")


class DTypeMismatchTest(unittest.TestCase):
    def check(self, e: ic.DTypeMismatchError, prefix: str, status: ic.Status) -> None:
        self.assertTrue(str(e).startswith(prefix), f"{str(e)!r} does not begin with {prefix!r}")
        self.assertEqual(e.status, status)
        # Existing handlers keep catching it: it is both older classes and a ValueError.
        for cls in (ic.ShapeMismatchError, ic.InvalidGraphError, ic.Error, ValueError):
            self.assertIsInstance(e, cls)

    def test_hierarchy(self) -> None:
        self.assertTrue(issubclass(ic.DTypeMismatchError, ic.ShapeMismatchError))
        self.assertTrue(issubclass(ic.DTypeMismatchError, ic.InvalidGraphError))
        self.assertEqual(ic.DTypeMismatchError.status, ic.Status.SHAPE_MISMATCH)
        self.assertTrue(ic.DTypeMismatchError.__doc__)

    def test_graph_building(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (4,))
        h = g.input("h", ic.f16, (4,))
        b = g.input("b", ic.bool_, (4,))
        i = g.input("i", ic.i32, (4,))
        cases: List[Tuple[Callable[[], Any], str]] = [
            (lambda: x + h, "dtype mismatch: f32 vs f16: add: "),
            (lambda: h * x, "dtype mismatch: f16 vs f32: mul: "),
            (lambda: ic.maximum(x, i), "dtype mismatch: f32 vs i32: maximum: "),
            (lambda: x.clamp(0.0, h), "dtype mismatch: f32 vs f16: clamp: "),
            (lambda: ic.where(b, x, h), "dtype mismatch: f32 vs f16: where: "),
            (lambda: ic.where(x, x, x), "dtype mismatch: f32 vs bool: where: "),
            (lambda: ic.concat([x, h]), "dtype mismatch: f16 vs f32: concat: "),
            (lambda: ic.layer_norm(x, 1, h), "dtype mismatch: f32 vs f16: "),
        ]
        for build, prefix in cases:
            with self.subTest(prefix=prefix):
                self.check(_mismatched(build), prefix, ic.Status.INVALID_GRAPH)
        # The handler written for the older class still catches it.
        with self.assertRaises(ic.ShapeMismatchError):
            x + h
        # A dtype the op does not take is no mismatch.
        with self.assertRaises(ic.InvalidGraphError) as cm:
            ic.exp(i)
        self.assertNotIsInstance(cm.exception, ic.DTypeMismatchError)
        self.assertNotIsInstance(cm.exception, ic.ShapeMismatchError)

    def test_a_graph_that_already_failed(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (4,))
        with self.assertRaises(ic.InvalidGraphError):
            x.squeeze(0)
        e = _mismatched(lambda: x + g.input("h", ic.f16, (4,)))
        self.check(e, "dtype mismatch: f32 vs f16: add: ", ic.Status.INVALID_GRAPH)
        self.assertIn("earlier error: squeeze", str(e))

    def test_parse(self) -> None:
        text = "input x : f32[4]\ninput h : f16[4]\ny = add(x, h)\noutput y\n"
        e = _mismatched(lambda: ic.Graph.parse(text))
        self.check(e, "line 3, column 1: dtype mismatch: f32 vs f16: add: ", ic.Status.INVALID_GRAPH)

    def program(self) -> ic.Program:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.f32, (n,))
        g.output("y", x * 2.0)
        return g.compile(backend="ref")

    def test_run_inputs_of_every_kind(self) -> None:
        prog = self.program()
        f64s = array.array("d", [1.0, 2.0, 3.0])
        f16_bytes = ic.pack(ic.f16, [1.0, 2.0, 3.0])
        inputs: List[Tuple[str, Callable[[], Any], str]] = [
            ("array.array", lambda: f64s, "f64"),
            ("memoryview", lambda: memoryview(array.array("i", [1, 2, 3])), "i32"),
            ("ic.Tensor", lambda: ic.Tensor.from_buffer(bytearray(f16_bytes), ic.f16, (3,)), "f16"),
            ("bool", lambda: host([True, False, True], ic.bool_, use_numpy=False), "bool"),
        ]
        if HAVE_NUMPY:
            inputs.append(("numpy", lambda: np.arange(3, dtype="float64"), "f64"))
            inputs.append(("numpy f16", lambda: np.ones(3, dtype="float16"), "f16"))
        for name, make, dt in inputs:
            for call in ("positional", "keyword", "run"):
                with self.subTest(kind=name, call=call):
                    a = make()
                    if call == "positional":
                        e = _mismatched(lambda: prog(a))
                    elif call == "keyword":
                        e = _mismatched(lambda: prog(x=a))
                    else:
                        e = _mismatched(lambda: prog.run({"x": a}))
                    self.check(e, f"dtype mismatch: {dt} vs f32: input 0 'x': got {dt}, compiled for f32",
                               ic.Status.SHAPE_MISMATCH)
        # A right input afterwards runs (the failed signature left nothing behind).
        self.assertEqual(flat(prog(host([1.0, 2.0], ic.f32))), [2.0, 4.0])

    def test_run_dlpack_input(self) -> None:
        # An object that only speaks DLPack (as JAX arrays do), over an ic.Buffer of f64
        # (the output of a program run on an ic.Tensor).
        g = ic.Graph()
        s = g.input("s", ic.f64, (3,))
        g.output("t", s + 1.0)
        buf = g.compile(backend="ref")(ic.Tensor.from_buffer(array.array("d", [1.0, 2.0, 3.0])))
        self.assertIsInstance(buf, ic.Buffer)

        class DLPackOnly:
            def __init__(self, inner: ic.Buffer) -> None:
                self.inner = inner

            def __dlpack__(self, stream: Any = None) -> Any:
                return self.inner.__dlpack__()

            def __dlpack_device__(self) -> Tuple[int, int]:
                return self.inner.__dlpack_device__()

        e = _mismatched(lambda: self.program()(DLPackOnly(buf)))
        self.check(e, "dtype mismatch: f64 vs f32: input 0 'x': got f64", ic.Status.SHAPE_MISMATCH)

    def test_run_out_tensors(self) -> None:
        prog = self.program()
        x = host([1.0, 2.0, 3.0], ic.f32)
        e = _mismatched(lambda: prog(x, out=out_buffer(ic.f64, (3,))))
        self.check(e, "dtype mismatch: f64 vs f32: out 'y': got f64[3], the program makes f32[3]",
                   ic.Status.SHAPE_MISMATCH)
        e = _mismatched(lambda: prog(x, out={"y": out_buffer(ic.f64, (4,))}))
        self.check(e, "dtype mismatch: f64 vs f32: ", ic.Status.SHAPE_MISMATCH)
        # A shape mismatch of the right dtype stays a plain ShapeMismatchError.
        with self.assertRaises(ic.ShapeMismatchError) as cm:
            prog(x, out=out_buffer(ic.f32, (4,)))
        self.assertNotIsInstance(cm.exception, ic.DTypeMismatchError)
        with self.assertRaises(ic.ShapeMismatchError) as cm:
            prog(host([1.0] * 4, ic.f32, (2, 2)))
        self.assertNotIsInstance(cm.exception, ic.DTypeMismatchError)
        self.assertIn("got f32 with 2 dims, compiled for f32 with 1", str(cm.exception))

    def test_classification_is_by_the_documented_prefix(self) -> None:
        from ic._errors import make_error

        self.assertIs(type(make_error(9, "dtype mismatch: f32 vs f16: input 0 'x'")), ic.DTypeMismatchError)
        self.assertIs(type(make_error(2, "line 2, column 1: dtype mismatch: f32 vs i32: add: x")),
                      ic.DTypeMismatchError)
        e = make_error(9, "dtype mismatch: f32 vs f16: input 0 'x'", "ic_program_run")
        self.assertEqual(str(e), "ic_program_run: dtype mismatch: f32 vs f16: input 0 'x'")
        self.assertIs(type(e), ic.DTypeMismatchError)
        # Elsewhere in a message, or under another status, the words mean nothing.
        self.assertIs(type(make_error(9, "input 0: dtype mismatch: f32 vs f16: x")), ic.ShapeMismatchError)
        self.assertIs(type(make_error(8, "dtype mismatch: f32 vs f16: x")), ic.UnsupportedError)
        self.assertIs(type(make_error(2, "exp: dtype i32 not accepted")), ic.InvalidGraphError)


if __name__ == "__main__":
    unittest.main()
