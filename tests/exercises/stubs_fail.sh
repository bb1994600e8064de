#!/usr/bin/env bash
# Every check of the C++ exercises must fail on its empty stub (a check that passes on a stub
# tests nothing). Runs on the committed notebooks/exercises/cpp/exercises.cpp; once a student has
# changed it, the stubs are being filled in and this test is skipped (exit 77).
#   bash tests/exercises/stubs_fail.sh build/notebooks/exercises/cpp/uwaga-exercises
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
stubs=notebooks/exercises/cpp/exercises.cpp
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1 &&
   ! git -C "$root" diff --quiet HEAD -- "$stubs" 2>/dev/null; then
  echo "SKIP: $stubs has changes (a student's work): the empty-stub check runs on the committed file"
  exit 77
fi
"$1" --expect-stubs
