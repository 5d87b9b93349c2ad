"""PyTorch tensors in and out. On a CUDA GPU: the cuda backend on the current stream,
bitwise equal to torch eager where ic's semantics are torch's (add, mul, relu in f32 and
bf16), outputs as torch tensors, out=, non-contiguous inputs declared strided, DLPack and
__cuda_array_interface__ inputs, and the dispatch overhead (printed, not asserted).
Without a GPU, torch CPU tensors on the ref backend. Skipped without torch."""

from __future__ import annotations

import importlib
import threading
import time
import unittest
from typing import Any, List, Tuple

import ic

torch: Any
try:
    torch = importlib.import_module("torch")  # untyped for mypy: it may lack stubs
except ImportError:
    torch = None

HAVE_TORCH = torch is not None
HAVE_GPU = HAVE_TORCH and bool(torch.cuda.is_available())


def binary_graph(op: str, dtype: ic.DType, layout: str = "contiguous") -> ic.Graph:
    g = ic.Graph()
    n = g.symbol("n")
    m = g.symbol("m")
    a = g.input("a", dtype, (n, m), layout=layout)
    b = g.input("b", dtype, (n, m), layout=layout)
    g.output("y", getattr(ic, op)(a, b))
    return g


def out_signatures(prog: ic.Program) -> int:
    """How many out= signatures the program's input signatures hold (the torch fast
    path runs those unchecked)."""
    return sum(len(e.out_sigs) for e in prog._sigs.values())


def check_out_fast_path(test: unittest.TestCase, prog: ic.Program, device: str) -> None:
    """prog computes a * b + 1 over (n, m) f32 inputs. out= with torch tensors: results
    of repeated calls (new data, same signatures), the forms the fast path takes, and
    every wrong out= tensor raising after a good one of a nearby signature was seen."""
    gen = torch.Generator(device=device).manual_seed(7)

    def rand(*shape: int) -> Any:
        return torch.randn(*shape, generator=gen, device=device)

    for shape in ((5, 7), (1, 13), (0, 3), (33, 1)):
        a, b = rand(*shape), rand(*shape)
        out = torch.empty(*shape, device=device)
        test.assertIs(prog(a, b, out=out), out)
        test.assertTrue(torch.equal(out, a * b + 1))
        for _ in range(3):  # the signature is known now: new data, new tensors
            a, b = rand(*shape), rand(*shape)
            out = torch.full(shape, float("nan"), device=device)
            test.assertIs(prog(a, b, out=out), out)
            test.assertTrue(torch.equal(out, a * b + 1))
            out2 = torch.empty(*shape, device=device)
            test.assertIs(prog(a, b, out=[out2]), out2)
            test.assertIs(prog(b, a, out=(out,)), out)
            test.assertTrue(torch.equal(out2, a * b + 1))
            test.assertTrue(torch.equal(out, b * a + 1))
    test.assertGreaterEqual(out_signatures(prog), 4)
    a, b = rand(6, 4), rand(6, 4)
    good = torch.empty(6, 4, device=device)
    prog(a, b, out=good)
    prog(a, b, out=good)
    # Wrong out= tensors after a good one with the same inputs: each still raises.
    with test.assertRaisesRegex(ic.ShapeMismatchError, r"out 'y': got f32\[6, 5\], the program makes f32\[6, 4\]"):
        prog(a, b, out=torch.empty(6, 5, device=device))
    with test.assertRaisesRegex(ic.DTypeMismatchError, r"dtype mismatch: f64 vs f32: out 'y'"):
        prog(a, b, out=torch.empty(6, 4, dtype=torch.float64, device=device))
    with test.assertRaisesRegex(ic.DTypeMismatchError, r"dtype mismatch: bf16 vs f32"):
        prog(a, b, out=[torch.empty(6, 4, dtype=torch.bfloat16, device=device)])
    with test.assertRaisesRegex(ic.ShapeMismatchError, "contiguous"):
        prog(a, b, out=torch.empty(4, 6, device=device).t())
    with test.assertRaisesRegex(ic.ShapeMismatchError, "contiguous"):
        prog(a, b, out=torch.empty(6, 8, device=device)[:, ::2])
    with test.assertRaisesRegex(TypeError, "1 tensors for 2 outputs|2 tensors for 1 output"):
        prog(a, b, out=[good, good])
    # Meta tensors (no memory; get_device() is -1 as for CPU ones) are refused.
    with test.assertRaisesRegex(ValueError, "meta memory"):
        prog(a, b, out=torch.empty(6, 4, device="meta"))
    with test.assertRaisesRegex(ValueError, "meta memory"):
        prog(a.to("meta"), b.to("meta"))
    # A tensor whose metadata changed in place is checked again.
    resized = torch.empty(6, 4, device=device)
    prog(a, b, out=resized)
    resized.resize_(4, 6)
    with test.assertRaisesRegex(ic.ShapeMismatchError, r"got f32\[4, 6\]"):
        prog(a, b, out=resized)
    # An output that is an input: the run refuses it (aliasing), fast path or not.
    a2 = rand(6, 4)
    with test.assertRaisesRegex(ic.Error, "overlaps input"):
        prog(a2, b, out=a2)
    test.assertTrue(torch.equal(good, a * b + 1))
    # A bad stream= is refused on the fast path too.
    with test.assertRaises(TypeError):
        prog(a, b, out=good, stream=object())
    # Not torch.Tensor exactly (a subclass): the general path, same results.
    p_out = torch.nn.Parameter(torch.empty(6, 4, device=device), requires_grad=False)
    test.assertIs(prog(a, b, out=p_out), p_out)
    test.assertTrue(torch.equal(p_out, a * b + 1))


