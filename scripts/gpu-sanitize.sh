#!/usr/bin/env bash
# Runs the GPU tests under NVIDIA compute-sanitizer: memcheck (with leak checking),
# racecheck (shared-memory hazards) and initcheck (reads of uninitialized device memory).
# Any reported error fails the script; a summary line per tool and test is printed at the
# end. Needs a GPU and compute-sanitizer (CUDA toolkit) on PATH.
# Usage: scripts/gpu-sanitize.sh BUILD_DIR [test ...]
#   A test is an executable (gpu_asm) or one Check case of it (gpu_reduce.test_two_stage);
#   the default is every ctest test labelled gpu, which names the cases of the split
#   executables one by one.
# IC_SANITIZE_JOBS=N runs N (tool, test) pairs at once (default 1): the tools are slow and
# one GPU has room for several. IC_SANITIZE_TIMEOUT=S stops a pair after S seconds (a
# failure, reported as such). Kernels come from the disk cache when it is warm (run ctest
# first): they are still loaded, launched and checked under the tool; only NVRTC is saved.
# IC_FAULT_SWEEP_STRIDE=K (default 8 here, 1 in ctest) makes the fault sweeps of gpu_faults
# try every Kth call only: under the tools a whole allocation sweep (a context and a cold
# compile a point) takes far longer than the other cases.
# e.g. on a machine with a GPU, after building build-gpu and running its ctest suite:
#   scripts/gpu-sanitize.sh build-gpu
set -uo pipefail
build=${1:?usage: scripts/gpu-sanitize.sh BUILD_DIR [test ...]}
shift
command -v compute-sanitizer >/dev/null || { echo "gpu-sanitize: compute-sanitizer not found" >&2; exit 2; }
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  mapfile -t tests < <(ctest --test-dir "$build" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *//p')
fi
[ ${#tests[@]} -gt 0 ] || { echo "gpu-sanitize: no GPU tests in $build" >&2; exit 2; }
out=${OUT:-$build/sanitize}
mkdir -p "$out"
status=0
jobs=${IC_SANITIZE_JOBS:-1}
# One (tool, test) pair: its log, then a one-line result in $out/$tool-$t.result.
sanitize_one() {
  local tool=$1 t=$2 extra=() limit=() rc errors result exe=${2%%.*} case=
  [ "$exe" = "$t" ] || case=${t#*.}
  [ "$tool" != memcheck ] || extra+=(--leak-check full)
  [ "$tool" != racecheck ] || extra+=(--racecheck-report all)
  [ -z "${IC_SANITIZE_TIMEOUT:-}" ] || limit=(timeout "$IC_SANITIZE_TIMEOUT")
  local log="$out/$tool-$t.log"
  # CK_FORK=no: CUDA state cannot cross a fork
  CK_FORK=no CK_RUN_CASE=$case IC_STRICT=1 IC_FAULT_SWEEP_STRIDE=${IC_FAULT_SWEEP_STRIDE:-8} "${limit[@]}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
    "${extra[@]}" "$build/tests/$exe" >"$log" 2>&1
  rc=$?
  # memcheck and initcheck end with "ERROR SUMMARY: N errors", racecheck with
  # "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"
  errors=$(grep -Eo '(ERROR SUMMARY: |RACECHECK SUMMARY: .*\()[0-9]+ error' "$log" | tail -1 |
    grep -Eo '[0-9]+ error' | grep -Eo '[0-9]+' || echo "?")
  if [ $rc -eq 0 ] && [ "$errors" = 0 ]; then
    result="ok, 0 errors"
  elif [ $rc -eq 77 ]; then
    result="skipped (no GPU)"
  elif [ $rc -eq 124 ]; then
    result="FAILED (timed out after ${IC_SANITIZE_TIMEOUT}s; $log)"
  else
    result="FAILED (exit $rc, $errors errors; $log)"
  fi
  printf '%-10s %-48s %s\n' "$tool" "$t" "$result" >"$out/$tool-$t.result"
}
pairs=()
for tool in memcheck racecheck initcheck; do
  for t in "${tests[@]}"; do pairs+=("$tool $t"); done
done
for pair in "${pairs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  read -r tool t <<<"$pair"
  sanitize_one "$tool" "$t" &
done
wait
for pair in "${pairs[@]}"; do
  read -r tool t <<<"$pair"
  r="$out/$tool-$t.result"
  if [ -f "$r" ]; then cat "$r"; else printf '%-10s %-48s %s\n' "$tool" "$t" "NO RESULT"; status=1; fi
  grep -q FAILED "$r" 2>/dev/null && status=1
done
exit $status
