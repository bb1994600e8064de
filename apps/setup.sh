#!/usr/bin/env bash
# Installs what uwaga needs from Debian (when missing), then configures and builds it.
#   bash apps/setup.sh            # Release build in build/
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra -D options), BUILD_TARGETS (build only
# these targets, e.g. "uwaga_tests uwaga-vit"; default all), UWAGA_EXTRA_PACKAGES (more Debian
# packages to install, e.g. for notebooks).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libopenblas-openmp-dev catch2 libcxxopts-dev
          zlib1g-dev nlohmann-json3-dev xz-utils curl
          pybind11-dev python3-dev python3-numpy python3-matplotlib jupyter-nbconvert
          python3-nbclient python3-ipykernel graphviz ${UWAGA_EXTRA_PACKAGES:-})
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: not root; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
# shellcheck disable=SC2086
cmake --build "$build_dir" -j"$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