def check_two_outputs(test: unittest.TestCase, compile: Any, device: str) -> None:
    """Two outputs through the fast path: allocated, and out= as a tuple or list."""
    g = ic.Graph()
    n = g.symbol("n")
    a, b = g.input("a", ic.f32, (n,)), g.input("b", ic.f32, (n,))
    g.output("y", a * b + 1.0)
    g.output("z", (a - b).cast(ic.f64))
    prog = compile(g)
    gen = torch.Generator(device=device).manual_seed(11)
    for n_ in (1, 37, 0):
        for _ in range(3):
            x1 = torch.randn(n_, generator=gen, device=device)
            x2 = torch.randn(n_, generator=gen, device=device)
            y, z = prog(x1, x2)
            test.assertEqual((y.dtype, z.dtype), (torch.float32, torch.float64))
            test.assertTrue(torch.equal(y, x1 * x2 + 1) and torch.equal(z, (x1 - x2).double()))
            oy, oz = torch.empty(n_, device=device), torch.empty(n_, dtype=torch.float64, device=device)
            r = prog(x1, x2, out=(oy, oz))
            test.assertTrue(r[0] is oy and r[1] is oz)
            test.assertTrue(torch.equal(oy, y) and torch.equal(oz, z))
            oy2 = torch.empty(n_, device=device)
            r = prog(x2, x1, out=[oy2, oz])
            test.assertTrue(r[0] is oy2 and r[1] is oz)
            test.assertTrue(torch.equal(oy2, x2 * x1 + 1) and torch.equal(oz, (x2 - x1).double()))
        with test.assertRaisesRegex(ic.DTypeMismatchError, "out 'z'"):
            prog(x1, x2, out=(oy, torch.empty(n_, device=device)))
        with test.assertRaisesRegex(TypeError, "1 tensors for 2 outputs"):
            prog(x1, x2, out=(oy,))


def check_threads(test: unittest.TestCase, prog: ic.Program, device: str) -> None:
    """Threads calling one program with out= (one signature, each its own tensors): an
    entry busy on one thread sends another through a private copy, never its tensors."""
    gen = torch.Generator(device=device).manual_seed(5)
    pairs = [(torch.randn(9, 5, generator=gen, device=device), torch.randn(9, 5, generator=gen, device=device))
             for _ in range(4)]
    failures: List[str] = []

    def work(i: int) -> None:
        a, b = pairs[i]
        want = a * b + 1
        for k in range(50):
            out = torch.full((9, 5), float("nan"), device=device)
            if prog(a, b, out=out) is not out or not torch.equal(out, want):
                failures.append(f"thread {i}, call {k}")
            if not torch.equal(prog(a, b), want):
                failures.append(f"thread {i}, call {k}, allocated")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    test.assertEqual(failures, [])


