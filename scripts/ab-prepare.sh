#!/usr/bin/env bash
# Puts revision REV's tree in ab-old/ (or DIR, an ab-old* name; ignored by git through
# .git/info/exclude) for an A/B measurement: copy it with the working tree to a GPU
# machine and run `bash scripts/gpu-check.sh ab` there, which builds each ab-old*/ beside
# build-gpu/ and runs the benchmark tables of all, alternating.
#   scripts/ab-prepare.sh REV [DIR]      e.g. scripts/ab-prepare.sh HEAD~1 ab-old2
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/ab-prepare.sh REV [DIR]}
dir=${2:-ab-old}
[[ $dir =~ ^ab-old[A-Za-z0-9_-]*$ ]] || { echo "ab-prepare: DIR must be ab-old followed by letters, digits, - or _" >&2; exit 2; }
git rev-parse --verify --quiet "$rev^{commit}" >/dev/null || { echo "ab-prepare: no commit '$rev'" >&2; exit 2; }
exclude=$(git rev-parse --git-path info/exclude)
grep -qx 'ab-old\*/' "$exclude" 2>/dev/null || echo 'ab-old*/' >>"$exclude"
rm -rf "$dir"
mkdir "$dir"
git archive "$rev" | tar -x -C "$dir"
git rev-parse "$rev" >"$dir/AB_REVISION"
echo "$dir/: $(cat "$dir/AB_REVISION") ($(du -sh "$dir" | cut -f1))"
