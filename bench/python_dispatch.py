"""Host cost of calling a compiled program from Python.

    PYTHONPATH=python python3 bench/python_dispatch.py [--calls N] [--breakdown]

Each row is one program and one kind of input; its columns are host microseconds per
call (time.perf_counter over the calls after a warm-up, the best of 3 rounds):

- floor: ic_program_run through ctypes with every argument prebuilt (no argtypes);
- prog(x): the allocating call (outputs of the inputs' kind);
- prog(x, out=y): the call into a given output;
- eager: the same computation in the framework, op by op, where there is one.

With PyTorch and a CUDA GPU the cuda rows run on torch tensors of f32 [1024]: a 1-op
program (y = x * 2) and the 4-op chain of bench/torch_compare.py's launch_chain
(y = relu(x * 2 + 1) - 0.5, fused into one kernel; torch eager launches 4). On the ref
backend (no GPU needed) the host runs the kernel inside the call on one element, so the
difference to the floor is the binding's dispatch cost for each input kind.

--breakdown adds, on cuda with torch, the cost of each piece of the torch fast path
(signature reads, data pointers, the current stream, torch's allocators) measured alone.
"""

from __future__ import annotations

import argparse
import array
import ctypes
import importlib
import os
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

try:
    import ic
except ImportError:  # from the source tree without PYTHONPATH
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import ic
from ic._lib import ICTensor, api  # noqa: E402

N_REF = 1
N_CUDA = 1024

Row = Tuple[str, Optional[float], Optional[float], Optional[float], Optional[float]]


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
    """ic_program_run with every argument prebuilt and no ctypes argtypes: the floor."""
    shape = (ctypes.c_int64 * 1)(n)
    ins = (ICTensor * 1)()
    outs = (ICTensor * 1)()
    for t, p in ((ins[0], in_ptr), (outs[0], out_ptr)):
        t.data, t.dtype, t.ndim = p, int(ic.f32), 1
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    run = api.lib["ic_program_run"]  # a function object of its own, without argtypes
    run.restype = ctypes.c_int
    args = (ctypes.c_void_p(prog._h()), ins, 1, outs, 1, ctypes.c_void_p(stream) if stream else None)
    keep = (shape, ins, outs)
    rc = run(*args)
    if rc:
        raise RuntimeError(f"ic_program_run failed: {api.ic_last_error().decode()}")

    def call(_keep: Any = keep) -> Any:
        return run(*args)

    return call


def scale(n: int) -> ic.Graph:
    g = ic.Graph()
    x = g.input("x", ic.f32, (n,))
    g.output("y", x * 2.0)
    return g


def chain(n: int) -> ic.Graph:
    g = ic.Graph()
    x = g.input("x", ic.f32, (n,))
    g.output("y", ic.relu(x * 2.0 + 1.0) - 0.5)
    return g


def ref_rows(calls: int, torch: Any) -> List[Row]:
    rows: List[Row] = []
    prog = scale(N_REF).compile(backend="ref")
    src = array.array("f", [1.0] * N_REF)
    dst = array.array("f", [0.0] * N_REF)
    floor = per_call_us(raw_run(prog, N_REF, src.buffer_info()[0], dst.buffer_info()[0], None), calls)
    rows.append(("ref, x * 2 [1], array.array", floor, per_call_us(lambda: prog(src), calls),
                 per_call_us(lambda: prog(src, out=dst), calls), None))
    t = ic.Tensor.from_buffer(src)
    to = ic.Tensor.from_buffer(dst)
    rows.append(("ref, x * 2 [1], ic.Tensor", floor, per_call_us(lambda: prog(t), calls),
                 per_call_us(lambda: prog(t, out=to), calls), None))
    try:
        np = importlib.import_module("numpy")
        a = np.ones(N_REF, dtype=np.float32)
        o = np.empty(N_REF, dtype=np.float32)
        rows.append(("ref, x * 2 [1], numpy", floor, per_call_us(lambda: prog(a), calls),
                     per_call_us(lambda: prog(a, out=o), calls), per_call_us(lambda: a * 2.0, calls)))
    except ImportError:
        pass
    if torch is not None:
        tc = torch.ones(N_REF)
        tco = torch.empty(N_REF)
        rows.append(("ref, x * 2 [1], torch CPU", floor, per_call_us(lambda: prog(tc), calls),
                     per_call_us(lambda: prog(tc, out=tco), calls), per_call_us(lambda: tc * 2.0, calls)))
    return rows