def product_plus_one(layout: str = "contiguous") -> ic.Graph:
    g = ic.Graph()
    n, m = g.symbol("n"), g.symbol("m")
    a = g.input("a", ic.f32, (n, m), layout=layout)
    b = g.input("b", ic.f32, (n, m), layout=layout)
    g.output("y", a * b + 1.0)
    return g


@unittest.skipUnless(HAVE_TORCH, "needs torch")
class TorchCpuTest(unittest.TestCase):
    """The ref backend takes torch CPU tensors (host pointers) and returns torch tensors."""

    def test_ref_backend(self) -> None:
        prog = binary_graph("add", ic.f32).compile(backend="ref")
        a = torch.randn(5, 7)
        b = torch.randn(5, 7)
        y = prog(a, b)
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual(y.device.type, "cpu")
        self.assertTrue(torch.equal(y, a + b))
        out = torch.empty(5, 7)
        self.assertIs(prog(a, b, out=out), out)
        self.assertTrue(torch.equal(out, a + b))
        with self.assertRaises(ic.ShapeMismatchError):
            prog(a, b, out=torch.empty(7, 5))

    def test_out_fast_path(self) -> None:
        check_out_fast_path(self, product_plus_one().compile(backend="ref"), "cpu")
        check_two_outputs(self, lambda g: g.compile(backend="ref"), "cpu")
        check_threads(self, product_plus_one().compile(backend="ref"), "cpu")


    def test_unsigned_dtypes(self) -> None:
        # torch.uint16/uint32/uint64 (torch 2.3+) in and out of the ref backend: the bytes go
        # through torch.uint8 views, as torch implements few ops on these dtypes.
        for name, dtype in (("uint16", ic.u16), ("uint32", ic.u32), ("uint64", ic.u64)):
            tdt = getattr(torch, name, None)
            if tdt is None:
                continue
            with self.subTest(dtype=name):
                bits = 8 * dtype.itemsize
                vals = [2 ** bits - 1, 2 ** (bits - 1) + 3, 5, 0]
                raw = ic.pack(dtype, vals)
                x = torch.tensor(list(raw), dtype=torch.uint8).view(tdt)
                g = ic.Graph()
                xi = g.input("x", dtype, (4,))
                g.output("y", xi // 3)
                y = g.compile(backend="ref")(x)
                self.assertIsInstance(y, torch.Tensor)
                self.assertEqual(y.dtype, tdt)
                got = ic.unpack(dtype, bytes(y.view(torch.uint8).tolist()))
                self.assertEqual([int(v) for v in got], [v // 3 for v in vals])


@unittest.skipUnless(HAVE_GPU, "needs torch with a CUDA GPU")
class TorchGpuTest(unittest.TestCase):
    ctx: ic.Context

    @classmethod
    def setUpClass(cls) -> None:
        cls.ctx = ic.Context(device=torch.cuda.current_device())

    @classmethod
    def tearDownClass(cls) -> None:
        cls.ctx.close()

    def compile(self, g: ic.Graph, mode: str = "fused") -> ic.Program:
        return g.compile(mode=mode, strict=True, context=self.ctx)

    def pair(self, shape: Tuple[int, ...], dtype: Any) -> Tuple[Any, Any]:
        return (torch.randn(*shape, device="cuda").to(dtype), torch.randn(*shape, device="cuda").to(dtype))

    def test_bitwise_equal_to_torch_eager(self) -> None:
        for dtype, tdt in ((ic.f32, torch.float32), (ic.bf16, torch.bfloat16)):
            for op, ref in (("add", torch.add), ("mul", torch.mul)):
                for mode in ("fused", "eager"):
                    with self.subTest(dtype=str(dtype), op=op, mode=mode):
                        prog = self.compile(binary_graph(op, dtype), mode)
                        a, b = self.pair((1000, 513), tdt)
                        y = prog(a, b)
                        self.assertIsInstance(y, torch.Tensor)
                        self.assertEqual((y.device, y.dtype, tuple(y.shape)), (a.device, tdt, (1000, 513)))
                        self.assertTrue(torch.equal(y, ref(a, b)))
        g = ic.Graph()
        x = g.input("x", ic.f32, (g.symbol("n"),))
        g.output("y", ic.relu(x))
        x_t = torch.randn(100003, device="cuda")
        self.assertTrue(torch.equal(self.compile(g)(x_t), torch.relu(x_t)))

    def test_gelu_fused_equals_eager(self) -> None:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.f32, (n, 4096))
        w = g.input("w", ic.f32, (4096,))
        b = g.input("b", ic.f32, (4096,))
        g.output("y", ic.gelu_tanh(x * w + b))
        xs, ws, bs = torch.randn(257, 4096, device="cuda"), torch.randn(4096, device="cuda"), \
            torch.randn(4096, device="cuda")
        fused = self.compile(g)(xs, ws, bs)
        eager = self.compile(g, "eager")(xs, ws, bs)
        self.assertTrue(torch.equal(fused, eager))
        ref = torch.nn.functional.gelu(xs * ws + bs, approximate="tanh")
        self.assertLess((fused - ref).abs().max().item(), 1e-5)

    def test_current_stream(self) -> None:
        prog = self.compile(binary_graph("mul", ic.f32))
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            # Produced on s and consumed on s without a synchronization: ic must run on s.
            a = torch.full((4096, 1024), 3.0, device="cuda")
            b = torch.full((4096, 1024), 2.0, device="cuda")
            y = prog(a, b)
            z = y + 1
        s.synchronize()
        self.assertTrue(bool((z == 7.0).all()))
        # An explicit stream= (a torch stream or its handle).
        a, b = self.pair((64, 64), torch.float32)
        torch.cuda.synchronize()
        y2 = prog(a, b, stream=s)
        s.synchronize()
        self.assertTrue(torch.equal(y2, a * b))
        y3 = prog(a, b, stream=s.cuda_stream)
        s.synchronize()
        self.assertTrue(torch.equal(y3, a * b))

    def test_out(self) -> None:
        prog = self.compile(binary_graph("add", ic.f32))
        a, b = self.pair((33, 17), torch.float32)
        out = torch.empty(33, 17, device="cuda")
        self.assertIs(prog(a, b, out=out), out)
        self.assertTrue(torch.equal(out, a + b))
        self.assertIs(prog(a, b, out={"y": out}), out)
        with self.assertRaisesRegex(ic.ShapeMismatchError, "got f32"):
            prog(a, b, out=torch.empty(33, 16, device="cuda"))
        with self.assertRaisesRegex(ic.ShapeMismatchError, "contiguous"):
            prog(a, b, out=torch.empty(17, 33, device="cuda").t())
        with self.assertRaisesRegex(ValueError, "host memory"):
            prog(a, b, out=torch.empty(33, 17))

    def test_out_fast_path(self) -> None:
        for mode in ("fused", "eager"):
            with self.subTest(mode=mode):
                prog = self.compile(product_plus_one(), mode)
                check_out_fast_path(self, prog, "cuda")
                check_two_outputs(self, lambda g, mode=mode: self.compile(g, mode), "cuda")
                check_threads(self, self.compile(product_plus_one(), mode), "cuda")
                a, b = self.pair((8, 8), torch.float32)
                good = torch.empty(8, 8, device="cuda")
                prog(a, b, out=good)
                with self.assertRaisesRegex(ValueError, "host memory"):
                    prog(a, b, out=torch.empty(8, 8))
                # On another stream, given or current: ordered after work queued there
                # (b and good come from the default stream: finished first).
                torch.cuda.synchronize()
                s = torch.cuda.Stream()
                with torch.cuda.stream(s):
                    a2 = torch.full((8, 8), 3.0, device="cuda")
                    prog(a2, b, out=good)
                    z = good - 1
                s.synchronize()
                self.assertTrue(torch.equal(z, (a2 * b + 1) - 1))
                torch.cuda.synchronize()
                a3 = torch.full((8, 8), 2.0, device="cuda")
                s.wait_stream(torch.cuda.current_stream())
                prog(a3, b, out=good, stream=s)
                s.synchronize()
                self.assertTrue(torch.equal(good, a3 * b + 1))

    def test_non_contiguous_inputs(self) -> None:
        prog = self.compile(binary_graph("add", ic.f32, layout="strided"))
        a = torch.randn(300, 200, device="cuda").t()  # [200, 300], strides (1, 200)
        b = torch.randn(200, 600, device="cuda")[:, ::2]
        y = prog(a, b)
        self.assertTrue(torch.equal(y, a + b))
        contiguous = self.compile(binary_graph("add", ic.f32))
        with self.assertRaisesRegex(ic.ShapeMismatchError, "layout"):
            contiguous(a, b)

    def test_mismatches_and_devices(self) -> None:
        prog = self.compile(binary_graph("add", ic.f32))
        a, b = self.pair((8, 8), torch.float32)
        with self.assertRaisesRegex(ic.ShapeMismatchError, "expected 8"):
            prog(a, b[:, :4].contiguous())
        with self.assertRaisesRegex(ic.ShapeMismatchError, "got bf16"):
            prog(a, b.to(torch.bfloat16))
        with self.assertRaisesRegex(ValueError, "host memory"):
            prog(a.cpu(), b.cpu())
        with self.assertRaisesRegex(TypeError, "torch dtype"):
            prog(a.to(torch.complex64), b)

    def test_dlpack_and_cuda_array_interface_inputs(self) -> None:
        prog = self.compile(binary_graph("add", ic.f32))
        a, b = self.pair((16, 32), torch.float32)

        class DL:
            def __init__(self, t: Any) -> None:
                self.t = t

            def __dlpack__(self, stream: Any = None) -> Any:
                return self.t.__dlpack__(stream=stream)

            def __dlpack_device__(self) -> Any:
                return self.t.__dlpack_device__()

        class CAI:
            def __init__(self, t: Any) -> None:
                self.t = t

            @property
            def __cuda_array_interface__(self) -> Any:
                return self.t.__cuda_array_interface__

        for wrap in (DL, CAI):
            with self.subTest(kind=wrap.__name__):
                y = prog(wrap(a), wrap(b))
                self.assertIsInstance(y, ic.Buffer)
                self.assertEqual(y.device, "cuda")
                t = torch.from_dlpack(y)  # the memory is torch's now
                self.assertTrue(torch.equal(t, a + b))
                self.assertTrue(y.exported)
        y = prog(DL(a), DL(b))
        self.assertEqual(ic.unpack(ic.f32, y.tobytes())[:3], (a + b).flatten()[:3].tolist())

    def test_dispatch_overhead(self) -> None:
        g = ic.Graph()
        x = g.input("x", ic.f32, (1024,))
        g.output("y", x * 2.0)
        prog = self.compile(g)
        t = torch.randn(1024, device="cuda")
        for _ in range(100):
            prog(t)
        torch.cuda.synchronize()
        n = 10000
        start = time.perf_counter()
        for _ in range(n):
            prog(t)
        host = (time.perf_counter() - start) / n * 1e6
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            t * 2.0
        torch_host = (time.perf_counter() - start) / n * 1e6
        torch.cuda.synchronize()
        y = torch.empty(1024, device="cuda")
        start = time.perf_counter()
        for _ in range(n):
            prog(t, out=y)
        out_host = (time.perf_counter() - start) / n * 1e6
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y, t * 2.0))
        print(f"\n[dispatch] ic 1-kernel program on torch tensors: {host:.1f} us/call host time, "
              f"{out_host:.1f} with out=; torch eager x * 2: {torch_host:.1f} us/call")


if __name__ == "__main__":
    unittest.main()
