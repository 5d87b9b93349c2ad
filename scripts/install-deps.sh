#!/usr/bin/env bash
# Installs the Debian packages that ic builds and tests against, if any is missing.
# Idempotent and quiet when everything is present. The CUDA toolkit (headers cuda.h,
# cudaTypedefs.h, nvrtc.h) is a prerequisite that this script only checks for.
# Arguments name extra packages to install too (.ci/run passes clang).
set -euo pipefail

# python3-cffi, python3-mypy, python3-numpy: the Python binding's tests (python/, tests/python;
# numpy stays optional at run time: the suite also runs without it).
packages=(cmake ninja-build gcc pkg-config check libsubunit-dev libxxhash-dev libffi-dev libdlpack-dev
  python3 python3-cffi python3-mypy python3-numpy "$@")

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# CUDA toolkit headers: used at build time only (libcuda and libnvrtc are dlopen()ed).
found=
for dir in ${CUDA_HOME:+"$CUDA_HOME/include"} /usr/local/cuda/include; do
  if [ -f "$dir/cuda.h" ] && [ -f "$dir/cudaTypedefs.h" ] && [ -f "$dir/nvrtc.h" ]; then
    found=$dir
    break
  fi
done
if [ -z "$found" ]; then
  echo "install-deps: CUDA toolkit headers (cuda.h, cudaTypedefs.h, nvrtc.h) not found under" \
       "${CUDA_HOME:+\$CUDA_HOME/include or }/usr/local/cuda/include." >&2
  echo "install-deps: install the CUDA toolkit (https://developer.nvidia.com/cuda-downloads) or set CUDA_HOME." >&2
  exit 1
fi
