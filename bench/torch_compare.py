"""ic against PyTorch (eager and torch.compile) on memory-bound workloads, on one GPU.

    PYTHONPATH=python python3 bench/torch_compare.py [--quick] [--only NAME[,NAME...]]
                                                      [--json FILE] [--no-torch-compile]
                                                      [--section all|workloads|formulations|matmul]
                                                      [--max-autotune]

One run prints one markdown table of workloads, then the formulations table (below).
Per workload:

- kernel times of torch eager, torch.compile (default mode), ic fused and ic eager:
  CUDA-event medians after warm-up; each sample times a batch of calls (as many as fill
  ~20 ms) between two events and divides, the median of 7 batches is reported. Every
  call allocates its outputs, in torch and in ic alike;
- the share of the device's copy bandwidth that torch.compile and ic fused reach: bytes
  = every input read once + every output written once, over the time; the copy
  bandwidth is measured in the same run (a device-to-device copy of a 1 GiB tensor,
  bytes read + written);
- torch.compile / ic fused (a time ratio: > 1 means ic is faster), and its geomean over
  the workloads ic supports, printed under the table;
- max |error| of ic fused against a float64 reference (the torch expression on float64
  copies of the inputs), and whether ic fused is bitwise equal to torch eager;
- cold compile seconds. ic: a fresh Context with an empty temporary cache_dir, the
  graph built and compiled (NVRTC for every kernel), then one run, synchronized.
  torch.compile: torch._dynamo.reset(), then the first call (tracing, Inductor, Triton
  compiles) synchronized, with TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR set to fresh
  temporary directories before torch is imported (so nothing comes from earlier runs;
  later workloads of the same run may reuse what earlier ones compiled in process).

The launch-bound chain (4 pointwise ops on 1024 elements) also reports host microseconds
per call (time.perf_counter over many calls, one synchronization at the end) for torch
eager, torch.compile, torch.compile(mode="reduce-overhead") and ic.

The formulations section times equivalent spellings of 15 computations (norms,
softmaxes, fp8 quantizations, losses, optimizer steps; the spellings of
tests/cpu/test_formulations.c at bench sizes) side by side: per spelling its kernel count,
ic fused time, % of copy bandwidth and time over its computation's best spelling (target:
within 5%, else marked "over 5%"), with torch eager and torch.compile of the computation.

The matmul section (--section matmul only; `all` keeps the two tables above) times ic's
matmul against cuBLAS (torch.matmul, torch._int_mm), torch.compile and, with
--max-autotune, torch.compile(mode="max-autotune") on bf16 4096^3, 8192^3, 16384 x 16384 x
4096, 16 x 8192 x 8192, 64 batches of 512 x 512 x 64, i8 4096^3 and f32 4096^3 (TF32 off),
and fused linear + bias + GELU, a SwiGLU gate (two matmuls sharing x), linear + residual +
RMS norm and an int8-weight dequantizing matmul: TFLOP/s, inputs rotated past L2 (sets of
512 MiB in all), TB/s against the copy bandwidth for the memory-bound shapes, max error
against float64 (i8: bitwise against torch._int_mm).

Workloads the loaded libic cannot build (the reductions of softmax, the norms, row sums
and row-wise fp8 quantization need ic_graph_reduce) print "not supported" in the ic
columns rather than vanish.
Without torch or a CUDA GPU the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import json
import math
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# Fresh Inductor/Triton caches for the cold compile column: set before torch is imported.
_TMP = tempfile.mkdtemp(prefix="ic-torch-compare-")
atexit.register(shutil.rmtree, _TMP, True)
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(_TMP, "inductor"))
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(_TMP, "triton"))

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import ic  # noqa: E402

torch: Any = None
F: Any = None
# --ref: torch CPU tensors and ic's ref backend, tiny sizes: a check of this script
# itself where no GPU is (the times mean nothing there).
DEVICE = "cuda"
BACKEND = "cuda"


class NotSupported(Exception):
    """ic cannot build this workload yet."""


def require_reductions() -> None:
    if not ic._graph.REDUCE_CODES:
        raise NotSupported("needs reductions (ic_graph_reduce), which the loaded libic lacks")


def row_graph(ins: List[Any], dtype: Any) -> Tuple[ic.Graph, ic.Value, int]:
    """A reduction workload's graph: input x of [n, c] (n symbolic, c from ins[0]), x, c."""
    require_reductions()
    g = ic.Graph()
    c = int(ins[0].shape[1])
    return g, g.input("x", dtype, (g.symbol("n"), c)), c


# ---------------------------------------------------------------- workloads


@dataclass
class Workload:
    name: str
    shape: str
    make: Callable[[bool], List[Any]]  # quick -> input tensors
    torch_fn: Callable[..., Any]
    ic_graph: Callable[[List[Any]], "ic.Graph"]  # inputs -> graph (raises NotSupported)
    ic_inputs: Optional[Callable[[List[Any]], List[Any]]] = None  # views ic takes (default: the inputs)
    launch_bound: bool = False


def randn(shape: Sequence[int], dtype: Any, scale: float = 1.0) -> Any:
    return (torch.randn(*shape, device=DEVICE, dtype=torch.float32) * scale).to(dtype)


def rows(quick: bool, n: int) -> int:
    return pick(quick, n, max(n // 16, 16), 4)


def pick(quick: bool, full: int, small: int, ref: int) -> int:
    """A size: full, small for --quick, tiny for --ref (the ref backend interprets)."""
    return ref if DEVICE == "cpu" else small if quick else full


def gelu_bias() -> Workload:
    def make(quick: bool) -> List[Any]:
        r, c = rows(quick, 8192), 8192
        return [randn((r, c), torch.float32), randn((c,), torch.float32), randn((c,), torch.float32)]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.f32, (n, ins[0].shape[1]))
        w = g.input("w", ic.f32, (ins[1].shape[0],))
        b = g.input("b", ic.f32, (ins[2].shape[0],))
        g.output("y", ic.gelu_tanh(x * w + b))
        return g

    return Workload("gelu_bias", "f32 [8192, 8192], w b [8192]", make,
                    lambda x, w, b: F.gelu(x * w + b, approximate="tanh"), graph)


def swiglu() -> Workload:
    def make(quick: bool) -> List[Any]:
        shape = (rows(quick, 8192), 14336)
        return [randn(shape, torch.bfloat16), randn(shape, torch.bfloat16)]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        n = g.symbol("n")
        a = g.input("a", ic.bf16, (n, ins[0].shape[1]))
        b = g.input("b", ic.bf16, (n, ins[1].shape[1]))
        g.output("y", ic.silu(a) * b)
        return g

    return Workload("swiglu", "bf16 [8192, 14336]", make, lambda a, b: F.silu(a) * b, graph)


LR, BETA1, BETA2, EPS, STEP = 1e-3, 0.9, 0.999, 1e-8, 10
BC1, BC2 = 1.0 - BETA1 ** STEP, 1.0 - BETA2 ** STEP


def adam_torch(p: Any, g: Any, m: Any, v: Any) -> Any:
    m2 = m * BETA1 + g * (1.0 - BETA1)
    v2 = v * BETA2 + g * g * (1.0 - BETA2)
    p2 = p - LR * (m2 / BC1) / (torch.sqrt(v2 / BC2) + EPS)
    return p2, m2, v2


def adam() -> Workload:
    def make(quick: bool) -> List[Any]:
        n = pick(quick, 1 << 26, 1 << 22, 4096)
        return [randn((n,), torch.float32), randn((n,), torch.float32), randn((n,), torch.float32),
                randn((n,), torch.float32).abs()]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        n = g.symbol("n")
        p, gr, m, v = (g.input(k, ic.f32, (n,)) for k in ("p", "g", "m", "v"))
        m2 = m * BETA1 + gr * (1.0 - BETA1)
        v2 = v * BETA2 + gr * gr * (1.0 - BETA2)
        p2 = p - LR * (m2 / BC1) / (ic.sqrt(v2 / BC2) + EPS)
        g.output("p", p2)
        g.output("m", m2)
        g.output("v", v2)
        return g

    return Workload("adam", "f32 [2^26] x 4 in, 3 out", make, adam_torch, graph)


def one_f32_input(name: str, shape: str, n: int, c: int, ic_fn: Callable[[ic.Value], ic.Value],
                  torch_fn: Callable[[Any], Any]) -> Workload:
    """A workload of one f32 input x [n, c] (n symbolic) and one output ic_fn(x)."""
    def graph(ins: List[Any]) -> ic.Graph:
        g, x, _ = row_graph(ins, ic.f32)
        g.output("y", ic_fn(x))
        return g

    return Workload(name, shape, lambda q: [randn((rows(q, n), c), torch.float32)], torch_fn, graph)


def softmax() -> Workload:
    return one_f32_input("softmax", "f32 [32768, 4096]", 32768, 4096, lambda x: ic.softmax(x, -1),
                         lambda x: torch.softmax(x, -1))


def log_softmax() -> Workload:
    return one_f32_input("log_softmax", "f32 [8192, 32000]", 8192, 32000, lambda x: ic.log_softmax(x, -1),
                         lambda x: torch.log_softmax(x, -1))


def row_sum() -> Workload:
    return one_f32_input("row_sum", "f32 [32768, 4096]", 32768, 4096, lambda x: ic.sum(x, -1), lambda x: x.sum(-1))


def col_sum() -> Workload:
    return one_f32_input("col_sum", "f32 [4096, 32768] over dim 0", 4096, 32768, lambda x: ic.sum(x, 0),
                         lambda x: x.sum(0))


def bias_grad() -> Workload:
    """A bias gradient: a bf16 [tokens, hidden] gradient summed over its tokens (n symbolic)."""
    def graph(ins: List[Any]) -> ic.Graph:
        g, x, _ = row_graph(ins, ic.bf16)
        g.output("y", ic.sum(x, 0))
        return g

    return Workload("bias_grad", "bf16 [65536, 4096] over dim 0", lambda q: [randn((rows(q, 65536), 4096), torch.bfloat16)],
                    lambda x: x.sum(0), graph)


def tall_col_sum() -> Workload:
    """A sum of few columns over many rows (n symbolic): ic's column split."""
    def graph(ins: List[Any]) -> ic.Graph:
        g, x, _ = row_graph(ins, ic.f32)
        g.output("y", ic.sum(x, 0))
        return g

    return Workload("tall_col_sum", "f32 [524288, 256] over dim 0",
                    lambda q: [randn((rows(q, 524288), 256), torch.float32)], lambda x: x.sum(0), graph)


def layer_norm() -> Workload:
    def make(quick: bool) -> List[Any]:
        return [randn((rows(quick, 32768), 4096), torch.float32), randn((4096,), torch.float32),
                randn((4096,), torch.float32)]

    def graph(ins: List[Any]) -> ic.Graph:
        g, x, c = row_graph(ins, ic.f32)
        w = g.input("w", ic.f32, (c,))
        b = g.input("b", ic.f32, (c,))
        g.output("y", ic.layer_norm(x, 1, w, b, eps=1e-5))
        return g

    return Workload("layer_norm", "f32 [32768, 4096]", make,
                    lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), graph)


