#!/usr/bin/env bash
# Configure and build a CMake HIP project with Debian's packaged HIP toolchain
# (hipcc, libamdhip64-dev, rocm-device-libs, libamd-comgr-dev, libhsa-runtime-dev).
#
#   tools/cmake-hip-debian.sh SOURCE_DIR BUILD_DIR [extra cmake arguments…]
#
# On a real ROCm install `cmake -S SRC -B BUILD && cmake --build BUILD` is enough. Debian
# keeps ROCm's CMake packages under /usr/lib/x86_64-linux-gnu/cmake, where CMake's HIP
# language does not look for them, so this makes a ROCm root whose lib/cmake entries point
# there and hands it to CMake (../shared/reference/hip-headers.md, last section).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 SOURCE_DIR BUILD_DIR [cmake arguments...]" >&2
  exit 2
fi
src=$1 build=$2
shift 2
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
cmake_dir=/usr/lib/$multiarch/cmake
root="$build/rocm-root"
mkdir -p "$root/lib/cmake"
for pkg in hip-lang hip amd_comgr hsa-runtime64; do
  ln -sfn "$cmake_dir/$pkg" "$root/lib/cmake/$pkg"
done
# Debian's HIP compiler is its clang (clang++-15 for HIP 5.2), not hipcc.
compiler=${CMAKE_HIP_COMPILER:-$(command -v clang++-15 || command -v clang++)}
export CMAKE_PREFIX_PATH="$cmake_dir${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
cmake -S "$src" -B "$build" \
  -DCMAKE_HIP_COMPILER="$compiler" \
  -DCMAKE_HIP_COMPILER_ROCM_ROOT="$(cd "$root" && pwd)" \
  "-DCMAKE_HIP_FLAGS=--rocm-path=/usr --rocm-device-lib-path=/usr/lib/$multiarch/amdgcn/bitcode" \
  "$@"
cmake --build "$build" -j "$(nproc)"
