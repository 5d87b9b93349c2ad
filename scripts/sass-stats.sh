#!/usr/bin/env bash
# Static SASS of a graph's kernels without a GPU: instructions and registers a thread, per
# kernel, from the source ic generates (IC_DUMP) compiled to a CUBIN with ic's NVRTC
# options by nvcc (whose registers can differ by a few from NVRTC's).
#   scripts/sass-stats.sh GRAPH [ARCH [IC]]      ARCH: sm_90a, IC: build/tools/ic
#   SASS=DIR keeps each kernel's disassembly in DIR/<kernel>.sass
# It needs nvdisasm (NVDISASM=path, else the one on PATH). CUDA 13 writes CUBINs with ELF
# ABI version 8, which an older nvdisasm (Debian 12's nvidia-cuda-toolkit 11.8, from
# non-free: `apt-get download nvidia-cuda-toolkit` and dpkg -x it) refuses; it reads a
# copy whose header has the older layout (ABI 7, flags sm | 0x500 | sm << 16), the code
# unchanged. Counts are static (a loop body once); they compare versions of one kernel.
set -euo pipefail
graph=${1:?usage: scripts/sass-stats.sh GRAPH [ARCH [IC]]}
arch=${2:-sm_90a}
ic=${3:-build/tools/ic}
nvdisasm=${NVDISASM:-$(command -v nvdisasm || true)}
[[ -x $nvdisasm ]] || { echo "sass-stats: no nvdisasm (set NVDISASM)" >&2; exit 2; }
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
IC_DUMP=$tmp/dump "$ic" compile "$graph" --arch "$arch" >/dev/null 2>"$tmp/ic.log" || { cat "$tmp/ic.log" >&2; exit 1; }
for cu in "$tmp"/dump/*/*.cu; do
  name=$(basename "$cu" .cu)
  # the options of lib/backend/cuda/cuda_backend.c (-minimal is NVRTC's alone)
  "$nvcc" -cubin -arch="$arch" --fmad=false -std=c++17 -prec-div=true -prec-sqrt=true -ftz=false -w \
    -o "$tmp/$name.cubin" "$cu"
  regs=$(python3 - "$tmp/$name.cubin" "$tmp/$name.old.cubin" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
flags = struct.unpack_from('<I', d, 0x30)[0]
sm = (flags >> 8) & 0xff if d[8] >= 8 else flags & 0xff
regs = 0
shoff = struct.unpack_from('<Q', d, 0x28)[0]
shentsize, shnum = struct.unpack_from('<HH', d, 0x3a)
for i in range(shnum):
    sh = struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize)
    if sh[1] != 0x70000000:  # SHT_CUDA_INFO: attributes (format, attr, size, value)
        continue
    p, end = sh[4], sh[4] + sh[5]
    while p < end:
        fmt, attr = d[p], d[p + 1]
        if fmt == 4:
            size = struct.unpack_from('<H', d, p + 2)[0]
            if attr == 0x2f and size >= 8:  # EIATTR_REGCOUNT: symbol, count
                regs = max(regs, struct.unpack_from('<I', d, p + 8)[0])
            p += 4 + size
        elif fmt == 3:
            p += 4
        else:
            p += 2
if d[8] >= 8:
    d[8] = 7
    struct.pack_into('<I', d, 0x30, sm | 0x500 | sm << 16)
open(sys.argv[2], 'wb').write(d)
print(regs)
PY
)
  "$nvdisasm" -c "$tmp/$name.old.cubin" >"$tmp/$name.sass"
  count=$(grep -cE '^\s+/\*[0-9a-f]{4,}\*/' "$tmp/$name.sass" || true)
  echo "$name: $count instructions, $regs registers"
  if [[ -n ${SASS:-} ]]; then
    mkdir -p "$SASS"
    cp "$tmp/$name.sass" "$SASS/$name.sass"
  fi
done
