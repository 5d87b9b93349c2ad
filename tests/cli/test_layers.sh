#!/usr/bin/env bash
# The layering check passes on lib/ and catches an include that looks up.
# Usage: test_layers.sh <source dir>
set -euo pipefail
src=$1
"$src/scripts/check-layers.sh" "$src/lib"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/lib" "$tmp/lib"
printf '#include "runtime/context.h"\n' >> "$tmp/lib/kir/kir.h"
if out=$("$src/scripts/check-layers.sh" "$tmp/lib"); then
  echo "test_layers: an include of runtime/ from kir/ was not caught" >&2
  exit 1
fi
grep -q 'kir/kir.h (kir) includes "runtime/context.h"' <<<"$out" || { echo "test_layers: unexpected output: $out" >&2; exit 1; }
echo "test_layers: ok"
