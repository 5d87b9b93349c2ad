"""The column sum f32 [4096, 32768] over dim 0 on a series of allocations, timed for ic and
torch.compile on the same tensor each time (back to back, the median of 7 batches, as
bench/torch_compare.py times), with a device copy as the 100% mark. ic's column kernel
reads 5-8% slower on some allocations (bench/results/2026-12-06-column-reductions-h100.md); this shows
whether torch.compile's kernel does too. Rounds alternate between a tensor from torch's
caching allocator (the block just freed) and one after torch.cuda.empty_cache() (memory
returned to the driver and allocated again). Run with TORCH_LOGS=output_code to see the
kernel Inductor generates.
    PYTHONPATH=python IC_LIBRARY=build-gpu/libic.so.0 python3 bench/probes/col_sum_placement.py [ROUNDS]
"""
import os
import statistics
import sys
from typing import Any, Callable

import torch  # type: ignore

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import ic  # noqa: E402

R, N = 4096, 32768


def kernel_ms(fn: Callable[[], Any], batches: int = 7) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(batches):
        start.record()
        for _ in range(20):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 20)
    return float(statistics.median(samples))


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    src = torch.ones(1 << 27, device="cuda")
    dst = torch.empty_like(src)
    copy_bw = 2.0 * int(src.numel()) * 4 / (kernel_ms(lambda: dst.copy_(src)) / 1e3)
    del src, dst
    torch.cuda.empty_cache()
    print(f"{torch.cuda.get_device_name()}: copy {copy_bw / 1e9:.0f} GB/s")
    compiled = torch.compile(lambda x: x.sum(0))
    g = ic.Graph()
    x_in = g.input("x", ic.f32, (R, g.symbol("n")))
    g.output("y", ic.sum(x_in, 0))
    prog = g.compile(strict=True)
    moved = R * N * 4 + N * 4
    for r in range(rounds):
        fresh = r % 2 == 1
        if fresh:
            torch.cuda.empty_cache()
        x = torch.randn(R, N, device="cuda")
        t_compile = kernel_ms(lambda: compiled(x))
        t_ic = kernel_ms(lambda: prog(x))

        def pct(ms: float) -> float:
            return 100.0 * moved / (ms / 1e3) / copy_bw

        print(f"round {r} ({'driver' if fresh else 'cached'} block at {x.data_ptr():#x}): "
              f"torch.compile {t_compile:.4f} ms {pct(t_compile):5.1f}% | ic {t_ic:.4f} ms {pct(t_ic):5.1f}% | "
              f"torch.compile / ic {t_compile / t_ic:.2f}")
        del x
    prog.close()


if __name__ == "__main__":
    main()
