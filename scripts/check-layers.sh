#!/usr/bin/env bash
# Fails when a file of lib/ includes a header of a layer it may not look at.
# The layers, bottom up (DESIGN.md, "The pipeline"); each may include itself and the
# layers listed after it, and always the public headers (ic/...) and system headers.
#   base      the ground floor: nothing of ic
#   sym       base
#   ops       base
#   cuda      base                      (dlopen'ed driver and NVRTC tables, the device)
#   cache     base
#   graph     base sym ops
#   lower     base sym ops graph
#   sched     base sym ops graph lower
#   kir       base sym ops              (backend-neutral; knows no graph, no schedule)
#   backend   base sym ops kir cache cuda   (never the graph, the program or the runtime)
#   program   base sym ops graph lower sched kir backend cache
#   runtime   base sym ops kir cache cuda backend program
#   top       lib/*.c, lib/*.h: everything (compile.c, context.c, program_cache.c)
# Usage: scripts/check-layers.sh [lib-dir]   (exit 1 and one line per violation)
set -euo pipefail
lib=${1:-"$(dirname "$0")/../lib"}

allowed() {
  case $1 in
    base) echo "base" ;;
    sym | ops | cuda | cache) echo "$1 base" ;;
    graph) echo "graph base sym ops" ;;
    lower) echo "lower base sym ops graph" ;;
    sched) echo "sched base sym ops graph lower" ;;
    kir) echo "kir base sym ops" ;;
    backend) echo "backend base sym ops kir cache cuda" ;;
    program) echo "program base sym ops graph lower sched kir backend cache" ;;
    runtime) echo "runtime base sym ops kir cache cuda backend program" ;;
    top) echo "top base sym ops cuda cache graph lower sched kir backend program runtime" ;;
    *) echo "" ;;
  esac
}

# The layer of a path relative to lib/: its first directory, or "top".
layer_of() {
  case $1 in
    */*) echo "${1%%/*}" ;;
    *) echo top ;;
  esac
}

status=0
checked=0
while IFS= read -r file; do
  rel=${file#"$lib"/}
  layer=$(layer_of "$rel")
  ok=$(allowed "$layer")
  if [ -z "$ok" ]; then
    echo "check-layers: $rel: lib/$layer/ is not a known layer (add it to scripts/check-layers.sh)"
    status=1
    continue
  fi
  checked=$((checked + 1))
  # Quoted includes name a header relative to lib/ ("graph/graph.h") or the top.
  while IFS= read -r inc; do
    [ -n "$inc" ] || continue
    case $inc in ic/*) continue ;; esac # the public headers (include/ic/)
    target=$(layer_of "$inc")
    if [ "$target" = top ] && [ ! -f "$lib/$inc" ]; then
      echo "check-layers: $rel: #include \"$inc\" is not a header under lib/"
      status=1
      continue
    fi
    case " $ok " in
      *" $target "*) ;;
      *)
        echo "check-layers: $rel ($layer) includes \"$inc\" ($target): $layer may include only: ${ok#"$layer "}"
        status=1
        ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find "$lib" -name '*.[ch]' -o -name '*.cuh' | sort)

if [ "$status" -eq 0 ]; then
  echo "check-layers: $checked files, no include looks up"
fi
exit "$status"