def rms_norm_torch(x: Any, w: Any) -> Any:
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def rms_norm() -> Workload:
    def graph(ins: List[Any]) -> ic.Graph:
        g, x, c = row_graph(ins, ic.bf16)
        w = g.input("w", ic.bf16, (c,))
        xf = x.cast(ic.f32)  # as the torch expression: f32 inside, bf16 out, then * w
        g.output("y", (xf * ic.rsqrt(ic.mean(xf * xf, -1, keepdim=True) + 1e-6)).cast(ic.bf16) * w)
        return g

    return Workload("rms_norm", "bf16 [32768, 4096]",
                    lambda q: [randn((rows(q, 32768), 4096), torch.bfloat16), randn((4096,), torch.bfloat16)],
                    rms_norm_torch, graph)


def fp8_rowquant_torch(x: Any) -> Any:
    amax = x.abs().amax(-1, keepdim=True).float().clamp(min=1e-12)
    scale = 448.0 / amax
    q = (x.float() * scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q, 1.0 / scale


def fp8_rowquant() -> Workload:
    def graph(ins: List[Any]) -> ic.Graph:
        g, x, _ = row_graph(ins, ic.bf16)
        amax = ic.maximum(ic.max(ic.abs(x), -1, keepdim=True).cast(ic.f32), 1e-12)
        scale = 448.0 / amax
        g.output("q", ic.clamp(x.cast(ic.f32) * scale, -448.0, 448.0).cast(ic.f8e4m3))
        g.output("scale_inv", 1.0 / scale)
        return g

    return Workload("fp8_rowquant", "bf16 [16384, 8192] -> e4m3 + f32 scales",
                    lambda q: [randn((rows(q, 16384), 8192), torch.bfloat16)], fp8_rowquant_torch, graph)


def full_sum() -> Workload:
    def graph(ins: List[Any]) -> ic.Graph:
        require_reductions()
        g = ic.Graph()
        g.output("y", ic.sum(g.input("x", ic.f32, (g.symbol("n"),))))
        return g

    return Workload("full_sum", "f32 2^28", lambda q: [randn((pick(q, 1 << 28, 1 << 24, 1000),), torch.float32)],
                    lambda x: x.sum(), graph)


def add_transposed() -> Workload:
    def make(quick: bool) -> List[Any]:
        n = pick(quick, 8192, 2048, 64)
        return [randn((n, n), torch.float32), randn((n, n), torch.float32)]

    def graph(ins: List[Any]) -> ic.Graph:
        n = ins[0].shape[0]
        g = ic.Graph()
        a = g.input("a", ic.f32, (n, n))
        bt = g.input("bt", ic.f32, (n, n), layout="strided")  # b.t(): a strided view
        g.output("y", a + bt)
        return g

    return Workload("add_transposed", "f32 [8192, 8192] + [8192, 8192].T", make, lambda a, b: a + b.t(), graph,
                    ic_inputs=lambda ins: [ins[0], ins[1].t()])


def rope_torch(x: Any, cos: Any, sin: Any) -> Any:
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), -1) * sin


def rope() -> Workload:
    def make(quick: bool) -> List[Any]:
        s, h, d = pick(quick, 8192, 1024, 4), 32, 128
        return [randn((s, h, d), torch.bfloat16), randn((s, 1, d), torch.bfloat16), randn((s, 1, d), torch.bfloat16)]

    def graph(ins: List[Any]) -> ic.Graph:
        _, h, d = ins[0].shape
        g = ic.Graph()
        s = g.symbol("s")
        x = g.input("x", ic.bf16, (s, h, d))
        cos = g.input("cos", ic.bf16, (s, 1, d))
        sin = g.input("sin", ic.bf16, (s, 1, d))
        half = d // 2
        g.output("y", x * cos + ic.concat([-x[..., half:], x[..., :half]], dim=-1) * sin)
        return g

    return Workload("rope", "bf16 [8192, 32, 128], cos sin [8192, 1, 128]", make, rope_torch, graph)


def scale_fp8() -> Workload:
    def make(quick: bool) -> List[Any]:
        r = rows(quick, 16384)
        return [randn((r, 8192), torch.bfloat16, 100.0), randn((r, 1), torch.bfloat16).abs() + 0.5]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        n = g.symbol("n")
        x = g.input("x", ic.bf16, (n, ins[0].shape[1]))
        s = g.input("s", ic.bf16, (n, 1))
        g.output("q", ic.cast_saturate(x * s, ic.f8e4m3))
        return g

    return Workload("scale_fp8", "bf16 [16384, 8192] x [16384, 1] -> e4m3 (saturating)", make,
                    lambda x, s: (x * s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn), graph)


def outer_add() -> Workload:
    def make(quick: bool) -> List[Any]:
        a, b, k = pick(quick, 1024, 256, 8), pick(quick, 1024, 256, 8), 256
        return [randn((a, 1, k), torch.float32), randn((1, b, k), torch.float32)]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        a = g.input("a", ic.f32, tuple(ins[0].shape))
        b = g.input("b", ic.f32, tuple(ins[1].shape))
        g.output("y", a + b)
        return g

    return Workload("outer_add", "f32 [1024, 1, 256] + [1, 1024, 256]", make, lambda a, b: a + b, graph)


def chain_torch(x: Any) -> Any:
    return torch.relu(x * 2.0 + 1.0) - 0.5


def launch_chain() -> Workload:
    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        x = g.input("x", ic.f32, (ins[0].shape[0],))
        g.output("y", ic.relu(x * 2.0 + 1.0) - 0.5)
        return g

    return Workload("launch_chain", "f32 [1024], 4 pointwise ops", lambda q: [randn((1024,), torch.float32)],
                    chain_torch, graph, launch_bound=True)


WORKLOADS = [gelu_bias, swiglu, adam, softmax, log_softmax, layer_norm, rms_norm, fp8_rowquant, row_sum, col_sum, bias_grad,
             tall_col_sum, full_sum, add_transposed, rope, scale_fp8, outer_add, launch_chain]


# ---------------------------------------------------------------- matmul
#
# --section matmul: ic's matmul (ic.matmul) against cuBLAS (torch.matmul / torch._int_mm in
# torch eager), torch.compile (default mode) and, with --max-autotune, torch.compile
# (mode="max-autotune", minutes of autotuning a shape) in the same run. Each timed call
# takes the next of as many input sets as make 512 MiB (at least 2), so operands come from
# memory, not L2. TFLOP/s = 2 m n k (batch included; SwiGLU: two matmuls) / time; the
# memory-bound shapes also report TB/s of inputs read once + outputs written once against
# the copy bandwidth. f32 runs with torch.backends.cuda.matmul.allow_tf32 = False (exact
# f32, as ic without IC_COMPILE_ALLOW_TF32).


def ic_matmul(a: "ic.Value", b: "ic.Value") -> "ic.Value":
    """a @ b in ic (ic.matmul), or NotSupported where the loaded ic has no matmul."""
    fn = getattr(ic, "matmul", None)
    if fn is None:
        raise NotSupported("needs ic.matmul (ic_graph_matmul), which the loaded ic lacks")
    out: ic.Value = fn(a, b)
    return out


