#!/usr/bin/env bash
# The ic command-line tool (tools/ic_cli.c) end to end, on any machine: compile every example
# graph with every dump kind, run each on the ref backend, and check the error paths
# (malformed graph, missing file, unknown command, missing --size, usage, bench without a
# GPU) by exit status and message: 0 success, 1 failure, 2 bad command line, 77 skipped.
#
#   bash tests/cli/test_cli.sh path/to/ic examples/graphs
#
# Run by ctest with IC_ARCH=sm_90a, so that compiling works without a GPU.
set -u

IC=${1:?usage: test_cli.sh IC_BINARY GRAPH_DIR}
GRAPHS=${2:?usage: test_cli.sh IC_BINARY GRAPH_DIR}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

failures=0
checks=0

fail() {
  echo "FAIL: $*"
  echo "--- stdout"; cat "$TMP/out"
  echo "--- stderr"; cat "$TMP/err"
  failures=$((failures + 1))
}

# expect STATUS DESCRIPTION -- ARGS...: runs ic ARGS, checks the exit status.
expect() {
  local want=$1 what=$2
  shift 3
  checks=$((checks + 1))
  "$IC" "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$what: exit status $got, expected $want (ic $*)"
    return 1
  fi
}

# contains FILE(out|err) TEXT DESCRIPTION: the last command's stdout/stderr has TEXT.
contains() {
  checks=$((checks + 1))
  grep -qF -- "$2" "$TMP/$1" || fail "$3: '$2' not in std$1"
}

# Symbol sizes for each example graph.
declare -A SIZES=([gelu]="--size n=64" [mixed]="--size n=10" [relu_chain]="--size n=100" [softmax]="--size n=3" [layer_norm]="--size n=3" [rms_norm]="--size n=3" [fp8_rowquant]="--size n=3" [transpose_add]="--size n=70 --size m=33" [rope]="--size s=3" [mlp]="--size n=3")

