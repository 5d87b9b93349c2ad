#!/bin/bash
# The column kernel of the build in $IC_GPU_BUILD_DIR (default build-gpu; or a branch copied
# by scripts/ab-prepare.sh and built beside it), measured and tested:
# ic vs torch.compile over allocations, column_after_row, ic-bench after the row sum, the hand
# layouts (unless IC_SKIP_HAND is set), then the GPU column tests
cd "$(dirname "$0")/../.."
OUT=${OUT:-gpu-out}
B=${IC_GPU_BUILD_DIR:-build-gpu}
CUDA=$(dirname "$(dirname "$(command -v nvcc)")")
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
PYTHONPATH=python IC_LIBRARY=$PWD/$B/libic.so.0 timeout 60 python3 bench/probes/col_sum_placement.py 6 2>&1 | grep -v Warning | tail -7
gcc -O2 -std=c11 -Iinclude -I$CUDA/include bench/probes/column_after_row.c -L$B -lic -L$CUDA/lib64/stubs -lcuda -Wl,-rpath,$PWD/$B -o /tmp/car && for m in alone after; do timeout 30 /tmp/car $m 2>&1 | tail -3 | cut -c1-170; done
timeout 60 $B/bench/ic-bench reductions --only "row sum|column sum" 2>&1 | grep "^| column" | cut -c1-110
[ -n "$IC_SKIP_HAND" ] || (nvcc -O3 -arch=sm_90a -o /tmp/co bench/probes/column_order.cu && timeout 40 /tmp/co realloc) 2>&1 | sed -e 's/prefetch L1noalloc //' -e 's/| maxerr 0.011 no error//' | cut -c1-140
timeout 100 ctest --test-dir $B -j16 -R "gpu_reduce.test_column_lengths|gpu_reduce.test_eager_equals_fused|gpu_reduce.test_strided" 2>&1 | grep -E "Passed|Failed|tests passed|Timeout"
