"""quickstart: y = gelu_tanh(x * w + b) for x of shape [n, 4096] with a symbolic n,
built with the Python binding, fused into one kernel and checked against plain Python.

With PyTorch and a CUDA GPU it runs on the cuda backend on torch tensors (the output is a
torch tensor on the current stream); otherwise on the ref backend (a host interpreter of
the same kernel IR) on array.array buffers.

    PYTHONPATH=python python3 examples/python/quickstart.py [--ref] [--cuda-source]
"""

from __future__ import annotations

import argparse
import array
import importlib
import math
import random
import sys
from typing import Any, List

import ic

ROWS, COLS = 64, 4096


def gelu_tanh(x: float) -> float:
    return 0.5 * x * (1.0 + math.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def build() -> ic.Graph:
    g = ic.Graph()
    n = g.symbol("n")  # one program serves every n
    x = g.input("x", ic.f32, (n, COLS))
    w = g.input("w", ic.f32, (COLS,))
    b = g.input("b", ic.f32, (COLS,))
    g.output("y", ic.gelu_tanh(x * w + b))  # operators build the graph; w and b broadcast
    return g


def torch_on_gpu() -> Any:
    """torch, when it is installed and sees a CUDA GPU; else None."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", action="store_true", help="run on the ref backend even with a GPU")
    ap.add_argument("--cuda-source", action="store_true", help="print the generated CUDA C")
    args = ap.parse_args()

    g = build()
    print(g)  # the text format
    rnd = random.Random(1)
    xs = [rnd.uniform(-3, 3) for _ in range(ROWS * COLS)]
    ws = [rnd.uniform(-1, 1) for _ in range(COLS)]
    bs = [rnd.uniform(-1, 1) for _ in range(COLS)]

    torch = None if args.ref else torch_on_gpu()
    if torch is not None:
        prog = g.compile()  # cuda, fused: one kernel
        x = torch.tensor(xs, device="cuda").reshape(ROWS, COLS)
        w = torch.tensor(ws, device="cuda")
        b = torch.tensor(bs, device="cuda")
        y = prog(x, w, b)  # a torch tensor, on torch's current stream
        got: List[float] = y.flatten().tolist()
        where = f"cuda ({torch.cuda.get_device_name()}), torch tensors"
    else:
        prog = g.compile(backend="ref")
        x_buf = memoryview(array.array("f", xs)).cast("B").cast("f", (ROWS, COLS))
        out = prog(x_buf, array.array("f", ws), array.array("f", bs))  # numpy array or ic.Buffer
        got = [float(v) for v in (out.reshape(-1).tolist() if hasattr(out, "reshape") else
                                  [v for row in out.tolist() for v in row])]
        where = "the ref backend (host), array.array buffers"

    worst = 0.0
    for i, v in enumerate(got):
        want = gelu_tanh(xs[i] * ws[i % COLS] + bs[i % COLS])
        worst = max(worst, abs(v - want))
    print(f"y = gelu_tanh(x * w + b), x [{ROWS}, {COLS}], on {where}: "
          f"{prog.kernel_count} kernel(s), max |error| vs Python = {worst:.2e}")
    if args.cuda_source:
        try:
            co = ic.Context(arch="sm_90a", compile_only=True)
            print(g.compile(context=co).kernel_sources[0])
        except ic.Error as e:
            print(f"no CUDA C: {e}")
    return 0 if worst < 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
