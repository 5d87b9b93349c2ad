#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (the fuzz preset: clang, ASan + UBSan,
# build-fuzz/) and runs each for FUZZ_SECONDS (default 60), FUZZ_JOBS at a time (default:
# the number of cores), on a copy of its corpus
# (tests/fuzz/corpus/<target>/; the text target with tests/fuzz/text.dict), then prints
# the executions per target. A crash, leak, timeout or broken promise fails the script
# and leaves the input in build-fuzz/fuzz-findings/<target>/: once fixed, add it to the
# target's corpus, where the regression test (ctest fuzz_<target>) runs it in every build.
# FUZZ_WORKERS=N (default 1) runs each target as N processes (libFuzzer's -fork=N, which
# shares one corpus and sums the executions). fuzz_compile compiles through NVRTC: its
# workers share a disk kernel cache (build-fuzz/fuzz-kernel-cache/), its inputs are at
# most 1024 bytes and an input may take up to 300 s (a program of 8 graphs, ASan, a
# loaded machine); at exit it prints its counts (graphs generated, valid share, NVRTC
# compiles), which the summary repeats.
# Usage: scripts/fuzz.sh [target ...]   (default: all five)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_text fuzz_builder fuzz_disk_entry fuzz_dlpack fuzz_compile)
workers=${FUZZ_WORKERS:-1}

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "${targets[@]}" >/dev/null

export ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# One target: fuzz it, then write its summary line to build-fuzz/fuzz-<target>.result
# (and its exit status as the line's first word).
fuzz_one() {
  local t=$1 work=build-fuzz/fuzz-work/$1 findings=build-fuzz/fuzz-findings/$1 log=build-fuzz/fuzz-$1.log
  rm -rf "$work"
  mkdir -p "$work" "$findings"
  cp tests/fuzz/corpus/"$t"/* "$work"/
  local extra=(-timeout=20) result code=0
  [ "$t" != fuzz_text ] || extra+=(-dict=tests/fuzz/text.dict)
  local cache_dir=
  if [ "$t" = fuzz_compile ]; then
    extra=(-timeout=300 -max_len=1024)
    cache_dir="$PWD/build-fuzz/fuzz-kernel-cache"
  fi
  [ "$workers" -le 1 ] || extra+=(-fork="$workers")
  if IC_CACHE_DIR="$cache_dir" build-fuzz/tests/"$t" "$work" -max_total_time="$seconds" \
      -rss_limit_mb=4096 -artifact_prefix="$findings"/ -print_final_stats=1 "${extra[@]}" >"$log" 2>&1; then
    result=ok
  else
    result="FAILED (see $log; the input is in $findings)"
    code=1
  fi
  local runs corpus
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
  # -fork prints no final stats: its last progress line's count
  [ -n "$runs" ] || runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
  [ -n "$runs" ] || runs="?"
  corpus=$(find "$work" -type f | wc -l)
  printf '%d %-16s %10s executions in %ss, corpus %5s inputs: %s\n' "$code" "$t" "$runs" "$seconds" "$corpus" \
    "$result" >build-fuzz/fuzz-"$t".result
}

# FUZZ_JOBS targets at a time (default: one a core), so the run takes about
# ceil(targets / jobs) * FUZZ_SECONDS.
jobs=${FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  rm -f build-fuzz/fuzz-"$t".result
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait
status=0
for t in "${targets[@]}"; do
  if [ ! -f build-fuzz/fuzz-"$t".result ]; then
    echo "$t: FAILED (its run ended before writing a result; see build-fuzz/fuzz-$t.log)"
    status=1
    continue
  fi
  read -r code line <build-fuzz/fuzz-"$t".result
  echo "$line"
  grep '^fuzz_compile: ' build-fuzz/fuzz-"$t".log | tail -1 || true
  if [ "$code" -ne 0 ]; then
    status=1
    tail -40 build-fuzz/fuzz-"$t".log
  fi
done
exit $status
