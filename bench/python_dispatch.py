"""Host cost of calling a compiled program from Python, per input kind.

    PYTHONPATH=python python3 bench/python_dispatch.py [--calls N]

A 1-kernel program (y = x * 2: one f32 element on ref, where the host runs the kernel
inside the call; 1024 on cuda) is called many times; each row is host
microseconds per call (time.perf_counter over the calls, after a warm-up), next to the
floor: ic_program_run itself through ctypes with prebuilt arguments. On the ref backend
(no GPU needed) the kernel runs on the host inside the call, so the difference to the
floor is the binding's dispatch cost: the input-signature cache lookup, the data pointers,
the output allocation and the result wrapping. With PyTorch and a CUDA GPU the cuda rows
measure what issue 11 budgets (a 1-kernel program on torch tensors: at most 15 µs,
ic_program_run alone about 7.7 µs on an H200 machine).
"""

from __future__ import annotations

import argparse
import array
import ctypes
import importlib
import os
import sys
import time
from typing import Any, Callable, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import ic  # noqa: E402
from ic._lib import ICTensor, api  # noqa: E402

N_REF = 1
N_CUDA = 1024


def per_call_us(fn: Callable[[], Any], calls: int, sync: Optional[Callable[[], None]] = None) -> float:
    for _ in range(min(calls // 10, 1000)):
        fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(3):  # the best of 3 rounds: the machine's noise only adds
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - t
        if sync:
            sync()
        best = min(best, elapsed)
    return best / calls * 1e6


def raw_run(prog: ic.Program, n: int, in_ptr: int, out_ptr: int, stream: Optional[int]) -> Callable[[], Any]:
    """ic_program_run with every argument prebuilt: the floor."""
    shape = (ctypes.c_int64 * 1)(n)
    ins = (ICTensor * 1)()
    outs = (ICTensor * 1)()
    for t, p in ((ins[0], in_ptr), (outs[0], out_ptr)):
        t.data, t.dtype, t.ndim = p, int(ic.f32), 1
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    handle = ctypes.c_void_p(prog._h())
    run = api.ic_program_run
    keep = (shape, ins, outs)

    def call(_keep: Any = keep) -> Any:
        return run(handle, ins, 1, outs, 1, stream)

    return call


def graph(n: int) -> ic.Graph:
    g = ic.Graph()
    x = g.input("x", ic.f32, (n,))
    g.output("y", x * 2.0)
    return g


def main() -> int:
    ap = argparse.ArgumentParser(description="host cost of calling an ic program from Python")
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    rows: List[Tuple[str, float]] = []

    N = N_REF
    prog = graph(N).compile(backend="ref")
    src = array.array("f", [1.0] * N)
    dst = array.array("f", [0.0] * N)
    src_ptr, _ = src.buffer_info()
    dst_ptr, _ = dst.buffer_info()
    floor = per_call_us(raw_run(prog, N, src_ptr, dst_ptr, None), args.calls)
    rows.append(("ref: ic_program_run via ctypes, prebuilt arguments (floor)", floor))
    rows.append(("ref: prog(array.array) (outputs: numpy or ic.Buffer)", per_call_us(lambda: prog(src), args.calls)))
    rows.append(("ref: prog(array.array, out=array.array)", per_call_us(lambda: prog(src, out=dst), args.calls)))
    t = ic.Tensor.from_buffer(src)
    rows.append(("ref: prog(ic.Tensor) (outputs: ic.Buffer)", per_call_us(lambda: prog(t), args.calls)))
    try:
        np = importlib.import_module("numpy")
        a = np.ones(N, dtype=np.float32)
        o = np.empty(N, dtype=np.float32)
        rows.append(("ref: prog(numpy) (outputs: numpy)", per_call_us(lambda: prog(a), args.calls)))
        rows.append(("ref: prog(numpy, out=numpy)", per_call_us(lambda: prog(a, out=o), args.calls)))
    except ImportError:
        pass
    torch: Any = None
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        pass
    if torch is not None:
        tc = torch.ones(N)
        rows.append(("ref: prog(torch CPU tensor) (the torch fast path)", per_call_us(lambda: prog(tc), args.calls)))
    if torch is not None and torch.cuda.is_available():
        gprog = graph(N_CUDA).compile()
        x = torch.ones(N_CUDA, device="cuda")
        y = torch.empty(N_CUDA, device="cuda")
        stream = torch.cuda.current_stream().cuda_stream or None
        sync = torch.cuda.synchronize
        rows.append(("cuda: ic_program_run via ctypes, prebuilt arguments (floor)",
                     per_call_us(raw_run(gprog, N_CUDA, x.data_ptr(), y.data_ptr(), stream), args.calls, sync)))
        rows.append(("cuda: prog(torch tensor) (outputs: torch.empty)", per_call_us(lambda: gprog(x), args.calls, sync)))
        rows.append(("cuda: prog(torch tensor, out=torch tensor)",
                     per_call_us(lambda: gprog(x, out=y), args.calls, sync)))
        rows.append(("cuda: torch eager x * 2.0", per_call_us(lambda: x * 2.0, args.calls, sync)))

    print(f"ic {ic.version()} ({ic.library_path()}), python {sys.version.split()[0]}, {args.calls} calls, best of 3")
    print()
    print("| call | µs per call |")
    print("|---|--:|")
    for name, us in rows:
        print(f"| {name} | {us:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