@dataclass
class MatmulWorkload:
    name: str
    shape: str
    make: Callable[[bool], List[Any]]  # quick -> one input set
    torch_fn: Callable[..., Any]
    ic_graph: Callable[[List[Any]], "ic.Graph"]
    flop: Callable[[List[Any]], float]  # an input set -> multiply-adds x 2
    memory_bound: bool = False
    exact: bool = False  # integer results: ic must equal torch bit for bit


def mm_dims(quick: bool, m: int, n: int, k: int) -> Tuple[int, int, int]:
    """Sizes: full, a quarter of each for --quick (at least 16), tiny for --ref."""
    def one(d: int) -> int:
        return pick(quick, d, max(d // 4, 16), min(d, 16))

    return one(m), one(n), one(k)


def plain_graph(dtype: Any, ins: List[Any]) -> ic.Graph:
    """c = a @ b over the inputs' constant shapes."""
    g = ic.Graph()
    a = g.input("a", dtype, tuple(ins[0].shape))
    b = g.input("b", dtype, tuple(ins[1].shape))
    g.output("c", ic_matmul(a, b))
    return g


def flop_of(ins: List[Any]) -> float:
    a, b = ins[0], ins[1]
    batch = math.prod(int(d) for d in a.shape[:-2])
    return 2.0 * batch * int(a.shape[-2]) * int(a.shape[-1]) * int(b.shape[-1])


def plain_mm(label: str, dtype: Any, m: int, n: int, k: int, batch: int = 0, memory_bound: bool = False) -> MatmulWorkload:
    tdt = {"bf16": "bfloat16", "i8": "int8", "f32": "float32"}[label]

    def make(quick: bool) -> List[Any]:
        mm, nn, kk = mm_dims(quick, m, n, k)
        lead = (pick(quick, batch, max(batch // 4, 2), 2),) if batch else ()
        t = getattr(torch, tdt)
        if t == torch.int8:
            return [torch.randint(-128, 128, lead + (mm, kk), dtype=t, device=DEVICE),
                    torch.randint(-128, 128, lead + (kk, nn), dtype=t, device=DEVICE)]
        return [randn(lead + (mm, kk), t), randn(lead + (kk, nn), t)]

    name = f"mm_{label}_" + (f"{batch}x" if batch else "") + f"{m}x{n}x{k}"
    shape = f"{label} " + (f"{batch} x " if batch else "") + f"[{m}, {k}] @ [{k}, {n}]"
    fn = (lambda a, b: torch._int_mm(a, b)) if label == "i8" else (lambda a, b: torch.matmul(a, b))
    return MatmulWorkload(name, shape, make, fn, lambda ins: plain_graph(dtype, ins), flop_of, memory_bound,
                          exact=label == "i8")


def linear_gelu() -> MatmulWorkload:
    def make(quick: bool) -> List[Any]:
        m, n, k = mm_dims(quick, 8192, 4096, 4096)
        return [randn((m, k), torch.bfloat16), randn((k, n), torch.bfloat16, 0.02), randn((n,), torch.bfloat16)]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        x = g.input("x", ic.bf16, tuple(ins[0].shape))
        w = g.input("w", ic.bf16, tuple(ins[1].shape))
        b = g.input("b", ic.bf16, tuple(ins[2].shape))
        g.output("y", ic.gelu_tanh(ic_matmul(x, w) + b))
        return g

    return MatmulWorkload("linear_gelu", "bf16 gelu_tanh([8192, 4096] @ [4096, 4096] + b)", make,
                          lambda x, w, b: F.gelu(x @ w + b, approximate="tanh"), graph, flop_of)


def swiglu_gate() -> MatmulWorkload:
    def make(quick: bool) -> List[Any]:
        m, n, k = mm_dims(quick, 8192, 11008, 4096)
        return [randn((m, k), torch.bfloat16), randn((k, n), torch.bfloat16, 0.02),
                randn((k, n), torch.bfloat16, 0.02)]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        x = g.input("x", ic.bf16, tuple(ins[0].shape))
        w1 = g.input("w1", ic.bf16, tuple(ins[1].shape))
        w3 = g.input("w3", ic.bf16, tuple(ins[2].shape))
        g.output("y", ic.silu(ic_matmul(x, w1)) * ic_matmul(x, w3))
        return g

    return MatmulWorkload("swiglu_gate", "bf16 silu(x @ w1) * (x @ w3), x [8192, 4096], w [4096, 11008]", make,
                          lambda x, w1, w3: F.silu(x @ w1) * (x @ w3), graph, lambda ins: 2.0 * flop_of(ins))


def linear_residual_rms_torch(x: Any, w: Any, r: Any, g: Any) -> Any:
    y = x @ w + r
    return y, rms_norm_torch(y, g)


def linear_residual_rms() -> MatmulWorkload:
    def make(quick: bool) -> List[Any]:
        m, n, k = mm_dims(quick, 8192, 4096, 4096)
        return [randn((m, k), torch.bfloat16), randn((k, n), torch.bfloat16, 0.02), randn((m, n), torch.bfloat16),
                randn((n,), torch.bfloat16)]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        x = g.input("x", ic.bf16, tuple(ins[0].shape))
        w = g.input("w", ic.bf16, tuple(ins[1].shape))
        r = g.input("r", ic.bf16, tuple(ins[2].shape))
        gw = g.input("g", ic.bf16, tuple(ins[3].shape))
        y = ic_matmul(x, w) + r
        yf = y.cast(ic.f32)  # as rms_norm_torch: f32 inside, bf16 out, then * g
        g.output("y", y)
        g.output("normed", (yf * ic.rsqrt(ic.mean(yf * yf, -1, keepdim=True) + 1e-6)).cast(ic.bf16) * gw)
        return g

    return MatmulWorkload("linear_residual_rms", "bf16 y = [8192, 4096] @ [4096, 4096] + r; rms_norm(y) * g", make,
                          linear_residual_rms_torch, graph, flop_of)


def dequant_torch(x: Any, wq: Any, s: Any) -> Any:
    return x @ (wq.to(torch.bfloat16) * s)


def dequant_mm() -> MatmulWorkload:
    def make(quick: bool) -> List[Any]:
        m, n, k = mm_dims(quick, 8192, 4096, 4096)
        return [randn((m, k), torch.bfloat16), torch.randint(-128, 128, (k, n), dtype=torch.int8, device=DEVICE),
                randn((n,), torch.bfloat16, 0.01)]

    def graph(ins: List[Any]) -> ic.Graph:
        g = ic.Graph()
        x = g.input("x", ic.bf16, tuple(ins[0].shape))
        wq = g.input("wq", ic.i8, tuple(ins[1].shape))
        sc = g.input("s", ic.bf16, tuple(ins[2].shape))
        g.output("y", ic_matmul(x, wq.cast(ic.bf16) * sc))
        return g

    return MatmulWorkload("dequant_mm", "bf16 [8192, 4096] @ (i8 [4096, 4096] * s [4096])", make, dequant_torch, graph,
                          flop_of)


def matmul_workloads() -> List[MatmulWorkload]:
    return [plain_mm("bf16", ic.bf16, 4096, 4096, 4096), plain_mm("bf16", ic.bf16, 8192, 8192, 8192),
            plain_mm("bf16", ic.bf16, 16384, 16384, 4096),
            plain_mm("bf16", ic.bf16, 16, 8192, 8192, memory_bound=True),
            plain_mm("bf16", ic.bf16, 512, 512, 64, batch=64, memory_bound=True),
            plain_mm("i8", ic.i8, 4096, 4096, 4096), plain_mm("f32", ic.f32, 4096, 4096, 4096),
            linear_gelu(), swiglu_gate(), linear_residual_rms(), dequant_mm()]


@dataclass
class MatmulRow:
    name: str
    shape: str
    sets: int = 0
    tflop: float = 0.0
    bytes: int = 0
    ms: Dict[str, float] = field(default_factory=dict)  # "cuBLAS", "compile", "max-autotune", "ic"
    max_error: Dict[str, float] = field(default_factory=dict)  # ic and cuBLAS against float64
    exact: Optional[bool] = None
    kernels: Optional[int] = None
    note: str = ""


def rotating(fn: Callable[..., Any], sets: List[List[Any]]) -> Callable[[], Any]:
    """fn on the next input set each call."""
    state = [0]

    def call() -> Any:
        i = state[0]
        state[0] = (i + 1) % len(sets)
        return fn(*sets[i])

    return call


def run_matmul_workload(w: MatmulWorkload, quick: bool, use_compile: bool, autotune: bool) -> MatmulRow:
    row = MatmulRow(w.name, w.shape)
    first = w.make(quick)
    per_set = nbytes(first)
    nsets = max(2, -(-(512 << 20) // max(per_set, 1))) if DEVICE == "cuda" else 1
    sets = [first] + [w.make(quick) for _ in range(nsets - 1)]
    row.sets = nsets
    out = as_tuple(w.torch_fn(*first))
    row.bytes = per_set + nbytes(out)
    row.tflop = w.flop(first) / 1e12
    row.ms["cuBLAS"] = kernel_ms(rotating(w.torch_fn, sets))
    modes = [("compile", None)] + ([("max-autotune", "max-autotune")] if autotune else [])
    for label, mode in modes if use_compile else []:
        try:
            torch._dynamo.reset()
            compiled = torch.compile(w.torch_fn) if mode is None else torch.compile(w.torch_fn, mode=mode)
            compiled(*first)
            sync()
            row.ms[label] = kernel_ms(rotating(compiled, sets))
        except Exception as e:  # a torch.compile failure is a result too
            row.note += f"torch.compile {label} failed: {type(e).__name__}; "
    try:
        prog = w.ic_graph(first).compile(strict=True, backend=BACKEND)
        row.kernels = len(prog.kernel_sources)
        got = as_tuple(prog(*first))
        row.ms["ic"] = kernel_ms(rotating(prog, sets))
        if w.exact:
            row.exact = bitwise(got, out)
        else:
            ref = as_tuple(w.torch_fn(*[t.double() for t in first]))
            row.max_error["ic"] = max_error(got, ref)
            row.max_error["cuBLAS"] = max_error(out, ref)
        prog.close()
    except NotSupported as e:
        row.note += f"ic: not supported ({e})"
    return row


def matmul_table(rows: List[MatmulRow], copy_bw: float, device: str, autotune: bool) -> str:
    def tflops(r: MatmulRow, k: str) -> str:
        return fmt(r.tflop / (r.ms[k] / 1e3) if k in r.ms else None, ".0f")

    lines = [
        f"ic {ic.version()} matmul vs torch {torch.__version__} on {device}; copy bandwidth {copy_bw / 1e9:.0f} GB/s; "
        f"inputs rotated through sets of 512 MiB in all; torch.compile max-autotune: "
        f"{'measured' if autotune else 'not run (--max-autotune)'}",
        "",
        "| workload | shape | sets | cuBLAS ms | compile ms | max-autotune ms | ic ms | cuBLAS TFLOP/s | ic TFLOP/s "
        "| ic TB/s (% copy) | cuBLAS / ic | best torch / ic | ic kernels | max err ic (cuBLAS) |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    mem = {w.name for w in matmul_workloads() if w.memory_bound}
    for r in rows:
        ic_ms = r.ms.get("ic")
        best = min((v for k, v in r.ms.items() if k != "ic"), default=None)
        tbs = "–"
        if ic_ms is not None and r.name in mem:
            bw = r.bytes / (ic_ms / 1e3)
            tbs = f"{bw / 1e12:.2f} ({100.0 * bw / copy_bw:.0f}%)"
        err = ("bitwise" if r.exact else "DIFFERS") if r.exact is not None else (
            f"{r.max_error['ic']:.2e} ({r.max_error['cuBLAS']:.2e})" if "ic" in r.max_error else "–")
        lines.append("| " + " | ".join([
            r.name, r.shape, str(r.sets), fmt(r.ms.get("cuBLAS")), fmt(r.ms.get("compile")),
            fmt(r.ms.get("max-autotune")), fmt(ic_ms), tflops(r, "cuBLAS"), tflops(r, "ic"), tbs,
            fmt(r.ms["cuBLAS"] / ic_ms if ic_ms and "cuBLAS" in r.ms else None, ".2f"),
            fmt(best / ic_ms if ic_ms and best else None, ".2f"),
            "–" if r.kernels is None else str(r.kernels), err]) + " |")
    notes = [f"- {r.name}: {r.note.rstrip('; ')}" for r in rows if r.note]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def run_matmul(quick: bool, use_compile: bool, autotune: bool, copy_bw: float, device: str,
               names: Optional[set[str]]) -> Tuple[str, List[MatmulRow]]:
    torch.backends.cuda.matmul.allow_tf32 = False  # exact f32 on both sides
    rows_out = []
    for w in matmul_workloads():
        if names and w.name not in names:
            continue
        print(f"... {w.name}", file=sys.stderr, flush=True)
        try:
            rows_out.append(run_matmul_workload(w, quick, use_compile, autotune))
        except Exception as e:  # one workload's failure is a row
            rows_out.append(MatmulRow(w.name, w.shape, note=f"failed: {type(e).__name__}: {e}"))
        gc.collect()
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    return matmul_table(rows_out, copy_bw, device, autotune), rows_out



# ---------------------------------------------------------------- measuring


def sync() -> None:
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def kernel_ms(fn: Callable[[], Any], batches: int = 7) -> float:
    """Median over batches of (time between two CUDA events around a batch) / calls."""
    for _ in range(3):
        fn()
    sync()
    if DEVICE == "cpu":
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end), 1e-3)
    calls = max(1, min(2000, int(20.0 / once)))
    samples = []
    for _ in range(batches):
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / calls)
    return float(statistics.median(samples))


def host_us(fn: Callable[[], Any], calls: int) -> float:
    """Host microseconds per call: many calls, one synchronization at the end."""
    for _ in range(50):
        fn()
    sync()
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - t
    sync()
    return elapsed / calls * 1e6


def copy_bandwidth(quick: bool) -> float:
    """Bytes per second of a device-to-device copy (read + written)."""
    n = (1 << 26) if quick else (1 << 28)  # f32 elements: 256 MiB / 1 GiB
    if DEVICE == "cpu":
        n = 1 << 20
    src = torch.empty(n, dtype=torch.float32, device=DEVICE).fill_(1.0)
    dst = torch.empty_like(src)
    ms = kernel_ms(lambda: dst.copy_(src))
    return 2 * n * 4 / (ms / 1e3)


def as_tuple(x: Any) -> Tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def nbytes(ts: Sequence[Any]) -> int:
    return sum(t.numel() * t.element_size() for t in ts)


def max_error(got: Sequence[Any], ref: Sequence[Any]) -> float:
    worst = 0.0
    for g, r in zip(got, ref):
        d = (g.double() - r.double()).abs()
        d = d[~torch.isnan(d)]
        if d.numel():
            worst = max(worst, float(d.max().item()))
    return worst


def bitwise(a: Sequence[Any], b: Sequence[Any]) -> bool:
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.element_size() == 1:
            x, y = x.view(torch.uint8), y.view(torch.uint8)
        elif x.element_size() == 2:
            x, y = x.view(torch.int16), y.view(torch.int16)
        elif x.element_size() == 4:
            x, y = x.view(torch.int32), y.view(torch.int32)
        else:
            x, y = x.view(torch.int64), y.view(torch.int64)
        if not torch.equal(x, y):
            return False
    return True


@dataclass
class Row:
    name: str
    shape: str
    torch_eager_ms: Optional[float] = None
    torch_compile_ms: Optional[float] = None
    ic_fused_ms: Optional[float] = None
    ic_eager_ms: Optional[float] = None
    bytes: int = 0
    compile_pct_copy: Optional[float] = None
    ic_pct_copy: Optional[float] = None
    ratio: Optional[float] = None
    max_error: Optional[float] = None
    bitwise_eager: Optional[bool] = None
    torch_cold_s: Optional[float] = None
    ic_cold_s: Optional[float] = None
    host_us: Dict[str, float] = field(default_factory=dict)
    note: str = ""


def run_workload(w: Workload, quick: bool, use_compile: bool, copy_bw: float) -> Row:
    row = Row(w.name, w.shape)
    ins = w.make(quick)
    eager_out = as_tuple(w.torch_fn(*ins))
    row.bytes = nbytes(ins) + nbytes(eager_out)
    row.torch_eager_ms = kernel_ms(lambda: w.torch_fn(*ins))
    compiled: Any = None
    if use_compile:
        try:
            torch._dynamo.reset()
            compiled = torch.compile(w.torch_fn)
            t = time.perf_counter()
            compiled(*ins)
            sync()
            row.torch_cold_s = time.perf_counter() - t
            row.torch_compile_ms = kernel_ms(lambda: compiled(*ins))
            row.compile_pct_copy = 100.0 * row.bytes / (row.torch_compile_ms / 1e3) / copy_bw
        except Exception as e:  # a torch.compile failure is a result too
            row.note += f"torch.compile failed: {type(e).__name__}; "
    ic_ins = w.ic_inputs(ins) if w.ic_inputs else ins
    try:
        with tempfile.TemporaryDirectory(prefix="ic-cold-") as cache:
            ctx = ic.Context(cache_dir=cache)
            t = time.perf_counter()
            prog = w.ic_graph(ins).compile(context=ctx, strict=True, backend=BACKEND)
            prog(*ic_ins)
            sync()
            row.ic_cold_s = time.perf_counter() - t
            fused = as_tuple(prog(*ic_ins))
            row.ic_fused_ms = kernel_ms(lambda: prog(*ic_ins))
            row.ic_pct_copy = 100.0 * row.bytes / (row.ic_fused_ms / 1e3) / copy_bw
            eager = w.ic_graph(ins).compile(mode="eager", context=ctx, strict=True, backend=BACKEND)
            row.ic_eager_ms = kernel_ms(lambda: eager(*ic_ins))
            ref = as_tuple(w.torch_fn(*[t.double() for t in ins]))
            row.max_error = max_error(fused, ref)
            row.bitwise_eager = bitwise(fused, eager_out)
            if row.torch_compile_ms is not None:
                row.ratio = row.torch_compile_ms / row.ic_fused_ms
            if w.launch_bound:
                calls = 2000 if quick else 20000
                row.host_us["torch eager"] = host_us(lambda: w.torch_fn(*ins), calls)
                if compiled is not None:
                    row.host_us["torch.compile"] = host_us(lambda: compiled(*ins), calls)
                    try:
                        torch._dynamo.reset()
                        ro = torch.compile(w.torch_fn, mode="reduce-overhead")
                        row.host_us["reduce-overhead"] = host_us(lambda: ro(*ins), calls)
                    except Exception as e:
                        row.note += f"reduce-overhead failed: {type(e).__name__}; "
                row.host_us["ic"] = host_us(lambda: prog(*ic_ins), calls)
            prog.close()
            eager.close()
            ctx.close()
    except NotSupported as e:
        row.note += f"ic: not supported ({e})"
    return row


# ---------------------------------------------------------------- formulations
#
# Equivalent spellings of one computation, as users write them (a cast before or after a
# broadcast, keepdim or a reshape, a reduction over several trailing dims or over their
# product, 2-D or 3-D views of the outputs): ic canonicalizes them to the same kernels, so
# each should run within 5% of its computation's best spelling. The same computations and
# spellings as tests/cpu/test_formulations.c (which checks kernel counts, sources and
# bits), at bench sizes.

FORMULATIONS: Dict[str, List[str]] = {
    "rms_norm_f32_weight": [
        "symbol n\ninput x : bf16[n, 4096]\ninput w : bf16[4096]\neps = const 1e-6\nxf = cast(x, f32)\n"
        "sq = mul(xf, xf)\nms = mean(sq, [1], keepdim)\n%1 = add(ms, eps)\nr = rsqrt(%1)\nxn = mul(xf, r)\n"
        "we = expand(w, [n, 4096])\nwf = cast(we, f32)\n%2 = mul(xn, wf)\ny = cast(%2, bf16)\noutput y\n",
        "symbol n\ninput x : bf16[n, 4096]\ninput w : bf16[4096]\neps = const 1e-6\nxf = cast(x, f32)\n"
        "sq = mul(xf, xf)\nms = mean(sq, [1], keepdim)\n%1 = add(ms, eps)\nr = rsqrt(%1)\nxn = mul(xf, r)\n"
        "wf = cast(w, f32)\n%2 = mul(xn, wf)\ny = cast(%2, bf16)\noutput y\n",
        "symbol n\ninput x : bf16[n, 4096]\ninput w : bf16[4096]\neps = const 1e-6\nxf = cast(x, f32)\n"
        "sq = mul(xf, xf)\nms0 = mean(sq, [1])\nms = reshape(ms0, [n, 1])\n%1 = add(ms, eps)\nr = rsqrt(%1)\n"
        "xn = mul(xf, r)\nw1 = reshape(w, [1, 4096])\nwf = cast(w1, f32)\n%2 = mul(xn, wf)\n"
        "y = cast(%2, bf16)\noutput y\n",
        "symbol n\ninput x : bf16[n, 4096]\ninput w : bf16[4096]\neps = const 1e-6\n"
        "x3 = reshape(x, [n, 64, 64])\nxf = cast(x3, f32)\nsq = mul(xf, xf)\nms = mean(sq, [1, 2], keepdim)\n"
        "%1 = add(ms, eps)\nr = rsqrt(%1)\nxn3 = mul(xf, r)\nxn = reshape(xn3, [n, 4096])\n"
        "wf = cast(w, f32)\n%2 = mul(xn, wf)\ny = cast(%2, bf16)\noutput y\n",
    ],
    "layer_norm": [
        "symbol n\ninput x : f32[n, 4096]\ninput w : f32[4096]\ninput b : f32[4096]\neps = const 1e-5\n"
        "m = mean(x, [1], keepdim)\nd = sub(x, m)\n%1 = mul(d, d)\nv = mean(%1, [1], keepdim)\n"
        "%2 = add(v, eps)\nr = rsqrt(%2)\n%3 = mul(d, r)\n%4 = mul(%3, w)\ny = add(%4, b)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\ninput w : f32[4096]\ninput b : f32[4096]\neps = const 1e-5\n"
        "m0 = mean(x, [1])\nm = reshape(m0, [n, 1])\nd = sub(x, m)\n%1 = mul(d, d)\nv0 = mean(%1, [1])\n"
        "v = reshape(v0, [n, 1])\n%2 = add(v, eps)\nr = rsqrt(%2)\n%3 = mul(d, r)\n%4 = mul(%3, w)\n"
        "y = add(%4, b)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\ninput w : f32[4096]\ninput b : f32[4096]\neps = const 1e-5\n"
        "m = mean(x, [1], keepdim)\nd = sub(x, m)\n%1 = mul(d, d)\nv = mean(%1, [1], keepdim)\n"
        "%2 = add(v, eps)\nr = rsqrt(%2)\n%3 = reshape(w, [1, 4096])\nw2 = expand(%3, [n, 4096])\n"
        "b2 = expand(b, [n, 4096])\n%4 = mul(d, r)\n%5 = mul(%4, w2)\ny = add(%5, b2)\noutput y\n",
    ],
    "softmax": [
        "symbol n\ninput x : f32[n, 4096]\nm = max(x, [1], keepdim)\n%1 = sub(x, m)\ne = exp(%1)\n"
        "s = sum(e, [1], keepdim)\ny = div(e, s)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\nm0 = max(x, [1])\nm = reshape(m0, [n, 1])\n%1 = sub(x, m)\n"
        "e = exp(%1)\ns0 = sum(e, [1])\ns = reshape(s0, [n, 1])\ny = div(e, s)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\nx3 = reshape(x, [n, 1, 4096])\nm = max(x3, [2], keepdim)\n"
        "%1 = sub(x3, m)\ne = exp(%1)\ns = sum(e, [2], keepdim)\ny3 = div(e, s)\ny = reshape(y3, [n, 4096])\n"
        "output y\n",
        "symbol n\ninput x : f32[n, 4096]\nx3 = reshape(x, [n, 64, 64])\nm = max(x3, [1, 2], keepdim)\n"
        "%1 = sub(x3, m)\ne = exp(%1)\ns = sum(e, [1, 2], keepdim)\ny3 = div(e, s)\n"
        "y = reshape(y3, [n, 4096])\noutput y\n",
    ],
    "log_softmax": [
        "symbol n\ninput x : f32[n, 4096]\nm = max(x, [1], keepdim)\nd = sub(x, m)\n%1 = exp(d)\n"
        "s = sum(%1, [1], keepdim)\n%2 = log(s)\ny = sub(d, %2)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\nm0 = max(x, [1])\nm = reshape(m0, [n, 1])\nd = sub(x, m)\n"
        "%1 = exp(d)\ns0 = sum(%1, [1])\n%2 = log(s0)\nls = reshape(%2, [n, 1])\ny = sub(d, ls)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\nx3 = reshape(x, [n, 1, 4096])\nm = max(x3, [2], keepdim)\n"
        "d = sub(x3, m)\n%1 = exp(d)\ns = sum(%1, [2], keepdim)\n%2 = log(s)\ny3 = sub(d, %2)\n"
        "y = reshape(y3, [n, 4096])\noutput y\n",
    ],
    "group_norm": [
        "symbol n\ninput x : f32[n, 256, 1024]\ninput w : f32[256]\ninput b : f32[256]\neps = const 1e-5\n"
        "xg = reshape(x, [n, 32, 8192])\nm = mean(xg, [2], keepdim)\nd = sub(xg, m)\n%1 = mul(d, d)\n"
        "v = mean(%1, [2], keepdim)\n%2 = add(v, eps)\n%3 = rsqrt(%2)\n%4 = mul(d, %3)\n"
        "xn = reshape(%4, [n, 256, 1024])\n%5 = reshape(w, [256, 1])\n%6 = mul(xn, %5)\n"
        "%7 = reshape(b, [256, 1])\ny = add(%6, %7)\noutput y\n",
        "symbol n\ninput x : f32[n, 256, 1024]\ninput w : f32[256]\ninput b : f32[256]\neps = const 1e-5\n"
        "xg = reshape(x, [n, 32, 8, 1024])\nm = mean(xg, [2, 3], keepdim)\nd = sub(xg, m)\n%1 = mul(d, d)\n"
        "v = mean(%1, [2, 3], keepdim)\n%2 = add(v, eps)\n%3 = rsqrt(%2)\n%4 = mul(d, %3)\n"
        "xn = reshape(%4, [n, 256, 1024])\n%5 = reshape(w, [256, 1])\n%6 = mul(xn, %5)\n"
        "%7 = reshape(b, [256, 1])\ny = add(%6, %7)\noutput y\n",
        "symbol n\ninput x : f32[n, 256, 1024]\ninput w : f32[256]\ninput b : f32[256]\neps = const 1e-5\n"
        "xg = reshape(x, [n, 32, 8, 1024])\n%1 = mean(xg, [2, 3])\nm = reshape(%1, [n, 32, 1, 1])\n"
        "d = sub(xg, m)\n%2 = mul(d, d)\n%3 = mean(%2, [2, 3])\nv = reshape(%3, [n, 32, 1, 1])\n"
        "%4 = add(v, eps)\n%5 = rsqrt(%4)\n%6 = mul(d, %5)\nxn = reshape(%6, [n, 256, 1024])\n"
        "%7 = reshape(w, [256, 1])\n%8 = mul(xn, %7)\n%9 = reshape(b, [256, 1])\ny = add(%8, %9)\noutput y\n",
        "symbol n\ninput x : f32[n, 256, 1024]\ninput w : f32[256]\ninput b : f32[256]\neps = const 1e-5\n"
        "xg = reshape(x, [n, 1, 32, 8, 1024])\nm0 = mean(xg, [3, 4])\nm = reshape(m0, [n, 1, 32, 1, 1])\n"
        "d = sub(xg, m)\n%1 = mul(d, d)\nv0 = mean(%1, [3, 4])\nv = reshape(v0, [n, 1, 32, 1, 1])\n"
        "%2 = add(v, eps)\n%3 = rsqrt(%2)\n%4 = mul(d, %3)\nxn = reshape(%4, [n, 256, 1024])\n"
        "%5 = reshape(w, [256, 1])\n%6 = mul(xn, %5)\n%7 = reshape(b, [256, 1])\ny = add(%6, %7)\noutput y\n",
    ],
    "block_fp8_quant": [
        "symbol n\ninput x : bf16[n, 4096]\ntiny = const 1e-12\nfmax = const 448\n"
        "%1 = reshape(x, [n, 256, 16])\nxf = cast(%1, f32)\n%2 = abs(xf)\namax = max(%2, [2], keepdim)\n"
        "%3 = maximum(amax, tiny)\nsc = div(%3, fmax)\n%4 = div(xf, sc)\nq = cast_saturate(%4, f8e4m3)\n"
        "values = reshape(q, [n, 4096])\nscales = reshape(sc, [n, 256])\noutput values\noutput scales\n",
        "symbol n\ninput x : bf16[n, 4096]\ntiny = const 1e-12\nfmax = const 448\n"
        "%1 = reshape(x, [n, 256, 16])\nxf = cast(%1, f32)\n%2 = abs(xf)\namax = max(%2, [2])\n"
        "%3 = maximum(amax, tiny)\nscales = div(%3, fmax)\nsc = reshape(scales, [n, 256, 1])\n"
        "%4 = div(xf, sc)\nq = cast_saturate(%4, f8e4m3)\nvalues = reshape(q, [n, 4096])\noutput values\n"
        "output scales\n",
        "symbol n\ninput x : bf16[n, 4096]\ntiny = const 1e-12\nfmax = const 448\n%1 = cast(x, f32)\n"
        "xf = reshape(%1, [n, 256, 1, 16])\n%2 = abs(xf)\namax = max(%2, [3], keepdim)\n"
        "%3 = maximum(amax, tiny)\nsc = div(%3, fmax)\n%4 = div(xf, sc)\nq = cast_saturate(%4, f8e4m3)\n"
        "values = reshape(q, [n, 4096])\nscales = reshape(sc, [n, 256])\noutput values\noutput scales\n",
    ],
    "row_fp8_quant": [
        "symbol n\ninput x : bf16[n, 8192]\ntiny = const 1e-12\nfmax = const 448\nxf = cast(x, f32)\n"
        "%1 = abs(xf)\namax = max(%1, [1], keepdim)\n%2 = maximum(amax, tiny)\nscales = div(%2, fmax)\n"
        "%3 = div(xf, scales)\nvalues = cast_saturate(%3, f8e4m3)\noutput values\noutput scales\n",
        "symbol n\ninput x : bf16[n, 8192]\ntiny = const 1e-12\nfmax = const 448\nxf = cast(x, f32)\n"
        "%1 = abs(xf)\namax = max(%1, [1])\n%2 = maximum(amax, tiny)\ns1 = div(%2, fmax)\n"
        "scales = reshape(s1, [n, 1])\n%3 = div(xf, scales)\nvalues = cast_saturate(%3, f8e4m3)\n"
        "output values\noutput scales\n",
        "symbol n\ninput x : bf16[n, 8192]\ntiny = const 1e-12\nfmax = const 448\n"
        "%1 = reshape(x, [n, 1, 8192])\nxf = cast(%1, f32)\n%2 = abs(xf)\namax = max(%2, [2], keepdim)\n"
        "%3 = maximum(amax, tiny)\ns3 = div(%3, fmax)\n%4 = div(xf, s3)\nv3 = cast_saturate(%4, f8e4m3)\n"
        "values = reshape(v3, [n, 8192])\nscales = reshape(s3, [n, 1])\noutput values\noutput scales\n",
    ],
    "nll_loss": [
        "symbol n\ninput x : f32[n, 4096]\ninput onehot : f32[n, 4096]\nm = max(x, [1], keepdim)\n"
        "d = sub(x, m)\n%1 = exp(d)\n%2 = sum(%1, [1], keepdim)\nls = log(%2)\nlogp = sub(d, ls)\n"
        "%3 = mul(onehot, logp)\n%4 = sum(%3, [1], keepdim)\nloss = neg(%4)\noutput loss\n",
        "symbol n\ninput x : f32[n, 4096]\ninput onehot : f32[n, 4096]\n%1 = max(x, [1])\n"
        "m = reshape(%1, [n, 1])\nd = sub(x, m)\n%2 = exp(d)\n%3 = sum(%2, [1])\n%4 = log(%3)\n"
        "ls = reshape(%4, [n, 1])\nlogp = sub(d, ls)\n%5 = mul(onehot, logp)\n%6 = sum(%5, [1])\n"
        "l0 = neg(%6)\nloss = reshape(l0, [n, 1])\noutput loss\n",
        "symbol n\ninput x : f32[n, 4096]\ninput onehot : f32[n, 4096]\nx3 = reshape(x, [n, 1, 4096])\n"
        "m = max(x3, [2], keepdim)\nd = sub(x3, m)\n%1 = exp(d)\n%2 = sum(%1, [2], keepdim)\nls = log(%2)\n"
        "%3 = sub(d, ls)\nlogp = reshape(%3, [n, 4096])\n%4 = mul(onehot, logp)\n%5 = sum(%4, [1], keepdim)\n"
        "loss = neg(%5)\noutput loss\n",
    ],
    "mse_loss": [
        "symbol n\ninput p : f32[n, 4096]\ninput t : f32[n, 4096]\nd = sub(p, t)\n%1 = mul(d, d)\n"
        "loss = mean(%1, [0, 1])\noutput loss\n",
        "symbol n\ninput p : f32[n, 4096]\ninput t : f32[n, 4096]\n%1 = sub(p, t)\n"
        "d = reshape(%1, [4096 * n])\n%2 = mul(d, d)\nloss = mean(%2, [0])\noutput loss\n",
        "symbol n\ninput p : f32[n, 4096]\ninput t : f32[n, 4096]\nd = sub(p, t)\n%1 = mul(d, d)\n"
        "l2 = mean(%1, [0, 1], keepdim)\nloss = reshape(l2, [])\noutput loss\n",
    ],
    "sgd_momentum": [
        "symbol n\ninput p : f32[n, 4096]\ninput g : f32[n, 4096]\ninput buf : f32[n, 4096]\n"
        "input lr : f32[]\nmom = const 0.9\n%1 = mul(buf, mom)\nnb = add(%1, g)\n%2 = mul(lr, nb)\n"
        "pn = sub(p, %2)\noutput pn\noutput nb\n",
        "symbol n\ninput p : f32[n, 4096]\ninput g : f32[n, 4096]\ninput buf : f32[n, 4096]\n"
        "input lr : f32[]\nmom = const 0.9\n%1 = mul(buf, mom)\nnb = add(%1, g)\n"
        "lre = expand(lr, [n, 4096])\n%2 = mul(lre, nb)\npn = sub(p, %2)\noutput pn\noutput nb\n",
        "symbol n\ninput p : f32[n, 4096]\ninput g : f32[n, 4096]\ninput buf : f32[n, 4096]\n"
        "input lr : f32[]\nmom = const 0.9\n%1 = mul(buf, mom)\nnb = add(%1, g)\nlr2 = reshape(lr, [1, 1])\n"
        "%2 = mul(lr2, nb)\npn = sub(p, %2)\noutput pn\noutput nb\n",
    ],
    "adam_step": [
        "symbol n\ninput p : f32[n, 4096]\ninput g : f32[n, 4096]\ninput m : f32[n, 4096]\n"
        "input v : f32[n, 4096]\ninput lr_c : f32[]\ninput v_c : f32[]\nb1 = const 0.9\nc1 = const 0.1\n"
        "b2 = const 0.999\nc2 = const 0.001\neps = const 1e-8\n%1 = mul(m, b1)\n%2 = mul(g, c1)\n"
        "mn = add(%1, %2)\n%3 = mul(v, b2)\n%4 = mul(g, g)\n%5 = mul(%4, c2)\nvn = add(%3, %5)\n"
        "%6 = div(vn, v_c)\n%7 = sqrt(%6)\nden = add(%7, eps)\n%8 = div(mn, den)\n%9 = mul(lr_c, %8)\n"
        "pn = sub(p, %9)\noutput pn\noutput mn\noutput vn\n",
        "symbol n\ninput p : f32[n, 4096]\ninput g : f32[n, 4096]\ninput m : f32[n, 4096]\n"
        "input v : f32[n, 4096]\ninput lr_c : f32[]\ninput v_c : f32[]\nb1 = const 0.9\nc1 = const 0.1\n"
        "b2 = const 0.999\nc2 = const 0.001\neps = const 1e-8\n%1 = mul(m, b1)\n%2 = mul(g, c1)\n"
        "mn = add(%1, %2)\n%3 = mul(v, b2)\n%4 = mul(g, g)\n%5 = mul(%4, c2)\nvn = add(%3, %5)\n"
        "vce = expand(v_c, [n, 4096])\nlre = expand(lr_c, [n, 4096])\n%6 = div(vn, vce)\n%7 = sqrt(%6)\n"
        "den = add(%7, eps)\n%8 = div(mn, den)\n%9 = mul(lre, %8)\npn = sub(p, %9)\noutput pn\noutput mn\n"
        "output vn\n",
        "symbol n\ninput p : f32[n, 4096]\ninput g : f32[n, 4096]\ninput m : f32[n, 4096]\n"
        "input v : f32[n, 4096]\ninput lr_c : f32[]\ninput v_c : f32[]\nb1 = const 0.9\nc1 = const 0.1\n"
        "b2 = const 0.999\nc2 = const 0.001\neps = const 1e-8\n%1 = mul(m, b1)\n%2 = mul(g, c1)\n"
        "mn = add(%1, %2)\n%3 = mul(v, b2)\n%4 = mul(g, g)\n%5 = mul(%4, c2)\nvn = add(%3, %5)\n"
        "vc2 = reshape(v_c, [1, 1])\nlr2 = reshape(lr_c, [1])\n%6 = div(vn, vc2)\n%7 = sqrt(%6)\n"
        "den = add(%7, eps)\n%8 = div(mn, den)\n%9 = mul(lr2, %8)\npn = sub(p, %9)\noutput pn\noutput mn\n"
        "output vn\n",
    ],
    "std_unbiased": [
        "symbol n\ninput x : f32[n, 4096]\nv = mean(x, [1], keepdim, correction=1)\ns = sqrt(v)\noutput s\n",
        "symbol n\ninput x : f32[n, 4096]\nv = mean(x, [1], correction=1)\n%1 = sqrt(v)\n"
        "s = reshape(%1, [n, 1])\noutput s\n",
        "symbol n\ninput x : f32[n, 4096]\nx3 = reshape(x, [n, 64, 64])\n"
        "v = mean(x3, [1, 2], keepdim, correction=1)\n%1 = sqrt(v)\ns = reshape(%1, [n, 1])\noutput s\n",
    ],
    "gelu_bias_bf16": [
        "symbol n\ninput x : f32[n, 4096]\ninput b : bf16[4096]\n%1 = expand(b, [n, 4096])\n"
        "bf = cast(%1, f32)\n%2 = add(x, bf)\ny = gelu_tanh(%2)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\ninput b : bf16[4096]\nbf = cast(b, f32)\n%1 = add(x, bf)\n"
        "y = gelu_tanh(%1)\noutput y\n",
        "symbol n\ninput x : f32[n, 4096]\ninput b : bf16[4096]\n%1 = reshape(b, [1, 4096])\n"
        "bf = cast(%1, f32)\n%2 = add(x, bf)\ny = gelu_tanh(%2)\noutput y\n",
    ],
    "scaled_residual_rms": [
        "symbol n\ninput x : f32[n, 4096]\ninput h : f32[n, 4096]\ninput w : f32[4096]\neps = const 1e-6\n"
        "one = const 1\nr = add(x, h)\n%1 = mul(r, r)\nms = mean(%1, [1], keepdim)\n%2 = add(ms, eps)\n"
        "%3 = rsqrt(%2)\n%4 = mul(r, %3)\n%5 = add(w, one)\ny = mul(%4, %5)\noutput y\noutput r\n",
        "symbol n\ninput x : f32[n, 4096]\ninput h : f32[n, 4096]\ninput w : f32[4096]\neps = const 1e-6\n"
        "one = const 1\nr = add(x, h)\n%1 = mul(r, r)\nms = mean(%1, [1], keepdim)\n"
        "%2 = expand(w, [n, 4096])\nw1 = add(%2, one)\n%3 = add(ms, eps)\n%4 = rsqrt(%3)\n%5 = mul(r, %4)\n"
        "y = mul(%5, w1)\noutput y\noutput r\n",
        "symbol n\ninput x : f32[n, 4096]\ninput h : f32[n, 4096]\ninput w : f32[4096]\neps = const 1e-6\n"
        "one = const 1\nr = add(x, h)\n%1 = mul(r, r)\n%2 = mean(%1, [1])\nms = reshape(%2, [n, 1])\n"
        "%3 = reshape(w, [1, 4096])\nw1 = add(%3, one)\n%4 = add(ms, eps)\n%5 = rsqrt(%4)\n%6 = mul(r, %5)\n"
        "y = mul(%6, w1)\noutput y\noutput r\n",
    ],
    "softmax_read_transposed": [
        "symbol n\ninput x : f32[n, 4096]\nm = max(x, [1], keepdim)\n%1 = sub(x, m)\ne = exp(%1)\n"
        "s = sum(e, [1], keepdim)\ny = div(e, s)\nyt = permute(y, [1, 0])\nz = slice(yt, 0, 3, 4093, 2)\n"
        "output z\n",
        "symbol n\ninput x : f32[n, 4096]\nx3 = reshape(x, [n, 64, 64])\nm = max(x3, [1, 2], keepdim)\n"
        "%1 = sub(x3, m)\ne = exp(%1)\ns = sum(e, [1, 2], keepdim)\ny3 = div(e, s)\n"
        "y = reshape(y3, [n, 4096])\nyt = permute(y, [1, 0])\nz = slice(yt, 0, 3, 4093, 2)\noutput z\n",
        "symbol n\ninput x : f32[n, 4096]\nx4 = reshape(x, [n, 64, 8, 8])\nm0 = max(x4, [1, 2, 3])\n"
        "m = reshape(m0, [n, 1, 1, 1])\n%1 = sub(x4, m)\ne = exp(%1)\ns0 = sum(e, [1, 2, 3])\n"
        "s = reshape(s0, [n, 1, 1, 1])\ny4 = div(e, s)\ny = reshape(y4, [n, 4096])\nyt = permute(y, [1, 0])\n"
        "z = slice(yt, 0, 3, 4093, 2)\noutput z\n",
    ],
}



def formulation_torch(name: str) -> Callable[..., Any]:
    """The computation in torch (inputs in the graphs' order), for torch eager and torch.compile."""
    def rms_w(x: Any, w: Any) -> Any:
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(torch.bfloat16)

    def block_quant(x: Any) -> Any:
        xb = x.float().view(x.shape[0], -1, 16)
        s = xb.abs().amax(-1, keepdim=True).clamp(min=1e-12) / 448
        q = (xb / s).clamp(-448, 448).to(torch.float8_e4m3fn)
        return q.view(x.shape[0], -1), s.view(x.shape[0], -1)

    def adam_step(p: Any, g: Any, m: Any, v: Any, lr_c: Any, v_c: Any) -> Any:
        mn, vn = m * 0.9 + g * 0.1, v * 0.999 + g * g * 0.001
        return p - lr_c * (mn / (torch.sqrt(vn / v_c) + 1e-8)), mn, vn

    def residual_rms(x: Any, h: Any, w: Any) -> Any:
        r = x + h
        return r * torch.rsqrt(r.pow(2).mean(-1, keepdim=True) + 1e-6) * (w + 1), r

    def sgd(p: Any, g: Any, buf: Any, lr: Any) -> Any:
        nb = buf * 0.9 + g
        return p - lr * nb, nb

    fns: Dict[str, Callable[..., Any]] = {
        "rms_norm_f32_weight": rms_w,
        "layer_norm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        "softmax": lambda x: torch.softmax(x, -1),
        "log_softmax": lambda x: torch.log_softmax(x, -1),
        "group_norm": lambda x, w, b: F.group_norm(x, 32, w, b, 1e-5),
        "block_fp8_quant": block_quant,
        "row_fp8_quant": fp8_rowquant_torch,
        "nll_loss": lambda x, onehot: -(onehot * torch.log_softmax(x, -1)).sum(-1, keepdim=True),
        "mse_loss": lambda p, t: F.mse_loss(p, t),
        "sgd_momentum": sgd,
        "adam_step": adam_step,
        "std_unbiased": lambda x: x.std(-1, keepdim=True),
        "gelu_bias_bf16": lambda x, b: F.gelu(x + b.float(), approximate="tanh"),
        "scaled_residual_rms": residual_rms,
        "softmax_read_transposed": lambda x: torch.softmax(x, -1).t()[3:4093:2].contiguous(),
    }
    return fns[name]


_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def formulation_input_specs(text: str, n: int) -> List[Tuple[str, str, Tuple[int, ...]]]:
    """(name, dtype, shape) of a graph text's inputs, the symbol n bound."""
    specs = []
    for m in re.finditer(r"^input (\w+) : (\w+)\[([^\]]*)\]", text, re.M):
        dims = tuple(int(eval(d, {"__builtins__": {}}, {"n": n})) for d in m.group(3).split(",") if d.strip())
        specs.append((m.group(1), m.group(2), dims))
    return specs


def formulation_inputs(text: str, n: int) -> List[Any]:
    """Random inputs: one-hot rows for "onehot", positive values for "v" and 0-d inputs."""
    ins = []
    for name, dt, shape in formulation_input_specs(text, n):
        dtype = getattr(torch, _DTYPES[dt])
        if name == "onehot":
            t = torch.zeros(shape, device=DEVICE, dtype=dtype)
            t.scatter_(-1, torch.randint(0, shape[-1], (*shape[:-1], 1), device=DEVICE), 1.0)
        elif name == "v" or not shape:
            t = (torch.rand(shape, device=DEVICE, dtype=torch.float32) + 0.01).to(dtype)
        else:
            t = randn(shape, dtype)
        ins.append(t)
    return ins


def formulation_programs(name: str, backend: str, context: Any = None) -> List[Any]:
    """Each spelling of computation `name` compiled (strict, fused) for backend."""
    return [ic.Graph.parse(text).compile(backend=backend, strict=True, context=context)
            for text in FORMULATIONS[name]]


def run_formulations(quick: bool, use_compile: bool, copy_bw: float, names: Optional[List[str]] = None) -> str:
    """One markdown table: per spelling its kernels, time, % of copy and time over the best spelling's."""
    lines = [
        "formulations: equivalent spellings of one computation (tests/cpu/test_formulations.c); "
        "target: every spelling within 5% of its computation's best",
        "",
        "| computation | spelling | kernels | ic fused ms | ic % copy | / best spelling | torch eager ms | "
        "torch.compile ms |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    worst = 0.0
    for name in names or list(FORMULATIONS):
        print(f"... formulations: {name}", file=sys.stderr, flush=True)
        n = rows(quick, 8192 if name not in ("group_norm",) else 64)
        ins = formulation_inputs(FORMULATIONS[name][0], n)
        fn = formulation_torch(name)
        eager_ms = compile_ms = None
        try:
            out = as_tuple(fn(*ins))
            eager_ms = kernel_ms(lambda: fn(*ins))
            if use_compile:
                torch._dynamo.reset()
                compiled = torch.compile(fn)
                compiled(*ins)
                compile_ms = kernel_ms(lambda: compiled(*ins))
        except Exception as e:  # an old torch without fp8, ...
            out = ()
            print(f"    torch: {type(e).__name__}: {e}", file=sys.stderr)
        times = []
        for s, prog in enumerate(formulation_programs(name, BACKEND)):
            res = as_tuple(prog(*ins))
            ms = kernel_ms(lambda: prog(*ins))
            times.append((s, prog.kernel_count, ms, nbytes(ins) + nbytes(res)))
            prog.close()
        best = min(t[2] for t in times)
        for s, kernels, ms, nb in times:
            worst = max(worst, ms / best)
            lines.append("| " + " | ".join([
                name if s == 0 else "", str(s), str(kernels), fmt(ms), fmt(100.0 * nb / (ms / 1e3) / copy_bw, ".1f"),
                fmt(ms / best, ".3f") + ("" if ms <= 1.05 * best else " (over 5%)"),
                fmt(eager_ms) if s == 0 else "", fmt(compile_ms) if s == 0 else ""]) + " |")
        del out
    lines += ["", f"slowest spelling over its computation's best: {worst:.3f}"]
    return "\n".join(lines)


# ---------------------------------------------------------------- output


def fmt(v: Optional[float], spec: str = ".3f") -> str:
    return "–" if v is None else format(v, spec)


def table(rows: List[Row], copy_bw: float, device: str, quick: bool) -> str:
    sizes = "; --ref: tiny sizes" if DEVICE == "cpu" else "; --quick: 1/16 of the rows shown" if quick else ""
    lines = [
        f"ic {ic.version()} vs torch {torch.__version__} on {device}; copy bandwidth {copy_bw / 1e9:.0f} GB/s "
        f"(device-to-device, read + written){sizes}",
        "",
        "| workload | shape | torch eager ms | torch.compile ms | ic fused ms | ic eager ms | compile % copy "
        "| ic fused % copy | compile / ic | max err (f64 ref) | = eager | cold s (compile / ic) | host µs/call |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|:-:|--:|---|",
    ]
    for r in rows:
        unsupported = r.ic_fused_ms is None and "not supported" in r.note
        ic_cells = ["not supported"] * 2 if unsupported else [fmt(r.ic_fused_ms), fmt(r.ic_eager_ms)]
        host = ", ".join(f"{k} {v:.1f}" for k, v in r.host_us.items())
        lines.append("| " + " | ".join([
            r.name, r.shape, fmt(r.torch_eager_ms), fmt(r.torch_compile_ms), *ic_cells,
            fmt(r.compile_pct_copy, ".1f"), "–" if unsupported else fmt(r.ic_pct_copy, ".1f"),
            fmt(r.ratio, ".2f"), "–" if r.max_error is None else f"{r.max_error:.2e}",
            "–" if r.bitwise_eager is None else ("yes" if r.bitwise_eager else "no"),
            f"{fmt(r.torch_cold_s, '.2f')} / {fmt(r.ic_cold_s, '.2f')}", host or "–"]) + " |")
    ratios = [r.ratio for r in rows if r.ratio]
    lines.append("")
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines.append(f"geomean torch.compile / ic fused over {len(ratios)} supported workloads: {geo:.2f}")
    notes = [f"- {r.name}: {r.note.rstrip('; ')}" for r in rows if r.note]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    global torch, F, DEVICE, BACKEND
    ap = argparse.ArgumentParser(description="ic vs PyTorch eager and torch.compile (one markdown table)")
    ap.add_argument("--quick", action="store_true", help="small sizes (1/16 of the rows)")
    ap.add_argument("--only", help="comma-separated workload names: " + ", ".join(f.__name__ for f in WORKLOADS)
                    + "; and computations of the formulations section: " + ", ".join(FORMULATIONS)
                    + "; and of the matmul section: mm_bf16_4096x4096x4096, ..., linear_gelu, swiglu_gate, "
                      "linear_residual_rms, dequant_mm")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--section", choices=("all", "workloads", "formulations", "matmul"), default="all",
                    help="workloads: the table of workloads; formulations: equivalent spellings side by side; "
                         "matmul: ic's matmul against cuBLAS and torch.compile (not part of all)")
    ap.add_argument("--max-autotune", action="store_true",
                    help="matmul section: also torch.compile(mode='max-autotune') (autotuning takes minutes a shape)")
    ap.add_argument("--no-torch-compile", action="store_true", help="skip torch.compile (a quick smoke run)")
    ap.add_argument("--ref", action="store_true",
                    help="torch CPU tensors and ic's ref backend at tiny sizes, without torch.compile: checks "
                         "this script where there is no GPU (its times mean nothing)")
    args = ap.parse_args(argv)
    try:
        torch = importlib.import_module("torch")
        F = importlib.import_module("torch.nn.functional")
    except ImportError:
        print("no GPU / no torch: torch is not installed; nothing measured")
        return 0
    if args.ref:
        DEVICE, BACKEND = "cpu", "ref"
        args.no_torch_compile = True
    elif not torch.cuda.is_available():
        print("no GPU / no torch: torch sees no CUDA GPU; nothing measured")
        return 0
    wanted = set(args.only.split(",")) if args.only else None
    works = [f() for f in WORKLOADS]
    formulations = list(FORMULATIONS)
    if wanted:
        unknown = wanted - {w.name for w in works} - set(FORMULATIONS) - {w.name for w in matmul_workloads()}
        if unknown:
            print(f"unknown workload(s): {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        works = [w for w in works if w.name in wanted]
        formulations = [f for f in formulations if f in wanted]
    device = torch.cuda.get_device_name() if DEVICE == "cuda" else "the CPU (--ref: ic's ref backend)"
    copy_bw = copy_bandwidth(args.quick)
    rows_out = []
    if args.section == "matmul":
        text, mm_rows = run_matmul(args.quick, not args.no_torch_compile, args.max_autotune, copy_bw, device, wanted)
        print(text)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": device, "ic": ic.version(), "torch": torch.__version__, "copy_bandwidth": copy_bw,
                           "quick": args.quick, "matmul_rows": [r.__dict__ for r in mm_rows]}, f, indent=2)
        return 0
    if args.section == "formulations":
        works = []
    for w in works:
        print(f"... {w.name}", file=sys.stderr, flush=True)
        try:
            rows_out.append(run_workload(w, args.quick, not args.no_torch_compile, copy_bw))
        except Exception as e:  # one workload's failure (an old torch without fp8, ...) is a row
            rows_out.append(Row(w.name, w.shape, note=f"failed: {type(e).__name__}: {e}"))
        gc.collect()  # the workload's tensors, before the next one allocates
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    if args.section != "formulations":
        print(table(rows_out, copy_bw, device, args.quick))
    if args.section != "workloads" and formulations:
        print()
        print(run_formulations(args.quick, not args.no_torch_compile, copy_bw, formulations))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "ic": ic.version(), "torch": torch.__version__, "copy_bandwidth": copy_bw,
                       "quick": args.quick, "rows": [r.__dict__ for r in rows_out]}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
