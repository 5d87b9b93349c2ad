#!/usr/bin/env bash
# Runs the GPU test executables under NVIDIA compute-sanitizer: memcheck (with leak
# checking), racecheck (shared-memory hazards) and initcheck (reads of uninitialized
# device memory). Any reported error fails the script; a summary line per tool and test
# is printed at the end. Needs a GPU and compute-sanitizer (CUDA toolkit) on PATH.
# Usage: scripts/gpu-sanitize.sh BUILD_DIR [gpu_test ...]   (default: every tests/gpu_*)
# e.g. on the GPU machine: .gpu/gpu-run.sh -- scripts/gpu-sanitize.sh build-gpu
set -uo pipefail
build=${1:?usage: scripts/gpu-sanitize.sh BUILD_DIR [gpu_test ...]}
shift
command -v compute-sanitizer >/dev/null || { echo "gpu-sanitize: compute-sanitizer not found" >&2; exit 2; }
tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  for t in "$build"/tests/gpu_*; do [ -x "$t" ] && tests+=("$(basename "$t")"); done
fi
out=${OUT:-$build/sanitize}
mkdir -p "$out"
status=0
summary=()
for tool in memcheck racecheck initcheck; do
  extra=()
  [ $tool != memcheck ] || extra+=(--leak-check full)
  [ $tool != racecheck ] || extra+=(--racecheck-report all)
  for t in "${tests[@]}"; do
    log="$out/$tool-$t.log"
    # CK_FORK=no: CUDA state cannot cross a fork; IC_CACHE=0: every kernel compiled and
    # loaded under the tool.
    CK_FORK=no IC_STRICT=1 IC_CACHE=0 compute-sanitizer --tool $tool --error-exitcode 99 "${extra[@]}" \
      "$build/tests/$t" >"$log" 2>&1
    rc=$?
    errors=$(grep -Eo 'ERROR SUMMARY: [0-9]+ error' "$log" | tail -1 | grep -Eo '[0-9]+' || echo "?")
    if [ $rc -eq 0 ] && [ "$errors" = 0 ]; then
      result="ok, 0 errors"
    elif [ $rc -eq 77 ]; then
      result="skipped (no GPU)"
    else
      result="FAILED (exit $rc, $errors errors; $log)"
      status=1
    fi
    summary+=("$(printf '%-10s %-18s %s' "$tool" "$t" "$result")")
  done
done
printf '%s\n' "${summary[@]}"
exit $status
