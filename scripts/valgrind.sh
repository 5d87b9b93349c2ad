#!/usr/bin/env bash
# Runs the host-code tests under valgrind memcheck (leaks, invalid reads and writes,
# uninitialized values), without forking (CK_FORK=no) so that memcheck follows every test.
# The default set is the tests that need neither NVRTC nor a GPU (NVRTC under memcheck
# takes minutes per kernel): the graph builder, the text format, programs and runs on
# ref, DLPack, the fault sweeps on ref, the limits and the fuzz regression corpora (the
# soak's 100 000 runs take too long under memcheck: name test_stress:test_soak_changing_sizes
# to run it). Any error or definite leak fails the script.
# Usage: scripts/valgrind.sh BUILD_DIR [test[:case] ...]
set -uo pipefail
build=${1:?usage: scripts/valgrind.sh BUILD_DIR [test[:case] ...]}
shift
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(test_graph test_text test_sym test_views test_dlpack test_limits
  test_faults:test_point_table test_faults:test_context_creation test_faults:test_ref_fused_uncached
  test_faults:test_ref_eager_uncached test_faults:test_ref_program_cache test_faults:test_ref_clamped_fp8_cast
  test_faults:test_ref_passes fuzz_text fuzz_builder fuzz_disk_entry fuzz_dlpack)
status=0
for r in "${runs[@]}"; do
  t=${r%%:*}
  case_name=
  [ "$t" = "$r" ] || case_name=${r#*:}
  args=()
  case $t in fuzz_*) args=("$root/tests/fuzz/corpus/$t") ;; esac
  log="$build/valgrind-${r//:/-}.log"
  start=$(date +%s)
  CK_FORK=no CK_RUN_CASE=$case_name IC_CACHE=0 valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
    "$build/tests/$t" "${args[@]}" >"$log" 2>&1
  rc=$?
  summary=$(grep -Eo 'ERROR SUMMARY: [0-9]+ errors' "$log" | tail -1)
  if [ $rc -eq 0 ]; then
    echo "$r: ok ($summary, $(( $(date +%s) - start )) s)"
  else
    echo "$r: FAILED (exit $rc, $summary; $log)"
    status=1
  fi
done
exit $status
