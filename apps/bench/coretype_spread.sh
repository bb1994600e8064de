#!/usr/bin/env bash
# How much uwaga's training speed depends on OPENBLAS_CORETYPE: `uwaga-bench --mode train` on
# THREADS threads with the variable unset and set to each core, alternated in ROUNDS rounds; once
# as uwaga runs (it picks the kernels itself: core/blas_kernels.h) and once with
# UWAGA_OPENBLAS_CORE=keep (OpenBLAS's own choice). Prints medians and the spread (fastest /
# slowest) of each.
#   bash apps/bench/coretype_spread.sh [BUILD] [ROUNDS] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
rounds=${2:-3}
threads=${3:-1}
cores=(unset Haswell SkylakeX Cooperlake Zen Prescott)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), git $(git rev-parse --short HEAD)"
for round in $(seq 1 "$rounds"); do
  for choice in uwaga keep; do
    for core in "${cores[@]}"; do
      env_args=(-u OPENBLAS_CORETYPE)
      [[ $core != unset ]] && env_args=(OPENBLAS_CORETYPE="$core")
      [[ $choice == keep ]] && env_args+=(UWAGA_OPENBLAS_CORE=keep)
      line=$(env "${env_args[@]}" "$build/apps/uwaga-bench" --mode train --threads "$threads" --repeats 3)
      echo "$round $choice $core $(echo "$line" | /usr/bin/python3 -c 'import json,sys; j=json.loads(sys.stdin.readline()); print(j["median_images_per_s"], j.get("blas_core", "?"))')" | tee -a "$tmp"
    done
  done
done
/usr/bin/python3 - "$tmp" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for choice in ("uwaga", "keep"):
    med = {}
    for core in dict.fromkeys(r[2] for r in rows):
        v = [float(r[3]) for r in rows if r[1] == choice and r[2] == core]
        med[core] = statistics.median(v)
    ran = {r[2]: r[4] for r in rows if r[1] == choice}
    print(f"{choice:5}: " + ", ".join(f"{c} {m:.0f} ({ran[c]})" for c, m in med.items()) +
          f"; spread {max(med.values()) / min(med.values()):.2f}×")
PY
