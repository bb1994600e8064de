#!/usr/bin/env bash
# Processes against threads: mnist-tiny training (uwaga-vit train, --max-steps STEPS) as 1 process
# × T threads and as P processes × 1 thread under mpirun, alternated in ROUNDS rounds; prints
# each run's images/s (median of its logged windows after the first) and, for the processes, the
# all-reduce time per step and the bytes it exchanges.
#   bash apps/bench/mpi_bench.sh [BUILD] [ROUNDS] [STEPS] [PROCESSES ...]   (default: build 3 300 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
rounds=${2:-3}
steps=${3:-300}
shift $(( $# < 3 ? $# : 3 ))
counts=("${@:-2}")
[[ -f data/cache/mnist/t10k-labels-idx1-ubyte ]] || bash data/fetch.sh mnist >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

ips() {  # the run's images/s: median of its step records but the first (warm-up)
  /usr/bin/python3 - "$1/log.jsonl" <<'PY'
import json, statistics, sys
r = [json.loads(l) for l in open(sys.argv[1])]
s = [x["items_per_s"] for x in r if x.get("type") == "step"][1:]
print(f"{statistics.median(s):.0f}")
PY
}
run() {  # run NAME PROCESSES THREADS
  local dir=$out/$1
  rm -rf "$dir"
  if [[ $2 == 1 ]]; then
    "$build/apps/uwaga-vit" train --preset mnist-tiny --max-steps "$steps" --threads "$3" \
      --log-every 20 --out "$dir" >"$dir.out" 2>&1
  else
    mpirun --oversubscribe --bind-to none -np "$2" "$build/apps/uwaga-vit" train --preset mnist-tiny \
      --max-steps "$steps" --threads "$3" --log-every 20 --out "$dir" >"$dir.out" 2>&1
  fi
  echo "$2 process(es) × $3 thread(s): $(ips "$dir") images/s $(grep -o 'all-reduce.*' "$dir.out" || true)"
}
echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), git $(git rev-parse --short HEAD), $(date -u +%FT%TZ)"
for round in $(seq 1 "$rounds"); do
  for p in "${counts[@]}"; do
    run "threads-$p" 1 "$p"
    run "processes-$p" "$p" 1
  done
done
