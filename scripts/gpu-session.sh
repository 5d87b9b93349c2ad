#!/usr/bin/env bash
# The device work of a session in one batch, for the GPU machine (see
# ../shared/gpu/README.md): gpu-run.sh builds build-gpu/ and runs ctest (GPU suite
# included) first, then this script runs the parts named, each logged under $OUT:
#   .gpu/gpu-run.sh -- bash scripts/gpu-session.sh stress sanitize bench torch
#   stress    gpu_faults and gpu_stress with their printed figures (fault points, soak memory)
#   sanitize  scripts/gpu-sanitize.sh over every GPU test (memcheck, racecheck, initcheck)
#   bench     build-gpu/bench/ic-bench all
#   torch     bench/torch_compare.py (PyTorch eager and torch.compile on the same workloads)
# A failing part is reported and the next one still runs; the exit status says whether
# any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
build=${IC_GPU_BUILD_DIR:-build-gpu}
status=0
run() {
  local name=$1
  shift
  echo "== $name: $*"
  local start=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then
    echo "== $name: ok ($((SECONDS - start)) s)"
  else
    echo "== $name: FAILED ($((SECONDS - start)) s; $out/$name.log)"
    status=1
  fi
  tail -40 "$out/$name.log"
}
for part in "$@"; do
  case $part in
    stress)
      run gpu_faults env CK_FORK=no "$build/tests/gpu_faults"
      run gpu_stress env CK_FORK=no "$build/tests/gpu_stress" ;;
    sanitize) run sanitize env OUT="$out/sanitize" scripts/gpu-sanitize.sh "$build" ;;
    bench) run bench "$build/bench/ic-bench" all ;;
    torch) run torch env IC_LIBRARY="$PWD/$build/libic.so.0" python3 bench/torch_compare.py ;;
    *) echo "gpu-session: unknown part '$part' (stress, sanitize, bench, torch)" >&2; status=2 ;;
  esac
done
exit $status
