#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (the fuzz preset: clang, ASan + UBSan,
# build-fuzz/) and runs each for FUZZ_SECONDS (default 60) on a copy of its corpus
# (tests/fuzz/corpus/<target>/; the text target with tests/fuzz/text.dict), then prints
# the executions per target. A crash, leak, timeout or broken promise fails the script
# and leaves the input in build-fuzz/fuzz-findings/<target>/: once fixed, add it to the
# target's corpus, where the regression test (ctest fuzz_<target>) runs it in every build.
# Usage: scripts/fuzz.sh [target ...]   (default: all four)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_text fuzz_builder fuzz_disk_entry fuzz_dlpack)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}" >/dev/null

export ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
summary=()
for t in "${targets[@]}"; do
  work=build-fuzz/fuzz-work/$t
  findings=build-fuzz/fuzz-findings/$t
  rm -rf "$work"
  mkdir -p "$work" "$findings"
  cp tests/fuzz/corpus/"$t"/* "$work"/
  extra=()
  [ "$t" != fuzz_text ] || extra+=(-dict=tests/fuzz/text.dict)
  log=build-fuzz/fuzz-$t.log
  if build-fuzz/tests/"$t" "$work" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
      -artifact_prefix="$findings"/ -print_final_stats=1 "${extra[@]}" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log; the input is in $findings)"
    status=1
    tail -40 "$log"
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  corpus=$(find "$work" -type f | wc -l)
  summary+=("$(printf '%-16s %10s executions in %ss, corpus %5s inputs: %s' "$t" "$runs" "$seconds" "$corpus" "$result")")
done
printf '%s\n' "${summary[@]}"
exit $status