def cuda_rows(calls: int, torch: Any) -> List[Row]:
    rows: List[Row] = []
    sync = torch.cuda.synchronize
    x = torch.randn(N_CUDA, device="cuda")
    y = torch.empty(N_CUDA, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream or None
    eagers: Dict[str, Callable[[], Any]] = {"x * 2": lambda: x * 2.0, "relu(x * 2 + 1) - 0.5 (4 ops)": lambda: torch.relu(x * 2.0 + 1.0) - 0.5}
    for (name, eager), build in zip(eagers.items(), (scale, chain)):
        prog = build(N_CUDA).compile()
        want = eager()
        if not torch.equal(prog(x), want) or not torch.equal(prog(x, out=y), want):
            raise RuntimeError(f"{name}: ic's result differs from torch eager")
        rows.append((f"cuda, {name} [{N_CUDA}], torch", per_call_us(raw_run(prog, N_CUDA, x.data_ptr(), y.data_ptr(),
                                                                            stream), calls, sync),
                     per_call_us(lambda: prog(x), calls, sync), per_call_us(lambda: prog(x, out=y), calls, sync),
                     per_call_us(eager, calls, sync)))
    return rows


def breakdown(calls: int, torch: Any) -> List[Tuple[str, float]]:
    """The pieces of the torch fast path, each alone (f32 [1024] on cuda)."""
    x = torch.randn(N_CUDA, device="cuda")
    dev = x.device
    shape = (N_CUDA,)
    f32 = torch.float32
    raw_stream = torch._C._cuda_getCurrentRawStream
    sigs = {((x.dtype, x.shape, x.stride(), x.device),): 1}
    sync = torch.cuda.synchronize
    pieces: List[Tuple[str, Callable[[], Any]]] = [
        ("signature of one tensor: (t.dtype, t.shape, t.stride(), t.device)",
         lambda: (x.dtype, x.shape, x.stride(), x.device)),
        ("signature lookup in a dict", lambda: sigs.get(((x.dtype, x.shape, x.stride(), x.device),))),
        ("t.get_device()", lambda: x.get_device()),
        ("t.device", lambda: x.device),
        ("t.data_ptr()", lambda: x.data_ptr()),
        ("torch._C._cuda_getCurrentRawStream(0)", lambda: raw_stream(0)),
        ("torch.empty(shape, dtype=, device=torch.device)", lambda: torch.empty(shape, dtype=f32, device=dev)),
        ("t.new_empty(shape)", lambda: x.new_empty(shape)),
        ("torch.empty_like(t)", lambda: torch.empty_like(x)),
    ]
    # ic_program_run called as a ctypes function with argtypes (each argument converted
    # per call), against the floor's prebuilt arguments without argtypes.
    prog = scale(N_CUDA).compile()
    y = torch.empty(N_CUDA, device="cuda")
    floor = raw_run(prog, N_CUDA, x.data_ptr(), y.data_ptr(), raw_stream(0) or None)
    shape_arr = (ctypes.c_int64 * 1)(N_CUDA)
    ins, outs = (ICTensor * 1)(), (ICTensor * 1)()
    for t, p in ((ins[0], x.data_ptr()), (outs[0], y.data_ptr())):
        t.data, t.dtype, t.ndim = p, int(ic.f32), 1
        t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    handle, st = ctypes.c_void_p(prog._h()), raw_stream(0) or None
    checked = api.ic_program_run
    pieces += [("ic_program_run, prebuilt arguments, no argtypes (floor)", floor),
               ("ic_program_run through ctypes argtypes", lambda: checked(handle, ins, 1, outs, 1, st))]
    return [(name, per_call_us(fn, calls, sync)) for name, fn in pieces]


def main() -> int:
    ap = argparse.ArgumentParser(description="host cost of calling an ic program from Python")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--breakdown", action="store_true", help="time the pieces of the torch fast path (cuda)")
    args = ap.parse_args()
    torch: Any = None
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        pass
    rows = ref_rows(args.calls, torch)
    gpu = torch is not None and torch.cuda.is_available()
    if gpu:
        rows += cuda_rows(args.calls, torch)

    def cell(v: Optional[float]) -> str:
        return "" if v is None else f"{v:.2f}"

    print(f"ic {ic.version()} ({ic.library_path()}), python {sys.version.split()[0]}"
          + (f", torch {torch.__version__}" if torch is not None else "") + f", {args.calls} calls, best of 3")
    if gpu:
        print(f"GPU: {torch.cuda.get_device_name()}")
    print()
    print("| program, input | floor: ic_program_run | prog(x) | prog(x, out=y) | eager |")
    print("|---|--:|--:|--:|--:|")
    for name, floor, alloc, given, eager in rows:
        print(f"| {name} | {cell(floor)} | {cell(alloc)} | {cell(given)} | {cell(eager)} |")
    if args.breakdown and gpu:
        print()
        print("| piece of the torch fast path (cuda) | µs per call |")
        print("|---|--:|")
        for name, us in breakdown(args.calls, torch):
            print(f"| {name} | {us:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
