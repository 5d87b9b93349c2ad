#!/usr/bin/env bash
# GPU checks and measurements of a CUDA build, run from the repository root on a machine
# with an NVIDIA GPU. It expects a configured and built tree in build-gpu/ (or
# IC_GPU_BUILD_DIR), normally after its ctest suite has run; it builds nothing itself but
# the A/B trees. Each part named runs in the order given, each step logged under $OUT
# (default gpu-out/) with the log's tail printed:
#   bash scripts/gpu-check.sh stress sanitize bench torch
#   stress    gpu_faults and gpu_stress with their printed figures (fault points, soak memory)
#   sanitize  scripts/gpu-sanitize.sh over the GPU tests but gpu_stress (memcheck, racecheck,
#             initcheck; a Check case at a time, 16 at once, 400 s each at most)
#   bench     build-gpu/bench/ic-bench all
#   torch     bench/torch_compare.py (PyTorch eager and torch.compile on the same workloads)
#   ab        A/B: builds each ab-old*/ tree (made by scripts/ab-prepare.sh REV [DIR]) into
#             build-<dir>/, then runs the tables IC_AB_TABLES (default "reductions patterns",
#             --only IC_AB_ONLY if set) of build-gpu and of each old build in turn,
#             IC_AB_RUNS times (2); logs ab-new-TABLE-I.log, ab-<dir>-TABLE-I.log
#   profile   Nsight Compute (ncu) on the first fused launch of each workload named in
#             IC_PROFILE (';'-separated ic-bench names, "table:name"), where ncu is installed;
#             IC_PROFILE_ARGS adds ncu options (e.g. --metrics sass__inst_executed_per_opcode
#             --print-metric-instances values: executed instructions by opcode)
# A failing part is reported and the next one still runs; the exit status says whether
# any failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
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
    sanitize)
      # gpu_stress is left out: its 20 s of threads and 100 000-run soak add no kernel the
      # others lack, and under the tools they would run far longer than the other cases.
      mapfile -t san < <(ctest --test-dir "$build" -N -L gpu | sed -n 's/^ *Test *#[0-9]*: *//p' | grep -v '^gpu_stress')
      run sanitize env OUT="$out/sanitize" IC_SANITIZE_JOBS="${IC_SANITIZE_JOBS:-16}" \
        IC_SANITIZE_TIMEOUT="${IC_SANITIZE_TIMEOUT:-400}" scripts/gpu-sanitize.sh "$build" "${san[@]}" ;;
    bench) run bench "$build/bench/ic-bench" all ;;
    torch) run torch env IC_LIBRARY="$PWD/$build/libic.so.0" python3 bench/torch_compare.py ;;
    profile)
      read -ra extra <<<"${IC_PROFILE_ARGS:-}"
      IFS=';' read -ra picks <<<"${IC_PROFILE:-reductions:FP8 row quantization;reductions:column sum}"
      for pick in "${picks[@]}"; do
        run "profile-${pick//[^A-Za-z0-9]/_}" ncu --section SpeedOfLight --section Occupancy --section LaunchStats \
          --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis --section InstructionStats \
          "${extra[@]}" -k regex:^ic_ -c 1 \
          "$build/bench/ic-bench" "${pick%%:*}" --only "${pick#*:}"
      done ;;
    ab)
      olds=()
      for d in ab-old*/; do [ -d "$d" ] && olds+=("${d%/}"); done
      if [ ${#olds[@]} -eq 0 ]; then
        echo "gpu-check: ab needs an ab-old*/ tree (scripts/ab-prepare.sh REV [DIR])" >&2
        status=2
        continue
      fi
      gen=()
      if command -v ninja >/dev/null; then gen=(-G Ninja); fi
      for d in "${olds[@]}"; do
        echo "$d: $(cat "$d/AB_REVISION" 2>/dev/null)"
        run "build-$d" bash -c "cmake -S $d -B build-$d ${gen[*]} -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build build-$d -j$(nproc) --target ic-bench"
      done
      only=()
      if [ -n "${IC_AB_ONLY:-}" ]; then only=(--only "$IC_AB_ONLY"); fi
      read -ra tables <<<"${IC_AB_TABLES:-reductions patterns}"
      for ((i = 1; i <= ${IC_AB_RUNS:-2}; i++)); do
        for t in "${tables[@]}"; do
          run "ab-new-$t-$i" "$build/bench/ic-bench" "$t" "${only[@]}"
          for d in "${olds[@]}"; do run "ab-${d#ab-}-$t-$i" "build-$d/bench/ic-bench" "$t" "${only[@]}"; done
        done
      done ;;
    *) echo "gpu-check: unknown part '$part' (stress, sanitize, bench, torch, profile, ab)" >&2; status=2 ;;
  esac
done
exit $status
