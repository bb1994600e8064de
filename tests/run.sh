#!/usr/bin/env bash
# Builds uwaga and runs the whole test suite (installs missing Debian packages first).
#   bash tests/run.sh
# Environment: BUILD_DIR, CMAKE_ARGS, BUILD_TARGETS as for apps/setup.sh. Under CI (CI=true)
# warnings are errors.
set -euo pipefail
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}  # see apps/common/thread_policy.h
cd "$(dirname "$0")/.."
if [[ -n "${CI:-}" ]]; then
  export CMAKE_ARGS="${CMAKE_ARGS:-} -DUWAGA_WERROR=ON"
fi
bash apps/setup.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j"$(nproc)"