shopt -s nullglob
graphs=("$GRAPHS"/*.icg)
[ ${#graphs[@]} -ge 3 ] || { echo "FAIL: fewer than 3 example graphs in $GRAPHS"; exit 1; }

for g in "${graphs[@]}"; do
  name=$(basename "$g" .icg)
  for dump in graph program kir cuda; do
    expect 0 "compile $name --dump $dump" -- compile "$g" --dump "$dump" &&
      contains out "== $dump ==" "compile $name --dump $dump"
  done
  if expect 0 "compile $name --dump all --eager" -- compile "$g" --dump all --eager; then
    for header in graph program kir cuda; do contains out "== $header ==" "compile $name --dump all"; done
    contains err "ms" "compile $name: compile time"
    contains out "launch" "compile $name: program steps"
  fi
  expect 0 "compile $name (default dump)" -- compile "$g" && contains out "== program ==" "default dump"

  sizes=${SIZES[$name]:-}
  if [[ $name == asm_* ]]; then
    # inline PTX runs on a GPU only: the ref backend refuses it, saying why
    expect 1 "run $name on ref" -- run "$g" --backend ref --size n=3 &&
      contains err "the ref backend cannot run PTX" "run $name on ref"
    continue
  fi
  for mode in "" --eager; do
    # shellcheck disable=SC2086 # sizes is a list of arguments
    if expect 0 "run $name $mode" -- run "$g" --backend ref $mode $sizes; then
      contains out "outputs (ref backend):" "run $name $mode"
      contains out "  min " "run $name $mode: summary"
      contains out "  first:" "run $name $mode: values"
    fi
  done
done

# The access patterns' examples are one kernel each, and say their strategy.
if expect 0 "compile transpose_add --dump kir" -- compile "$GRAPHS/transpose_add.icg" --dump kir; then
  contains err "1 kernel, fused" "transpose_add: one kernel"
  contains out "strategy tiled" "transpose_add: tiled"
  contains out "(tiled)" "transpose_add: the transposed load"
fi
if expect 0 "compile rope --dump kir" -- compile "$GRAPHS/rope.icg" --dump kir; then
  contains err "1 kernel, fused" "rope: one kernel"
  contains out "ranges once a slot" "rope: uniform ranges"
fi

# The reduction examples are one kernel each (their reductions and the ops around them
# fused), a row strategy each.
for name in softmax layer_norm rms_norm fp8_rowquant; do
  if expect 0 "compile $name --dump kir" -- compile "$GRAPHS/$name.icg" --dump kir; then
    contains err "1 kernel, fused" "$name: one kernel"
    contains out "strategy rows" "$name: a row strategy"
  fi
done

# The MLP example is two kernels, each a matmul with its epilogue (bias; bias and GELU).
if expect 0 "compile mlp --dump kir" -- compile "$GRAPHS/mlp.icg" --dump kir; then
  contains err "2 kernels, fused" "mlp: two kernels"
  contains out "strategy matmul" "mlp: matmul kernels"
fi

# Fused and eager results are bitwise identical: the summaries agree.
expect 0 "run gelu fused" -- run "$GRAPHS/gelu.icg" --backend ref --size n=8 --seed 3 && cp "$TMP/out" "$TMP/fused"
expect 0 "run gelu eager" -- run "$GRAPHS/gelu.icg" --backend ref --size n=8 --seed 3 --eager &&
  { cmp -s "$TMP/out" "$TMP/fused" || fail "gelu: fused and eager summaries differ"; }

# A malformed graph: "FILE:LINE:COL: message" as compilers print it, exit 1.
printf 'symbol n\ninput x : f32[n]\ny = mull(x, x)\noutput y\n' >"$TMP/bad.icg"
expect 1 "malformed graph" -- compile "$TMP/bad.icg" &&
  contains err "$TMP/bad.icg:3:5: unknown op 'mull'" "malformed graph: file:line:col"
expect 1 "malformed graph (run)" -- run "$TMP/bad.icg" --backend ref --size n=1 &&
  contains err "bad.icg:3:5: " "malformed graph (run): file:line:col"
printf 'symbol n\ninput x : f32[n]\n  y = neg(x) )\noutput y\n' >"$TMP/bad2.icg"
if expect 1 "trailing token" -- compile "$TMP/bad2.icg"; then
  checks=$((checks + 1))
  grep -qE '^[^ ]*bad2\.icg:3:[0-9]+: ' "$TMP/err" || fail "trailing token: no FILE:3:COL: in stderr"
fi

# A missing file is a failure, not a usage error: exit 1.
expect 1 "missing file" -- compile "$TMP/no-such-file.icg" && contains err "no-such-file.icg" "missing file"
expect 1 "missing file (run)" -- run "$TMP/no-such-file.icg" --size n=1

# The ref backend needs no target: nothing about sm_90a or a missing GPU.
if expect 0 "compile --backend ref" -- compile "$GRAPHS/gelu.icg" --backend ref; then
  checks=$((checks + 1))
  ! grep -qE 'sm_[0-9]|no GPU' "$TMP/err" || fail "compile --backend ref talks about the cuda target"
  contains err "ref backend" "compile --backend ref: summary"
fi
if expect 0 "run --backend ref" -- run "$GRAPHS/gelu.icg" --backend ref --size n=2; then
  checks=$((checks + 1))
  ! grep -qE 'sm_[0-9]' "$TMP/err" || fail "run --backend ref talks about the cuda target"
fi

# Usage errors: exit 2.
expect 2 "unknown command" -- frobnicate "$GRAPHS/gelu.icg" && contains err "unknown command" "unknown command"
expect 2 "unknown option" -- compile "$GRAPHS/gelu.icg" --frobnicate && contains err "unknown option" "unknown option"
expect 2 "no command" --
expect 2 "no file argument" -- run
expect 2 "bad --dump" -- compile "$GRAPHS/gelu.icg" --dump nonsense
expect 2 "option of another command" -- compile "$GRAPHS/gelu.icg" --iters 3
expect 2 "unknown --size symbol" -- run "$GRAPHS/gelu.icg" --size n=4 --size q=2 && contains err "'q'" "unknown symbol"

# Every symbol needs a size; the message names it. Sizes are checked before anything
# compiles (no "compiled" line), for run and bench alike.
if expect 2 "missing --size" -- run "$GRAPHS/gelu.icg" --backend ref; then
  contains err "missing --size for symbol 'n'" "missing --size"
  checks=$((checks + 1))
  ! grep -qF "compiled" "$TMP/err" || fail "missing --size: reported after compiling"
fi
if expect 2 "unknown --size symbol, cuda" -- run "$GRAPHS/transpose_add.icg" --size n=4 --size k=2; then
  contains err "has no symbol 'k'" "unknown --size symbol, cuda"
  contains err "missing --size for symbol 'm'" "unknown and missing --size"
  checks=$((checks + 1))
  ! grep -qF "compiled" "$TMP/err" || fail "unknown --size: reported after compiling"
fi
if expect 2 "bench, missing --size" -- bench "$GRAPHS/gelu.icg" --iters 1; then
  contains err "missing --size for symbol 'n'" "bench, missing --size"
fi

# IC_LOG=info names the disk cache once, whether the target comes from IC_ARCH or the
# tool's default (no GPU, no IC_ARCH: a probe context finds that out, silently).
for arch_env in "IC_ARCH=sm_90a" "-u IC_ARCH"; do
  checks=$((checks + 1))
  # shellcheck disable=SC2086 # arch_env is an env argument list
  env $arch_env IC_LOG=info "$IC" compile "$GRAPHS/gelu.icg" >"$TMP/out" 2>"$TMP/err"
  lines=$(grep -cF "kernel cache: using" "$TMP/err")
  [ "$lines" -eq 1 ] || fail "IC_LOG=info ($arch_env): 'kernel cache: using' printed $lines times"
done

# bench with no GPU is skipped like ic-bench: exit 77. ctest sets IC_ARCH only, so ask
# the tool whether this machine has a GPU: without one, compile says so.
"$IC" compile "$GRAPHS/gelu.icg" --dump program >/dev/null 2>"$TMP/gpu"
if grep -qF "no GPU" "$TMP/gpu"; then
  expect 77 "bench without a GPU" -- bench "$GRAPHS/gelu.icg" --size n=8 --iters 1 &&
    contains err "no GPU" "bench without a GPU"
else
  # On a GPU a graph with inline asm runs on cuda; ref cannot check it, and says so.
  for g in "$GRAPHS"/asm_*.icg; do
    name=$(basename "$g" .icg)
    if expect 0 "run $name on a GPU" -- run "$g" --size n=3; then
      contains out "outputs (cuda backend):" "run $name on a GPU"
      contains out "not checked against the ref backend" "run $name on a GPU: no ref check"
      contains out "cannot run PTX" "run $name on a GPU: why"
    fi
  done
fi

# Help and version; the usage text documents the exit codes.
expect 0 "--help" -- --help && contains out "usage: ic compile" "--help"
for code in "  0 " "  1 " "  2 " "  77 " "FILE:LINE:COL"; do contains out "$code" "--help: exit status $code"; done
expect 0 "run --help" -- run --help && contains out "usage:" "run --help"
expect 0 "--version" -- --version && contains out "ic 0." "--version"

echo "$checks checks, $failures failures"
[ "$failures" -eq 0 ]
