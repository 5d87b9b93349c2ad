#!/usr/bin/env bash
# Puts revision REV's tree in ab-old/ (ignored by git through .git/info/exclude) for an A/B
# measurement on the GPU machine: carry it with the working tree (the device tool's carry:
# [".gpu", "ab-old"]) and run `bash scripts/gpu-session.sh ab` there, which builds ab-old/
# beside build-gpu/ and runs the benchmark tables of both, alternating.
#   scripts/ab-prepare.sh REV        e.g. scripts/ab-prepare.sh HEAD~1
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/ab-prepare.sh REV}
git rev-parse --verify --quiet "$rev^{commit}" >/dev/null || { echo "ab-prepare: no commit '$rev'" >&2; exit 2; }
exclude=$(git rev-parse --git-path info/exclude)
grep -qx 'ab-old/' "$exclude" 2>/dev/null || echo 'ab-old/' >>"$exclude"
rm -rf ab-old
mkdir ab-old
git archive "$rev" | tar -x -C ab-old
git rev-parse "$rev" >ab-old/AB_REVISION
echo "ab-old/: $(cat ab-old/AB_REVISION) ($(du -sh ab-old | cut -f1))"
