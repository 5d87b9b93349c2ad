#!/usr/bin/env bash
# Fails when a file of lib/ calls the outside world around the fault table
# (lib/base/fault.h): allocations and file-system calls go through lib/base/sys.h
# (sys_malloc, sys_open, ...), NVRTC and driver entry points through NVRTC_CALL / CU_CALL.
# Only lib/base/sys.c calls the C library's functions itself; the loaders
# (lib/cuda/driver.c, nvrtc.c) call their tables as `api.`, outside the table.
# Usage: scripts/check-fault-points.sh [lib-dir]   (exit 1 and one line per call)
set -euo pipefail
lib=${1:-"$(dirname "$0")/../lib"}
status=0
raw='(^|[^A-Za-z0-9_>.])(malloc|calloc|realloc|strdup|strndup|open|openat|read|write|close|rename|unlink|mkdir|stat|fstat|lstat|opendir|futimens|fopen|fdopen|creat|truncate|ftruncate|fsync|mkstemp|remove|aligned_alloc|posix_memalign)[[:space:]]*\('
table='->(cu|nvrtc)[A-Za-z0-9_]+[[:space:]]*\('
while IFS= read -r file; do
  case $file in */base/sys.c) continue ;; esac
  # Comments are skipped: lines whose first characters open or continue one.
  hits=$(grep -nE "$raw|$table" "$file" | grep -vE '^[0-9]+:[[:space:]]*(/\*|\*|//)' |
    grep -vE -- '->(cuGetErrorString|cuGetErrorName|nvrtcGetErrorString)\(' || true)
  if [ -n "$hits" ]; then
    while IFS= read -r h; do
      echo "${file#"$lib"/}:${h%%:*}: a call around the fault table (use lib/base/sys.h, NVRTC_CALL or CU_CALL): ${h#*:}"
    done <<<"$hits"
    status=1
  fi
done < <(find "$lib" -name '*.c' -o -name '*.h' | sort)
exit $status
